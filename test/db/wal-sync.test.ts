// Group commit: a sync covers every commit made before it started; requests waiting at the same time share one
// fsync; one that commits while an fsync runs waits for the next; nothing to sync costs nothing.
import { describe, expect, it } from 'vitest';
import { WalSync } from '../../src/db/sqlite/wal-sync.js';

/** A syncFile whose fsyncs finish when the test says. */
function heldSyncs() {
  const calls: { path: string; release(): void; fail(error: Error): void }[] = [];
  const syncFile = (path: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ path, release: resolve, fail: reject });
    });
  return { calls, syncFile };
}

const settled = async <T>(promise: Promise<T>) => {
  let state = 'pending';
  promise.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('WalSync', () => {
  it('callers waiting together share one fsync, and the first one also syncs the directory once', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/data/toolgate.db-wal', held.syncFile);
    wal.committed();
    const waiting = [wal.sync(), wal.sync(), wal.sync()];
    await Promise.resolve();
    expect(held.calls.map((c) => c.path)).toEqual(['/data/toolgate.db-wal']);
    held.calls[0]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(held.calls.map((c) => c.path)).toEqual(['/data/toolgate.db-wal', '/data']);
    expect(await settled(waiting[0]!)).toBe('pending');
    held.calls[1]!.release();
    await Promise.all(waiting);

    // Later syncs: the WAL only.
    wal.committed();
    const later = wal.sync();
    await Promise.resolve();
    expect(held.calls.map((c) => c.path).slice(2)).toEqual(['/data/toolgate.db-wal']);
    held.calls[2]!.release();
    await later;
  });

  it('a commit made while an fsync runs waits for the next fsync, which starts when that one ends', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    wal.committed();
    const first = wal.sync();
    await Promise.resolve();
    wal.committed(); // after the running fsync started: it may not be in it
    const second = wal.sync();
    const third = wal.sync(); // shares the next one with `second`
    held.calls[0]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    held.calls[1]!.release(); // the directory, once
    await first;
    expect(await settled(second)).toBe('pending');
    expect(held.calls).toHaveLength(3);
    held.calls[2]!.release();
    await Promise.all([second, third]);
    expect(held.calls).toHaveLength(3);
  });

  it('with nothing committed since the last fsync, sync() resolves without another', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    await wal.sync();
    expect(held.calls).toHaveLength(0);
    wal.committed();
    const one = wal.sync();
    await Promise.resolve();
    held.calls[0]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    held.calls[1]!.release();
    await one;
    await wal.sync();
    expect(held.calls).toHaveLength(2);
  });

  it('a failed fsync fails its waiters, and the next sync tries again', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    wal.committed();
    const failing = wal.sync();
    await Promise.resolve();
    held.calls[0]!.fail(new Error('EIO'));
    await expect(failing).rejects.toThrow('EIO');
    const retry = wal.sync();
    await Promise.resolve();
    expect(held.calls).toHaveLength(2);
    held.calls[1]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    held.calls[2]!.release();
    await retry;
  });

  it('an in-memory database (no WAL file) has nothing to sync', async () => {
    const held = heldSyncs();
    const wal = new WalSync(null, held.syncFile);
    wal.committed();
    await wal.sync();
    expect(held.calls).toHaveLength(0);
  });
});
