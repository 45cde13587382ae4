// `npm run api:check` (part of `npm test`): the API built from the code must not break the last release's,
// schema/released.graphql (or the file given as the first argument). Exit 0 compatible, 1 breaking, 2 no baseline.
import { relative, resolve } from 'node:path';
import { schema } from '../src/graphql/schema.js';
import { apiReport, compareApi, loadSchema, RELEASED_SCHEMA_FILE } from './api-diff.js';

const file = process.argv[2] ? resolve(process.argv[2]) : RELEASED_SCHEMA_FILE;
const name = relative(process.cwd(), file) || file;
let released;
try {
  released = loadSchema(file);
} catch (error) {
  console.error(`api: cannot read ${name}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
const report = apiReport(compareApi(released, schema), name);
for (const line of report.lines) console.log(line);
process.exit(report.ok ? 0 : 1);
