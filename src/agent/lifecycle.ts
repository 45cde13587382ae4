// What happens to turns, answers, tool calls and model calls, told to observers (logs, metrics) after it has
// committed. Observers only watch: nothing the loop decides depends on them, and one that throws is reported
// through onError and otherwise ignored, so a broken log or metric never breaks or slows a turn's correctness.
import type { ElicitationAction, ElicitationRecord, ToolCall, TurnRecord } from '../domain/records.js';

/** A tool run's outcome: `ok`, the tool reported an error or threw (`error`), or never re-run after a crash (`interrupted`). */
export type ToolRunOutcome = 'ok' | 'error' | 'interrupted';

export type LifecycleEvent =
  /** A new turn committed RUNNING (a superseded one, if any, is reported as `turnEnded` first). */
  | { type: 'turnStarted'; turn: TurnRecord }
  /** The turn committed PAUSED with these new elicitations. */
  | { type: 'turnPaused'; turn: TurnRecord; elicitations: ElicitationRecord[] }
  /** The turn reached a final status: COMPLETED, FAILED, CANCELLED or EXPIRED. */
  | { type: 'turnEnded'; turn: TurnRecord }
  /** A user's answer was recorded (not a duplicate); `waitedMs`: from the pause to the answer. */
  | { type: 'elicitationAnswered'; elicitation: ElicitationRecord; action: ElicitationAction; waitedMs: number }
  /** Elicitations closed unanswered because their turn expired. */
  | { type: 'elicitationsExpired'; turn: TurnRecord; count: number }
  /**
   * A call was journaled started and is about to run; `grantId`: a remembered approval let it run unasked; `edited`:
   * with the arguments the user edited before accepting.
   */
  | { type: 'toolStarted'; turn: TurnRecord; toolCall: ToolCall; grantId?: string; edited?: boolean }
  /** A call's result was saved; `durationMs` is the tool's own run time (0 for an interrupted one). */
  | { type: 'toolFinished'; turn: TurnRecord; toolCall: ToolCall; outcome: ToolRunOutcome; durationMs: number }
  /** A call refused as it was to start: the decision record that accepted it does not verify (`problem`). */
  | { type: 'toolRefused'; turn: TurnRecord; toolCall: ToolCall; problem: string }
  /** One model call (iteration) returned or failed. */
  | { type: 'modelCalled'; turn: TurnRecord; modelId: string; outcome: 'ok' | 'error'; durationMs: number };

export interface LifecycleObserver {
  onLifecycle(event: LifecycleEvent): void;
}

/** One observer that tells every given one, each guarded: a throwing observer is reported and skipped. */
export function fanOut(observers: LifecycleObserver[], onError: (error: unknown) => void): LifecycleObserver {
  return {
    onLifecycle(event) {
      for (const observer of observers) {
        try {
          observer.onLifecycle(event);
        } catch (error) {
          onError(error);
        }
      }
    },
  };
}
