// The depth limit on the arguments of a model's tool call (limits.maxToolArgumentsDepth, beside the size limit): a call
// nested deeper does not run and is not asked about, its arguments are not kept, the model reads why, the turn goes
// on, and nothing is logged as a fault, however deep it is. Arguments within the limit are shown in a form that grows
// linearly with them: pending calls do not make the inbox's query huge or the server slow.
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/records.js';
import { dataOf } from '../support/harness.js';
import { LEVEL, memoryLog } from '../support/log.js';
import { call, callStep, startScenario, testConfig, textStep, toolTexts, type Scenario } from '../support/scenario.js';

const TOOLS = [{ name: 'write_note' }];

/** Arguments `levels` deep: the arguments object, then arrays; `pad` characters of text beside them. */
function nested(levels: number, pad = 0): JsonObject {
  let value: unknown = [];
  for (let level = 2; level < levels; level++) value = [value];
  return { v: value, ...(pad > 0 && { pad: 'x'.repeat(pad) }) };
}

const refused = (max: number) =>
  `Execution of write_note was refused: its arguments are nested more than ${max} levels deep.`;

const PENDING = `{ pendingElicitations(first: 50) { edges { node { id toolCall { name arguments argumentsDisplay {
  text hiddenCharacters { codePoint name offset escape } mixedScriptWords { word scripts } } } } } } }`;

const ANSWER = `mutation Answer($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { status } turn { status } userErrors { code message field } }
}`;

/** The viewer's pending requests as the inbox reads them: the raw response's size, and the requests. */
async function pendingAsTheInboxReads(s: Scenario): Promise<{ bytes: number; nodes: any[] }> {
  const response = await fetch(s.h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: PENDING }),
  });
  const text = await response.text();
  return {
    bytes: Buffer.byteLength(text),
    nodes: JSON.parse(text).data.pendingElicitations.edges.map((e: any) => e.node),
  };
}

/**
 * The slowest /healthz answer while `work` runs (asked again as soon as each answer comes), and the CPU this process
 * (the server's, in process) spent meanwhile: what kept its event loop busy, whatever else the machine runs.
 */
async function slowestHealthzDuring<T>(
  s: Scenario,
  work: () => Promise<T>,
): Promise<{ slowestMs: number; cpuMs: number; result: T }> {
  const url = s.h.url.replace(/\/graphql$/, '/healthz');
  let done = false;
  const cpu = process.cpuUsage();
  const result = work().finally(() => (done = true));
  let slowestMs = 0;
  do {
    const started = performance.now();
    expect((await fetch(url)).status).toBe(200);
    slowestMs = Math.max(slowestMs, performance.now() - started);
  } while (!done);
  const spent = process.cpuUsage(cpu);
  return { slowestMs, cpuMs: (spent.user + spent.system) / 1000, result: await result };
}

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

describe('a tool call whose arguments are nested deeper than maxToolArgumentsDepth', () => {
  it('is refused before the user sees it, however deep, with nothing logged as a fault; one at the limit asks and runs', async () => {
    const log = memoryLog('info');
    s = await startScenario({
      tools: TOOLS,
      logger: log.logger,
      // A function step: the scripted model copies a plain one with structuredClone, which recurses.
      script: [
        () =>
          callStep(
            call('write_note', nested(65), 'c_over'),
            // Deeper than any recursive function could walk.
            call('write_note', nested(100_000), 'c_far'),
            call('write_note', nested(64), 'c_at'),
          ),
        textStep('Wrote the one I could.'),
      ],
    });
    const { turn, thread } = await s.start('write three notes');

    expect([turn.status, turn.error]).toEqual(['PAUSED', null]);
    expect(turn.pendingElicitations.map((e: any) => e.toolCall.arguments)).toEqual([nested(64)]);
    const assistant = turn.messages.find((m: any) => m.role === 'ASSISTANT');
    expect(assistant.toolCalls.map((c: any) => [c.id, c.arguments])).toEqual([
      ['c_over', {}],
      ['c_far', {}],
      ['c_at', nested(64)],
    ]);

    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('write_note')).toEqual([nested(64)]);
    expect(toolTexts(resolved.turn.messages)).toEqual([
      refused(64),
      refused(64),
      `write_note ran with ${JSON.stringify(nested(64))}`,
    ]);
    await s.expectConsistent(thread.id);
    expect(log.lines().filter((line) => line.level >= LEVEL.warn)).toEqual([]);
  });

  it('is server.maxToolArgumentsDepth in the config', async () => {
    s = await startScenario({
      tools: TOOLS,
      config: { ...testConfig({ requireToolConfirmation: false }), server: { maxToolArgumentsDepth: 3 } },
      script: [
        callStep(call('write_note', nested(3), 'c_at'), call('write_note', nested(4), 'c_over')),
        textStep('ok'),
      ],
    });
    const { turn } = await s.start('write');
    expect(turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('write_note')).toEqual([nested(3)]);
    expect(toolTexts(turn.messages)[1]).toBe(refused(3));
  });

  it('20 calls of 4 KB nested 2,000 deep leave the pending requests small and /healthz prompt', async () => {
    const calls = Array.from({ length: 20 }, (_, i) => call('write_note', nested(2000, 96), `c_${i}`));
    expect(JSON.stringify(calls[0]!.arguments)).toHaveLength(4109);
    s = await startScenario({
      tools: TOOLS,
      // One call within the limits waits beside them.
      script: [() => callStep(...calls, call('write_note', { text: 'small' }, 'c_small')), textStep('ok')],
    });
    const { turn } = await s.start('write many notes');
    expect(turn.status).toBe('PAUSED');

    const { slowestMs, cpuMs, result } = await slowestHealthzDuring(s, () => pendingAsTheInboxReads(s));
    expect(result.bytes).toBeLessThan(10_000);
    expect(cpuMs).toBeLessThan(1000);
    expect(slowestMs).toBeLessThan(5000);
    // They were refused: only the small one waits, and theirs are not kept.
    expect(result.nodes.map((node) => node.toolCall.arguments)).toEqual([{ text: 'small' }]);
    const assistant = turn.messages.find((m: any) => m.role === 'ASSISTANT');
    expect(assistant.toolCalls.map((c: any) => c.arguments)).toEqual([...calls.map(() => ({})), { text: 'small' }]);
  });
});

describe('edited arguments nested deeper than maxToolArgumentsDepth', () => {
  it('are refused before anything is recorded, however deep, with nothing logged as a fault', async () => {
    const log = memoryLog('info');
    s = await startScenario({
      tools: TOOLS,
      logger: log.logger,
      script: [callStep(call('write_note', { text: 'n1' })), textStep('ok')],
    });
    const { turn } = await s.start('write');
    const elicitationId = turn.pendingElicitations[0].id;
    // As raw JSON: deeper than JSON.stringify can write.
    const answerWith = async (levels: number) => {
      const edited = `{"v":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
      const body =
        `{"query":${JSON.stringify(ANSWER)},"variables":{"input":` +
        `{"elicitationId":"${elicitationId}","action":"ACCEPT","arguments":${edited}}}}`;
      const response = await fetch(s.h.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return dataOf<any>((await response.json()) as any).resolveElicitation;
    };
    for (const levels of [65, 4000, 100_000]) {
      expect(await answerWith(levels)).toEqual({
        elicitation: null,
        turn: null,
        userErrors: [
          {
            code: 'INVALID_CONTENT',
            message: 'arguments are nested more than 64 levels deep.',
            field: ['input', 'arguments'],
          },
        ],
      });
    }
    expect(s.tools.count('write_note')).toBe(0);
    expect(log.lines().filter((line) => line.level >= LEVEL.warn)).toEqual([]);
    // 64 levels are an edit like any other: checked against the tool's schema, then run.
    expect((await answerWith(64)).turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('write_note')).toEqual([nested(64)]);
  });
});

describe('arguments nested deep within the limit', () => {
  it('are shown in a form linear in their size: 20 pending calls of 4 KB nested 1,000 deep stay small, /healthz prompt', async () => {
    const args = nested(1000, 2000);
    expect(JSON.stringify(args)).toHaveLength(4013);
    s = await startScenario({
      tools: TOOLS,
      // The deepest a config may allow.
      config: { ...testConfig(), server: { maxToolArgumentsDepth: 1000 } },
      script: [
        () => callStep(...Array.from({ length: 20 }, (_, i) => call('write_note', args, `c_${i}`))),
        textStep('ok'),
      ],
    });
    const { turn } = await s.start('write many notes');
    expect(turn.status).toBe('PAUSED');

    const { slowestMs, cpuMs, result } = await slowestHealthzDuring(s, () => pendingAsTheInboxReads(s));
    expect(result.bytes).toBeLessThan(300_000);
    // The read's cost bounds how long /healthz can wait; the wall time adds what a busy machine's other processes
    // take, so it is bounded loosely (a display that grew with the nesting blocked it for many seconds).
    expect(cpuMs).toBeLessThan(1000);
    expect(slowestMs).toBeLessThan(5000);
    expect(result.nodes).toHaveLength(20);
    const [first] = result.nodes;
    expect(first.toolCall.arguments).toEqual(args);
    // The shown form is JSON of exactly the arguments, about as long as they are.
    expect(JSON.parse(first.toolCall.argumentsDisplay.text)).toEqual(args);
    expect(first.toolCall.argumentsDisplay.text.length).toBeLessThan(2 * 4013);

    // Stored, shown, answered and run at that depth: each function on the way walks it without overflowing.
    const statuses = [];
    for (const node of result.nodes) {
      const input = { elicitationId: node.id, action: 'ACCEPT' };
      statuses.push(dataOf(await s.h.gql(ANSWER, { input })).resolveElicitation.turn.status);
    }
    expect(statuses.at(-1)).toBe('COMPLETED');
    expect(s.tools.runs.get('write_note')).toEqual(Array.from({ length: 20 }, () => args));
  });
});
