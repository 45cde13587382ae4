// Passkey step-up in the inbox, in headless Chromium with a virtual authenticator (CDP WebAuthn domain) against a
// real toolgate (docs/inbox.md#passkey-step-up): the user registers a passkey from the inbox, accepts a request of a
// tool that requires step-up (the browser signs the request's challenge, the tool runs once, the receipt carries the
// assertion and verifies offline), and an authenticator that cannot verify the user gets a clear message on the card
// while nothing is answered and nothing runs.
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import type { SqlStore } from '../../src/db/sql-store.js';
import { verifyRecords, type DecisionRecord, type PublicJwk } from '../../src/domain/decision-records.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const TOKEN = 'alice-passkey-inbox-token-1';
const ARGUMENTS = { service: 'web', replicas: 3 };

let browser: Browser;
let h: Harness;
let tools: CountingToolSource;
/** The inbox at localhost: a passkey's relying party is a host name, never an IP address. */
let base: string;
const pages: Page[] = [];

beforeAll(async () => {
  await buildInbox({ ifStale: true });
  browser = await openBrowser();
  tools = new CountingToolSource(SOURCE_ID, [
    { name: 'deploy', annotations: { title: 'Deploy a service', destructiveHint: true } },
  ]);
  h = await startHarness({
    config: {
      ...testConfig({ toolConfirmation: { 't:deploy': { mode: 'ALWAYS', stepUp: 'passkey' } } }),
      auth: { tokens: [{ token: TOKEN, user: 'alice', admin: false }] },
    },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ deploy: ARGUMENTS })]) },
    toolSources: [tools],
  });
  base = `http://localhost:${new URL(h.url).port}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Alice's inbox in a browser whose platform authenticator is a virtual one (user verified, resident keys). */
async function signedInWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await browser.newPage();
  pages.push(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  await page.goto(`${base}/inbox`);
  const field = page.getByLabel('Access token');
  await field.fill(TOKEN);
  await field.press('Enter');
  await page.getByText('Signed in as alice').waitFor();
  return { page, cdp, authenticatorId };
}

async function pausedDeploy(): Promise<string> {
  const started = dataOf(
    await h.gql(
      START_TURN,
      { input: { agentId: AGENT_ID, message: 't_deploy' } },
      { authorization: `Bearer ${TOKEN}` },
    ),
  ).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return started.turn.pendingElicitations[0].id as string;
}

const statusOf = async (id: string) =>
  dataOf(
    await h.gql(
      'query S($id: ID!) { elicitation(id: $id) { status receipt } }',
      { id },
      { authorization: `Bearer ${TOKEN}` },
    ),
  ).elicitation as { status: string; receipt: DecisionRecord | null };

describe('passkey step-up in the inbox', () => {
  it('registers a passkey, approves a step-up request with it (the tool runs once, the receipt verifies), and says so when the passkey cannot verify the user', async () => {
    screenshotOnFailure('passkey-step-up', () => pages.slice(-1));
    const { page, cdp, authenticatorId } = await signedInWithAuthenticator();

    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await page.getByText('Passkey registered.').waitFor();
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);

    const id = await pausedDeploy();
    const card = page.locator(`article[data-elicitation-id="${id}"]`);
    await card.waitFor();
    await card.getByRole('button', { name: 'Accept', exact: true }).click();
    await expect.poll(() => tools.count('deploy'), { timeout: 15_000 }).toBe(1);
    expect(tools.runs.get('deploy')).toEqual([ARGUMENTS]);
    const { status, receipt } = await statusOf(id);
    expect(status).toBe('ACCEPTED');
    expect(receipt!.assertion!.credentialId).toBe(
      Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url'),
    );
    const records = await (h.server.services.store as unknown as SqlStore).decisionRecords(null, null);
    const { keys } = (await (await fetch(`${base}/.well-known/toolgate-receipt-keys.json`)).json()) as {
      keys: PublicJwk[];
    };
    expect(records.map((r) => r.kind)).toContain('PASSKEY_REGISTERED');
    expect(verifyRecords(records, keys)).toBeNull();

    // The authenticator can no longer verify the user: the ceremony fails, the card says so, nothing is answered.
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    const second = await pausedDeploy();
    const secondCard = page.locator(`article[data-elicitation-id="${second}"]`);
    await secondCard.waitFor();
    await secondCard.getByRole('button', { name: 'Accept', exact: true }).click();
    await secondCard.getByText('This request needs your passkey, and it did not approve', { exact: false }).waitFor();
    expect((await statusOf(second)).status).toBe('PENDING');
    expect(tools.count('deploy')).toBe(1);
  });
});
