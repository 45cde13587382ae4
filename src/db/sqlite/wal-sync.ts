// Group commit for the WAL: the connection commits at synchronous = NORMAL (no fsync, nothing blocks the event
// loop), and whoever needs its commits on disk (a tool about to run, a response about to be sent) awaits sync().
// One fdatasync of the WAL file, on libuv's thread pool, covers every commit made before it started, so
// concurrent requests share one. This is what synchronous = FULL guarantees for a commit, paid once per batch
// instead of once per commit, and off the event loop. docs/durability.md.
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Flushes one file's data to the disk (fdatasync); a missing file has nothing to flush. */
export type SyncFile = (path: string) => Promise<void>;

/**
 * How long syncSoon() waits for someone else to start an fsync before it starts one itself. Long enough for the
 * next durable step of the same request to come by (the tool start after an answer's event, the response after a
 * tool result's event: a few batches under load), short enough that nobody watching an event would notice.
 */
export const SYNC_SOON_MS = 5;

interface SoonSync {
  promise: Promise<void>;
  settle(with_: Promise<void>): void;
  timer: NodeJS.Timeout;
}

export class WalSync {
  /** Commits made so far, and how many of them a finished fsync covered. */
  #committed = 0;
  #durable = 0;
  #running: Promise<void> | null = null;
  /** The commits the running fsync covers (those made before it started). */
  #runningCovers = 0;
  #queued: Promise<void> | null = null;
  /** Callers of syncSoon() waiting for the next fsync, which nobody has started yet. */
  #soon: SoonSync | null = null;
  #directorySynced = false;
  /** WAL fsyncs done since the start. */
  fsyncs = 0;

  readonly #ownSync: ReturnType<typeof createDatasync> | null;
  readonly #syncFile: SyncFile;

  /** `walPath` null: an in-memory database, nothing to sync. */
  constructor(
    private readonly walPath: string | null,
    syncFile?: SyncFile,
  ) {
    this.#ownSync = syncFile ? null : createDatasync();
    this.#syncFile = syncFile ?? this.#ownSync!;
  }

  /** Closes the file handles it keeps (after the last sync). */
  async close(): Promise<void> {
    if (this.#soon) await this.#start().catch(() => {});
    await this.#ownSync?.close();
  }

  /** Called after each commit of the connection. */
  committed(): void {
    this.#committed++;
  }

  /** Resolves once every commit made before the call is on disk; at once when an earlier sync covered them. */
  sync(): Promise<void> {
    if (!this.walPath || this.#durable >= this.#committed) return Promise.resolve();
    if (!this.#running) return this.#start();
    if (this.#runningCovers >= this.#committed) return this.#running;
    // The fsync in progress started before the caller's last commit: the next one covers it.
    this.#queued ??= this.#running.then(
      () => this.#start(),
      () => this.#start(),
    );
    return this.#queued;
  }

  /**
   * Like sync(), for a caller whom no request waits on (an event to publish): when no fsync is running or queued, it
   * starts none for SYNC_SOON_MS, and the next one anybody starts covers it. Without that, the event's own fsync ran
   * first and the tool start or response right after it had to queue behind it for a second one: two fsyncs where
   * one does, and the request waited for both.
   */
  syncSoon(): Promise<void> {
    if (!this.walPath || this.#durable >= this.#committed) return Promise.resolve();
    if (this.#running || this.#queued) return this.sync();
    if (!this.#soon) {
      let settle!: (with_: Promise<void>) => void;
      const promise = new Promise<void>((resolve, reject) => {
        settle = (with_) => with_.then(resolve, reject);
      });
      const timer = setTimeout(() => void this.sync().catch(() => {}), SYNC_SOON_MS);
      this.#soon = { promise, settle, timer };
    }
    return this.#soon.promise;
  }

  #start(): Promise<void> {
    this.#queued = null;
    const covers = this.#committed;
    this.#runningCovers = covers;
    const synced = this.#syncOnce().then(() => {
      this.#durable = Math.max(this.#durable, covers);
    });
    // Those waiting in syncSoon() get this fsync; and so that whoever asked first is answered first (an event ahead
    // of the response that follows it), every caller awaits the one promise they already wait on.
    const soon = this.#soon;
    this.#soon = null;
    let run = synced;
    if (soon) {
      clearTimeout(soon.timer);
      soon.settle(synced);
      run = soon.promise;
    }
    this.#running = run;
    void run
      .finally(() => {
        if (this.#running === run) this.#running = null;
      })
      .catch(() => {});
    return run;
  }

  async #syncOnce(): Promise<void> {
    await this.#syncFile(this.walPath!);
    this.fsyncs++;
    // The WAL file's directory entry too, once: a WAL created since the database was opened must survive as well.
    if (!this.#directorySynced) {
      await this.#syncFile(dirname(this.walPath!));
      this.#directorySynced = true;
    }
  }
}

/**
 * fdatasync through a handle kept open per path: opening the file for every sync cost more main-thread time than
 * the sync itself (bench part 1). The WAL keeps its inode while the database is open (SQLite truncates and
 * rewrites it, never replaces it), so the handle stays valid; one that fails is dropped and reopened next time.
 */
export function createDatasync(): SyncFile & { close(): Promise<void> } {
  const handles = new Map<string, Promise<FileHandle | null>>();
  let closed = false;
  const sync = async (path: string) => {
    // The store closed (its last checkpoint synced the database): a late flush must not open a handle nobody closes.
    if (closed) return;
    let handle = handles.get(path);
    if (!handle) {
      handle = open(path, 'r').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      handles.set(path, handle);
    }
    try {
      const opened = await handle;
      if (opened) await opened.datasync();
      else handles.delete(path); // no such file yet: nothing written to it to flush; look again next time
    } catch (error) {
      handles.delete(path);
      throw error;
    }
  };
  return Object.assign(sync, {
    async close() {
      closed = true;
      const open = [...handles.values()];
      handles.clear();
      await Promise.allSettled(open.map(async (handle) => (await handle)?.close()));
    },
  });
}
