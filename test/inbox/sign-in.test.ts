// The inbox signs in through a real OpenID provider (test/support/oidc-provider.ts) in headless Chromium
// (docs/inbox.md "Signing in"): two reviewers, each in a browser of their own, sign in on the provider's login page and
// answer a four-eyes request live; sign-out ends the session at the provider too; a session whose access token
// expires renews and reconnects, with the roles the provider gives then; one that cannot renew shows "Signed out"
// with a Sign in button.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, START_TURN } from '../support/harness.js';
import { startSignInServer, type SignInServer } from '../support/inbox-sign-in.js';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const FOUR_EYES = {
  toolConfirmation: {
    't:deploy': { approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' as const } },
  },
};

let browser: Browser;
const pages: Page[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await buildInbox({ ifStale: true });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const close of closers.reverse()) await close();
});

async function provider(options: Parameters<typeof startOidcProvider>[0] = {}): Promise<OidcProvider> {
  const started = await startOidcProvider(options);
  closers.push(() => started.close());
  return started;
}

async function server(at: OidcProvider, renews = true): Promise<SignInServer & { tools: CountingToolSource }> {
  const tools = new CountingToolSource(SOURCE_ID, [
    { name: 'deploy', annotations: { title: 'Deploy a service', destructiveHint: true } },
  ]);
  const started = await startSignInServer(at, testConfig(FOUR_EYES), {
    renews,
    harness: {
      models: {
        [MODEL_ID]: new ScriptedModel([
          callsWhatIsNamed({ deploy: { service: 'web' } }),
          callsWhatIsNamed({ deploy: { service: 'api' } }),
        ]),
      },
      toolSources: [tools],
    },
  });
  closers.push(() => started.h.close());
  return { ...started, tools };
}

/** A browser of its own; it reaches this machine only (the provider's pages link a web font). */
async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.context().route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
  pages.push(page);
  return page;
}

/** From the inbox's "Signed out" page through the provider's login form back to the inbox. */
async function signIn(page: Page, base: string, user: string): Promise<void> {
  await page.goto(`${base}/inbox/to-answer`);
  await page.getByRole('heading', { name: 'Signed out' }).waitFor();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.waitForURL(`${base}/inbox/to-answer`);
  await page.getByText(`Signed in as ${user}`).waitFor();
}

/** Ours, not the provider's: cookies do not tell ports apart, and both live on 127.0.0.1. */
async function toolgateCookies(page: Page, base: string) {
  return (await page.context().cookies(base)).filter((cookie) => cookie.name.startsWith('toolgate_'));
}

async function startDeploy(at: OidcProvider, s: SignInServer, user = 'carol') {
  const token = await at.accessToken(user, { resource: s.base });
  const started = dataOf(
    await s.h.gql(
      START_TURN,
      { input: { agentId: AGENT_ID, message: 't_deploy' } },
      { authorization: `Bearer ${token}` },
    ),
  ).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return started.turn.pendingElicitations[0] as { id: string };
}

describe('the inbox signed in through the identity provider', () => {
  it("two reviewers sign in on the provider's page and answer a four-eyes request; sign-out ends the session", async () => {
    screenshotOnFailure('inbox-sign-in', () => pages.slice(-2));
    const at = await provider();
    const s = await server(at);
    const alice = await newPage();
    const bob = await newPage();
    await signIn(alice, s.base, 'alice');
    await signIn(bob, s.base, 'bob');
    // The provider's display name beside the id.
    await alice.getByText('Signed in as alice (Alice Example)').waitFor();
    // The page holds no token: the session is an HttpOnly cookie, out of the page's reach.
    expect(await alice.evaluate(() => document.cookie)).toBe('');
    expect(await alice.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }))).toBe('{}');
    const cookie = (await toolgateCookies(alice, s.base))[0];
    expect(cookie).toMatchObject({ name: 'toolgate_session', httpOnly: true, sameSite: 'Lax', path: '/' });

    const request = await startDeploy(at, s);
    const cardOf = (page: Page) => page.locator(`article[data-elicitation-id="${request.id}"]`);
    for (const page of [alice, bob]) {
      await cardOf(page).waitFor();
      expect(await cardOf(page).getByTestId('requested-by').innerText()).toBe('carol');
      expect(await cardOf(page).getByTestId('quorum').innerText()).toBe('0 of 2');
    }
    await cardOf(alice).getByRole('button', { name: 'Accept', exact: true }).click();
    await cardOf(alice).getByText('You answered. Waiting for 1 more approval.').waitFor();
    await expect.poll(() => cardOf(bob).getByTestId('quorum').innerText()).toBe('1 of 2');
    expect(s.tools.count('deploy')).toBe(0);
    await cardOf(bob).getByRole('button', { name: 'Accept', exact: true }).click();
    for (const page of [alice, bob]) {
      await expect.poll(() => cardOf(page).count()).toBe(0);
      await page.getByTestId('last-outcome').getByText('Deploy a service: accepted by bob.').waitFor();
    }
    await expect.poll(() => s.tools.count('deploy')).toBe(1);

    // Bob signs out: the session ends here and at the provider (its confirmation page), then back to the inbox.
    await bob.getByRole('button', { name: 'Sign out' }).click();
    await bob.getByRole('button', { name: 'Yes, sign me out' }).click();
    await bob.waitForURL(`${s.base}/inbox`);
    await bob.getByRole('heading', { name: 'Signed out' }).waitFor();
    expect(await toolgateCookies(bob, s.base)).toEqual([]);
    // Signing in again asks for the password again: the provider's session ended too.
    await bob.getByRole('button', { name: 'Sign in' }).click();
    await bob.locator('input[name="login"]').waitFor();
    // Alice is still signed in.
    await alice.reload();
    await alice.getByText('Signed in as alice').waitFor();
  }, 60_000);

  it('renews a session whose access token expires and reconnects, with the roles of then; without renewal it shows "Signed out"', async () => {
    screenshotOnFailure('inbox-session-expiry', () => pages.slice(-2));
    const at = await provider({ accessTokenTtlSeconds: 6 });
    const renewing = await server(at);
    // The provider gives this one's client no refresh token: its sessions end with their first access token.
    const once = await server(at, false);
    const bob = await newPage();
    const alice = await newPage();
    await signIn(bob, renewing.base, 'bob');
    await signIn(alice, once.base, 'alice');
    await bob.evaluate(() => ((window as unknown as { marker: number }).marker = 42));

    // Past the first token's end: bob's page renewed (refresh token) and its socket reconnected; alice's ended.
    await alice.getByRole('heading', { name: 'Signed out' }).waitFor({ timeout: 15_000 });
    expect(await alice.getByText('Your session ended').innerText()).toContain('Sign in again');
    await alice.getByRole('button', { name: 'Sign in' }).waitFor();
    await bob.waitForTimeout(Math.max(0, 7_500));
    await bob.getByText('Signed in as bob').waitFor();
    // Live again: a new request reaches bob's queue without a reload.
    const request = await startDeploy(at, renewing);
    const card = bob.locator(`article[data-elicitation-id="${request.id}"]`);
    await card.waitFor();
    expect(await bob.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);

    // Removed from the group at the provider: at the next renewal the page holds no role, and the pending request
    // leaves bob's queue (it is offered to roles he no longer holds); still signed in, never reloaded.
    at.users.bob!.groups = [];
    await expect.poll(() => bob.getByRole('link', { name: 'To answer' }).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => card.count()).toBe(0);
    await bob.getByText('Signed in as bob').waitFor();
    expect(await bob.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
  }, 90_000);
});
