// What the runner tells the outside once it committed: subscribers (RunnerEvents, published on the pub/sub) and
// observers (LifecycleObserver: logs, metrics). Neither changes what a turn does.
import type { ElicitationAnswer, ElicitationRecord, TurnRecord } from '../domain/records.js';
import type { Reads } from '../domain/store.js';
import type { LifecycleEvent, LifecycleObserver } from './lifecycle.js';

/** What the loop tells the outside about (subscriptions). */
export interface RunnerEvents {
  turnChanged(turn: TurnRecord): void;
  elicitationsCreated(elicitations: ElicitationRecord[]): void;
  /** A request the sweeper marked escalated (docs/approvers.md "Escalation"): its escalation roles may answer now. */
  elicitationEscalated?(elicitation: ElicitationRecord): void;
  /**
   * Requests changed after they were made, as committed: an answer counted towards a quorum, a decision, or closed
   * with their turn (cancelled, superseded, expired). All of one turn.
   */
  elicitationsChanged?(elicitations: ElicitationRecord[]): void;
  /**
   * A model call (`iteration`, 1-based) starts: where each piece of its text goes as it is generated (live display,
   * best-effort: it returns at once and is never awaited; the saved ASSISTANT message is what counts).
   */
  modelText?(turn: TurnRecord, iteration: number): (delta: string) => void;
  /**
   * This process stopped running the turn for now: it paused or ended, or another process took it over (a lost
   * lease), or the store stopped answering. Whatever was kept for the turn's live events can go.
   */
  turnLeft?(turnId: string): void;
}

export interface ReporterOptions {
  store: Pick<Reads, 'loadTurn' | 'listTurnElicitations'>;
  events?: RunnerEvents;
  observer?: LifecycleObserver;
  onError?: (error: unknown) => void;
  now: () => string;
}

export class TurnReporter {
  constructor(private readonly options: ReporterOptions) {}

  /** The turn as just committed. */
  turn(turn: TurnRecord): void {
    this.options.events?.turnChanged(turn);
  }

  /**
   * The turn changed in what it holds (a TOOL message), not in its own fields: published as a new record, so that
   * subscribers read its messages anew (reads are shared per record, src/graphql/shared-reads.ts).
   */
  changed(turn: TurnRecord): void {
    this.turn({ ...turn });
  }

  /** The turn as the store holds it now. */
  async latest(turnId: string): Promise<void> {
    const turn = await this.options.store.loadTurn(turnId);
    if (turn) this.turn(turn);
  }

  elicitationsCreated(elicitations: ElicitationRecord[]): void {
    this.options.events?.elicitationsCreated(elicitations);
  }

  /** Requests an answer changed (counted, or decided), as committed. */
  elicitationsChanged(elicitations: ElicitationRecord[]): void {
    this.options.events?.elicitationsChanged?.(elicitations);
  }

  escalated(elicitation: ElicitationRecord): void {
    this.options.events?.elicitationEscalated?.(elicitation);
  }

  modelText(turn: TurnRecord, iteration: number): ((delta: string) => void) | undefined {
    return this.options.events?.modelText?.(turn, iteration);
  }

  turnLeft(turnId: string): void {
    this.options.events?.turnLeft?.(turnId);
  }

  /** Tells the observer; one that throws is reported and ignored (it never changes what the turn does). */
  observe(event: LifecycleEvent): void {
    if (!this.options.observer) return;
    try {
      this.options.observer.onLifecycle(event);
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  answered(elicitation: ElicitationRecord, answer: ElicitationAnswer): void {
    const answeredAt = Date.parse(elicitation.resolvedAt ?? this.options.now());
    const waitedMs = Math.max(0, answeredAt - Date.parse(elicitation.createdAt));
    this.observe({ type: 'elicitationAnswered', elicitation, action: answer.action, waitedMs });
  }

  /** A model call that started at `startedAt` (performance.now()) returned or failed. */
  modelCalled(turn: TurnRecord, modelId: string, outcome: 'ok' | 'error', startedAt: number): void {
    this.observe({ type: 'modelCalled', turn, modelId, outcome, durationMs: performance.now() - startedAt });
  }

  /**
   * A paused turn this process just closed (cancelled, superseded, expired), after turn(): the requests closed with it
   * go to their subscribers, and the observer hears how many expired and that the turn ended. The requests are read
   * back once, and only when someone listens: those the closing closed carry the turn's time (one transaction).
   */
  async closed(turn: TurnRecord): Promise<void> {
    const { events, observer } = this.options;
    const publish = events?.elicitationsChanged !== undefined;
    const countExpired = turn.status === 'EXPIRED' && observer !== undefined;
    if (publish || countExpired) {
      try {
        const elicitations = await this.options.store.listTurnElicitations(turn.id);
        const closedNow = elicitations.filter((e) => e.status !== 'PENDING' && e.resolvedAt === turn.updatedAt);
        if (publish && closedNow.length > 0) this.elicitationsChanged(closedNow);
        if (countExpired) {
          const count = elicitations.filter((e) => e.status === 'EXPIRED').length;
          this.observe({ type: 'elicitationsExpired', turn, count });
        }
      } catch (error) {
        this.options.onError?.(error);
      }
    }
    this.observe({ type: 'turnEnded', turn });
  }
}
