// The local mode (no auth section) against web pages of other sites, which reach loopback through the user's
// browser: a form POST (no CORS preflight), a cross-site WebSocket, DNS rebinding (a foreign Host). Each is refused
// with 403 before anything runs; curl-like clients and pages of this machine (the inbox, GraphiQL) are served.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { demoConfig } from '../../src/config/demo.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';

const START = 'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { id status } } }';
const COUNT = '{ threads { edges { node { id } } } }';

/** A raw HTTP request, every header as given (fetch would not send a foreign Host). */
function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  method = 'POST',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const form = (query: string) => `query=${encodeURIComponent(query)}`;
const json = (query: string) => JSON.stringify({ query });

async function threads(h: Harness): Promise<number> {
  return dataOf(await h.gql(COUNT)).threads.edges.length;
}

/** The WebSocket handshake's outcome: 'open', or the error ws reports (the refusing status). */
function handshake(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace('http', 'ws'), 'graphql-transport-ws', { headers });
    socket.once('open', () => {
      socket.close();
      resolve('open');
    });
    socket.once('error', (error) => resolve(error.message));
  });
}

describe('local mode: pages of other sites are refused', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ config: demoConfig });
  });
  afterAll(() => h.close());

  it.each([
    [
      'a form POST from another site',
      { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      form(START),
    ],
    [
      'a JSON POST from another site',
      { 'content-type': 'application/json', origin: 'https://evil.example' },
      json(START),
    ],
    ['a sandboxed page (Origin: null)', { 'content-type': 'application/json', origin: 'null' }, json(START)],
    [
      'DNS rebinding (a foreign Host, same-origin to the browser)',
      { 'content-type': 'application/json', host: 'evil.example:4000', origin: 'http://evil.example:4000' },
      json(START),
    ],
  ])('%s: 403, nothing runs', async (_label, headers, body) => {
    const before = await threads(h);
    const response = await send(h.url, headers, body);
    expect(response.status).toBe(403);
    expect(response.body).toMatch(/^(Origin|Host) "[^"]*" is not /);
    expect(await threads(h)).toBe(before);
  });

  it('a WebSocket from another site: refused at the handshake (403)', async () => {
    expect(await handshake(h.url, { origin: 'https://evil.example' })).toMatch(/Unexpected server response: 403/);
    expect(await handshake(h.url, { origin: `http://localhost:${new URL(h.url).port}` })).toBe('open');
  });

  it.each([
    ['no Origin (curl, a server-side client)', {}],
    ['a page of this machine (127.0.0.1)', { origin: 'ORIGIN' }],
    ['a page of this machine (localhost)', { origin: 'LOCALHOST', host: 'HOST_LOCALHOST' }],
    ['a page of this machine (::1)', { origin: 'http://[::1]:4000' }],
  ])('%s: served', async (_label, extra: Record<string, string>) => {
    const port = new URL(h.url).port;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const [name, value] of Object.entries(extra)) {
      headers[name] = value
        .replace('HOST_LOCALHOST', `localhost:${port}`)
        .replace('LOCALHOST', `http://localhost:${port}`)
        .replace('ORIGIN', `http://127.0.0.1:${port}`);
    }
    const response = await send(h.url, headers, json(COUNT));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).data.threads).toBeDefined();
  });
});

describe('with tokens (an auth section): no ambient credential, so other origins are served', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      config: {
        ...demoConfig,
        auth: { tokens: [{ token: 'alice-token-0123456789abcdef', user: 'alice', admin: false }] },
      },
    });
  });
  afterAll(() => h.close());

  it('a JSON POST from another site with a token runs; without one it is 401', async () => {
    const headers = { 'content-type': 'application/json', origin: 'https://app.example' };
    const withToken = await send(
      h.url,
      { ...headers, authorization: 'Bearer alice-token-0123456789abcdef' },
      json(COUNT),
    );
    expect(withToken.status).toBe(200);
    expect((await send(h.url, headers, json(COUNT))).status).toBe(401);
  });
});
