// Crash tests of MCP 2026-07-28's input_required: a gated call of a 2026-07-28 client (the SDK's v2 Client, pinned,
// in manual mode so that the test holds the requestState) is answered input_required; the server is SIGKILLed; a new
// process on the same database, with the same requestState key, takes the retry that carries the answer. The journal
// tool's runs file counts the runs across processes: once. A replay of the retry gets the same result and runs
// nothing; a tampered state is refused and runs nothing.
import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { connectModernClient } from '../mcp/modern-support.js';
import { runsOf, startFixture, type ServerProcess } from './processes.js';
import { gatewayCrashScene } from './gateway-scene.js';

const KEY = { id: 'k1', secret: 'a-test-key-of-at-least-32-characters-0123' };

const scene = gatewayCrashScene('toolgate-mcp-modern-crash-', { mcpRequestState: { keys: [KEY] } });

/** A 2026-07-28 client of the server's gateway that hands input_required back to the test. */
async function modernClient(server: ServerProcess): Promise<Client> {
  const client = await connectModernClient(new URL('/mcp/gateway', server.url), {
    autoFulfill: false,
    canElicit: true,
  });
  return scene.track(client);
}

interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState?: string;
}

const append = (line: string) => ({ name: 'append', arguments: { line } });

/** `append <line>` called once: the input_required it is answered with. */
async function firstRound(client: Client, line: string): Promise<InputRequired> {
  const answer = (await client.callTool(append(line), { allowInputRequired: true })) as unknown as InputRequired;
  expect(answer.resultType).toBe('input_required');
  return answer;
}

/** The retry that answers every confirmation asked with `action`, echoing `requestState`. */
function retry(client: Client, line: string, asked: InputRequired, requestState = asked.requestState) {
  const inputResponses = Object.fromEntries(
    Object.keys(asked.inputRequests ?? {}).map((id) => [id, { action: 'accept' }]),
  );
  return client.callTool({ ...append(line), inputResponses, requestState } as Parameters<Client['callTool']>[0], {
    allowInputRequired: true,
  });
}

/** The state with one character of its signed body changed. */
function tampered(state: string): string {
  const [prefix, keyId, body, mac] = state.split('.') as [string, string, string, string];
  const json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { t: string };
  json.t = `${json.t.slice(0, -1)}${json.t.endsWith('a') ? 'b' : 'a'}`;
  return [prefix, keyId, Buffer.from(JSON.stringify(json)).toString('base64url'), mac].join('.');
}

describe('SIGKILL between input_required and the retry (MCP 2026-07-28)', { timeout: 180_000 }, () => {
  it('the retry on the restarted server runs the tool once; a replay gets the same result and runs nothing; a tampered state runs nothing', async () => {
    const first = await startFixture(scene.base);
    const asked = await firstRound(await modernClient(first), 'xi');
    const [elicitationId, request] = Object.entries(asked.inputRequests ?? {})[0]!;
    expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } });
    expect(typeof asked.requestState).toBe('string');
    await first.kill();
    expect(runsOf(scene.base.runsFile, 'xi')).toBe(0);

    const second = await startFixture(scene.base);
    const client = await modernClient(second);
    const result = await retry(client, 'xi', asked);
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Appended xi.' }], isError: false });
    expect(runsOf(scene.base.runsFile, 'xi')).toBe(1);

    // The same retry again (a client that did not get the response): the kept result, nothing runs.
    expect(await retry(client, 'xi', asked)).toEqual(result);
    // A state changed on the way: refused, before anything is read or answered.
    await expect(retry(client, 'xi', asked, tampered(asked.requestState!))).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    expect(runsOf(scene.base.runsFile, 'xi')).toBe(1);
    expect(elicitationId).toMatch(/\S/);
  });

  it('a tampered state before any answer runs nothing, and the call still waits for its real retry', async () => {
    const first = await startFixture(scene.base);
    const client = await modernClient(first);
    const asked = await firstRound(client, 'omicron');
    await expect(retry(client, 'omicron', asked, tampered(asked.requestState!))).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    await expect(retry(client, 'omicron', asked, `${asked.requestState!.slice(0, -2)}AA`)).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    expect(runsOf(scene.base.runsFile, 'omicron')).toBe(0);
    expect(await retry(client, 'omicron', asked)).toMatchObject({
      content: [{ type: 'text', text: 'Appended omicron.' }],
    });
    expect(runsOf(scene.base.runsFile, 'omicron')).toBe(1);
  });
});
