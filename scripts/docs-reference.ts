// `npm run docs:generate` writes the reference pages of the docs site from the code: docs/reference/config.md from
// the config's JSON Schema, docs/reference/metrics.md from a server's prom-client registry, docs/reference/graphql.md
// from schema.graphql. `-- --check` fails when a committed page is stale (as schema:check does for schema.graphql).
import { readFileSync, writeFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { configReference } from './docs/config-reference.js';
import { graphqlReference } from './docs/graphql-reference.js';
import { metricsReference } from './docs/metrics-reference.js';

const pages: { file: string; text: () => Promise<string> | string }[] = [
  {
    file: 'docs/reference/config.md',
    text: () =>
      configReference(
        JSON.parse(readFileSync(new URL('../schema/toolgate.config.schema.json', import.meta.url), 'utf8')),
      ),
  },
  { file: 'docs/reference/metrics.md', text: () => metricsReference() },
  {
    file: 'docs/reference/graphql.md',
    text: () => graphqlReference(buildSchema(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'))),
  },
];

const check = process.argv.includes('--check');
let stale = 0;
for (const page of pages) {
  const url = new URL(`../${page.file}`, import.meta.url);
  const generated = await page.text();
  if (!check) {
    writeFileSync(url, generated);
    console.log(`wrote ${page.file}`);
    continue;
  }
  let committed = '';
  try {
    committed = readFileSync(url, 'utf8');
  } catch {
    /* missing reads as stale */
  }
  if (committed !== generated) {
    console.error(`${page.file} is not current: run \`npm run docs:generate\` and commit it.`);
    stale += 1;
  }
}
if (check && stale === 0) console.log('docs/reference/ is current');
// The metrics registry starts prom-client's process collectors (timers): leave without waiting for them.
process.exit(stale === 0 ? 0 : 1);
