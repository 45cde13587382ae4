// What the loop reports (src/agent/runner.ts RunnerEvents), published on the pub/sub: each change of a turn once it
// is on disk, and the text of its model calls as it is generated. Per turn, everything goes out in the order the loop
// reported it, so a turnEvents subscriber sees a step's TOOL messages before the next answer's text, and an answer's
// text before the turn that saved it. Streamed text is best-effort: never awaited by the loop, never stored.
import type { RunnerEvents } from '../agent/runner.js';
import type { TurnRecord } from '../domain/records.js';
import { toStorableText } from '../domain/text.js';
import type { ToolgatePubSub, TurnTextDelta } from './pubsub.js';

export interface RunnerEventPublisher extends Required<RunnerEvents> {
  /**
   * The text published so far by the model call of `turnId` running in this process, as one delta (offset 0, index
   * of the last piece it holds), or null (no call streaming here). For a subscriber that joins mid-answer.
   */
  textSoFar(turnId: string): TurnTextDelta | null;
}

export interface RunnerEventOptions {
  pubsub: ToolgatePubSub;
  /**
   * Resolves once what was committed before the call is durable (store.flush()): a turn's change waits for it.
   * `soon`: it may wait a moment for the fsync of the request's next durable step instead of starting its own.
   */
  flush: (options: { soon: boolean }) => Promise<void>;
  onError: (error: unknown) => void;
}

/** The text of one model call: published so far, and received but not yet published. */
interface CallText {
  turnId: string;
  iteration: number;
  nextIndex: number;
  published: string;
  unpublished: string;
}

export function createRunnerEventPublisher({ pubsub, flush, onError }: RunnerEventOptions): RunnerEventPublisher {
  // Per turn: the tail of its publications still waiting for a flush. What the loop reports later (text too) is
  // published after them; with none waiting, at once.
  const waiting = new Map<string, { tail: Promise<void>; count: number }>();
  const inOrder = (turnId: string, ready: Promise<void> | null, publish: () => void) => {
    let queue = waiting.get(turnId);
    if (!queue && !ready) return publish();
    if (!queue) waiting.set(turnId, (queue = { tail: Promise.resolve(), count: 0 }));
    const current = queue;
    current.count++;
    current.tail = Promise.all([current.tail, ready])
      .then(publish)
      .catch(onError)
      .finally(() => {
        if (--current.count === 0) waiting.delete(turnId);
      });
  };

  // The model call streaming now, per turn (replaced by the turn's next call, dropped when the turn changes: its
  // text is then saved in a message, or the call failed; or when this process stops running the turn without a
  // change, having lost its lease: another process runs it now and streams its own text).
  const calls = new Map<string, CallText>();
  // Pieces arriving in one macrotask (one network read often holds several) go out as one delta: fewer events for
  // every subscriber and for Redis, at no cost in latency.
  const unpublished = new Set<CallText>();
  let scheduled = false;
  /** The call's text is no longer kept: its pieces not yet published never will be. */
  const forget = (call: CallText) => {
    unpublished.delete(call);
    calls.delete(call.turnId);
  };
  const publishPending = () => {
    scheduled = false;
    for (const call of unpublished) publishText(call, false);
    unpublished.clear();
  };
  const publishText = (call: CallText, final: boolean) => {
    let text = call.unpublished;
    // A surrogate pair split between two pieces is held back until its second half comes.
    if (!final && /[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
    if (!text) return;
    call.unpublished = call.unpublished.slice(text.length);
    const delta: TurnTextDelta = {
      kind: 'textDelta',
      turnId: call.turnId,
      iteration: call.iteration,
      index: call.nextIndex++,
      offset: call.published.length,
      // As the store will keep it (no NUL, no unpaired surrogate), so that the pieces add up to the saved text.
      text: toStorableText(text),
    };
    call.published += delta.text;
    inOrder(call.turnId, null, () => pubsub.publish('turnText', call.turnId, delta));
  };

  return {
    turnChanged(turn: TurnRecord) {
      const call = calls.get(turn.id);
      if (call) {
        // The call's last pieces go out before the change that saved its answer (or ended the turn).
        publishText(call, true);
        forget(call);
      }
      // A turn that stopped (paused or ended) has no next durable step to ride on: its change is synced at once, so
      // that whoever waits for it (a gateway's client, a subscriber) is not kept waiting for nothing.
      inOrder(turn.id, flush({ soon: turn.status === 'RUNNING' }), () => pubsub.publish('turn', turn.id, turn));
    },
    turnLeft(turnId) {
      const call = calls.get(turnId);
      if (call) forget(call);
    },
    elicitationsCreated(elicitations) {
      flush({ soon: true })
        .then(() => {
          for (const elicitation of elicitations) {
            pubsub.publish('elicitations', elicitation.ownerId, elicitation);
            // Under an approvers policy it is offered to the approvers of each of its roles too (the escalation
            // roles only once it escalates); each subscriber decides whether its viewer may answer it.
            for (const role of new Set(elicitation.approval?.roles)) {
              pubsub.publish('approverElicitations', role, elicitation);
            }
          }
        })
        .catch(onError);
    },
    elicitationsChanged(elicitations) {
      const turnId = elicitations[0]?.turnId;
      if (turnId === undefined) return;
      // After the turn's change that made them, once durable, like the turn's own.
      inOrder(turnId, flush({ soon: true }), () => {
        for (const elicitation of elicitations) pubsub.publish('elicitation', elicitation.id, elicitation);
      });
    },
    elicitationEscalated(elicitation) {
      // To each escalation role's approvers (offered to them from now on), and to whoever follows the request.
      flush({ soon: true })
        .then(() => {
          for (const role of elicitation.approval?.escalation?.roles ?? [])
            pubsub.publish('approverElicitations', role, elicitation);
          pubsub.publish('elicitation', elicitation.id, elicitation);
        })
        .catch(onError);
    },
    modelText(turn, iteration) {
      const call: CallText = { turnId: turn.id, iteration, nextIndex: 0, published: '', unpublished: '' };
      calls.set(turn.id, call);
      return (piece) => {
        // A call the turn has moved on from (its answer saved) publishes nothing more.
        if (calls.get(call.turnId) !== call || !piece) return;
        call.unpublished += piece;
        unpublished.add(call);
        if (!scheduled) {
          scheduled = true;
          setImmediate(publishPending);
        }
      };
    },
    textSoFar(turnId) {
      const call = calls.get(turnId);
      if (!call?.published) return null;
      return {
        kind: 'textDelta',
        turnId,
        iteration: call.iteration,
        index: call.nextIndex - 1,
        offset: 0,
        text: call.published,
      };
    },
  };
}
