// Rows as both dialects return them, and the records the domain works with. Column names are the tables' own
// (snake_case); JSON columns come back as JSON text, times as ISO-8601 UTC strings, sequence numbers and counts as
// numbers, booleans as 0/1 (SQLite) or true/false (PostgreSQL; its pool's type parsers make the rest match:
// postgres/statements.ts).
import { loadPendingStep } from '../domain/pending-step.js';
import { agentApproversFromColumn, argumentRulesFromRows } from '../domain/agent-overrides.js';
import type {
  Agent,
  ApprovalGrantRecord,
  AnswerIdentity,
  CallerWithdrawal,
  ApproverAnswer,
  ElicitationApproval,
  ArgumentRule,
  ElicitationRecord,
  ElicitationStatus,
  GrantScope,
  MessageRecord,
  MessageRole,
  ThreadRecord,
  ToolConfirmationMode,
  TurnRecord,
  TurnStatus,
} from '../domain/records.js';
import { answerFromColumns, grantIdFromColumn } from '../domain/stored-answer.js';
import type { WebhookDeliveryRecord, WebhookDeliveryStatus } from '../domain/webhook-events.js';

type Json = string;
type Bool = boolean | number;

export interface AgentRow {
  id: string;
  name: string;
  description: string | null;
  model_id: string;
  system_prompt: string;
  tool_ids: Json;
  require_tool_confirmation: Bool;
  pause_ttl_seconds: number;
  max_iterations: number;
  allow_edit: Bool;
  /** JSON: AgentApprovers, null: the requester alone answers, for every tool. */
  approvers: Json | null;
  /** JSON: [toolId, mode, rules, allowEdit][] of its agent_tool_overrides rows. */
  overrides: Json;
}

export interface ThreadRow {
  seq: number;
  id: string;
  agent_id: string;
  owner_id: string;
  created_at: string;
}

export interface TurnRow {
  id: string;
  thread_id: string;
  agent_id: string;
  owner_id: string;
  status: TurnStatus;
  text: string | null;
  error: string | null;
  iterations: number;
  step: Json | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  recoveries: number;
}

export interface MessageRow {
  seq: number;
  id: string;
  thread_id: string;
  turn_id: string;
  role: MessageRole;
  text: string | null;
  tool_calls: Json | null;
  tool_call_id: string | null;
  created_at: string;
}

export interface ElicitationRow {
  seq: number;
  id: string;
  turn_id: string;
  thread_id: string;
  agent_id: string;
  owner_id: string;
  tool_call_id: string;
  status: ElicitationStatus;
  request: Json;
  tool_call: Json;
  response_action: 'ACCEPT' | 'DECLINE' | 'CANCEL' | null;
  response_content: Json | null;
  response_arguments: Json | null;
  response_remember: Json | null;
  resolved_by: string | null;
  resolved_by_identity: Json | null;
  resolved_at: string | null;
  withdrawn: CallerWithdrawal | null;
  created_at: string;
  expires_at: string;
  /** JSON: ElicitationApproval; null: the requester alone. */
  approval: Json | null;
  /** approval.escalation.at, for the sweeper; null without an escalation. */
  escalation_due_at: string | null;
  escalated_at: string | null;
  caller_waiting_until: string | null;
}

/** One approver's answer to a request under a policy. */
export interface ElicitationAnswerRow {
  elicitation_id: string;
  approver_id: string;
  position: number;
  action: 'ACCEPT' | 'DECLINE' | 'CANCEL';
  content: Json | null;
  arguments: Json | null;
  remember: Json | null;
  created_at: string;
  approver_identity: Json | null;
}

export interface GrantRow {
  seq: number;
  id: string;
  owner_id: string;
  agent_id: string;
  scope: GrantScope;
  thread_id: string | null;
  tool_id: string;
  definition_hash: string;
  elicitation_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  approvers: string | null;
}

export interface GrantUseRow {
  grant_id: string;
  turn_id: string;
  tool_call_id: string;
  started_at: string;
}

export interface WebhookRow {
  seq: number;
  id: string;
  endpoint: string;
  event_type: string;
  payload: Json;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  last_status_code: number | null;
  created_at: string;
  finished_at: string | null;
}

/** startTurn's idempotency key as claimed: the request it was first used for (hashed) and what that one started. */
export interface IdempotencyKeyRow {
  fingerprint: string;
  turn_id: string;
  thread_id: string;
}

export interface LeaseRow {
  id: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  recoveries: number;
}

const parse = (json: Json | null): unknown => (json === null ? null : JSON.parse(json));

export function agentRecord(row: AgentRow): Agent {
  const overrides = JSON.parse(row.overrides) as [
    toolId: string,
    mode: ToolConfirmationMode,
    rules: ArgumentRule[] | null,
    allowEdit: Bool | null,
  ][];
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    modelId: row.model_id,
    systemPrompt: row.system_prompt,
    toolIds: JSON.parse(row.tool_ids) as string[],
    requireToolConfirmation: Boolean(row.require_tool_confirmation),
    toolConfirmation: Object.fromEntries(overrides.map(([toolId, mode]) => [toolId, mode])),
    pauseTtlSeconds: row.pause_ttl_seconds,
    maxIterations: row.max_iterations,
    ...argumentRulesFromRows(
      Boolean(row.allow_edit),
      overrides.map(([toolId, , rules, allowEdit]) => ({
        toolId,
        rules,
        allowEdit: allowEdit === null ? null : Boolean(allowEdit),
      })),
    ),
    ...agentApproversFromColumn(parse(row.approvers)),
  };
}

export function threadRecord(row: ThreadRow): ThreadRecord {
  return { id: row.id, agentId: row.agent_id, ownerId: row.owner_id, createdAt: row.created_at };
}

export function turnRecord(row: TurnRow): TurnRecord {
  return {
    id: row.id,
    threadId: row.thread_id,
    agentId: row.agent_id,
    ownerId: row.owner_id,
    status: row.status,
    text: row.text,
    error: row.error,
    iterations: row.iterations,
    // Validated, and upgraded if an earlier release wrote it: a malformed step fails naming the turn.
    step: row.step === null ? null : loadPendingStep(JSON.parse(row.step), row.id),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
}

export function messageRecord(row: MessageRow): MessageRecord {
  return {
    id: row.id,
    threadId: row.thread_id,
    turnId: row.turn_id,
    role: row.role,
    text: row.text,
    toolCalls: row.tool_calls === null ? [] : (JSON.parse(row.tool_calls) as MessageRecord['toolCalls']),
    toolCallId: row.tool_call_id,
    createdAt: row.created_at,
  };
}

export function elicitationRecord(row: ElicitationRow): ElicitationRecord {
  const remember = parse(row.response_remember);
  return {
    id: row.id,
    turnId: row.turn_id,
    threadId: row.thread_id,
    agentId: row.agent_id,
    ownerId: row.owner_id,
    toolCallId: row.tool_call_id,
    status: row.status,
    request: JSON.parse(row.request) as ElicitationRecord['request'],
    toolCall: JSON.parse(row.tool_call) as ElicitationRecord['toolCall'],
    response: row.response_action
      ? answerFromColumns(row.response_action, {
          content: parse(row.response_content),
          arguments: parse(row.response_arguments),
          remember,
        })
      : null,
    grantId: grantIdFromColumn(remember),
    resolvedBy: row.resolved_by,
    resolvedByIdentity: parse(row.resolved_by_identity) as AnswerIdentity | null,
    resolvedAt: row.resolved_at,
    withdrawn: row.withdrawn ?? null,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    approval: parse(row.approval) as ElicitationApproval | null,
    escalatedAt: row.escalated_at,
    callerWaitingUntil: row.caller_waiting_until ?? null,
  };
}

export function approverAnswerRecord(row: ElicitationAnswerRow): ApproverAnswer {
  return {
    elicitationId: row.elicitation_id,
    approverId: row.approver_id,
    position: row.position,
    action: row.action,
    content: parse(row.content) as ApproverAnswer['content'],
    arguments: parse(row.arguments) as ApproverAnswer['arguments'],
    remember: parse(row.remember) as ApproverAnswer['remember'],
    createdAt: row.created_at,
    identity: parse(row.approver_identity) as AnswerIdentity | null,
  };
}

export function grantRecord(row: GrantRow): ApprovalGrantRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    agentId: row.agent_id,
    scope: row.scope,
    threadId: row.thread_id,
    toolId: row.tool_id,
    definitionHash: row.definition_hash,
    elicitationId: row.elicitation_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    approvers: row.approvers,
  };
}

export function webhookDeliveryRecord(row: WebhookRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpoint: row.endpoint,
    eventType: row.event_type,
    payload: JSON.parse(row.payload) as WebhookDeliveryRecord['payload'],
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lockedBy: row.locked_by,
    lockedUntil: row.locked_until,
    lastError: row.last_error,
    lastStatusCode: row.last_status_code,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}
