// Remembered approvals (docs/approvals.md): what a grant is bound to, when it holds, and which one covers a call.
// Pure: the stores read and write grants; these functions decide.
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { isPastExpiry } from './expiry.js';
import { approversKey } from './approvers.js';
import type { ApprovalGrantRecord, ElicitationRecord, RememberChoice, ToolDefinition } from './records.js';

/** Longest a remembered approval may last: 30 days, as the longest pause. */
export const MAX_GRANT_TTL_SECONDS = 30 * 24 * 3600;

/**
 * The hash of what the user approved: the tool's trusted description, input schema and annotations. A grant is bound
 * to it, so a tool whose definition changes (a new MCP server version, say) asks again.
 */
export function definitionHash(tool: Pick<ToolDefinition, 'description' | 'inputSchema' | 'annotations'>): string {
  const trusted = { description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations };
  return `sha256:${createHash('sha256').update(canonicalJson(trusted)).digest('hex')}`;
}

export type GrantState = 'ACTIVE' | 'EXPIRED' | 'REVOKED';

/** Whether a grant still holds at `now` (the tool's definition aside: see grantCovers). */
export function grantStateAt(grant: Pick<ApprovalGrantRecord, 'expiresAt' | 'revokedAt'>, now: string): GrantState {
  if (grant.revokedAt !== null) return 'REVOKED';
  return isPastExpiry(grant.expiresAt, now) ? 'EXPIRED' : 'ACTIVE';
}

/**
 * When a revoke takes effect: `now`, or the start of the grant's latest use if that is later (a call started under it
 * on a host whose clock runs ahead, or committed while the revoke waited for it), so that the audit never shows a call
 * started after its grant was revoked. The first revoke's time stands.
 */
export function revokedAtFor(
  grant: Pick<ApprovalGrantRecord, 'revokedAt'>,
  lastUseStartedAt: string | null,
  now: string,
): string {
  if (grant.revokedAt !== null) return grant.revokedAt;
  return lastUseStartedAt !== null && lastUseStartedAt > now ? lastUseStartedAt : now;
}

/** A call as a grant sees it: whose, which agent and thread, which tool, and that tool's definition now. */
export interface GrantedCall {
  ownerId: string;
  agentId: string;
  threadId: string;
  toolId: string;
  definitionHash: string;
  /** The approvers policy the call would be asked under (approversKey); null: the requester alone. */
  approvers: string | null;
}

/** True when `grant` lets `call` run unasked at `now`. */
export function grantCovers(grant: ApprovalGrantRecord, call: GrantedCall, now: string): boolean {
  return (
    grantStateAt(grant, now) === 'ACTIVE' &&
    grant.ownerId === call.ownerId &&
    grant.agentId === call.agentId &&
    grant.toolId === call.toolId &&
    grant.definitionHash === call.definitionHash &&
    grant.approvers === call.approvers &&
    (grant.scope === 'AGENT' || grant.threadId === call.threadId)
  );
}

/** Of a user's grants of the tool, the one that covers the call (the oldest, for a stable audit), or null. */
export function coveringGrant(
  candidates: readonly ApprovalGrantRecord[],
  call: GrantedCall,
  now: string,
): ApprovalGrantRecord | null {
  return candidates.find((grant) => grantCovers(grant, call, now)) ?? null;
}

/**
 * The grant an ACCEPT with `remember` records, in the answer's transaction: the requester's, bound to the request's
 * approvers policy (under one, only when every approver of the quorum asked to remember: src/domain/quorum.ts).
 */
export function grantFromAnswer(
  elicitation: Pick<ElicitationRecord, 'id' | 'ownerId' | 'agentId' | 'threadId' | 'toolCall' | 'approval'>,
  remember: RememberChoice,
  id: string,
  now: string,
): ApprovalGrantRecord {
  if (!elicitation.toolCall.definitionHash) {
    throw new Error(
      `The elicitation ${elicitation.id} has no tool definition hash: its approval cannot be remembered.`,
    );
  }
  return {
    id,
    ownerId: elicitation.ownerId,
    agentId: elicitation.agentId,
    scope: remember.scope,
    threadId: remember.scope === 'THREAD' ? elicitation.threadId : null,
    toolId: elicitation.toolCall.toolId,
    definitionHash: elicitation.toolCall.definitionHash,
    elicitationId: elicitation.id,
    createdAt: now,
    expiresAt: new Date(Date.parse(now) + remember.ttlSeconds * 1000).toISOString(),
    revokedAt: null,
    approvers: approversKey(elicitation.approval),
  };
}
