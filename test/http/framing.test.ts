// Clickjacking: no page of this server can be shown inside another site's frame, where a click on GraphiQL's run
// button or an inbox answer would be the user's own click (and in the local mode, reaching loopback is the credential).
// Every response says so (Content-Security-Policy frame-ancestors 'none', X-Frame-Options DENY), and Chromium obeys;
// GraphiQL gets a policy that allows exactly what its self-contained page needs, and still works under it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';

/** A raw request, headers as given (fetch would not send a foreign Origin). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The directives of a Content-Security-Policy header, by name. */
function directives(policy: unknown): Map<string, string[]> {
  expect(typeof policy).toBe('string');
  return new Map(
    (policy as string)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

const root = mkdtempSync(join(tmpdir(), 'toolgate-framing-'));
const build = join(root, 'dist');
let h: Harness;
let bare: Harness;
let base: string;

beforeAll(async () => {
  mkdirSync(build, { recursive: true });
  writeFileSync(join(build, 'index.html'), '<!doctype html><title>inbox</title><p>inbox</p>');
  // The local mode: GraphiQL on, no tokens.
  h = await startHarness({ inboxBuildDir: build });
  bare = await startHarness({ inboxBuildDir: join(root, 'missing') });
  base = h.url.replace(/\/graphql$/, '');
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('every response forbids framing', () => {
  it.each([
    ['GraphiQL', '/graphql', { accept: 'text/html' }, 200],
    ['the landing page', '/', {}, 200],
    ['the inbox', '/inbox', {}, 200],
    ['a client route of the inbox', '/inbox/history', {}, 200],
    ['a GraphQL result', `/graphql?query=${encodeURIComponent('{ viewer { id } }')}`, {}, 200],
    ['the health check', '/healthz', {}, 200],
    ['an unknown path', '/nope', { accept: 'text/html' }, 404],
    ["another site's page, refused by the local-mode guard", '/graphql', { origin: 'https://evil.example' }, 403],
  ])('%s: CSP frame-ancestors none and X-Frame-Options DENY', async (_label, path, headers, status) => {
    const response = await get(`${base}${path}`, headers);
    expect(response.status).toBe(status);
    expect(directives(response.headers['content-security-policy']).get('frame-ancestors')).toEqual(["'none'"]);
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('the page saying the inbox is not built as well', async () => {
    const response = await get(bare.url.replace(/\/graphql$/, '/inbox'));
    expect(response.status).toBe(503);
    expect(directives(response.headers['content-security-policy']).get('frame-ancestors')).toEqual(["'none'"]);
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('a response that is not one of our pages may load and run nothing', async () => {
    const policy = directives((await get(`${base}/nope`, { accept: 'text/html' })).headers['content-security-policy']);
    expect(policy.get('default-src')).toEqual(["'none'"]);
  });

  it("GraphiQL's policy: its one inline script by hash, its blob: workers, the API on this origin, nothing else", async () => {
    const policy = directives((await get(h.url, { accept: 'text/html' })).headers['content-security-policy']);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('script-src')).toEqual([expect.stringMatching(/^'sha256-[A-Za-z0-9+/]{43}='$/)]);
    expect(policy.get('worker-src')).toEqual(['blob:']);
    expect(policy.get('connect-src')).toEqual(["'self'"]);
    // No other site is trusted for anything.
    expect([...policy.values()].flat().filter((source) => /^(https?:|\*)/.test(source))).toEqual([]);
  });
});

describe('in Chromium', () => {
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;
  const pages: Page[] = [];

  beforeAll(async () => {
    browser = await openBrowser();
    // Another site (another origin: another port) whose page frames ours.
    attacker = createServer((req, res) => {
      const target = new URL(req.url!, 'http://x').searchParams.get('frame')!;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>win a prize</title><iframe src="${target}" width="800" height="600"></iframe>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
  });

  it.each([
    ['GraphiQL', '/graphql'],
    ['the inbox', '/inbox'],
    ['the landing page', '/'],
  ])("another site's page cannot frame %s", async (label, path) => {
    screenshotOnFailure(`framed ${label}`, () => pages);
    const target = `${base}${path}`;
    const page = await browser.newPage();
    pages.push(page);
    // Our server answered the frame's request (the local-mode guard lets a frame's navigation through).
    const framed = page.waitForResponse(target);
    await page.goto(`${attackerUrl}?frame=${encodeURIComponent(target)}`);
    expect((await framed).status()).toBe(200);
    await page.waitForLoadState('load');
    // The browser refused to show our response in the frame: it holds Chromium's error page, not ours.
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
    await expect.poll(() => frame.url(), { timeout: 10_000 }).not.toBe(target);
    expect(frame.url()).toMatch(/^chrome-error:/);
  });

  it('GraphiQL still works under its policy: no violation, a schema-aware editor, a query that runs', async () => {
    screenshotOnFailure('graphiql under its policy', () => pages);
    const page = await browser.newPage();
    pages.push(page);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.text().startsWith('CSP violation')) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) =>
        console.log(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
      );
    });
    await page.goto(h.url);
    const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
    await editor.waitFor({ timeout: 30_000 });
    await editor.click();
    await page.keyboard.press('Control+A');
    // The editor closes brackets by itself. Its suggestions come from the schema, worked out in a web worker.
    await page.keyboard.type('query { viewer { i');
    await expect
      .poll(() => page.locator('.suggest-widget .monaco-list-row').allTextContents(), { timeout: 15_000 })
      .toEqual(expect.arrayContaining([expect.stringMatching(/^id/), expect.stringMatching(/^isAdmin/)]));
    await page.keyboard.press('Escape');
    await page.keyboard.type('d');
    await page.keyboard.press('Control+Enter');
    await expect
      .poll(async () => (await page.locator('.graphiql-response').textContent())?.replace(/\s+/g, ''), {
        timeout: 15_000,
      })
      .toContain('{"data":{"viewer":{"id":"local"}}}');
    expect(problems).toEqual([]);
  });
});
