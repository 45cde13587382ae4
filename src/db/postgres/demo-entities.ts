// The demo tool source's entities in the PostgreSQL database (their own table, outside the store's migrations),
// shared by every instance.
import type pg from 'pg';
import { DEMO_SEED, type DemoEntities } from '../../domain/demo-entities.js';

export async function postgresDemoEntities(pool: pg.Pool): Promise<DemoEntities> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Instances starting at once: one creates and seeds, the others wait for it and find the table.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('toolgate:demo_entities'))");
    const { rows } = await client.query<{ exists: boolean }>(
      "SELECT to_regclass('demo_entities') IS NOT NULL AS exists",
    );
    if (!rows[0]!.exists) {
      await client.query(`CREATE TABLE demo_entities (
        id integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY, name text NOT NULL, created_at timestamptz NOT NULL)`);
      // Seeded when created, never again: a database whose entities were all deleted stays empty.
      await client.query('INSERT INTO demo_entities (name, created_at) SELECT unnest($1::text[]), now()', [DEMO_SEED]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  return {
    list: async () =>
      (await pool.query<{ id: number; name: string }>('SELECT id, name FROM demo_entities ORDER BY id')).rows,
    create: async (name) =>
      (
        await pool.query<{ id: number }>(
          'INSERT INTO demo_entities (name, created_at) VALUES ($1, now()) RETURNING id',
          [name],
        )
      ).rows[0]!.id,
    delete: async (ids) =>
      (await pool.query<{ id: number }>('DELETE FROM demo_entities WHERE id = ANY($1::int[]) RETURNING id', [ids])).rows
        .map((row) => row.id)
        .sort((a, b) => ids.indexOf(a) - ids.indexOf(b)),
  };
}
