// `npm run config:schema` writes schema/toolgate.config.schema.json from the zod schema; `-- --check` fails when stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_SCHEMA_FILE, configJsonSchema } from '../src/config/json-schema.js';

const file = new URL(`../${CONFIG_SCHEMA_FILE}`, import.meta.url);
const generated = configJsonSchema();
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    /* missing reads as stale */
  }
  if (committed !== generated) {
    console.error(`${CONFIG_SCHEMA_FILE} is not current: run \`npm run config:schema\` and commit it.`);
    process.exit(1);
  }
  console.log(`${CONFIG_SCHEMA_FILE} is current`);
} else {
  writeFileSync(file, generated);
  console.log(`wrote ${CONFIG_SCHEMA_FILE}`);
}
