// callTool, called directly (no MCP): a gateway's call passes the same gate as an agent's, pauses on the same ledger,
// runs once when answered, and its client gets the tool's result; the same key gets the same call back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation } from '../../src/app/answer-elicitation.js';
import {
  awaitCallResult,
  callTool,
  gatewayAgentIds,
  gatewayCall,
  listGatewayTools,
  type CallToolInput,
} from '../../src/app/call-tool.js';
import { startTurn } from '../../src/app/start-turn.js';
import { argumentsDigest, verifyRecords } from '../../src/domain/decision-records.js';
import { ALICE, BOB, startApp, type AppScenario } from '../support/app.js';
import { memoryLog } from '../support/log.js';
import { AGENT_ID, testAgent } from '../support/scenario.js';
import type { AgentConfig } from '../../src/config/schema.js';

const GATEWAY = 'gw';
let s: AppScenario;

/** The gateway `gw` on the test tools, asking by the tools' annotations; `overrides`: its gating. */
const gatewayAgent = (overrides: Partial<AgentConfig> = {}): AgentConfig => ({
  ...testAgent({ id: GATEWAY, name: 'Gateway', tools: ['t:*'], requireToolConfirmation: true, ...overrides }),
  model: undefined,
});

beforeAll(async () => {
  s = await startApp({
    tools: [
      { name: 'lookup', annotations: { readOnlyHint: true } },
      { name: 'wipe', annotations: { destructiveHint: true }, run: (args) => `wiped ${JSON.stringify(args)}` },
      { name: 'broken', annotations: { readOnlyHint: true }, run: () => Promise.reject(new Error('disk on fire')) },
    ],
    agents: [gatewayAgent()],
  });
});
afterAll(() => s?.close());

const input = (name: string, args = {}, rest: Partial<CallToolInput> = {}): CallToolInput => ({
  agentId: GATEWAY,
  name,
  arguments: args,
  clientName: 'test client',
  ...rest,
});

describe('a gateway: an agent without a model', () => {
  it('is listed as one, and lists its tools with their annotations', async () => {
    expect(await gatewayAgentIds(s.app)).toEqual([GATEWAY]);
    const tools = await listGatewayTools(s.app, GATEWAY);
    expect(tools?.map((t) => [t.name, t.annotations])).toEqual([
      ['lookup', { readOnlyHint: true }],
      ['wipe', { destructiveHint: true }],
      ['broken', { readOnlyHint: true }],
    ]);
    expect(await listGatewayTools(s.app, AGENT_ID)).toBeNull();
    expect(await listGatewayTools(s.app, 'nobody')).toBeNull();
  });

  it('runs a read-only call at once and returns its result', async () => {
    const before = s.tools.count('lookup');
    const outcome = await callTool(s.app, ALICE, input('lookup', { q: 'x' }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(outcome.call.result).toEqual({
      content: [{ type: 'text', text: 'lookup ran with {"q":"x"}' }],
      isError: false,
    });
    expect(outcome.call.turn.status).toBe('COMPLETED');
    expect(s.tools.count('lookup')).toBe(before + 1);
  });

  it("reports a tool's failure as an error result", async () => {
    const outcome = await callTool(s.app, ALICE, input('broken'));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(outcome.call.result?.isError).toBe(true);
    expect(JSON.stringify(outcome.call.result?.content)).toContain('disk on fire');
  });

  it('pauses a destructive call; the answer runs it once and the waiting client gets the result', async () => {
    const before = s.tools.count('wipe');
    const outcome = await callTool(s.app, ALICE, input('wipe', { ids: [1, 2] }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    const { turn, waitingOn, result } = outcome.call;
    expect(turn.status).toBe('PAUSED');
    expect(result).toBeNull();
    expect(waitingOn).toHaveLength(1);
    expect(waitingOn[0]!.toolCall.arguments).toEqual({ ids: [1, 2] });
    expect(s.tools.count('wipe')).toBe(before);

    const waiting = awaitCallResult(s.app, ALICE, turn.id, { tickMs: 50 });
    const answered = await answerElicitation(s.app, ALICE, { elicitationId: waitingOn[0]!.id, action: 'ACCEPT' });
    expect(answered.ok).toBe(true);
    const done = await waiting;
    // With the signed ACCEPTED record that let it run, bound to its arguments (docs/receipts.md).
    expect(done?.result).toEqual({
      content: [{ type: 'text', text: 'wiped {"ids":[1,2]}' }],
      isError: false,
      _meta: {
        'dev.toolgate/receipt': expect.objectContaining({
          kind: 'ACCEPTED',
          elicitationId: waitingOn[0]!.id,
          argsDigest: argumentsDigest({ ids: [1, 2] }),
          actor: expect.objectContaining({ id: 'alice' }),
        }),
      },
    });
    expect(s.tools.count('wipe')).toBe(before + 1);
    // Read again later (a retry, another instance): the same result, kept with the journal.
    expect((await gatewayCall(s.app, ALICE, turn.id))?.result).toEqual(done?.result);
  });

  it('a declined call does not run; the client reads why, as an error', async () => {
    const before = s.tools.count('wipe');
    const outcome = await callTool(s.app, ALICE, input('wipe', { ids: [3] }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    const [request] = outcome.call.waitingOn;
    await answerElicitation(s.app, ALICE, { elicitationId: request!.id, action: 'DECLINE' });
    const done = await awaitCallResult(s.app, ALICE, outcome.call.turn.id);
    expect(done?.result?.isError).toBe(true);
    expect(JSON.stringify(done?.result?.content)).toMatch(/declined/i);
    expect(s.tools.count('wipe')).toBe(before);
  });

  it('the same idempotency key gets the same call back; other arguments with it are refused', async () => {
    const before = s.tools.count('lookup');
    const first = await callTool(s.app, ALICE, input('lookup', { q: 1 }, { idempotencyKey: 'k-1' }));
    const again = await callTool(s.app, ALICE, input('lookup', { q: 1 }, { idempotencyKey: 'k-1' }));
    if (!first.ok || !again.ok) throw new Error(JSON.stringify([first, again]));
    expect(again.call.turn.id).toBe(first.call.turn.id);
    expect(again.call.result).toEqual(first.call.result);
    expect(s.tools.count('lookup')).toBe(before + 1);
    expect(await callTool(s.app, ALICE, input('lookup', { q: 2 }, { idempotencyKey: 'k-1' }))).toEqual({
      ok: false,
      code: 'IDEMPOTENCY_KEY_REUSED',
      field: 'idempotencyKey',
    });
  });

  it('refuses an unknown tool or gateway, and changes nothing', async () => {
    const before = await s.snapshot();
    expect(await callTool(s.app, ALICE, input('nope'))).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      of: 'tool',
      field: 'name',
    });
    expect(await callTool(s.app, ALICE, { ...input('lookup'), agentId: AGENT_ID })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      of: 'agent',
      field: 'agentId',
    });
    expect(await s.snapshot()).toEqual(before);
  });

  it('another user cannot read or wait on the call', async () => {
    const outcome = await callTool(s.app, ALICE, input('wipe', { ids: [9] }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(await gatewayCall(s.app, BOB, outcome.call.turn.id)).toBeNull();
    expect(await awaitCallResult(s.app, BOB, outcome.call.turn.id)).toBeNull();
  });

  it('a message to a gateway through startTurn is refused, and changes nothing', async () => {
    const before = await s.snapshot();
    const outcome = await startTurn(s.app, ALICE, {
      agentId: GATEWAY,
      threadId: null,
      message: 'hello',
      background: false,
    });
    expect(outcome).toEqual({ ok: false, code: 'INVALID_INPUT', field: 'agentId', reason: 'GATEWAY' });
    expect(await s.snapshot()).toEqual(before);
  });
});

describe("a gateway's call passes the whole gate", () => {
  let g: AppScenario;
  beforeAll(async () => {
    g = await startApp({
      tools: [{ name: 'wipe', annotations: { destructiveHint: true } }],
      agents: [
        gatewayAgent({
          toolConfirmation: {
            't:wipe': {
              rules: [
                {
                  match: { required: ['all'], properties: { all: { const: true } } },
                  mode: 'DENY',
                  reason: 'never everything',
                },
                { match: { required: ['dryRun'], properties: { dryRun: { const: true } } }, mode: 'NEVER' },
              ],
            },
          },
        }),
      ],
      listeners: [
        {
          priority: 100,
          onToolPreExecute(event) {
            if (event.toolCall.arguments.id === 'protected') event.setVeto('protected rows stay');
          },
        },
      ],
    });
  });
  afterAll(() => g?.close());

  const result = async (name: string, args: object) => {
    const outcome = await callTool(g.app, ALICE, input(name, args));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    return outcome.call;
  };

  it('a listeners veto: it does not run, and the client reads the denial as an error', async () => {
    const call = await result('wipe', { id: 'protected' });
    expect(call.result).toEqual({
      content: [{ type: 'text', text: 'Execution of wipe was denied: protected rows stay' }],
      isError: true,
    });
    expect(g.tools.count('wipe')).toBe(0);
  });

  it('argument rules: DENY refuses with its reason, NEVER runs unasked', async () => {
    const denied = await result('wipe', { all: true });
    expect(denied.result?.isError).toBe(true);
    expect(JSON.stringify(denied.result?.content)).toContain('never everything');
    const dry = await result('wipe', { dryRun: true });
    expect(dry.result).toEqual({
      content: [{ type: 'text', text: 'wipe ran with {"dryRun":true}' }],
      isError: false,
    });
    expect(g.tools.runs.get('wipe')).toEqual([{ dryRun: true }]);
  });

  it('a remembered approval (the whole gateway) lets the next call run unasked', async () => {
    const first = await result('wipe', { id: 'r1' });
    expect(first.waitingOn).toHaveLength(1);
    const answered = await answerElicitation(g.app, ALICE, {
      elicitationId: first.waitingOn[0]!.id,
      action: 'ACCEPT',
      remember: { scope: 'AGENT', ttlSeconds: 600 },
    });
    expect(answered.ok).toBe(true);
    const second = await result('wipe', { id: 'r2' });
    expect(second.waitingOn).toEqual([]);
    expect(second.result?.isError).toBe(false);
    // Another user's calls are not covered by Alice's approval.
    const bobs = await callTool(g.app, BOB, input('wipe', { id: 'r3' }));
    expect(bobs.ok && bobs.call.waitingOn).toHaveLength(1);
  });

  it('an edit runs the person’s arguments, and the client reads that it was edited', async () => {
    // Bob's: Alice's remembered approval would let hers run unasked.
    const started = await callTool(g.app, BOB, input('wipe', { id: 'r4' }));
    if (!started.ok) throw new Error(JSON.stringify(started));
    const { call } = started;
    const answered = await answerElicitation(g.app, ALICE, {
      elicitationId: call.waitingOn[0]!.id,
      action: 'ACCEPT',
      arguments: { id: 'r5' },
    });
    // Only the caller answers their calls.
    expect(answered).toEqual({ ok: false, code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' });
    await answerElicitation(g.app, BOB, {
      elicitationId: call.waitingOn[0]!.id,
      action: 'ACCEPT',
      arguments: { id: 'r5' },
    });
    const done = await gatewayCall(g.app, BOB, call.turn.id);
    expect(done?.result?.content[0]).toEqual({ type: 'text', text: 'wipe ran with {"id":"r5"}' });
    expect(JSON.stringify(done?.result?.content.slice(1))).toMatch(
      /The user changed the arguments of wipe before accepting/,
    );
    expect(g.tools.runs.get('wipe')?.at(-1)).toEqual({ id: 'r5' });
  });
});

describe("a gateway's call whose confirmation expires", () => {
  it('never runs: the waiting client gets the expiry as an error, and so does a retry with its key', async () => {
    const e = await startApp({
      tools: [{ name: 'wipe', annotations: { destructiveHint: true } }],
      agents: [
        {
          ...testAgent({ id: GATEWAY, name: 'Gateway', tools: ['t:*'], requireToolConfirmation: true }),
          model: undefined,
          pauseTtlSeconds: 1,
        },
      ],
    });
    try {
      const call = input('wipe', { id: 'x' }, { idempotencyKey: 'expiring' });
      const started = await callTool(e.app, ALICE, call);
      if (!started.ok) throw new Error(JSON.stringify(started));
      expect(started.call.waitingOn).toHaveLength(1);
      const waiting = awaitCallResult(e.app, ALICE, started.call.turn.id, { tickMs: 50 });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await e.sweep()).toMatchObject({ expiredTurns: 1 });
      const expired = {
        content: [{ type: 'text', text: 'Execution of wipe was not confirmed before the request expired.' }],
        isError: true,
      };
      expect((await waiting)?.result).toEqual(expired);
      const retried = await callTool(e.app, ALICE, call);
      expect(retried.ok && retried.call.result).toEqual(expired);
      expect(e.tools.count('wipe')).toBe(0);
    } finally {
      await e.close();
    }
  });
});

describe('a read-only call that runs unasked is recorded whole, after it returns (docs/durability.md)', () => {
  let r: AppScenario;
  let seenWhileRunning: Record<string, number> | undefined;
  let listened = 0;
  /** The server's log: a listener that throws is a fault of the listener's, logged, not printed. */
  const log = memoryLog('info');
  beforeAll(async () => {
    r = await startApp({
      tools: [
        {
          name: 'peek',
          annotations: { readOnlyHint: true },
          run: async () => {
            seenWhileRunning = (await r.snapshot()).counts;
            return 'peeked';
          },
        },
        { name: 'audit_log', annotations: { readOnlyHint: true } },
      ],
      agents: [
        gatewayAgent({
          toolConfirmation: { 't:audit_log': { mode: 'ALWAYS' } },
        }),
      ],
      logger: log.logger,
      listeners: [
        {
          priority: 100,
          onToolPreExecute: (event) => {
            listened++;
            if (event.toolCall.arguments.boom === true) throw new Error('listener broke');
          },
        },
      ],
    });
  });
  afterAll(() => r?.close());

  it('writes nothing before it runs; then its turn, messages, journal and signed RAN and RESULT at once', async () => {
    const before = (await r.snapshot()).counts;
    const outcome = await callTool(r.app, ALICE, input('peek', { q: 1 }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(seenWhileRunning).toEqual(before);
    expect(outcome.call.result).toEqual({ content: [{ type: 'text', text: 'peeked' }], isError: false });
    expect(outcome.call.turn).toMatchObject({ status: 'COMPLETED', text: 'peeked' });
    // What a client reading the call later gets is what it got.
    expect((await gatewayCall(r.app, ALICE, outcome.call.turn.id))?.result).toEqual(outcome.call.result);
    const after = (await r.snapshot()).counts;
    expect(after.turns! - before.turns!).toBe(1);
    expect(after.messages! - before.messages!).toBe(3);
    expect(after.tool_executions! - before.tool_executions!).toBe(1);
    const records = await r.core.storage.decisionRecords(null, null);
    const ofCall = records.filter((record) => record.turnId === outcome.call.turn.id);
    expect(ofCall.map((record) => [record.kind, record.argsDigest, record.elicitationId])).toEqual([
      ['RAN', argumentsDigest({ q: 1 }), null],
      ['RESULT', argumentsDigest({ q: 1 }), null],
    ]);
    expect(verifyRecords(records, r.core.storage.receiptKeys)).toBeNull();
  });

  it('a listener that throws: nothing runs, and the call is recorded FAILED like any turn whose gate threw', async () => {
    const runs = r.tools.count('peek');
    const outcome = await callTool(r.app, ALICE, input('peek', { boom: true }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(outcome.call.turn.status).toBe('FAILED');
    expect(outcome.call.result).toMatchObject({ isError: true });
    expect(r.tools.count('peek')).toBe(runs);
    expect((await gatewayCall(r.app, ALICE, outcome.call.turn.id))?.turn.status).toBe('FAILED');
    // Logged once, as the fault it is (not printed to the console, not lost).
    expect(log.find('unexpected fault').map((line) => (line.err as { message?: string } | undefined)?.message)).toEqual(
      ['listener broke'],
    );
  });

  it('one the gating makes ask is gated once: its listeners see it once, it pauses, and runs once accepted', async () => {
    listened = 0;
    const outcome = await callTool(r.app, ALICE, input('audit_log', { day: 3 }));
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(listened).toBe(1);
    expect(outcome.call.turn.status).toBe('PAUSED');
    const [request] = outcome.call.waitingOn;
    const answered = await answerElicitation(r.app, ALICE, { elicitationId: request!.id, action: 'ACCEPT' });
    expect(answered.ok).toBe(true);
    const done = await awaitCallResult(r.app, ALICE, outcome.call.turn.id);
    expect(done?.result).toMatchObject({
      content: [{ type: 'text', text: 'audit_log ran with {"day":3}' }],
      isError: false,
    });
    expect(r.tools.runs.get('audit_log')).toEqual([{ day: 3 }]);
    expect(listened).toBe(1);
  });
});
