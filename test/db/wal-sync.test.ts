// Group commit: a sync covers every commit made before it started; requests waiting at the same time share one
// fsync; one that commits while an fsync runs waits for the next; nothing to sync costs nothing. syncSoon() (an
// event's flush) starts no fsync of its own while another caller's is a few milliseconds away.
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createDatasync, SYNC_SOON_MS, WalSync } from '../../src/db/sqlite/wal-sync.js';

/** A syncFile whose fsyncs finish when the test says. */
function heldSyncs() {
  const calls: { path: string; release(): void; fail(error: Error): void }[] = [];
  const syncFile = (path: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ path, release: resolve, fail: reject });
    });
  /** Ends a WalSync's first fsync: the WAL's (calls[at]), then the one of its directory that follows it. */
  const releaseWithDirectory = async (at: number) => {
    calls[at]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    calls[at + 1]!.release();
  };
  return { calls, syncFile, releaseWithDirectory };
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
    await held.releaseWithDirectory(0);
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
    await held.releaseWithDirectory(0);
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
    await held.releaseWithDirectory(1);
    await retry;
  });

  it("syncSoon() starts no fsync; the next sync() starts one that covers both, and the earlier caller's settles first", async () => {
    // The delay on a clock of the test's: a busy machine must not let it run out before the second caller comes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    await wal.sync(); // nothing committed: nothing to sync
    wal.committed();
    const order: string[] = [];
    const event = wal.syncSoon().then(() => order.push('event'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(held.calls).toHaveLength(0);
    wal.committed(); // the tool start, say: its own commit, after the event's
    const toolStart = wal.sync().then(() => order.push('tool start'));
    await Promise.resolve();
    expect(held.calls.map((c) => c.path)).toEqual(['/d/x-wal']);
    await held.releaseWithDirectory(0);
    await Promise.all([event, toolStart]);
    expect(order).toEqual(['event', 'tool start']);
    // Past the delay nobody started another: the one fsync covered both commits.
    await vi.advanceTimersByTimeAsync(SYNC_SOON_MS * 3);
    expect(held.calls).toHaveLength(2);
    expect(wal.fsyncs).toBe(1);
  });

  it('syncSoon() alone starts its fsync after SYNC_SOON_MS, and settles when that one ends', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    wal.committed();
    const asked = performance.now();
    const event = wal.syncSoon();
    await new Promise((resolve) => setTimeout(resolve, SYNC_SOON_MS * 3));
    expect(held.calls).toHaveLength(1);
    expect(await settled(event)).toBe('pending');
    await held.releaseWithDirectory(0);
    await event;
    expect(performance.now() - asked).toBeGreaterThanOrEqual(SYNC_SOON_MS - 1);
  });

  it('syncSoon() while an fsync runs: covered by it if it started after the commit, else by the next one', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    wal.committed();
    const first = wal.sync();
    const covered = wal.syncSoon(); // its commit is in the running fsync
    wal.committed();
    const next = wal.syncSoon(); // not in it: waits for the one after, which starts as soon as it may
    await Promise.resolve();
    await held.releaseWithDirectory(0);
    await Promise.all([first, covered]);
    expect(await settled(next)).toBe('pending');
    expect(held.calls).toHaveLength(3); // started at once after the first, not SYNC_SOON_MS later
    held.calls[2]!.release();
    await next;
  });

  it('close() with a syncSoon() waiting starts that fsync first: the waiter settles, nothing is left behind', async () => {
    const held = heldSyncs();
    const wal = new WalSync('/d/x-wal', held.syncFile);
    wal.committed();
    const event = wal.syncSoon();
    const closed = wal.close();
    await Promise.resolve();
    expect(held.calls).toHaveLength(1);
    await held.releaseWithDirectory(0);
    await Promise.all([event, closed]);
    expect(wal.fsyncs).toBe(1);
  });

  it('an in-memory database (no WAL file) has nothing to sync', async () => {
    const held = heldSyncs();
    const wal = new WalSync(null, held.syncFile);
    wal.committed();
    await wal.sync();
    await wal.syncSoon();
    expect(held.calls).toHaveLength(0);
  });
});

describe('createDatasync', () => {
  /** This process's open descriptors of `file` (Linux: /proc/self/fd). */
  const openDescriptors = (file: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === file;
      } catch {
        return false;
      }
    }).length;

  it('keeps one handle per file until close(); a sync after close() opens none (nobody would close it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-datasync-'));
    const file = join(dir, 'toolgate.db-wal');
    writeFileSync(file, 'frames');
    try {
      const datasync = createDatasync();
      await datasync(file);
      await datasync(file);
      expect(openDescriptors(file)).toBe(1);
      await datasync.close();
      expect(openDescriptors(file)).toBe(0);
      // A flush that comes late (a request still finishing as its server closes) after the store closed.
      await datasync(file);
      expect(openDescriptors(file)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
