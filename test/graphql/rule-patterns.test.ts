// A backtracking pattern in an argument rule does not freeze the server: the real CLI in its own process (so that a
// blocked event loop shows as unanswered requests, not as a test that hangs with it), an agent whose create_entity
// runs unasked for names matching ^(a+)+$, and a non-admin user. A name of 40 "a"s and a "!" (V8's backtracking
// takes 2^40 steps on it) is decided at once, through gate(arguments:) and through a model's call in a turn, while
// /healthz keeps answering. The pattern engine is the store's concern on neither backend: SQLite only.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { killAll, startCli, type ServerProcess } from '../durability/processes.js';
import { START_TURN, tempDir } from '../support/harness.js';

const ALICE = 'alice-token-3c4d5e6f7a8b9c0d';
const EVIL = `${'a'.repeat(40)}!`;
/** Far longer than a decision takes here, far shorter than a backtracking engine takes on EVIL. */
const PROMPT_MS = 3_000;

const config: ToolgateConfig = {
  ...demoConfig,
  auth: { tokens: [{ token: ALICE, user: 'alice', admin: false }] },
  agents: [
    {
      ...demoConfig.agents[0]!,
      toolConfirmation: {
        'demo:create_entity': { rules: [{ match: { properties: { name: { pattern: '^(a+)+$' } } }, mode: 'NEVER' }] },
      },
    },
  ],
};

const GATE = `query Gate($args: JSON!) {
  agent(id: "demo") { tools { toolId gate(arguments: $args) { action ruleIndex } } }
}`;

const { dir, cleanup } = tempDir();
let server: ServerProcess;

beforeAll(async () => {
  const file = join(dir, 'toolgate.json');
  writeFileSync(file, JSON.stringify(config));
  server = await startCli(join(dir, 'toolgate.db'), { TOOLGATE_CONFIG: file });
}, 60_000);

afterAll(async () => {
  await killAll();
  cleanup();
});

/** Alice's request, given up after PROMPT_MS. */
async function asAlice(query: string, variables: Record<string, unknown>) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(PROMPT_MS),
  }).catch((error: Error) => {
    throw new Error(`no answer within ${PROMPT_MS} ms (${error.name})`);
  });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

/**
 * Runs `work` (a request to the server) while /healthz is asked every 25 ms, from 25 ms on and once more after it;
 * returns what it returned, and how long the slowest /healthz answer took (Infinity: one gave no 200 within PROMPT_MS).
 */
async function whileProbingHealth<T>(work: Promise<T>): Promise<{ result: T; slowestHealthMs: number }> {
  let done = false;
  const probes: Promise<number>[] = [];
  const probe = async () => {
    const started = performance.now();
    const response = await fetch(server.url.replace('/graphql', '/healthz'), {
      signal: AbortSignal.timeout(PROMPT_MS),
    }).catch(() => null);
    return response?.status === 200 ? performance.now() - started : Infinity;
  };
  const probing = (async () => {
    do {
      await sleep(25);
      probes.push(probe());
    } while (!done);
  })();
  const settled = work.finally(() => {
    done = true;
  });
  const [result, times] = await Promise.all([settled, probing.then(() => Promise.all(probes))]);
  return { result, slowestHealthMs: Math.max(...times) };
}

const createGate = (data: any) => data.agent.tools.find((t: any) => t.toolId === 'demo:create_entity').gate;

describe('an argument rule with the pattern ^(a+)+$', () => {
  it('gate(arguments:) decides 40 "a"s and a "!" at once (no rule matches: it asks), and /healthz answers meanwhile', async () => {
    const started = performance.now();
    const { result, slowestHealthMs } = await whileProbingHealth(asAlice(GATE, { args: { name: EVIL } }));
    expect(createGate(result)).toEqual({ action: 'ASK', ruleIndex: null });
    expect(performance.now() - started).toBeLessThan(PROMPT_MS);
    expect(slowestHealthMs, 'the slowest /healthz answer, ms').toBeLessThan(PROMPT_MS);
    // The rule still matches what it is meant for.
    expect(createGate(await asAlice(GATE, { args: { name: 'aaaa' } }))).toEqual({ action: 'RUN', ruleIndex: 0 });
  });

  it("a model's call with that name is gated at once (the turn pauses and asks), and /healthz answers meanwhile", async () => {
    const start = (message: string) => asAlice(START_TURN, { input: { agentId: 'demo', message } });
    const { result, slowestHealthMs } = await whileProbingHealth(start(`create ${EVIL}`));
    const { turn } = result.startTurn;
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations.map((e: any) => e.toolCall)).toMatchObject([
      { toolId: 'demo:create_entity', arguments: { name: EVIL } },
    ]);
    expect(slowestHealthMs, 'the slowest /healthz answer, ms').toBeLessThan(PROMPT_MS);
    // A name the rule matches runs unasked.
    expect((await start('create aaaa')).startTurn.turn).toMatchObject({ status: 'COMPLETED', pendingElicitations: [] });
  });
});
