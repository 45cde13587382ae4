// Plain data of toolgate's domain, shared by the loop (src/agent/), the stores (src/db/) and the API (src/graphql/).
// Nothing here knows GraphQL or SQL; every value is JSON-serialisable.

export type JsonObject = { [key: string]: unknown };

/** MCP tool annotations; an absent hint stays absent (MCP defaults then apply). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The trusted definition of a tool: from builtin code or an administrator-configured MCP server. */
export interface ToolDefinition {
  /** `<source>:<name>` */
  id: string;
  source: string;
  name: string;
  /** title, then annotations.title, then name */
  label: string;
  description: string;
  inputSchema: JsonObject;
  /** The JSON Schema of the tool's structured results, when its MCP server declares one. */
  outputSchema?: JsonObject;
  annotations: ToolAnnotations;
}

export interface ToolResult {
  text: string;
  isError: boolean;
  /** The result as an MCP server gave it (CallToolResult: content blocks, structuredContent), for a gateway's client. */
  callResult?: JsonObject;
}

export type ToolConfirmationMode = 'ALWAYS' | 'NEVER' | 'BY_ANNOTATION';

export interface Agent {
  id: string;
  name: string;
  description: string | null;
  /** A key of the config's models; GATEWAY_MODEL_ID (src/domain/gateway.ts): none, an MCP client makes the calls. */
  modelId: string;
  systemPrompt: string;
  /** Tool ids or `<source>:*` patterns, resolved against the sources when the agent runs. */
  toolIds: string[];
  requireToolConfirmation: boolean;
  /** Per-tool overrides; a tool not named is BY_ANNOTATION. */
  toolConfirmation: Record<string, ToolConfirmationMode>;
  pauseTtlSeconds: number;
  maxIterations: number;
  // ---- argument rules and editing (issue 15) ----
  /** May a user edit a call's arguments when accepting it; a tool's own setting (toolAllowEdit) wins. */
  allowEdit: boolean;
  /**
   * Per-tool argument rules, evaluated in order before the tool's mode (src/domain/gate/gating.ts); a tool not named has
   * none. A stored tool with rules or an allowEdit of its own also has a toolConfirmation entry (BY_ANNOTATION).
   */
  toolRules: Record<string, ArgumentRule[]>;
  /** Per-tool allowEdit; a tool not named follows the agent's. */
  toolAllowEdit: Record<string, boolean>;
  // ---- approvers (docs/approvers.md) ----
  /** Who answers the agent's confirmations; a tool's (toolApprovers) and a matching rule's own win. */
  approvers: Approvers;
  /** Per-tool approvers; a tool not named follows the agent's. */
  toolApprovers: Record<string, Approvers>;
}

// ---- approvers (docs/approvers.md) --------------------------------------------------------------------------

/** Whether the requester answers too (counted as one approver), or not at all (four eyes: they may only CANCEL). */
export type RequesterPart = 'ALSO' | 'EXCLUDED';

/** Who besides the requester answers a confirmation, and how many of them must ACCEPT. */
export interface ApproversPolicy {
  /** Members of any of these roles may answer. */
  roles: string[];
  /** The distinct ACCEPTs of the current proposal that resolve the request (M of N). */
  required: number;
  requester: RequesterPart;
  /** Offered to these roles as well once nobody answered within afterSeconds (below the agent's pauseTtlSeconds). */
  escalate: { afterSeconds: number; roles: string[] } | null;
}

/** Who answers a call's confirmation: its requester alone (the default), or a policy. */
export type Approvers = 'REQUESTER' | ApproversPolicy;

/** A policy as stored with one request when it paused: the escalation at its absolute time. */
export interface ElicitationApproval {
  roles: string[];
  required: number;
  requester: RequesterPart;
  escalation: { roles: string[]; at: string } | null;
}

/**
 * Who answered, as their identity was at that moment: the display name, the identity provider and its subject (null
 * for static tokens), and the roles their credentials held. Kept with the answer; what the provider says later does
 * not change it.
 */
export interface AnswerIdentity {
  name: string | null;
  issuer: string | null;
  subject: string | null;
  roles: string[];
}

/** One approver's answer to a request under a policy (a row of elicitation_answers). */
export interface ApproverAnswer {
  elicitationId: string;
  approverId: string;
  /** The order the answers were given in (a new answer of an approver whose ACCEPT an edit outdated moves last). */
  position: number;
  action: ElicitationAction;
  content: JsonObject | null;
  /** ACCEPT with edited arguments: the proposal it makes and approves; null approves the model's arguments. */
  arguments: JsonObject | null;
  remember: RememberChoice | null;
  createdAt: string;
  /** Who answered as they were then; null for an answer recorded before identities were kept. */
  identity: AnswerIdentity | null;
}

// ---- argument rules (issue 15) ----------------------------------------------------------------------------

export type ArgumentRuleMode = 'ALWAYS' | 'NEVER' | 'DENY';

/** One argument rule of a tool: the first whose `match` accepts a call's arguments decides how the call is gated. */
export interface ArgumentRule {
  /** A JSON Schema (2020-12) the call's arguments are validated against; valid = the rule matches. */
  match: JsonObject;
  /** ALWAYS: ask (no remembered approval satisfies it); NEVER: run unasked; DENY: veto with `reason`. */
  mode: ArgumentRuleMode;
  /** Why: the veto's reason for DENY (required there), an explanation otherwise. */
  reason?: string;
  /** ALWAYS only: who answers the calls this rule asks about (docs/approvers.md); absent: the tool's, else the agent's. */
  approvers?: Approvers;
}

export type MessageRole = 'SYSTEM' | 'USER' | 'ASSISTANT' | 'TOOL';

export interface ToolCall {
  /** The id the model gave the call. */
  id: string;
  /** The tool's own name (not the name the model saw, which may be prefixed). */
  name: string;
  toolId: string;
  arguments: JsonObject;
  /**
   * The name the model called the tool by, where it is not `name` (prefixed where two sources share a name, or made
   * valid for the model's API); absent otherwise. TOOL message texts name the call by it.
   */
  modelName?: string;
  /**
   * Set when the call was refused as it was read from the model (its arguments over the size limit, which were then
   * dropped: `arguments` is empty): its TOOL message. Such a call never reaches the listeners, the user or the tool.
   */
  refusal?: string;
}

export interface ChatMessage {
  role: MessageRole;
  text: string | null;
  toolCalls: ToolCall[];
  toolCallId: string | null;
}

export type TurnStatus = 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'CANCELLED' | 'FAILED' | 'EXPIRED';
export type ElicitationStatus = 'PENDING' | 'ACCEPTED' | 'DECLINED' | 'CANCELLED' | 'EXPIRED';
export type ElicitationAction = 'ACCEPT' | 'DECLINE' | 'CANCEL';

/** MCP elicitation/create params (form mode) minus `mode`, as a listener sets it on the event. */
export interface ElicitationRequest {
  message: string;
  requestedSchema: JsonObject;
  _meta: JsonObject;
}

/** What the gate decided for one call of a step; persisted with a paused turn. */
export type GateOutcome =
  /** Runs; `grantId`: unasked, because this remembered approval covered it (checked again when it starts). */
  | { kind: 'run'; grantId?: string }
  /** `byRule`: a gating rule refused it (an argument rule's DENY), not another listener. */
  | { kind: 'vetoed'; reason: string; byRule?: true }
  /** Cannot run at all (unknown tool, invalid arguments): `text` is its TOOL message. */
  | { kind: 'rejected'; text: string }
  | { kind: 'confirm'; elicitationId: string };

export interface StepCall {
  toolCall: ToolCall;
  outcome: GateOutcome;
}

/**
 * The loop state of a turn between its gate phase and its execute phase: a plain value, stored as JSON. `version` is
 * that format's version: a stored step is validated, and an older one upgraded, when read (src/domain/pending-step.ts).
 */
export interface PendingStep {
  version: 1;
  calls: StepCall[];
}

export interface ElicitationAnswer {
  action: ElicitationAction;
  content: JsonObject | null;
  /** ACCEPT only: the user's arguments, which run instead of the model's (edit, then accept). */
  arguments?: JsonObject | null;
  /** ACCEPT only: remember the approval for later calls of the tool (docs/approvals.md). */
  remember?: RememberChoice | null;
}

export type GrantScope = 'THREAD' | 'AGENT';

/** What an ACCEPT asks to remember: where later calls of the tool run unasked, and for how long. */
export interface RememberChoice {
  scope: GrantScope;
  ttlSeconds: number;
}

/** A TOOL message to append: the one answer a tool call gets. */
export interface ToolMessageDraft {
  toolCallId: string;
  text: string;
  /** The decision record written with it (docs/receipts.md): a veto, a rule's refusal, or a started call interrupted. */
  decision?: ToolMessageDecision;
}

/** What a TOOL message of a call that does not run records (an INTERRUPTED one is named by its RAN record). */
export type ToolMessageDecision =
  | {
      kind: 'VETOED' | 'REFUSED';
      toolId: string;
      arguments: JsonObject;
      /** The request it was vetoed after (edited arguments vetoed once accepted); null: vetoed at the gate. */
      elicitationId: string | null;
      toolDefinitionDigest: string | null;
      reason: string;
    }
  | { kind: 'INTERRUPTED' };

/** Why a paused step closes without running. */
export type CloseReason = 'cancelled' | 'expired' | 'superseded';

// ---- records as the store keeps them ----------------------------------------------------------------------

export interface ThreadRecord {
  id: string;
  agentId: string;
  ownerId: string;
  createdAt: string;
}

export interface TurnRecord {
  id: string;
  threadId: string;
  agentId: string;
  ownerId: string;
  status: TurnStatus;
  text: string | null;
  error: string | null;
  iterations: number;
  step: PendingStep | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
}

export interface MessageRecord extends ChatMessage {
  id: string;
  threadId: string;
  turnId: string;
  createdAt: string;
}

export interface ElicitationToolCall {
  name: string;
  toolId: string;
  arguments: JsonObject;
  annotations: ToolAnnotations;
  /**
   * The hash of the tool's trusted definition when it asked (src/domain/grants.ts): what a remembered approval of
   * this answer is bound to. Absent on requests made before approvals could be remembered.
   */
  definitionHash?: string;
  /** The digest its decision records carry (toolDefinitionDigest); absent on requests made before they did. */
  toolDefinitionDigest?: string;
  /**
   * Whether its approval may be remembered: the confirmation listener asked, and the call does not ask every time
   * (ALWAYS). Absent on requests made before approvals could be remembered.
   */
  grantable?: boolean;
}

/**
 * Why a gateway call's caller stopped waiting: it cancelled its request (`notifications/cancelled`), or it went away
 * (its response closed, or its session ended) while nothing could bring it back to the call.
 */
export type CallerWithdrawal = 'CANCELLED' | 'DISCONNECTED';

export interface ElicitationRecord {
  id: string;
  turnId: string;
  threadId: string;
  agentId: string;
  ownerId: string;
  toolCallId: string;
  status: ElicitationStatus;
  request: ElicitationRequest;
  toolCall: ElicitationToolCall;
  response: ElicitationAnswer | null;
  /** The remembered approval its ACCEPT recorded, if it asked for one. */
  grantId: string | null;
  resolvedBy: string | null;
  /** Who resolved it as they were then (AnswerIdentity); null while pending, by expiry, or recorded before. */
  resolvedByIdentity: AnswerIdentity | null;
  resolvedAt: string | null;
  /** Set when the MCP client that made the call stopped waiting and the call was withdrawn (answered CANCEL). */
  withdrawn: CallerWithdrawal | null;
  createdAt: string;
  expiresAt: string;
  /** Who may answer besides the requester, as decided at the pause; null: the requester alone. */
  approval: ElicitationApproval | null;
  /**
   * When the sweeper marked it escalated (docs/approvers.md "Escalation"), once; null before, and for a request without
   * an escalation. Who may answer goes by `approval.escalation.at`, not by this.
   */
  escalatedAt: string | null;
  /**
   * A gateway call's request: until when the MCP client that made the call is known to wait for it, on any instance
   * (renewed while it waits, set to the time it stopped when it stops); null while no client has waited for it.
   */
  callerWaitingUntil: string | null;
}

export interface ElicitationDraft {
  id: string;
  toolCallId: string;
  request: ElicitationRequest;
  toolCall: ElicitationToolCall;
  /** The approvers policy decided at the gate (approvalAt); absent or null: the requester alone. */
  approval?: ElicitationApproval | null;
}

export interface Page<T> {
  items: T[];
  /** Opaque cursor of each item, for `after`. */
  cursors: string[];
  hasNextPage: boolean;
  /** Opaque cursor of the last item. */
  endCursor: string | null;
}

/**
 * A remembered approval: while it holds, calls of `toolId` by `agentId` for `ownerId` (in `threadId` with THREAD
 * scope) run without asking, as long as the tool's definition still hashes to `definitionHash`.
 */
export interface ApprovalGrantRecord {
  id: string;
  ownerId: string;
  agentId: string;
  scope: GrantScope;
  threadId: string | null;
  toolId: string;
  definitionHash: string;
  /** The ACCEPT that recorded it. */
  elicitationId: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  /**
   * The approvers policy it was given under (approversKey, src/domain/approvers.ts); null: the requester alone. It
   * stands in only for calls under the same policy: a grant a requester gave alone never skips reviewers.
   */
  approvers: string | null;
}

/** A call a remembered approval let run unasked, as the at-most-once journal recorded it. */
export interface GrantUseRecord {
  grantId: string;
  turnId: string;
  toolCallId: string;
  startedAt: string;
}
