import { defineConfig } from 'drizzle-kit';

// The PostgreSQL store's migrations (npm run db:generate:postgres); the SQLite store's: drizzle.config.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './drizzle/postgres',
});
