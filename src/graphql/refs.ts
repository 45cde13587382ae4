// The object types that several modules of the API name, declared once here and implemented each in its own module
// (agents.ts, threads.ts, turns.ts, elicitations.ts, approvals.ts): a module that needs another's type imports its
// ref from here, never the other module, so the modules form no import cycle.
import type {
  Agent,
  ApprovalGrantRecord,
  ElicitationRecord,
  MessageRecord,
  ThreadRecord,
  ToolAnnotations,
  TurnRecord,
} from '../domain/records.js';
import { builder } from './builder.js';

export const AgentRef = builder.objectRef<Agent>('Agent');
export const ToolAnnotationsRef = builder.objectRef<ToolAnnotations>('ToolAnnotations');
export const ThreadRef = builder.objectRef<ThreadRecord>('Thread');
export const MessageRef = builder.objectRef<MessageRecord>('Message');
export const TurnRef = builder.objectRef<TurnRecord>('Turn');
export const ElicitationRef = builder.objectRef<ElicitationRecord>('Elicitation');
export const ApprovalGrantRef = builder.objectRef<ApprovalGrantRecord>('ApprovalGrant');

/** Named by an ACCEPT's remember (elicitations.ts) and by the grant it records (approvals.ts). */
export const ApprovalGrantScopeEnum = builder.enumType('ApprovalGrantScope', {
  description: 'Where a remembered approval lets later calls of the tool run unasked.',
  values: {
    THREAD: { description: 'In the thread of the accepted call only.' },
    AGENT: { description: 'In every thread of the user with this agent.' },
  } as const,
});
