// Write transactions of concurrent callers run together: every write queued during a few turns of the event loop
// runs in one BEGIN IMMEDIATE … COMMIT, each in its own savepoint. A commit in WAL mode costs a dozen system
// calls (frame writes, locks) whatever it holds, and pages that several writes touch (an index's last leaf,
// sqlite_sequence) are written once per batch instead of once per write (docs/bench.md). Each caller still gets its own
// all-or-nothing transaction: one that throws rolls back to its savepoint and the others commit. A caller's
// promise settles only after the batch committed, so nothing is reported done that could still roll back.
import type Database from 'better-sqlite3';

/**
 * How many turns of the event loop a batch stays open after its first write. One turn gathers only the writes of
 * the I/O that one poll delivered; four gather those of the requests arriving meanwhile, so fewer commits serve the
 * same writes (measured: docs/bench.md). An idle turn takes microseconds, so a lone write waits about as long.
 */
export const BATCH_TURNS = 4;

interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class WriteBatcher {
  #queue: QueuedWrite[] = [];
  /** Batches committed and the writes they held, since the start. */
  commits = 0;
  writes = 0;
  readonly #batch: (writes: QueuedWrite[]) => Outcome[];
  readonly #solo: (work: () => unknown) => unknown;

  constructor(
    db: Database.Database,
    private readonly afterCommit: () => void,
  ) {
    // Created once: better-sqlite3 builds a wrapper per transaction() call. Inside the batch's transaction, the
    // per-write one becomes a SAVEPOINT.
    const savepoint = db.transaction((work: () => unknown) => work());
    this.#batch = db.transaction((writes: QueuedWrite[]) =>
      writes.map((write): Outcome => {
        try {
          return { ok: true, value: savepoint(write.work) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    ).immediate;
    // A batch of one needs no savepoint: its transaction is the write's own (two statements fewer).
    this.#solo = db.transaction((work: () => unknown) => work()).immediate;
  }

  /** Runs `work` (synchronous) in a write transaction; resolves with its result once that is committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#queue.length === 1) this.#flushAfter(BATCH_TURNS);
    });
  }

  #flushAfter(turns: number): void {
    setImmediate(() => (turns > 1 ? this.#flushAfter(turns - 1) : this.flush()));
  }

  /** Commits what is queued now (also before the database closes). */
  flush(): void {
    const writes = this.#queue;
    if (writes.length === 0) return;
    this.#queue = [];
    let outcomes: Outcome[];
    if (writes.length === 1) {
      let outcome: Outcome;
      try {
        outcome = { ok: true, value: this.#solo(writes[0]!.work) };
      } catch (error) {
        // The write threw (rolled back with its transaction), or BEGIN or COMMIT failed: nothing was written.
        writes[0]!.reject(error);
        return;
      }
      outcomes = [outcome];
    } else {
      try {
        outcomes = this.#batch(writes);
      } catch (error) {
        // BEGIN or COMMIT failed (the disk, a lock held past busy_timeout): nothing of the batch was written.
        for (const write of writes) write.reject(error);
        return;
      }
    }
    this.commits++;
    this.writes += writes.length;
    this.afterCommit();
    writes.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }
}
