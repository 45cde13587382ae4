// Remembered approvals without a database: what a grant is bound to (the tool's trusted definition), when it holds,
// which one covers a call, and the grant an ACCEPT with `remember` records.
import { describe, expect, it } from 'vitest';
import { approversKey } from '../../src/domain/approvers.js';
import {
  coveringGrant,
  definitionHash,
  grantCovers,
  grantFromAnswer,
  grantStateAt,
  MAX_GRANT_TTL_SECONDS,
  type GrantedCall,
} from '../../src/domain/grants.js';
import type { ApprovalGrantRecord, ElicitationRecord, ToolDefinition } from '../../src/domain/records.js';

const CREATED = '2030-01-01T10:00:00.000Z';
const EXPIRES = '2030-01-01T11:00:00.000Z';
const BEFORE_EXPIRY = '2030-01-01T10:59:59.999Z';
const NOW = '2030-01-01T10:30:00.000Z';

const tool: ToolDefinition = {
  id: 'notes:edit_note',
  source: 'notes',
  name: 'edit_note',
  label: 'Edit a note',
  description: 'Edits one note.',
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string' }, text: { type: 'string' } },
    required: ['id'],
  },
  annotations: { destructiveHint: true, idempotentHint: false },
};
const HASH = definitionHash(tool);

function grant(changes: Partial<ApprovalGrantRecord> = {}): ApprovalGrantRecord {
  return {
    id: 'grt-1',
    ownerId: 'ann',
    agentId: 'notes-agent',
    scope: 'THREAD',
    threadId: 'thr-1',
    toolId: tool.id,
    definitionHash: HASH,
    elicitationId: 'elc-1',
    createdAt: CREATED,
    expiresAt: EXPIRES,
    revokedAt: null,
    approvers: null,
    ...changes,
  };
}

const callOf = (changes: Partial<GrantedCall> = {}): GrantedCall => ({
  ownerId: 'ann',
  agentId: 'notes-agent',
  threadId: 'thr-1',
  toolId: tool.id,
  definitionHash: HASH,
  approvers: null,
  ...changes,
});

describe('definitionHash', () => {
  it('is a sha256 of the trusted definition, stable under key order at every depth', () => {
    expect(HASH).toMatch(/^sha256:[0-9a-f]{64}$/);
    const reordered: ToolDefinition = {
      annotations: { idempotentHint: false, destructiveHint: true },
      inputSchema: {
        required: ['id'],
        properties: { text: { type: 'string' }, id: { type: 'string' } },
        type: 'object',
      },
      description: 'Edits one note.',
      label: 'Edit a note',
      name: 'edit_note',
      source: 'notes',
      id: 'notes:edit_note',
    };
    expect(definitionHash(reordered)).toBe(HASH);
    expect(definitionHash(structuredClone(tool))).toBe(HASH);
  });

  it.each([
    ['the description', { description: 'Edits one note, and tells nobody.' }],
    [
      'a property of the input schema',
      { inputSchema: { ...tool.inputSchema, properties: { id: { type: 'number' } } } },
    ],
    ['the required list', { inputSchema: { ...tool.inputSchema, required: ['id', 'text'] } }],
    ['an annotation', { annotations: { destructiveHint: false, idempotentHint: false } }],
    ['an annotation added', { annotations: { ...tool.annotations, openWorldHint: true } }],
  ] as const)('changes with %s', (_what, changes) => {
    expect(definitionHash({ ...tool, ...changes })).not.toBe(HASH);
  });

  it('does not change with the name, label, id or source: only the trusted definition counts', () => {
    const renamed: ToolDefinition = { ...tool, name: 'renamed', label: 'Another label', id: 'x:renamed', source: 'x' };
    expect(definitionHash(renamed)).toBe(HASH);
  });
});

describe('grantStateAt', () => {
  it('is ACTIVE before expiresAt, EXPIRED at exactly expiresAt and after', () => {
    expect(grantStateAt(grant(), BEFORE_EXPIRY)).toBe('ACTIVE');
    expect(grantStateAt(grant(), EXPIRES)).toBe('EXPIRED');
    expect(grantStateAt(grant(), '2030-01-02T00:00:00.000Z')).toBe('EXPIRED');
  });

  it('is REVOKED once revoked, whether or not it has expired since', () => {
    const revoked = grant({ revokedAt: NOW });
    expect(grantStateAt(revoked, NOW)).toBe('REVOKED');
    expect(grantStateAt(revoked, BEFORE_EXPIRY)).toBe('REVOKED');
    expect(grantStateAt(revoked, '2030-01-02T00:00:00.000Z')).toBe('REVOKED');
  });
});

describe('grantCovers', () => {
  it('covers a call of the same owner, agent, tool and definition in its thread, while ACTIVE', () => {
    expect(grantCovers(grant(), callOf(), NOW)).toBe(true);
    expect(grantCovers(grant(), callOf(), BEFORE_EXPIRY)).toBe(true);
  });

  it.each([
    ['another owner', { ownerId: 'bob' }],
    ['another agent', { agentId: 'other-agent' }],
    ['another tool', { toolId: 'notes:delete_note' }],
    ['a changed tool definition', { definitionHash: definitionHash({ ...tool, description: 'Changed.' }) }],
    ['another thread (THREAD scope)', { threadId: 'thr-2' }],
  ] as const)('does not cover a call by %s', (_what, changes) => {
    expect(grantCovers(grant(), callOf(changes), NOW)).toBe(false);
  });

  it('AGENT scope covers every thread of the owner with the agent, and nothing else', () => {
    const agentWide = grant({ scope: 'AGENT', threadId: null });
    expect(grantCovers(agentWide, callOf(), NOW)).toBe(true);
    expect(grantCovers(agentWide, callOf({ threadId: 'thr-2' }), NOW)).toBe(true);
    expect(grantCovers(agentWide, callOf({ ownerId: 'bob' }), NOW)).toBe(false);
    expect(grantCovers(agentWide, callOf({ agentId: 'other-agent' }), NOW)).toBe(false);
    expect(grantCovers(agentWide, callOf({ toolId: 'notes:delete_note' }), NOW)).toBe(false);
  });

  it('stops covering at exactly expiresAt', () => {
    expect(grantCovers(grant(), callOf(), EXPIRES)).toBe(false);
  });

  it('does not cover once revoked, even before expiresAt', () => {
    expect(grantCovers(grant({ revokedAt: CREATED }), callOf(), NOW)).toBe(false);
  });
});

describe('coveringGrant', () => {
  it('picks the oldest covering grant of the candidates (as the store lists them, oldest first)', () => {
    const otherThread = grant({ id: 'grt-a', threadId: 'thr-2' });
    const expired = grant({ id: 'grt-b', expiresAt: NOW });
    const older = grant({ id: 'grt-c', scope: 'AGENT', threadId: null });
    const newer = grant({ id: 'grt-d' });
    expect(coveringGrant([otherThread, expired, older, newer], callOf(), NOW)?.id).toBe('grt-c');
    expect(coveringGrant([otherThread, expired, newer, older], callOf(), NOW)?.id).toBe('grt-d');
  });

  it('is null when none covers the call (or there are none)', () => {
    expect(coveringGrant([], callOf(), NOW)).toBeNull();
    expect(coveringGrant([grant({ revokedAt: NOW }), grant({ threadId: 'thr-9' })], callOf(), NOW)).toBeNull();
  });
});

describe('grantFromAnswer', () => {
  const elicitation: Pick<ElicitationRecord, 'id' | 'ownerId' | 'agentId' | 'threadId' | 'toolCall' | 'approval'> = {
    id: 'elc-7',
    approval: null,
    ownerId: 'ann',
    agentId: 'notes-agent',
    threadId: 'thr-1',
    toolCall: {
      name: 'edit_note',
      toolId: tool.id,
      arguments: { id: 'n1' },
      annotations: tool.annotations,
      definitionHash: HASH,
    },
  };

  it('THREAD scope: bound to the thread, the tool and its definition, expiring ttlSeconds after the answer', () => {
    expect(grantFromAnswer(elicitation, { scope: 'THREAD', ttlSeconds: 3600 }, 'grt-new', CREATED)).toEqual({
      id: 'grt-new',
      ownerId: 'ann',
      agentId: 'notes-agent',
      scope: 'THREAD',
      threadId: 'thr-1',
      toolId: tool.id,
      definitionHash: HASH,
      elicitationId: 'elc-7',
      createdAt: CREATED,
      expiresAt: EXPIRES,
      revokedAt: null,
      approvers: null,
    });
  });

  it('AGENT scope: no thread; the longest ttl ends 30 days after the answer', () => {
    const made = grantFromAnswer(elicitation, { scope: 'AGENT', ttlSeconds: MAX_GRANT_TTL_SECONDS }, 'g', CREATED);
    expect(made).toMatchObject({ scope: 'AGENT', threadId: null, createdAt: CREATED });
    expect(made.expiresAt).toBe('2030-01-31T10:00:00.000Z');
    expect(grantCovers(made, callOf({ threadId: 'thr-elsewhere' }), NOW)).toBe(true);
  });

  it('a one-second grant covers the call for that second only', () => {
    const made = grantFromAnswer(elicitation, { scope: 'THREAD', ttlSeconds: 1 }, 'g', CREATED);
    expect(made.expiresAt).toBe('2030-01-01T10:00:01.000Z');
    expect(grantCovers(made, callOf(), '2030-01-01T10:00:00.999Z')).toBe(true);
    expect(grantCovers(made, callOf(), '2030-01-01T10:00:01.000Z')).toBe(false);
  });

  it('a request under an approvers policy binds its grant to that policy (not to when it escalates)', () => {
    const approval = {
      roles: ['reviewer', 'admin'],
      required: 2,
      requester: 'EXCLUDED' as const,
      escalation: { roles: ['oncall'], at: CREATED },
    };
    const made = grantFromAnswer({ ...elicitation, approval }, { scope: 'THREAD', ttlSeconds: 60 }, 'g', CREATED);
    const key = approversKey({ ...approval, roles: ['admin', 'reviewer'], escalation: { roles: ['oncall'], at: NOW } });
    expect(made.approvers).toBe(key);
    expect(grantCovers(made, callOf({ approvers: key }), CREATED)).toBe(true);
    // The same tool asked under no policy, or another one: a grant of reviewers does not stand in, nor the reverse.
    expect(grantCovers(made, callOf(), CREATED)).toBe(false);
    expect(grantCovers(made, callOf({ approvers: approversKey({ ...approval, required: 1 }) }), CREATED)).toBe(false);
    expect(grantCovers(grant({ expiresAt: EXPIRES }), callOf({ approvers: key }), CREATED)).toBe(false);
  });

  it('throws for a request made without a definition hash: there is nothing to bind the approval to', () => {
    const { definitionHash: _hash, ...toolCall } = elicitation.toolCall;
    expect(() =>
      grantFromAnswer({ ...elicitation, toolCall }, { scope: 'THREAD', ttlSeconds: 60 }, 'g', CREATED),
    ).toThrow(/elc-7.*definition hash/);
  });
});
