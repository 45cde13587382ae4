// The inbox's approver queue in headless Chromium against a real toolgate on 127.0.0.1 (docs/approvers.md): a
// four-eyes request (requester excluded, two of the role "reviewer") reaches two reviewers' "To answer" queues live,
// each sees the other's approval count, the quorum runs the tool once, the cards leave both queues, and the
// requester's card shows who approved. Three users, each in a browser context of their own, none reloaded.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const TOKENS = { alice: 'alice-approver-token-1', bob: 'bob-approver-token-2', carol: 'carol-approver-token-3' };
type User = keyof typeof TOKENS;
/** A reviewer whose user id holds a hidden character, as an identity provider's claim may. */
const DAVE = { token: 'dave-approver-token-4', user: 'dave\u200Bops' };
/** The arguments the model proposes: a zero-width space hides inside the service name. */
const ARGUMENTS = { service: 'web\u200Bapp', replicas: 3 };

let browser: Browser;
let h: Harness;
let tools: CountingToolSource;
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
      ...testConfig({
        toolConfirmation: {
          't:deploy': { approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' } },
        },
      }),
      auth: {
        tokens: [
          { token: TOKENS.alice, user: 'alice', admin: false },
          { token: TOKENS.bob, user: 'bob', admin: false, roles: ['reviewer'] },
          { token: TOKENS.carol, user: 'carol', admin: false, roles: ['reviewer'] },
          { token: DAVE.token, user: DAVE.user, admin: false, roles: ['reviewer'] },
        ],
      },
    },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ deploy: ARGUMENTS })]) },
    toolSources: [tools],
  });
  base = h.url.replace(/\/graphql$/, '');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signIn(user: User): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  await page.goto(`${base}/inbox`);
  const field = page.getByLabel('Access token');
  await field.fill(TOKENS[user]);
  await field.press('Enter');
  await page.getByText(`Signed in as ${user}`).waitFor();
  // A marker on the window: it survives only if the page is never reloaded.
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
  return page;
}

const notReloaded = (page: Page) => page.evaluate(() => (window as unknown as { marker?: number }).marker);

describe('the approver queue', () => {
  it('two reviewers answer a four-eyes request live; the tool runs once; the requester sees who approved', async () => {
    screenshotOnFailure('approver-queue', () => pages.slice(-3));
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    const carol = await signIn('carol');
    // Only those who hold a role have a queue.
    expect(await alice.getByRole('link', { name: 'To answer' }).count()).toBe(0);
    for (const page of [bob, carol]) {
      await page.getByRole('link', { name: 'To answer' }).click();
      await expect.poll(() => page.url()).toBe(`${base}/inbox/to-answer`);
      await page.getByText('Nothing to answer.', { exact: false }).first().waitFor();
    }
    await alice.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();

    const started = dataOf(
      await h.gql(
        START_TURN,
        { input: { agentId: AGENT_ID, message: 't_deploy' } },
        { authorization: `Bearer ${TOKENS.alice}` },
      ),
    ).startTurn;
    expect(started.turn.status).toBe('PAUSED');
    const request = started.turn.pendingElicitations[0];
    const cardOf = (page: Page) => page.locator(`article[data-elicitation-id="${request.id}"]`);

    // Both reviewers get the card without a reload: the trusted question, the tool, the arguments as they will run
    // (the hidden character marked), the agent, who asked, no approval yet.
    for (const page of [bob, carol]) {
      const card = cardOf(page);
      await card.waitFor();
      await card.getByRole('heading', { name: 'Deploy a service' }).waitFor();
      const text = await card.innerText();
      expect(text).toContain(request.message);
      expect(text).toContain('t:deploy');
      expect(text).toContain('destructive');
      expect(text).toContain('Test agent');
      expect(await card.getByTestId('requested-by').innerText()).toBe('alice');
      expect(await card.getByTestId('quorum').innerText()).toBe('0 of 2');
      expect(await card.locator('pre').first().innerText()).toBe(
        '{\n  "service": "web\\u200Bapp",\n  "replicas": 3\n}',
      );
      expect(await card.locator('mark.hidden-char').getAttribute('title')).toBe(
        'Hidden character U+200B ZERO WIDTH SPACE',
      );
    }
    // The requester's own card: four eyes, so no Accept, and the same count.
    const aliceCard = cardOf(alice);
    await aliceCard.waitFor();
    expect(await aliceCard.getByRole('button', { name: 'Accept', exact: true }).count()).toBe(0);
    expect(await aliceCard.getByTestId('quorum').innerText()).toBe('0 of 2');

    // Bob accepts: his card waits for one more; carol's and alice's show the count live.
    await cardOf(bob).getByRole('button', { name: 'Accept', exact: true }).click();
    await cardOf(bob).getByText('You answered. Waiting for 1 more approval.').waitFor();
    expect(await cardOf(bob).getByRole('button', { name: 'Accept', exact: true }).count()).toBe(0);
    await expect.poll(() => cardOf(carol).getByTestId('quorum').innerText()).toBe('1 of 2');
    expect(await cardOf(carol).locator('.approvals').innerText()).toContain('bob');
    await expect.poll(() => aliceCard.getByTestId('quorum').innerText()).toBe('1 of 2');
    expect(tools.count('deploy')).toBe(0);

    // Carol accepts: the quorum is complete, the tool runs exactly once, the cards leave both queues.
    await cardOf(carol).getByRole('button', { name: 'Accept', exact: true }).click();
    for (const page of [bob, carol]) {
      await expect.poll(() => cardOf(page).count()).toBe(0);
      await page.getByTestId('last-outcome').getByText('Deploy a service: accepted by carol.').waitFor();
      await page.getByText('Nothing to answer.', { exact: false }).first().waitFor();
    }
    await expect.poll(() => tools.count('deploy')).toBe(1);
    expect(tools.runs.get('deploy')).toEqual([ARGUMENTS]);

    // The requester's card: who approved, and the turn's end.
    await aliceCard.getByText('COMPLETED').waitFor();
    await expect.poll(() => aliceCard.getByTestId('quorum').innerText()).toBe('2 of 2');
    const approvals = await aliceCard.locator('.approvals').innerText();
    expect(approvals).toContain('Approvals: 2 of 2: bob, carol');
    expect(approvals).toMatch(/bob accepted/);
    expect(approvals).toMatch(/carol accepted/);
    expect(await aliceCard.innerText()).toContain('by carol');

    for (const page of [alice, bob, carol]) expect(await notReloaded(page)).toBe(42);
    // Nothing the pages did afterwards ran it again.
    await alice.waitForTimeout(300);
    expect(tools.count('deploy')).toBe(1);
  });

  it("shows an approver's user id with its hidden characters marked: signed in as, and among the approvals", async () => {
    screenshotOnFailure('approver-queue-hidden-id', () => pages.slice(-2));
    const alice = await signIn('alice');
    const dave = await browser.newPage();
    pages.push(dave);
    await dave.goto(`${base}/inbox`);
    const field = dave.getByLabel('Access token');
    await field.fill(DAVE.token);
    await field.press('Enter');
    const zeroWidth = 'Hidden character U+200B';
    expect(await dave.getByTestId('viewer').locator('mark.hidden-char').getAttribute('title')).toBe(zeroWidth);

    const started = dataOf(
      await h.gql(
        START_TURN,
        { input: { agentId: AGENT_ID, message: 't_deploy' } },
        { authorization: `Bearer ${TOKENS.alice}` },
      ),
    ).startTurn;
    const request = started.turn.pendingElicitations[0];
    const cardOf = (page: Page) => page.locator(`article[data-elicitation-id="${request.id}"]`);
    await dave.getByRole('link', { name: 'To answer' }).click();
    await cardOf(dave).getByRole('button', { name: 'Accept', exact: true }).click();
    await cardOf(dave).getByText('You answered. Waiting for 1 more approval.').waitFor();

    const approvals = cardOf(alice).locator('.approvals');
    await expect.poll(() => cardOf(alice).getByTestId('quorum').innerText()).toBe('1 of 2');
    expect(await approvals.locator('mark.hidden-char').count()).toBe(2);
    expect(await approvals.locator('mark.hidden-char').first().getAttribute('title')).toBe(zeroWidth);
    expect(await approvals.innerText()).toContain('dave\\u200Bops accepted');
  });
});
