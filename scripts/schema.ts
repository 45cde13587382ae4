// `npm run schema:print` writes schema.graphql; `npm run schema:check` fails when the committed one is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { printSortedSchema } from '../src/graphql/schema.js';

const file = new URL('../schema.graphql', import.meta.url);
const printed = printSortedSchema();
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    /* missing reads as stale */
  }
  if (committed !== printed) {
    console.error('schema.graphql is not current: run `npm run schema:print` and commit it.');
    process.exit(1);
  }
  console.log('schema.graphql is current');
} else {
  writeFileSync(file, printed);
  console.log('wrote schema.graphql');
}
