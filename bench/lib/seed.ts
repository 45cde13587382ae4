// Bulk seeding with raw better-sqlite3 statements in one transaction: the bench's own connection to the server's
// database file, never the API (seeding a million rows through HTTP would take the whole budget).
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';

const id = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;
/** An id of the server's shape whose order follows `n` (so that bulk inserts append to the id indexes instead of scattering). */
const seqId = (prefix: string, n: number) =>
  `${prefix}_${n.toString(16).padStart(12, '0')}${randomUUID().replaceAll('-', '').slice(12)}`;

/** A thread of `agentId` owned by `ownerId` with `length` messages (user and assistant, alternating) in one COMPLETED turn. */
export function seedTranscript(db: Database.Database, length: number, ownerId = 'local', agentId = 'demo'): string {
  const threadId = id('thr');
  const turnId = id('trn');
  const now = new Date().toISOString();
  const message =
    db.prepare(`INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
    VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)`);
  db.transaction(() => {
    db.prepare('INSERT INTO threads (id, agent_id, owner_id, created_at) VALUES (?, ?, ?, ?)').run(
      threadId,
      agentId,
      ownerId,
      now,
    );
    db.prepare(
      `INSERT INTO turns (id, thread_id, agent_id, owner_id, status, text, iterations, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'COMPLETED', 'seeded', 1, ?, ?)`,
    ).run(turnId, threadId, agentId, ownerId, now, now);
    for (let i = 0; i < length; i++) {
      const user = i % 2 === 0;
      const text = user
        ? `Message ${i}: please tell me what the entities in the demo store are called and which of them are new.`
        : `Message ${i}: the demo store holds a handful of entities; none of them changed since you last asked, as far as I can see.`;
      message.run(id('msg'), threadId, turnId, user ? 'USER' : 'ASSISTANT', text, now);
    }
  })();
  return threadId;
}

export interface ElicitationSeed {
  rows: number;
  users: number;
  /** The user whose requests are queried ('local', the viewer without auth); user 0. */
  viewer: string;
  /** How many of the viewer's requests are PENDING and unexpired (what pendingElicitations must count). */
  viewerPending: number;
  seconds: number;
}

/**
 * `rows` elicitations of `users` users, interleaved in time (row i belongs to user i mod users, as if they all
 * used the server at once): per user, every 5th is PENDING with a future expiry, every 50th PENDING but past
 * its expiry, the rest answered or expired. Ids have the server's shape but ascend (time-ordered, like a ULID), so
 * the load appends to the id indexes; the query measured does not read them.
 */
export function seedElicitations(
  db: Database.Database,
  rows: number,
  users: number,
  viewer = 'local',
): ElicitationSeed {
  const started = performance.now();
  const user = (n: number) => (n === 0 ? viewer : `user${String(n).padStart(5, '0')}`);
  const future = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
  const past = new Date(Date.now() - 3600 * 1000).toISOString();
  const base = Date.now() - rows;
  // The JSON columns as the server writes them, for one of 97 argument lists (built once: seeding is CPU-bound otherwise).
  const annotations = {
    title: 'Delete entities',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  };
  const requests: string[] = [];
  const toolCalls: string[] = [];
  for (let n = 0; n < 97; n++) {
    const call = {
      name: 'delete_entities',
      toolId: 'demo:delete_entities',
      arguments: { ids: [n + 1, n + 2] },
      annotations,
    };
    toolCalls.push(JSON.stringify(call));
    requests.push(
      JSON.stringify({
        message:
          'Allow the agent to run "Delete entities"? Permanently deletes the entities with the given ids from the demo store.',
        requestedSchema: {
          type: 'object',
          properties: {
            instructions: {
              type: 'string',
              description: 'Optional instructions if you want the agent to do something differently',
            },
          },
        },
        _meta: { 'toolgate.dev/tool_call': call },
      }),
    );
  }
  const insert =
    db.prepare(`INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call,
    response_action, response_content, resolved_by, resolved_at, created_at, expires_at)
    VALUES (?, ?, ?, 'demo', ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`);
  const answered = ['ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] as const;
  const action = { ACCEPTED: 'ACCEPT', DECLINED: 'DECLINE', CANCELLED: 'CANCEL', EXPIRED: null } as const;
  let viewerPending = 0;
  // Indexes built after the load (one sort each) cost a fraction of a million scattered inserts; same indexes after.
  const indexes = db
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'elicitations' AND sql IS NOT NULL",
    )
    .all() as { name: string; sql: string }[];
  db.transaction(() => {
    for (const index of indexes) db.exec(`DROP INDEX "${index.name}"`);
    for (let i = 0; i < rows; i++) {
      const owner = user(i % users);
      const k = Math.floor(i / users);
      const created = new Date(base + i).toISOString();
      const pending = k % 5 === 0;
      const lapsed = k % 50 === 1;
      const status = pending || lapsed ? 'PENDING' : answered[k % 4]!;
      if (owner === viewer && pending) viewerPending++;
      insert.run(
        seqId('elc', i),
        seqId('trn', i),
        seqId('thr', i),
        owner,
        `call_${i}`,
        status,
        requests[i % 97]!,
        toolCalls[i % 97]!,
        status === 'PENDING' ? null : action[status as keyof typeof action],
        status === 'PENDING' || status === 'EXPIRED' ? null : owner,
        status === 'PENDING' ? null : created,
        created,
        pending ? future : past,
      );
    }
    for (const index of indexes) db.exec(index.sql);
  })();
  return { rows, users, viewer, viewerPending, seconds: (performance.now() - started) / 1000 };
}
