// Which server process runs a RUNNING turn. Several processes may serve one database (a restart overlapping the
// old process, two instances); each RUNNING turn carries a lease naming the process that runs it and until when.
// The holder renews it while it runs; a turn whose lease lapsed, or whose holder is a dead process on this host,
// is an orphan that recovery takes over. See docs/durability.md.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunningTurnLease, TurnLease, TurnMaintenance } from '../domain/store.js';

/** The lease statements of the store: holding, listing and renewing. */
type LeaseStore = Pick<TurnMaintenance, 'holdsLease' | 'listRunningLeases' | 'renewLeases'>;

export interface LeaseOptions {
  /** How long a lease lasts without renewal; renewed every third of it. Default 30. */
  leaseSeconds?: number;
  /** This process's name in leases; default `host:pid:nonce`. */
  owner?: string;
}

export class TurnLeases {
  readonly owner: string;
  readonly #store: LeaseStore;
  readonly #clock: () => Date;
  readonly #leaseMs: number;
  #held = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(store: LeaseStore, clock: () => Date, options: LeaseOptions = {}) {
    this.#store = store;
    this.#clock = clock;
    this.#leaseMs = (options.leaseSeconds ?? 30) * 1000;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** A fresh lease for this process. */
  next(): TurnLease {
    return { owner: this.owner, until: new Date(this.#clock().getTime() + this.#leaseMs).toISOString() };
  }

  holds(turnId: string): Promise<boolean> {
    return this.#store.holdsLease(turnId, this.owner);
  }

  /** RUNNING turns that no live process runs: no lease, a lapsed one, or one of a dead process on this host. */
  async orphans(): Promise<RunningTurnLease[]> {
    const now = this.#clock().toISOString();
    return (await this.#store.listRunningLeases()).filter(
      (lease) =>
        lease.owner !== this.owner &&
        (lease.owner === null || lease.expiresAt === null || lease.expiresAt <= now || ownerIsDead(lease.owner)),
    );
  }

  /** While at least one turn is held, renew this process's leases every third of their length. */
  hold(): void {
    if (this.#held++ > 0) return;
    this.#timer = setInterval(
      () => {
        const now = this.#clock().toISOString();
        this.#store.renewLeases(this.owner, this.next().until, now).catch(() => {
          /* next tick retries; the lease has slack */
        });
      },
      Math.max(50, this.#leaseMs / 3),
    ).unref();
  }

  release(): void {
    if (--this.#held > 0) return;
    this.#held = 0;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * True only when `owner` is certainly a dead process: one of this host whose pid is gone, or whose pid is now
 * ours (a restarted container's PID 1). Unknown hosts and live pids are not dead: their leases must lapse.
 */
export function ownerIsDead(owner: string): boolean {
  const parts = owner.split(':');
  if (parts.length < 3) return false;
  const pid = Number(parts.at(-2));
  const host = parts.slice(0, -2).join(':');
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
