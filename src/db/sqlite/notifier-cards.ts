// The notifier cards and replay keys (src/domain/notifier-cards.ts) in the server's SQLite file; their tables come
// with the store's migrations. Writes run in the store's group commit.
import type Database from 'better-sqlite3';
import type { CardKey, CardRecord, NotifierCards } from '../../domain/notifier-cards.js';

interface CardRow {
  notifier: string;
  elicitation_id: string;
  target: string;
  state: 'POSTING' | 'POSTED';
  message_ref: string | null;
  shown: string | null;
  posting_since: string | null;
}

export function cardRecord(row: CardRow): CardRecord {
  return {
    notifier: row.notifier,
    elicitationId: row.elicitation_id,
    target: row.target,
    state: row.state,
    messageRef: row.message_ref,
    shown: row.shown,
    postingSince: row.posting_since,
  };
}

export function sqliteNotifierCards(db: Database.Database, write: <T>(work: () => T) => Promise<T>): NotifierCards {
  const where = 'notifier = @notifier AND elicitation_id = @elicitationId AND target = @target';
  const insert = db.prepare(`INSERT INTO notifier_cards (notifier, elicitation_id, target, state, lease_owner,
    lease_until, posting_since, created_at, updated_at) VALUES (@notifier, @elicitationId, @target, 'POSTING', @owner,
    @until, @now, @now, @now) ON CONFLICT DO NOTHING RETURNING *`);
  const take = db.prepare(`UPDATE notifier_cards SET lease_owner = @owner, lease_until = @until, updated_at = @now
    WHERE ${where} AND (lease_owner IS NULL OR lease_until < @now) RETURNING *`);
  const posted = db.prepare(`UPDATE notifier_cards SET state = 'POSTED', message_ref = @messageRef, shown = @shown,
    lease_owner = NULL, lease_until = NULL, posting_since = NULL, updated_at = @now WHERE ${where} AND lease_owner = @owner`);
  const shown = db.prepare(`UPDATE notifier_cards SET shown = @shown, lease_owner = NULL, lease_until = NULL,
    updated_at = @now WHERE ${where} AND lease_owner = @owner`);
  const release = db.prepare(`UPDATE notifier_cards SET lease_owner = NULL, lease_until = NULL
    WHERE ${where} AND lease_owner = @owner`);
  const remove = db.prepare(`DELETE FROM notifier_cards WHERE ${where} AND lease_owner = @owner AND state = 'POSTING'`);
  const list = db.prepare(
    'SELECT * FROM notifier_cards WHERE notifier = ? AND elicitation_id = ? ORDER BY created_at, target',
  );
  const seen = db.prepare(
    'INSERT INTO notifier_replays (notifier, key, seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const forget = db.prepare('DELETE FROM notifier_replays WHERE seen_at < ?');
  const retire = db.prepare(`DELETE FROM notifier_cards WHERE rowid IN (SELECT c.rowid FROM notifier_cards c
    LEFT JOIN elicitations e ON e.id = c.elicitation_id
    WHERE c.state = 'POSTED' AND c.updated_at < ? AND (e.id IS NULL OR e.status <> 'PENDING') LIMIT ?)`);
  return {
    takeCard: (key, owner, now, until) =>
      write(() => {
        const params = { ...key, owner, now, until };
        const created = insert.get(params) as CardRow | undefined;
        if (created) return { ...cardRecord(created), fresh: true };
        const taken = take.get(params) as CardRow | undefined;
        return taken ? { ...cardRecord(taken), fresh: false } : null;
      }),
    recordPosted: (key, owner, messageRef, shownNow, now) =>
      write(() => void posted.run({ ...key, owner, messageRef, shown: shownNow, now })),
    recordShown: (key, owner, shownNow, now) => write(() => void shown.run({ ...key, owner, shown: shownNow, now })),
    releaseCard: (key: CardKey, owner, unposted) =>
      write(() => {
        if (unposted && remove.run({ ...key, owner }).changes > 0) return;
        release.run({ ...key, owner });
      }),
    cardsOf: async (notifier, elicitationId) => (list.all(notifier, elicitationId) as CardRow[]).map(cardRecord),
    firstSight: (notifier, key, now, forgetBefore) =>
      write(() => {
        forget.run(forgetBefore);
        return seen.run(notifier, key, now).changes === 1;
      }),
    deleteCardsBefore: (before, limit) => write(() => retire.run(before, limit).changes),
  };
}
