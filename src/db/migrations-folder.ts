// Where a dialect's migrations are: drizzle/<dialect> at the root of this package, found from this module upwards
// (the folder with package.json), so that the same code finds them when run from src/ (`npm start`, under tsx) and
// from dist/src/ (`npm run build`, then `node dist/src/cli.js`), whose depths differ.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function migrationsFolder(dialect: 'sqlite' | 'postgres'): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`toolgate: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return join(dir, 'drizzle', dialect);
}
