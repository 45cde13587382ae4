// `npm run codegen:check`: generates the inbox's typed operations in memory (codegen.ts) and fails when a file in
// web/inbox/src/gql/ differs, is missing or is left over: the committed code must match schema.graphql and the
// operations.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import config from '../codegen.js';

const root = resolve(import.meta.dirname, '..');
process.chdir(root);
const outputs = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
const problems: string[] = [];
const expected = new Set<string>();
for (const output of outputs) {
  const file = resolve(root, output.filename);
  expected.add(file);
  let committed: string | null = null;
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    /* missing */
  }
  if (committed === null) problems.push(`${relative(root, file)} is missing`);
  else if (committed !== output.content) problems.push(`${relative(root, file)} is stale`);
}
const dir = join(root, 'web/inbox/src/gql');
for (const name of readdirSync(dir)) {
  if (!expected.has(join(dir, name))) problems.push(`${relative(root, join(dir, name))} is not generated any more`);
}
if (problems.length > 0) {
  console.error(
    `${problems.join('\n')}\nThe generated inbox operations are not current: run \`npm run codegen\` and commit web/inbox/src/gql/.`,
  );
  process.exit(1);
}
console.log('web/inbox/src/gql/ is current');
