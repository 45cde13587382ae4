// Cancel a gateway call that waits for confirmation: its pending confirmations are answered CANCEL, through the same
// use case as any answer (whoever answers first wins), so the tool does not run and the call's turn ends CANCELLED.
// Only a waiting call can be cancelled: one let through runs its tool (or is about to), which nothing stops halfway,
// and one that stopped has its result. A call withdrawn because its caller stopped waiting is cancelled the same way,
// and the request keeps why.
import type { CallerWithdrawal, TurnStatus } from '../domain/records.js';
import type { NotFound } from '../domain/refusals.js';
import { answerElicitation } from './answer-elicitation.js';
import { gatewayCall, type GatewayCall } from './call-tool.js';
import type { AppDeps } from './deps.js';
import type { Outcome } from './outcome.js';
import type { Viewer } from './viewer.js';

export interface CancelCallInput {
  /** The gateway the call was made through. */
  agentId: string;
  /** The call's turn. */
  turnId: string;
  /** The caller stopped waiting: the call is withdrawn on its behalf, and the request says why. */
  withdrawn?: CallerWithdrawal;
}

export type CancelCallRefusal =
  /** The viewer has no such call on this gateway. */
  | (NotFound<'turn'> & { field: 'turnId' })
  /** It no longer waits: RUNNING (let through: its tool runs or is about to), or stopped. `status` as it is now. */
  | { code: 'ALREADY_RESOLVED'; field: 'turnId'; status: TurnStatus };

export type CancelCallOutcome = Outcome<{ call: GatewayCall }, CancelCallRefusal>;

export async function cancelGatewayCall(
  app: AppDeps,
  viewer: Viewer,
  input: CancelCallInput,
): Promise<CancelCallOutcome> {
  const call = await gatewayCall(app, viewer, input.turnId, input.agentId);
  if (!call) return { ok: false, code: 'NOT_FOUND', of: 'turn', field: 'turnId' };
  for (const elicitation of call.waitingOn) {
    const answered = await answerElicitation(app, viewer, {
      elicitationId: elicitation.id,
      action: 'CANCEL',
      ...(input.withdrawn !== undefined && { withdrawn: input.withdrawn }),
    });
    // One CANCEL closes the turn with every request of its step. A refusal (answered first elsewhere, expired) means
    // the call moved on: read below where it stands.
    if (answered.ok) break;
  }
  const now = await gatewayCall(app, viewer, input.turnId, input.agentId);
  if (!now) return { ok: false, code: 'NOT_FOUND', of: 'turn', field: 'turnId' };
  if (now.turn.status !== 'CANCELLED') {
    return { ok: false, code: 'ALREADY_RESOLVED', field: 'turnId', status: now.turn.status };
  }
  return { ok: true, call: now };
}
