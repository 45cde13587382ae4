// Who runs a turn, and what becomes of it when a run stops short: the turns this process runs (one run per turn,
// its lease renewed meanwhile), what a fault leaves behind (FAILED, another process's, or stranded for the next
// recovery), taking over turns no live process runs, and expiring paused turns whose time has passed.
import type { TurnRecord } from '../domain/records.js';
import { LeaseLostError, type Reads, type TurnMaintenance } from '../domain/store.js';
import type { TurnLeases } from './lease.js';
import type { AtOnce, CallStart, KnownState, TurnLoop, TurnStop } from './loop.js';
import { turnErrors } from '../domain/gate/messages.js';
import type { TurnReporter } from './reporting.js';

export interface SupervisorOptions {
  store: TurnMaintenance & Pick<Reads, 'loadTurn'>;
  loop: TurnLoop;
  leases: TurnLeases;
  reporter: TurnReporter;
  clock: () => Date;
  /** Times a turn may be taken over after the process running it died, before it is FAILED instead. */
  maxRecoveries: number;
  onError?: (error: unknown) => void;
}

export class TurnSupervisor {
  readonly #store: SupervisorOptions['store'];
  readonly #leases: TurnLeases;
  /** Turns this process is running now; a restart recovers the rest. */
  readonly #inFlight = new Map<string, Promise<TurnStop>>();
  /**
   * RUNNING turns this process holds but stopped running: a store write failed and so did ending the turn (the
   * database was away). The next recovery (every sweep) takes each over again, like a dead process's.
   */
  readonly #stranded = new Set<string>();
  /** Gateway calls running before their turn is written (callAtOnce). */
  readonly #atOnce = new Set<Promise<AtOnce>>();

  constructor(private readonly options: SupervisorOptions) {
    this.#store = options.store;
    this.#leases = options.leases;
  }

  #now(): string {
    return this.options.clock().toISOString();
  }

  /** Runs the turn in this process (a second call while it runs joins the first); `known`: see KnownState. */
  run(turnId: string, known: KnownState = {}): Promise<TurnStop> {
    return this.#track(turnId, async () => {
      const end = await this.options.loop.run(turnId, known);
      if (end.kind === 'stopped') return { turn: end.turn, pausedWith: end.pausedWith };
      return { turn: await this.#afterFault(end.turn, end.error), pausedWith: null };
    });
  }

  /**
   * A gateway's call that may run before its turn is written (TurnLoop.callAtOnce), counted as running until it is
   * recorded: a server stopping waits for it as for a turn.
   */
  callAtOnce(start: CallStart): Promise<AtOnce> {
    const work: Promise<AtOnce> = this.options.loop.callAtOnce(start).finally(() => this.#atOnce.delete(work));
    this.#atOnce.add(work);
    return work;
  }

  /** This process's run of the turn, while there is one. */
  running(turnId: string): Promise<TurnStop> | undefined {
    return this.#inFlight.get(turnId);
  }

  /** Resolves when every turn this process is running has stopped. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0 || this.#atOnce.size > 0)
      await Promise.allSettled([...this.#inFlight.values(), ...this.#atOnce]);
  }

  /**
   * Recovery: take over the RUNNING turns no live process runs (see lease.ts) and continue each from its last
   * persisted step. Safe to call at any time and from several processes: each orphan is claimed by exactly one.
   * A turn taken over more than maxRecoveries times is FAILED instead: it may be what crashes the servers.
   * Returns the ids of the turns taken over.
   */
  async recover(): Promise<string[]> {
    const taken: string[] = [];
    // This process's own turns it stopped running on a store error come first: nobody else would take them while
    // this process renews its leases.
    const stranded = [...this.#stranded].map((turnId) => ({ turnId, owner: this.#leases.owner }));
    for (const orphan of [...stranded, ...(await this.#leases.orphans())]) {
      if (this.#inFlight.has(orphan.turnId)) continue;
      const claimed = await this.#store.claimTurn(orphan.turnId, orphan.owner, this.#leases.next(), this.#now());
      this.#stranded.delete(orphan.turnId); // a claim that threw (the store still away) leaves it for the next sweep
      if (!claimed) continue; // another process was quicker, or the turn is no longer RUNNING
      taken.push(orphan.turnId);
      const maxRecoveries = this.options.maxRecoveries;
      const run =
        claimed.recoveries > maxRecoveries
          ? this.#track(orphan.turnId, async () => ({
              turn: await this.options.loop.fail(claimed.turn, turnErrors.tooManyRecoveries(maxRecoveries)),
              pausedWith: null,
            }))
          : this.run(orphan.turnId);
      // Another process taking the turn over meanwhile is not a fault: it runs the turn now.
      run.catch((error) => {
        if (!(error instanceof LeaseLostError)) this.options.onError?.(error);
      });
    }
    return taken;
  }

  /** Expire paused turns whose time has passed. */
  async expireDue(limit: number): Promise<TurnRecord[]> {
    const expired = await this.#store.expireDueTurns(this.#now(), limit);
    for (const turn of expired) {
      this.options.reporter.turn(turn);
      await this.options.reporter.closed(turn);
    }
    return expired;
  }

  /** Runs `work` as this process's run of the turn, renewing the turn's lease meanwhile. */
  #track(turnId: string, work: () => Promise<TurnStop>): Promise<TurnStop> {
    const existing = this.#inFlight.get(turnId);
    if (existing) return existing;
    this.#leases.hold();
    const run = work().finally(() => {
      this.#inFlight.delete(turnId);
      this.#leases.release();
      this.options.reporter.turnLeft(turnId);
    });
    this.#inFlight.set(turnId, run);
    return run;
  }

  /** After a fault stopped the loop: the turn as it is now, ended FAILED if this process still holds it. */
  async #afterFault(turn: TurnRecord, error: unknown): Promise<TurnRecord> {
    // Another process took the turn over (this one was frozen past its lease): it is that one's now; write nothing.
    if (error instanceof LeaseLostError) return (await this.#store.loadTurn(turn.id)) ?? turn;
    this.options.onError?.(error);
    try {
      if (!(await this.#leases.holds(turn.id))) return (await this.#store.loadTurn(turn.id)) ?? turn;
      return await this.options.loop.fail(turn, 'The turn failed because of an internal error.');
    } catch {
      // The store is not answering: the turn stays RUNNING under this process's lease; the next sweep retries it.
      this.#stranded.add(turn.id);
      return turn;
    }
  }
}
