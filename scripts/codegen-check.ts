// `npm run codegen:check`: generates codegen.ts's targets in memory and fails when a committed file differs, is
// missing or is left over: the inbox's typed operations (web/inbox/src/gql/) and `toolgate/client`'s
// (src/client/generated.ts) must match schema.graphql and their operations.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import config, { CLIENT_OUTPUT, INBOX_OUTPUT } from '../codegen.js';

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
// The inbox's target is a folder the preset fills: a file in it that is not generated any more is stale too.
const dir = join(root, INBOX_OUTPUT);
for (const name of readdirSync(dir)) {
  if (!expected.has(join(dir, name))) problems.push(`${relative(root, join(dir, name))} is not generated any more`);
}
if (!expected.has(join(root, CLIENT_OUTPUT))) problems.push(`${CLIENT_OUTPUT} is not generated`);
if (problems.length > 0) {
  console.error(
    `${problems.join('\n')}\nThe generated GraphQL operations are not current: run \`npm run codegen\` and commit ` +
      `${INBOX_OUTPUT} and ${CLIENT_OUTPUT}.`,
  );
  process.exit(1);
}
console.log(`${INBOX_OUTPUT} and ${CLIENT_OUTPUT} are current`);
