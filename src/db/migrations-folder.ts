// Where a dialect's migrations are: drizzle/<dialect> at the root of this package (src/package-root.ts).
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

export function migrationsFolder(dialect: 'sqlite' | 'postgres'): string {
  return join(packageRoot(), 'drizzle', dialect);
}
