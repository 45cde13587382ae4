// A request as a Slack card (Block Kit): what the inbox card shows, in Slack's blocks. Pure: the notifier reads the
// request, its approvers' answers and its receipt, and this says what the message is. Model output (the arguments)
// goes into preformatted rich text, which Slack does not parse as markup, with its hidden characters made visible.
import { visibleJson, visibleText } from '../../domain/visible-text.js';
import { tallyAnswers } from '../../domain/quorum.js';
import type { ApproverAnswer, ElicitationRecord } from '../../domain/records.js';

/** Longest arguments text shown on a card; the rest is in the inbox (Slack allows 3,000 characters per text). */
export const CARD_ARGUMENTS_MAX = 2500;
/** How long an "Always allow" from Slack remembers the approval: the inbox's default. */
export const SLACK_REMEMBER_TTL_SECONDS = 3600;

/** The values of the card's buttons (`action_id`) and of the decline modal (`callback_id`). */
export const SLACK_ACTIONS = {
  approve: 'toolgate_approve',
  decline: 'toolgate_decline',
  rememberThread: 'toolgate_remember_thread',
  rememberAgent: 'toolgate_remember_agent',
  edit: 'toolgate_edit',
} as const;
export const DECLINE_MODAL = { callbackId: 'toolgate_decline_modal', block: 'instructions', input: 'text' } as const;

/** Everything a card shows, read by the notifier when it posts or updates. */
export interface CardView {
  elicitation: ElicitationRecord;
  /** The agent or gateway (null: it is gone). */
  agent: { id: string; name: string; isGateway: boolean } | null;
  /** The approvers' answers so far (under a policy): the quorum's progress. */
  answers: readonly ApproverAnswer[];
  /** The signed decision record of the answer, once there is one (docs/receipts.md). */
  receipt: { seq: number; hash: string } | null;
  /** Whether an ACCEPT may remember the approval, and may edit the arguments (the inbox edits). */
  canRemember: boolean;
  canEdit: boolean;
  /** Where the inbox is, for the full arguments and edits; null when the server's public URL is not known. */
  inboxUrl: string | null;
}

export interface SlackMessage {
  /** The notification's plain text (shown where blocks are not). */
  text: string;
  blocks: Block[];
}
export type Block = { type: string; [field: string]: unknown };

/** Slack's mrkdwn escapes: only these three are special in text (links and mentions start with `<`). */
export function mrkdwnEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Untrusted text for mrkdwn: hidden characters as visible escapes, then escaped. */
const shown = (text: string) => mrkdwnEscape(visibleText(text).text);

/** A time as Slack shows it in the reader's own time zone, with the ISO time where it cannot. */
function slackDate(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  return `<!date^${seconds}^{date_short_pretty} {time_secs}|${iso}>`;
}

const OUTCOME: Record<ElicitationRecord['status'], string> = {
  PENDING: 'Waiting for an answer',
  ACCEPTED: ':white_check_mark: Approved',
  DECLINED: ':no_entry: Declined',
  CANCELLED: ':heavy_multiplication_x: Cancelled',
  EXPIRED: ':hourglass: Expired',
};

export function slackCard(view: CardView): SlackMessage {
  const { elicitation: e, agent } = view;
  const label = e.toolCall.annotations.title ?? e.toolCall.name;
  const blocks: Block[] = [];
  blocks.push({
    type: 'header',
    text: { type: 'plain_text', text: truncate(`Approval: ${visibleText(label).text}`, 150), emoji: false },
  });
  // The trusted question: built from the tool's definition, never from model output (docs/design.md).
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: truncate(shown(e.request.message), 2900) } });
  const who = agent
    ? `${agent.isGateway ? 'Gateway' : 'Agent'}: *${shown(agent.name)}* (\`${shown(agent.id)}\`)`
    : `Agent: \`${shown(e.agentId)}\``;
  blocks.push({
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: who },
      { type: 'mrkdwn', text: `Tool: \`${shown(e.toolCall.toolId)}\`` },
      { type: 'mrkdwn', text: `Requested by: *${shown(e.ownerId)}*` },
    ],
  });
  blocks.push(...argumentBlocks(view));
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: policyText(view) } });
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: statusText(view) } });
  if (e.status === 'PENDING') blocks.push(actionsBlock(view));
  const text = `${e.status === 'PENDING' ? 'Approval needed' : OUTCOME[e.status]}: ${visibleText(label).text} (${e.toolCall.toolId}), requested by ${visibleText(e.ownerId).text}`;
  return { text: truncate(text, 3000), blocks };
}

/** The arguments exactly as they will run (an accepted edit: as they ran), hidden characters made visible. */
function argumentBlocks(view: CardView): Block[] {
  const e = view.elicitation;
  const edited = e.status === 'ACCEPTED' && e.response?.arguments ? e.response.arguments : null;
  const json = visibleJson(edited ?? e.toolCall.arguments);
  const cut = json.text.length > CARD_ARGUMENTS_MAX;
  const blocks: Block[] = [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: edited ? '*Arguments (as edited and approved):*' : '*Arguments:*' },
    },
    {
      type: 'rich_text',
      elements: [
        {
          type: 'rich_text_preformatted',
          elements: [{ type: 'text', text: cut ? json.text.slice(0, CARD_ARGUMENTS_MAX) : json.text }],
        },
      ],
    },
  ];
  const notes: string[] = [];
  if (cut) {
    const rest = json.text.length - CARD_ARGUMENTS_MAX;
    notes.push(
      view.inboxUrl
        ? `:scissors: ${rest} more characters: <${view.inboxUrl}|see all arguments in the inbox>`
        : `:scissors: ${rest} more characters: see all arguments in the inbox`,
    );
  }
  if (json.hiddenCharacters.length > 0) {
    const listed = json.hiddenCharacters
      .slice(0, 10)
      .map((h) => `\`${h.escape}\` (U+${h.codePoint.toString(16).toUpperCase().padStart(4, '0')})`)
      .join(', ');
    const more = json.hiddenCharacters.length > 10 ? `, and ${json.hiddenCharacters.length - 10} more` : '';
    notes.push(
      `:warning: ${json.hiddenCharacters.length} hidden character${json.hiddenCharacters.length === 1 ? '' : 's'} written as visible escapes: ${listed}${more}`,
    );
  }
  for (const word of json.mixedScriptWords.slice(0, 5)) {
    notes.push(`:warning: \`${mrkdwnEscape(word.word)}\` mixes look-alike alphabets (${word.scripts.join(', ')})`);
  }
  if (notes.length) blocks.push({ type: 'context', elements: notes.map((text) => ({ type: 'mrkdwn', text })) });
  return blocks;
}

/** Who may answer, how many approvals it takes, the escalation and the expiry. */
function policyText(view: CardView): string {
  const { approval, expiresAt } = view.elicitation;
  const lines: string[] = [];
  if (!approval) lines.push(`*Who may answer:* the requester, *${shown(view.elicitation.ownerId)}*`);
  else {
    const roles = approval.roles.map((role) => `\`${role}\``).join(', ');
    const requester = approval.requester === 'EXCLUDED' ? ' (not the requester: four eyes)' : ' or the requester';
    lines.push(`*Who may answer:* ${roles}${requester}`);
    lines.push(`*Approvals needed:* ${approval.required}`);
    if (approval.escalation) {
      const escalationRoles = approval.escalation.roles.map((role) => `\`${role}\``).join(', ');
      lines.push(`*Escalates to:* ${escalationRoles} at ${slackDate(approval.escalation.at)}`);
    }
  }
  lines.push(`*Expires:* ${slackDate(expiresAt)}`);
  return lines.join('\n');
}

/** Where the request stands: its quorum's progress while it waits, else its outcome, who and the receipt. */
function statusText(view: CardView): string {
  const e = view.elicitation;
  if (e.status === 'PENDING') {
    const lines = [`*Status:* ${OUTCOME.PENDING}`];
    if (e.approval) {
      const tally = tallyAnswers(e.approval, view.answers, e.ownerId);
      if (tally.kind === 'pending') {
        const names = tally.accepted.map((id) => shown(id)).join(', ');
        lines.push(
          `*Progress:* ${tally.accepted.length} of ${e.approval.required} approvals${names ? `: ${names}` : ''}`,
        );
      }
    }
    if (e.escalatedAt && e.approval?.escalation) {
      lines.push(`*Escalated* to ${e.approval.escalation.roles.map((r) => `\`${r}\``).join(', ')}`);
    }
    return lines.join('\n');
  }
  const by = e.resolvedBy ? ` by *${shown(e.resolvedBy)}*` : '';
  const at = e.resolvedAt ? ` at ${slackDate(e.resolvedAt)}` : '';
  const lines = [`*Status:* ${OUTCOME[e.status]}${e.status === 'EXPIRED' ? '' : by}${at}`];
  const instructions = e.response?.content?.instructions;
  if (typeof instructions === 'string' && instructions !== '') lines.push(`*Instructions:* ${shown(instructions)}`);
  if (e.response?.remember) {
    const scope = e.response.remember.scope === 'THREAD' ? 'this thread' : 'this agent';
    lines.push(`*Remembered* for ${scope}, ${e.response.remember.ttlSeconds} s`);
  }
  if (e.withdrawn) lines.push(`*Withdrawn:* the caller ${e.withdrawn === 'CANCELLED' ? 'cancelled' : 'went away'}`);
  if (e.approval && e.status === 'ACCEPTED') {
    const approvers = view.answers.filter((a) => a.action === 'ACCEPT').map((a) => shown(a.approverId));
    if (approvers.length > 1) lines.push(`*Approvals:* ${approvers.join(', ')}`);
  }
  if (view.receipt) lines.push(`*Receipt:* #${view.receipt.seq} \`${view.receipt.hash.slice(0, 16)}\``);
  return lines.join('\n');
}

/** The buttons a pending request offers: only what its policy and the agent allow. */
function actionsBlock(view: CardView): Block {
  const id = view.elicitation.id;
  const elements: Block[] = [
    {
      type: 'button',
      action_id: SLACK_ACTIONS.approve,
      text: { type: 'plain_text', text: 'Approve' },
      style: 'primary',
      value: id,
    },
    {
      type: 'button',
      action_id: SLACK_ACTIONS.decline,
      text: { type: 'plain_text', text: 'Decline…' },
      style: 'danger',
      value: id,
    },
  ];
  if (view.canRemember) {
    const hours = SLACK_REMEMBER_TTL_SECONDS / 3600;
    elements.push(
      {
        type: 'button',
        action_id: SLACK_ACTIONS.rememberThread,
        text: { type: 'plain_text', text: `Always allow in this thread (${hours} h)` },
        value: id,
      },
      {
        type: 'button',
        action_id: SLACK_ACTIONS.rememberAgent,
        text: { type: 'plain_text', text: `Always allow for this agent (${hours} h)` },
        value: id,
      },
    );
  }
  if (view.canEdit && view.inboxUrl) {
    elements.push({
      type: 'button',
      action_id: SLACK_ACTIONS.edit,
      text: { type: 'plain_text', text: 'Edit in the inbox' },
      url: view.inboxUrl,
      value: id,
    });
  }
  return { type: 'actions', block_id: `toolgate_${id}`, elements };
}

/** The decline modal (views.open): optional instructions for the agent; `private_metadata` names the request. */
export function declineModal(elicitationId: string, label: string): Block {
  return {
    type: 'modal',
    callback_id: DECLINE_MODAL.callbackId,
    private_metadata: elicitationId,
    title: { type: 'plain_text', text: 'Decline' },
    submit: { type: 'plain_text', text: 'Decline' },
    close: { type: 'plain_text', text: 'Back' },
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `Decline *${shown(label)}*? The agent is told, with your instructions.` },
      },
      {
        type: 'input',
        block_id: DECLINE_MODAL.block,
        optional: true,
        label: { type: 'plain_text', text: 'Instructions for the agent' },
        element: { type: 'plain_text_input', action_id: DECLINE_MODAL.input, multiline: true, max_length: 2000 },
      },
    ],
  };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
