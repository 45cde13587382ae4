// The API's words for the use cases' refusals (src/app/): each becomes a userErrors entry with its code, a message
// for a person, and the path of the input field at fault (["input", "threadId"]). Only the API words them; the use
// cases say what is wrong as data.
import type { PasskeyRefusal } from '../app/passkeys.js';
import type { AnswerElicitationRefusal } from '../app/answer-elicitation.js';
import type { RevokeGrantRefusal } from '../app/revoke-grant.js';
import type { StartTurnRefusal } from '../app/start-turn.js';
import type { UpdateAgentGatingRefusal } from '../app/update-agent-gating.js';
import { GraphQLError } from 'graphql';
import { textProblemWords } from '../domain/text-problem.js';
import { userError, type UserError } from './user-errors.js';

/** The path of an input field of a mutation's `input` argument, and a place inside it. */
function inputPath(field: string, at: readonly (string | number)[] = []): string[] {
  return ['input', field, ...at.map(String)];
}

export function startTurnError(refusal: StartTurnRefusal): UserError {
  const at = inputPath(refusal.field);
  switch (refusal.code) {
    case 'INVALID_INPUT':
      if (refusal.field === 'agentId')
        return userError(
          refusal.code,
          'This agent is an MCP gateway: its tool calls come from MCP clients at /mcp/<agent id>, not from messages.',
          at,
        );
      return userError(
        refusal.code,
        `The ${refusal.field === 'message' ? 'message' : 'idempotency key'} ${textProblemWords(refusal)}.`,
        at,
      );
    case 'NOT_FOUND':
      if (refusal.of === 'agent') return userError(refusal.code, 'No agent with this id.', at);
      return userError(
        refusal.code,
        refusal.reason === 'OTHER_AGENT' ? 'The thread belongs to another agent.' : 'No thread with this id.',
        at,
      );
    case 'THREAD_BUSY':
      return userError(refusal.code, 'The thread has a turn running; wait for it to stop.', at);
    case 'IDEMPOTENCY_KEY_REUSED':
      return userError(
        refusal.code,
        'This idempotency key was already used for another request (another agent, thread or message); ' +
          'use a new key for a new message.',
        at,
      );
  }
}

export function answerElicitationError(refusal: AnswerElicitationRefusal): UserError {
  switch (refusal.code) {
    case 'NOT_FOUND':
      return userError(refusal.code, 'No elicitation with this id.', inputPath(refusal.field));
    case 'ALREADY_RESOLVED':
      // Still PENDING: the viewer answered it under its approvers policy, and it waits for the others.
      if (refusal.status === 'PENDING')
        return userError(
          refusal.code,
          'You already answered this request; your answer stands while it waits for other approvers.',
          inputPath(refusal.field),
        );
      return userError(
        refusal.code,
        `This elicitation was already answered (${refusal.status}).`,
        inputPath(refusal.field),
      );
    case 'EXPIRED':
      return userError(
        refusal.code,
        `This elicitation expired at ${refusal.expiresAt}; nothing was run.`,
        inputPath(refusal.field),
      );
    case 'INVALID_CONTENT':
      return userError(refusal.code, refusal.problem, inputPath(refusal.field, refusal.at));
    case 'FORBIDDEN':
      switch (refusal.reason) {
        case 'EDIT_OFF':
          return userError(
            refusal.code,
            `Editing the arguments of ${refusal.toolName} is turned off for this agent (allowEdit).`,
            inputPath(refusal.field),
          );
        case 'FOUR_EYES':
          return userError(
            refusal.code,
            'This request needs the approval of someone other than you (four eyes): you may cancel it, not accept ' +
              'or decline it.',
            inputPath(refusal.field),
          );
        case 'CANCEL_BY_REQUESTER':
          return userError(
            refusal.code,
            'Only the user who made this request, or an administrator, may cancel it; accept or decline it instead.',
            inputPath(refusal.field),
          );
        case 'NOT_YET_ESCALATED':
          return userError(
            refusal.code,
            `This request is offered to your role only from ${refusal.escalatesAt ?? 'its escalation'}, if nobody ` +
              'answered it by then.',
            inputPath(refusal.field),
          );
        case 'NOT_AN_APPROVER':
          return userError(
            refusal.code,
            'You hold none of the roles that approve this request: as an administrator you may cancel it, not ' +
              'accept or decline it.',
            inputPath(refusal.field),
          );
      }
      break;
    case 'INVALID_INPUT':
      switch (refusal.reason) {
        case 'TOO_LARGE':
          return userError(
            refusal.code,
            `content is larger than ${refusal.maxBytes} bytes of JSON.`,
            inputPath(refusal.field),
          );
        case 'ACCEPT_ONLY':
          return userError(refusal.code, `${refusal.field} can only be given with ACCEPT.`, inputPath(refusal.field));
        case 'TOOL_GONE':
          return userError(
            refusal.code,
            `The tool ${refusal.toolId} is no longer available to this agent.`,
            inputPath(refusal.field),
          );
        case 'OUT_OF_RANGE':
          return userError(
            refusal.code,
            `ttlSeconds must be between 1 and ${refusal.max}.`,
            inputPath(refusal.field, refusal.at),
          );
        case 'NOT_REMEMBERABLE':
          if (refusal.stepUp) {
            return userError(
              refusal.code,
              `The approval of ${refusal.toolName} cannot be remembered: each call needs your passkey.`,
              inputPath(refusal.field),
            );
          }
          return userError(
            refusal.code,
            `The approval of ${refusal.toolName} cannot be remembered: it asks every time (ALWAYS, or a policy of ` +
              'its own), or was requested before approvals could be remembered.',
            inputPath(refusal.field),
          );
      }
      break;
    case 'PASSKEY_REQUIRED':
    case 'PASSKEY_INVALID':
      return passkeyError(refusal);
  }
}

/** Passkey step-up and registration (src/app/passkeys.ts). */
export function passkeyError(refusal: PasskeyRefusal): UserError {
  if (refusal.code === 'PASSKEY_REQUIRED') {
    return userError(
      refusal.code,
      "This tool needs your passkey to approve it: accept with an assertion over the request's stepUp challenge.",
      inputPath(refusal.field),
    );
  }
  return userError(refusal.code, `The passkey did not verify: ${refusal.problem}`, inputPath(refusal.field));
}

export function updateAgentError(refusal: UpdateAgentGatingRefusal): UserError {
  switch (refusal.code) {
    case 'FORBIDDEN':
      return userError(refusal.code, 'Only administrators may change agents.');
    case 'NOT_FOUND':
      return userError(refusal.code, 'No agent with this id.', inputPath(refusal.field));
    case 'INVALID_INPUT':
      switch (refusal.reason) {
        case 'OUT_OF_RANGE':
          return userError(
            refusal.code,
            `pauseTtlSeconds must be between 1 and ${refusal.max}.`,
            inputPath(refusal.field),
          );
        case 'BELOW_ESCALATION':
          return userError(
            refusal.code,
            `pauseTtlSeconds must be above ${refusal.escalateAfterSeconds}: an approvers policy of this agent escalates ` +
              'a request after that many seconds, and a request must escalate before it expires.',
            inputPath(refusal.field),
          );
        case 'UNKNOWN_TOOL':
          return userError(
            refusal.code,
            `The agent has no tool ${refusal.toolId}.`,
            inputPath(refusal.field, refusal.at),
          );
        case 'INVALID_RULES': {
          const which =
            refusal.rule !== null ? `Rule ${refusal.rule} of ${refusal.toolId}` : `The rules of ${refusal.toolId}`;
          return userError(refusal.code, `${which}: ${refusal.problem}.`, inputPath(refusal.field, refusal.at));
        }
      }
  }
}

export function revokeGrantError(refusal: RevokeGrantRefusal): UserError {
  return userError(refusal.code, 'No approval grant with this id.', inputPath(refusal.field));
}

/**
 * The error of Elicitation.turn asked by an approver who is not the requester: they see the request, not the
 * requester's turn, thread or messages (docs/approvers.md).
 */
export function othersTurnError(): GraphQLError {
  return new GraphQLError(
    'Only the user who made this request sees its turn; as an approver you see the request itself (toolCall, message, answers).',
    { extensions: { code: 'FORBIDDEN' } },
  );
}
