// The folder of toolgate's own package.json, found from this module upwards: the sources run from src/ (`npm start`,
// under tsx) and the build from dist/src/ (`npm run build`, the installed package), whose depths differ. What ships
// beside the code (migrations, the inbox's build, package.json) is found from here, never from the working directory.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

export function packageRoot(): string {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`toolgate: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return (found = dir);
}
