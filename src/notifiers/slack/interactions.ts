// A verified Slack interaction (a card's button, the decline modal's submission) as an answer: the Slack user is
// mapped to a toolgate user (the config's slack.users, or their email), and the answer goes through answerElicitation,
// authorized exactly as an answer in the API (roles, four eyes, quorum, the requester rule). A refusal is told to that
// user alone (an ephemeral message, or the modal's error), and changes nothing. A successful answer changes the
// request; the card follows through the outbox like every other answer's.
import type { WebClient } from '@slack/web-api';
import { answerableBy, answerElicitation, type AnswerElicitationRefusal } from '../../app/answer-elicitation.js';
import type { AppDeps } from '../../app/deps.js';
import type { Viewer } from '../../app/viewer.js';
import type { SlackSettings } from '../../config/slack.js';
import type { ElicitationAction, RememberChoice } from '../../domain/records.js';
import type { Logger } from '../../observability/logger.js';
import { declineModal, DECLINE_MODAL, SLACK_ACTIONS, SLACK_REMEMBER_TTL_SECONDS } from './card.js';

export interface SlackInteractionDeps {
  app: AppDeps;
  settings: SlackSettings;
  client: WebClient;
  logger?: Logger;
  /** A fault in an answer that went on after Slack was answered. */
  onError: (error: unknown) => void;
}

/** What the HTTP entrance answers Slack with: an empty 200, or a JSON body (the modal's errors). */
export type InteractionReply = { status: 200; body: Record<string, unknown> | null };

const EMPTY: InteractionReply = { status: 200, body: null };

/** The parts of Slack's interaction payloads used here (block_actions and view_submission). */
interface InteractionPayload {
  type?: string;
  user?: { id?: string };
  channel?: { id?: string };
  trigger_id?: string;
  actions?: { action_id?: string; value?: string }[];
  view?: {
    callback_id?: string;
    private_metadata?: string;
    state?: { values?: Record<string, Record<string, { value?: string | null }>> };
  };
}

export async function handleSlackInteraction(
  deps: SlackInteractionDeps,
  payload: InteractionPayload,
): Promise<InteractionReply> {
  const slackUser = payload.user?.id;
  if (typeof slackUser !== 'string') return EMPTY;
  if (payload.type === 'block_actions') return buttonPressed(deps, payload, slackUser);
  if (payload.type === 'view_submission' && payload.view?.callback_id === DECLINE_MODAL.callbackId) {
    return declineSubmitted(deps, payload, slackUser);
  }
  return EMPTY;
}

async function buttonPressed(
  deps: SlackInteractionDeps,
  payload: InteractionPayload,
  slackUser: string,
): Promise<InteractionReply> {
  const action = payload.actions?.[0];
  const elicitationId = action?.value;
  const tell = (text: string) => ephemeral(deps, payload, slackUser, text);
  // The edit button is a link to the inbox: Slack tells of the click, there is nothing to do.
  if (!action || typeof elicitationId !== 'string' || action.action_id === SLACK_ACTIONS.edit) return EMPTY;
  const viewer = await viewerOf(deps, slackUser);
  if (!viewer) {
    await tell(UNLINKED);
    return EMPTY;
  }
  if (action.action_id === SLACK_ACTIONS.decline) {
    // Refused before the modal opens, so that nobody writes instructions that cannot be given.
    const refusal = await standingRefusal(deps, viewer, elicitationId, 'DECLINE');
    if (refusal) {
      await tell(refusal);
      return EMPTY;
    }
    const request = await deps.app.store.loadElicitation(elicitationId);
    const label = request ? (request.toolCall.annotations.title ?? request.toolCall.name) : elicitationId;
    try {
      await deps.client.views.open({
        trigger_id: payload.trigger_id!,
        view: declineModal(elicitationId, label) as never,
      });
    } catch (error) {
      // An expired trigger (over 3 s old) or Slack down: nothing was answered; the user may click again.
      deps.logger?.warn({ err: error, elicitationId, slackUser }, 'slack decline modal not opened');
      await tell('The decline form could not be opened; nothing was changed. Try again, or decline in the inbox.');
    }
    return EMPTY;
  }
  const remember: RememberChoice | null =
    action.action_id === SLACK_ACTIONS.rememberThread
      ? { scope: 'THREAD', ttlSeconds: SLACK_REMEMBER_TTL_SECONDS }
      : action.action_id === SLACK_ACTIONS.rememberAgent
        ? { scope: 'AGENT', ttlSeconds: SLACK_REMEMBER_TTL_SECONDS }
        : null;
  if (action.action_id !== SLACK_ACTIONS.approve && !remember) return EMPTY;
  const answering = answerElicitation(deps.app, viewer, { elicitationId, action: 'ACCEPT', remember }).then(
    async (outcome) => {
      if (!outcome.ok) await tell(refusalWords(outcome));
      deps.logger?.info(
        { elicitationId, slackUser, user: viewer.id, answered: outcome.ok, ...(!outcome.ok && { code: outcome.code }) },
        'slack answer',
      );
    },
  );
  // The last answer resumes the turn, and answerElicitation returns once the turn paused or ended: Slack is answered
  // in time whatever the tool takes (refusals come before any of it, and are told ephemerally either way).
  await withinAckTime(answering, deps.onError);
  return EMPTY;
}

/** Slack wants its answer within 3 s; what takes longer goes on after the acknowledgement. */
export const ACK_WITHIN_MS = 2_500;

async function withinAckTime(work: Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const caught = work.catch(onError);
  await Promise.race([caught, new Promise((resolve) => (timer = setTimeout(resolve, ACK_WITHIN_MS)))]);
  clearTimeout(timer);
}

async function declineSubmitted(
  deps: SlackInteractionDeps,
  payload: InteractionPayload,
  slackUser: string,
): Promise<InteractionReply> {
  const elicitationId = payload.view?.private_metadata;
  if (typeof elicitationId !== 'string') return EMPTY;
  const modalError = (text: string): InteractionReply => ({
    status: 200,
    body: { response_action: 'errors', errors: { [DECLINE_MODAL.block]: text.slice(0, 150) } },
  });
  const viewer = await viewerOf(deps, slackUser);
  if (!viewer) return modalError(UNLINKED);
  const written = payload.view?.state?.values?.[DECLINE_MODAL.block]?.[DECLINE_MODAL.input]?.value;
  const request = await deps.app.store.loadElicitation(elicitationId);
  // The instructions go where the request's schema takes them (the confirmation listener's `instructions`).
  const properties = request?.request.requestedSchema.properties as Record<string, unknown> | undefined;
  const takesInstructions = Boolean(properties?.instructions);
  const content =
    typeof written === 'string' && written.trim() !== '' && takesInstructions ? { instructions: written } : null;
  let outcome: Awaited<ReturnType<typeof answerElicitation>> | null = null;
  const answering = answerElicitation(deps.app, viewer, { elicitationId, action: 'DECLINE', content }).then((done) => {
    outcome = done;
    deps.logger?.info(
      { elicitationId, slackUser, user: viewer.id, answered: done.ok, ...(!done.ok && { code: done.code }) },
      'slack answer',
    );
  });
  // A refusal comes at once and is shown in the modal; a decline that resumes a long turn closes it in time.
  await withinAckTime(answering, deps.onError);
  const decided = outcome as Awaited<ReturnType<typeof answerElicitation>> | null;
  if (decided && !decided.ok) return modalError(refusalWords(decided));
  return { status: 200, body: { response_action: 'clear' } };
}

/** Why this user could not give this answer now (answerElicitation's rule of who may answer), in words; null: they may. */
async function standingRefusal(
  deps: SlackInteractionDeps,
  viewer: Viewer,
  elicitationId: string,
  action: ElicitationAction,
): Promise<string | null> {
  const found = await answerableBy(deps.app, viewer, elicitationId, action);
  if (!found.ok) return refusalWords(found);
  const { status } = found.elicitation;
  return status === 'PENDING' ? null : refusalWords({ code: 'ALREADY_RESOLVED', status, field: 'elicitationId' });
}

/**
 * The toolgate user a Slack user answers as: their slack.users entry by id; else, with mapByEmail, their Slack
 * profile's email (users.info): the entry with that email, else the email itself, with the roles auth.tokens give
 * that user. null: not linked. Never an administrator: a click answers, it does not administer.
 */
export async function viewerOf(deps: SlackInteractionDeps, slackUser: string): Promise<Viewer | null> {
  const { settings } = deps;
  const listed = settings.usersById.get(slackUser);
  if (listed) return { id: listed.user, isAdmin: false, roles: listed.roles };
  if (!settings.mapByEmail) return null;
  let info: Awaited<ReturnType<WebClient['users']['info']>>;
  try {
    info = await deps.client.users.info({ user: slackUser });
  } catch (error) {
    // Unknown to Slack, or the app lacks users:read.email: not linked, and the log says why.
    deps.logger?.warn({ err: error, slackUser }, 'slack user not looked up');
    return null;
  }
  const email = info.user?.profile?.email;
  if (!email || info.user?.deleted || info.user?.is_bot) return null;
  const byEmail = settings.usersByEmail.get(email.toLowerCase());
  if (byEmail) return { id: byEmail.user, isAdmin: false, roles: byEmail.roles };
  return { id: email, isAdmin: false, roles: settings.rolesOf(email) };
}

/** Tells one user, in the channel of the card, visible to them alone (chat.postEphemeral). */
async function ephemeral(deps: SlackInteractionDeps, payload: InteractionPayload, user: string, text: string) {
  const channel = payload.channel?.id;
  if (!channel) return;
  try {
    await deps.client.chat.postEphemeral({ channel, user, text });
  } catch (error) {
    // The refusal changed nothing; only its telling failed.
    deps.logger?.warn({ err: error, slackUser: user }, 'slack ephemeral message not sent');
  }
}

export const UNLINKED =
  'Your Slack account is not linked to a toolgate user, so you cannot answer here. Ask an administrator to add you to slack.users, or answer in the inbox.';

/** Slack's words for answerElicitation's refusals. */
export function refusalWords(refusal: AnswerElicitationRefusal): string {
  switch (refusal.code) {
    case 'NOT_FOUND':
      return 'You are not one of the approvers of this request (or it no longer exists). Nothing was changed.';
    case 'ALREADY_RESOLVED':
      return refusal.status === 'PENDING'
        ? 'You already answered this request; your answer stands while it waits for other approvers.'
        : `This request was already answered (${refusal.status}). Nothing was changed.`;
    case 'EXPIRED':
      return `This request expired at ${refusal.expiresAt}; nothing was run.`;
    case 'FORBIDDEN':
      switch (refusal.reason) {
        case 'FOUR_EYES':
          return 'You made this request: it needs the approval of someone other than you (four eyes). Nothing was changed.';
        case 'NOT_YET_ESCALATED':
          return `This request is offered to your role only from ${refusal.escalatesAt ?? 'its escalation'}, if nobody answered it by then.`;
        case 'NOT_AN_APPROVER':
        case 'CANCEL_BY_REQUESTER':
          return 'You hold none of the roles that approve this request. Nothing was changed.';
        case 'EDIT_OFF':
          return `Editing the arguments of ${refusal.toolName} is turned off for this agent.`;
      }
      break;
    case 'INVALID_INPUT':
      if (refusal.reason === 'NOT_REMEMBERABLE') {
        return `The approval of ${refusal.toolName} cannot be remembered: it asks every time.`;
      }
      return 'This answer cannot be given here; answer in the inbox.';
    case 'INVALID_CONTENT':
      return `The answer does not fit the request: ${refusal.problem}`;
  }
  return 'This answer was refused. Nothing was changed.';
}
