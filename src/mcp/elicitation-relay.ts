// A waiting call's confirmations, asked of the MCP client that made the call (elicitation/create, form mode). The
// client's answer is one answer among others: it goes through answerElicitation like the inbox's or the API's, so
// whoever answers first wins and the tool runs at most once. A refusal there (answered elsewhere first, expired,
// content not as asked) leaves the call waiting for the other answerers.
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ElicitRequestFormParams,
  type ElicitResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation } from '../app/answer-elicitation.js';
import type { AppDeps } from '../app/deps.js';
import type { Viewer } from '../app/viewer.js';
import type { ElicitationAction, ElicitationRecord } from '../domain/records.js';
import { linkedSignal } from './linked-signal.js';

export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const ACTIONS: Record<ElicitResult['action'], ElicitationAction> = {
  accept: 'ACCEPT',
  decline: 'DECLINE',
  cancel: 'CANCEL',
};

/** setTimeout's longest delay: a pause may last longer, the client's answer is then awaited that long. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface RelayContext {
  app: AppDeps;
  viewer: Viewer;
  /** The tools/call request the questions belong to (they travel on its response stream). */
  extra: RequestExtra;
  /** Aborted when the call's result is known: a question still open is then cancelled. */
  signal: AbortSignal;
  onError: (error: unknown) => void;
  /** Resolves once what was committed before is on disk (the store's flush). */
  flush: () => Promise<void>;
}

/** Asks the client each of `waitingOn`, and the confirmations an answer leads to in the same turn. */
export function askClient(context: RelayContext, waitingOn: readonly ElicitationRecord[]): void {
  const asked = new Set<string>();
  const ask = async (elicitation: ElicitationRecord): Promise<void> => {
    if (asked.has(elicitation.id) || elicitation.status !== 'PENDING' || context.signal.aborted) return;
    asked.add(elicitation.id);
    const answer = await question(context, elicitation);
    if (!answer) return;
    const outcome = await answerElicitation(context.app, context.viewer, {
      elicitationId: elicitation.id,
      action: ACTIONS[answer.action],
      content: answer.content,
    });
    if (!outcome.ok) return;
    for (const next of outcome.pausedWith ?? []) {
      if (next.turnId === elicitation.turnId) void ask(next).catch(context.onError);
    }
  };
  for (const elicitation of waitingOn) void ask(elicitation).catch(context.onError);
}

/** The client's answer; null when it gave none before the request expired or the call's result came. */
async function question(context: RelayContext, elicitation: ElicitationRecord): Promise<ElicitResult | null> {
  const untilExpiry = Date.parse(elicitation.expiresAt) - context.app.clock().getTime();
  if (!(untilExpiry > 0)) return null;
  const { message, requestedSchema, _meta } = elicitation.request;
  const params: ElicitRequestFormParams = {
    mode: 'form',
    message,
    requestedSchema: requestedSchema as ElicitRequestFormParams['requestedSchema'],
    _meta,
  };
  // The question's own signal, cut off from the call's once the client answered: a client must not be told to cancel
  // what it has already answered.
  const open = linkedSignal([context.signal]);
  try {
    // Asked once the pause is on disk: a client never answers a confirmation a power cut then takes back.
    await context.flush();
    return await context.extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, {
      signal: open.signal,
      timeout: Math.min(untilExpiry, MAX_TIMEOUT_MS),
    });
  } catch {
    // Cancelled, timed out, or the client could not ask: the confirmation stays pending for the other answerers.
    return null;
  } finally {
    open.release();
  }
}
