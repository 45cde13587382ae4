// The notifier cards and replay keys (src/domain/notifier-cards.ts) in PostgreSQL, shared by every instance; their
// tables come with the store's migrations. Each call is one statement (the primary key settles races between instances).
import type pg from 'pg';
import type { CardKey, CardRecord, NotifierCards } from '../../domain/notifier-cards.js';

interface CardRow {
  notifier: string;
  elicitation_id: string;
  target: string;
  state: 'POSTING' | 'POSTED';
  message_ref: string | null;
  shown: string | null;
  posting_since: Date | string | null;
}

function cardRecord(row: CardRow): CardRecord {
  return {
    notifier: row.notifier,
    elicitationId: row.elicitation_id,
    target: row.target,
    state: row.state,
    messageRef: row.message_ref,
    shown: row.shown,
    postingSince: row.posting_since ? new Date(row.posting_since).toISOString() : null,
  };
}

const WHERE = 'notifier = $1 AND elicitation_id = $2 AND target = $3';
const keyOf = (key: CardKey) => [key.notifier, key.elicitationId, key.target];

export function postgresNotifierCards(pool: pg.Pool): NotifierCards {
  return {
    async takeCard(key, owner, now, until) {
      const created = await pool.query<CardRow>(
        `INSERT INTO notifier_cards (notifier, elicitation_id, target, state, lease_owner, lease_until, posting_since,
         created_at, updated_at) VALUES ($1, $2, $3, 'POSTING', $4, $5, $6, $6, $6) ON CONFLICT DO NOTHING RETURNING *`,
        [...keyOf(key), owner, until, now],
      );
      if (created.rows[0]) return { ...cardRecord(created.rows[0]), fresh: true };
      const taken = await pool.query<CardRow>(
        `UPDATE notifier_cards SET lease_owner = $4, lease_until = $5, updated_at = $6
         WHERE ${WHERE} AND (lease_owner IS NULL OR lease_until < $6) RETURNING *`,
        [...keyOf(key), owner, until, now],
      );
      return taken.rows[0] ? { ...cardRecord(taken.rows[0]), fresh: false } : null;
    },
    async recordPosted(key, owner, messageRef, shown, now) {
      await pool.query(
        `UPDATE notifier_cards SET state = 'POSTED', message_ref = $5, shown = $6, lease_owner = NULL,
         lease_until = NULL, posting_since = NULL, updated_at = $7 WHERE ${WHERE} AND lease_owner = $4`,
        [...keyOf(key), owner, messageRef, shown, now],
      );
    },
    async recordShown(key, owner, shown, now) {
      await pool.query(
        `UPDATE notifier_cards SET shown = $5, lease_owner = NULL, lease_until = NULL, updated_at = $6
         WHERE ${WHERE} AND lease_owner = $4`,
        [...keyOf(key), owner, shown, now],
      );
    },
    async releaseCard(key, owner, unposted) {
      if (unposted) {
        const removed = await pool.query(
          `DELETE FROM notifier_cards WHERE ${WHERE} AND lease_owner = $4 AND state = 'POSTING'`,
          [...keyOf(key), owner],
        );
        if (removed.rowCount) return;
      }
      await pool.query(
        `UPDATE notifier_cards SET lease_owner = NULL, lease_until = NULL WHERE ${WHERE} AND lease_owner = $4`,
        [...keyOf(key), owner],
      );
    },
    async cardsOf(notifier, elicitationId) {
      const { rows } = await pool.query<CardRow>(
        'SELECT * FROM notifier_cards WHERE notifier = $1 AND elicitation_id = $2 ORDER BY created_at, target',
        [notifier, elicitationId],
      );
      return rows.map(cardRecord);
    },
    async firstSight(notifier, key, now, forgetBefore) {
      await pool.query('DELETE FROM notifier_replays WHERE seen_at < $1', [forgetBefore]);
      const inserted = await pool.query(
        'INSERT INTO notifier_replays (notifier, key, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [notifier, key, now],
      );
      return inserted.rowCount === 1;
    },
    async deleteCardsBefore(before, limit) {
      const deleted = await pool.query(
        `DELETE FROM notifier_cards WHERE ctid IN (SELECT c.ctid FROM notifier_cards c
          LEFT JOIN elicitations e ON e.id = c.elicitation_id
          WHERE c.state = 'POSTED' AND c.updated_at < $1 AND (e.id IS NULL OR e.status <> 'PENDING') LIMIT $2)`,
        [before, limit],
      );
      return deleted.rowCount ?? 0;
    },
  };
}
