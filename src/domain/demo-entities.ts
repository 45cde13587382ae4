// The demo tool source's entities (src/tools/demo.ts), kept by each store backend in the server's own database
// (src/db/sqlite/demo-entities.ts, src/db/postgres/demo-entities.ts): seeded with five names the first time, never again.

export interface DemoEntities {
  list(): Promise<{ id: number; name: string }[]>;
  /** Returns the new entity's id. */
  create(name: string): Promise<number>;
  /** Deletes those that exist, in one transaction; returns their ids. */
  delete(ids: number[]): Promise<number[]>;
}

export const DEMO_SEED = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
