// The approval inbox in headless Chromium against a real toolgate on 127.0.0.1 (scripted model, counting tools):
// what a person at the other end of the gate sees and does. One browser for the file; a fresh context per user.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import type { ModelRequest, ModelResponse } from '../../src/models/model.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { call, callStep, MODEL_ID, SOURCE_ID, testAgent, textStep } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

/** "remove N" asks to run the destructive tool `remove` with {id: N}; after a tool result it says what happened. */
function removerModel(): ScriptedModel {
  return new ScriptedModel([
    (request: ModelRequest): ModelResponse => {
      const last = request.messages.at(-1)!;
      if (last.role === 'TOOL') return textStep(`Done: ${last.text}`);
      const id = /remove (\d+)/.exec(last.text ?? '')?.[1];
      return id
        ? callStep(call('remove', { id: Number(id) }, `call_${request.messages.length}`))
        : textStep('Nothing to do.');
    },
  ]);
}

const removeTool = {
  name: 'remove',
  annotations: { title: 'Remove a record', destructiveHint: true },
  description: 'Removes one record.',
};

function inboxConfig(auth?: ToolgateConfig['auth']): ToolgateConfig {
  return {
    models: { [MODEL_ID]: { provider: 'scripted' } },
    toolSources: {},
    agents: [testAgent(), testAgent({ id: 'brief', name: 'Brief agent', pauseTtlSeconds: 60 })],
    plugins: [],
    ...(auth ? { auth } : {}),
  };
}

let browser: Browser;
const pages: Page[] = [];

async function open(url: string, options?: { width?: number }): Promise<Page> {
  const page = await browser.newPage(options);
  pages.push(page);
  await page.goto(url);
  return page;
}

const card = (page: Page) => page.locator('article.card');

/** The turns whose live subscription (turnEvents, over the page's graphql-ws socket) has delivered a Turn so far. */
function turnsFollowed(page: Page): Set<string> {
  const turns = new Set<string>();
  page.on('websocket', (socket) =>
    socket.on('framereceived', ({ payload }) => {
      const text = String(payload);
      if (!text.includes('"turnEvents"')) return;
      type Next = { payload?: { data?: { turnEvents?: { __typename?: string; id?: string } } } };
      const event = (JSON.parse(text) as Next).payload?.data?.turnEvents;
      if (event?.__typename === 'Turn' && event.id) turns.add(event.id);
    }),
  );
  return turns;
}

beforeAll(async () => {
  await buildInbox({ ifStale: true });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the inbox in local mode (no login)', () => {
  let h: Harness;
  let tools: CountingToolSource;
  let model: ScriptedModel;
  /** Seconds the server's clock runs ahead of the browser's (to expire a request the page still counts down). */
  let skewSeconds = 0;
  /** How long each model call takes (an answer's response waits for the model call after it). */
  let modelDelayMs = 0;
  let base: string;

  const start = async (message: string, agentId = 'tester') =>
    dataOf(await h.gql(START_TURN, { input: { agentId, message } })).startTurn;

  beforeAll(async () => {
    tools = new CountingToolSource(SOURCE_ID, [removeTool]);
    model = removerModel();
    h = await startHarness({
      config: inboxConfig(),
      models: {
        [MODEL_ID]: {
          generate: async (request) => {
            if (modelDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, modelDelayMs));
            return model.generate(request);
          },
        },
      },
      toolSources: [tools],
      clock: () => new Date(Date.now() + skewSeconds * 1000),
    });
    base = h.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await h?.close();
  });
  // Each test starts with nothing pending: one that failed midway leaves no card to count in the next.
  beforeEach(async () => {
    const pending = dataOf(await h.gql('{ pendingElicitations(first: 50) { edges { node { id } } } }'));
    await cancelPending(pending.pendingElicitations.edges.map((edge: { node: { id: string } }) => edge.node.id));
  });

  it('/ links to the inbox, and /inbox serves the app without a token prompt', async () => {
    screenshotOnFailure('local-landing', () => pages.slice(-1));
    const page = await open(`${base}/`);
    await page.getByRole('link', { name: 'The approval inbox' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/inbox`);
    await page.getByText('Signed in as local').waitFor();
    expect(await page.getByLabel('Access token').count()).toBe(0);
  });

  it('a pause started through the API appears in the open inbox without a reload; Accept runs the tool once and shows COMPLETED', async () => {
    screenshotOnFailure('accept', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    // A marker on the window: it survives only if the page is never reloaded.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));

    const started = await start('remove 7');
    expect(started.turn.status).toBe('PAUSED');
    const elicitation = started.turn.pendingElicitations[0];

    const shown = page.locator(`article[data-elicitation-id="${elicitation.id}"]`);
    await shown.waitFor();
    await expect.poll(() => page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    // The trusted question, the tool's id and label, its annotation badge, the arguments as they will run, the agent.
    await expect.poll(() => shown.getByRole('heading', { name: 'Remove a record' }).count()).toBe(1);
    const text = await shown.innerText();
    expect(text).toContain(elicitation.message);
    expect(text).toContain('t:remove');
    expect(text).toContain('destructive');
    expect(text).toContain('Test agent');
    expect(text).toContain(started.thread.id);
    expect(text).toMatch(/Expires in \d+:\d\d/);
    expect(await shown.locator('pre').first().innerText()).toBe(JSON.stringify({ id: 7 }, null, 2));

    await shown.getByRole('button', { name: 'Accept', exact: true }).click();
    await shown.getByText('COMPLETED').waitFor();
    await shown.getByText('Done: remove ran with {"id":7}').waitFor();
    expect(tools.count('remove')).toBe(1);
    expect(tools.runs.get('remove')).toEqual([{ id: 7 }]);
    // No second run from anything the page did afterwards.
    await page.waitForTimeout(300);
    expect(tools.count('remove')).toBe(1);
  });

  it('Decline with instructions reaches the model', async () => {
    screenshotOnFailure('decline', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const before = tools.count('remove');
    const started = await start('remove 8');
    const shown = page.locator(`article[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    await shown.getByRole('button', { name: 'Decline…' }).click();
    await shown.getByLabel('Instructions for the agent (optional)').fill('keep record 8, it is still in use');
    await shown.getByRole('button', { name: 'Decline', exact: true }).click();
    await shown.getByText('DECLINED', { exact: true }).waitFor();
    await shown.getByText('COMPLETED').waitFor();

    const toolMessage = model.requests.at(-1)!.messages.at(-1)!;
    expect(toolMessage.role).toBe('TOOL');
    expect(toolMessage.text).toBe('User declined execution of remove: keep record 8, it is still in use');
    expect(tools.count('remove')).toBe(before);
  });

  it('an expired card says so and cannot be accepted', async () => {
    screenshotOnFailure('expired', () => pages.slice(-1));
    // The page's clock is the test's: the countdown runs out when the test moves it, not seconds later.
    const page = await browser.newPage();
    pages.push(page);
    const followed = turnsFollowed(page);
    await page.clock.install();
    await page.goto(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const before = tools.count('remove');

    // 1. The countdown runs out on the page (the brief agent waits a minute; the page's clock is moved past it, the
    // server's is not): the card says expired and offers no answer, and A sends none the server would still take.
    // A short wait instead would race a busy machine: the card could arrive already expired, never counting down.
    const brief = await start('remove 9', 'brief');
    const briefId = brief.turn.pendingElicitations[0].id as string;
    const expiring = page.locator(`article[data-elicitation-id="${briefId}"]`);
    try {
      await expiring.getByText('Expires in').waitFor();
      await page.clock.fastForward(61_000);
      await expiring.getByText('Expired.').waitFor();
      expect(await expiring.getByRole('button', { name: 'Accept', exact: true }).count()).toBe(0);
      await expiring.focus();
      await page.keyboard.press('a');
      await page.waitForTimeout(300);
      expect(await expiring.getAttribute('data-status')).toBe('EXPIRED');
      expect(tools.count('remove')).toBe(before);
    } finally {
      await cancelPending([briefId]);
    }

    // 2. The server's clock says expired while the page still counts down: Accept is refused, in words.
    const started = await start('remove 10');
    const shown = page.locator(`article[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    await shown.getByText('Expires in').waitFor();
    // The card follows its turn live, and that subscription's first event is the turn read with the server's clock:
    // read after the clock moves, it would end the countdown itself and leave no Accept to refuse.
    await expect.poll(() => followed.has(started.turn.id)).toBe(true);
    skewSeconds = 7200;
    try {
      await shown.getByRole('button', { name: 'Accept', exact: true }).click();
      await shown.getByRole('alert').getByText('This request has expired', { exact: false }).waitFor();
      await shown.getByText('Expired.').waitFor();
      expect(await shown.getByRole('button', { name: 'Accept', exact: true }).count()).toBe(0);
    } finally {
      skewSeconds = 0;
    }
    expect(tools.count('remove')).toBe(before);
  });

  it('keyboard only: Tab to the request, D opens the instructions, Escape goes back, A accepts', async () => {
    screenshotOnFailure('keyboard', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const before = tools.count('remove');
    const started = await start('remove 11');
    const id = started.turn.pendingElicitations[0].id;
    const shown = page.locator(`article[data-elicitation-id="${id}"]`);
    await shown.waitFor();

    // Tab through the page from the top until the card has focus: it is in the tab order.
    let reached = false;
    for (let i = 0; i < 30 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate((want) => document.activeElement?.getAttribute('data-elicitation-id') === want, id);
    }
    expect(reached).toBe(true);

    await page.keyboard.press('d');
    const instructions = shown.getByLabel('Instructions for the agent (optional)');
    await expect.poll(() => instructions.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('never mind');
    await page.keyboard.press('Escape');
    expect(await instructions.count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-elicitation-id'))).toBe(id);

    await page.keyboard.press('a');
    await shown.getByText('COMPLETED').waitFor();
    expect(tools.count('remove')).toBe(before + 1);
  });

  it('edit and remember: the edited arguments run, the approval is listed and can be revoked', async () => {
    screenshotOnFailure('edit-remember', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const started = await start('remove 30');
    const shown = page.locator(`article[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    await shown.getByRole('button', { name: 'Edit arguments…' }).click();
    await shown.getByLabel('Arguments to run instead (JSON)').fill('{"id": 31}');
    await shown.getByLabel('Remember: later calls of this tool run without asking').check();
    await shown.getByRole('button', { name: 'Accept with these arguments' }).click();
    await shown.getByText('COMPLETED').waitFor();
    expect(tools.runs.get('remove')!.at(-1)).toEqual({ id: 31 });

    await page.getByRole('link', { name: 'Remembered' }).click();
    const grant = page.locator('ul.grants li');
    await grant.getByText('ACTIVE').waitFor();
    expect(await grant.innerText()).toContain(started.thread.id);
    await grant.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No remembered approvals.').waitFor();
  });

  it('the thread view: send a message, watch the turn, answer its pause inline', async () => {
    screenshotOnFailure('thread', () => pages.slice(-1));
    const page = await open(`${base}/inbox/threads`);
    const before = tools.count('remove');
    await page.locator('#composer-agent').selectOption({ label: 'Test agent' });
    const box = page.getByLabel('Start a conversation');
    await box.fill('remove 12');
    await box.press('Enter');
    await expect.poll(() => page.url()).toMatch(/\/inbox\/threads\/thr_/);
    const inline = page.locator('article.card');
    await inline.getByRole('button', { name: 'Accept', exact: true }).click();
    await page.locator('.turn-status').getByText('COMPLETED').waitFor();
    await page.locator('.message-assistant').getByText('Done: remove ran with {"id":12}').waitFor();
    expect(await page.locator('.message-user').innerText()).toContain('remove 12');
    expect(tools.count('remove')).toBe(before + 1);

    // The history lists it: who answered what, and when.
    await page.getByRole('link', { name: 'History' }).click();
    expect(page.url()).toBe(`${base}/inbox/history`);
    await page.locator('ol.history li').first().waitFor();
    const rows = await page.locator('ol.history li').allInnerTexts();
    expect(rows.some((row) => row.includes('ACCEPT by local') && row.includes('t:remove'))).toBe(true);
  });

  /** Ends the requests a test left waiting, so that the next test's page starts with none. */
  async function cancelPending(ids: string[]) {
    for (const elicitationId of ids) await h.gql(RESOLVE, { input: { elicitationId, action: 'CANCEL' } });
  }

  it('an edited Accept shows the arguments that ran, marked edited, beside the model’s; the history keeps both', async () => {
    screenshotOnFailure('edited-accept', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const json = (value: unknown) => JSON.stringify(value, null, 2);

    // 1. Edited here.
    const edited = await start('remove 40');
    const here = page.locator(`article[data-elicitation-id="${edited.turn.pendingElicitations[0].id}"]`);
    await here.getByRole('button', { name: 'Edit arguments…' }).click();
    await here.getByLabel('Arguments to run instead (JSON)').fill('{"id": 41}');
    await here.getByRole('button', { name: 'Accept with these arguments' }).click();
    await here.getByText('COMPLETED').waitFor();
    expect(tools.runs.get('remove')!.at(-1)).toEqual({ id: 41 });
    const shownHere = here.getByRole('region', { name: 'Arguments that ran, edited' });
    await shownHere.waitFor();
    expect(await shownHere.locator('pre').allInnerTexts()).toEqual([json({ id: 41 }), json({ id: 40 })]);
    expect(await shownHere.innerText()).toContain('The model’s arguments, replaced by the edit');
    expect(await here.getByText('Arguments, exactly as they will run').count()).toBe(0);

    // 2. Edited elsewhere (another tab, a script): the open card shows it too.
    const elsewhere = await start('remove 42');
    const there = page.locator(`article[data-elicitation-id="${elsewhere.turn.pendingElicitations[0].id}"]`);
    await there.getByText('Expires in').waitFor();
    const answered = await h.gql(RESOLVE, {
      input: { elicitationId: elsewhere.turn.pendingElicitations[0].id, action: 'ACCEPT', arguments: { id: 43 } },
    });
    expect(dataOf(answered).resolveElicitation.userErrors).toEqual([]);
    const shownThere = there.getByRole('region', { name: 'Arguments that ran, edited' });
    await shownThere.waitFor();
    expect(await shownThere.locator('pre').allInnerTexts()).toEqual([json({ id: 43 }), json({ id: 42 })]);

    // 3. "Edited" into the model's own arguments (spacing and all): a plain Accept, shown as one.
    const same = await start('remove 44');
    const unchanged = page.locator(`article[data-elicitation-id="${same.turn.pendingElicitations[0].id}"]`);
    await unchanged.getByRole('button', { name: 'Edit arguments…' }).click();
    await unchanged.getByLabel('Arguments to run instead (JSON)').fill('{ "id" : 44 }');
    await unchanged.getByRole('button', { name: 'Accept with these arguments' }).click();
    await unchanged.getByText('COMPLETED').waitFor();
    const plain = unchanged.getByRole('region', { name: 'Arguments that ran' });
    expect(await plain.locator('pre').allInnerTexts()).toEqual([json({ id: 44 })]);
    expect(await unchanged.innerText()).not.toMatch(/edited/i);
    expect(model.requests.at(-1)!.messages.at(-1)!.text).toBe('remove ran with {"id":44}');

    // The history: both sets for the edited ones, marked; one for the plain one.
    await page.getByRole('link', { name: 'History' }).click();
    for (const [started, ran, asked] of [
      [edited, { id: 41 }, { id: 40 }],
      [elsewhere, { id: 43 }, { id: 42 }],
    ] as const) {
      const row = page.locator(`ol.history li[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
      expect(await row.innerText()).toContain('ACCEPT, edited, by local');
      await row.getByText('Arguments and answer').click();
      const both = row.getByRole('region', { name: 'Arguments that ran, edited' });
      expect(await both.locator('pre').allInnerTexts()).toEqual([json(ran), json(asked)]);
    }
    const plainRow = page.locator(`ol.history li[data-elicitation-id="${same.turn.pendingElicitations[0].id}"]`);
    await plainRow.getByText('Arguments and answer').click();
    expect(await plainRow.innerText()).not.toMatch(/edited/i);
    expect(await plainRow.getByRole('region', { name: 'Arguments that ran' }).locator('pre').allInnerTexts()).toEqual([
      json({ id: 44 }),
    ]);
  });

  it('a card says what the user asked for; Threads and History list the newest first', async () => {
    screenshotOnFailure('newest-first', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    await page.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();
    const older = await start('remove 50, the old one');
    const newer = await start('remove 51, the new one');
    const ids = [older, newer].map((started) => started.turn.pendingElicitations[0].id as string);
    try {
      const shown = page.locator(`article[data-elicitation-id="${ids[1]}"]`);
      await shown.waitFor();
      expect(await shown.getByRole('link', { name: 'remove 51, the new one' }).getAttribute('href')).toBe(
        `/inbox/threads/${newer.thread.id}`,
      );

      await page.getByRole('link', { name: 'Threads' }).click();
      await page.locator('ul.threads li').first().waitFor();
      expect((await page.locator('ul.threads li a').allInnerTexts()).slice(0, 2)).toEqual([
        'remove 51, the new one',
        'remove 50, the old one',
      ]);

      await page.getByRole('link', { name: 'History' }).click();
      await page.getByText('newest first', { exact: false }).waitFor();
      const rows = page.locator('ol.history li');
      expect([
        await rows.nth(0).getAttribute('data-elicitation-id'),
        await rows.nth(1).getAttribute('data-elicitation-id'),
      ]).toEqual([ids[1], ids[0]]);
      expect(await rows.nth(0).innerText()).toContain('remove 51, the new one');
    } finally {
      await cancelPending(ids);
    }
  });

  it('keys and a screen reader: J/K before any card has focus, focus back on the card after Decline, the status line follows each answer', async () => {
    screenshotOnFailure('keys-status', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    const statusLine = page.locator(
      'section[aria-labelledby="pending-heading"] > p[role="status"][aria-live="polite"]',
    );
    await statusLine.getByText('Nothing waits for your answer.').waitFor();
    const first = await start('remove 60');
    const second = await start('remove 61');
    const ids = [first, second].map((started) => started.turn.pendingElicitations[0].id as string);
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-elicitation-id') ?? null);
    try {
      await page.locator(`article[data-elicitation-id="${ids[1]}"]`).waitFor();
      await statusLine.getByText('2 requests waiting.').waitFor();
      // Nothing focused yet: J goes to the first card, then the next; K back.
      expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
      await page.keyboard.press('j');
      await expect.poll(focused).toBe(ids[0]);
      await page.keyboard.press('j');
      await expect.poll(focused).toBe(ids[1]);
      await page.keyboard.press('k');
      await expect.poll(focused).toBe(ids[0]);

      // Decline with the keyboard: focus goes back to the card, in the list, at once (not only once the answer's
      // response is back, after the model call that follows it: slow here), and the status line says what happened.
      await page.keyboard.press('d');
      await page.keyboard.type('not now');
      modelDelayMs = 3_000;
      try {
        await page.keyboard.press('Enter');
        await page.locator(`article[data-elicitation-id="${ids[0]}"]`).getByText('DECLINED', { exact: true }).waitFor();
        await expect.poll(focused, { timeout: 1_000 }).toBe(ids[0]);
      } finally {
        modelDelayMs = 0;
      }
      await statusLine.getByText('Remove a record: declined. 1 request waiting.').waitFor();

      await page.keyboard.press('j');
      await expect.poll(focused).toBe(ids[1]);
      await page.keyboard.press('a');
      await page.locator(`article[data-elicitation-id="${ids[1]}"]`).getByText('COMPLETED').waitFor();
      await statusLine.getByText('Remove a record: accepted. Nothing waits for your answer.').waitFor();
    } finally {
      await cancelPending(ids);
    }
  });
});

describe('a gateway’s call in the inbox: worded as its MCP client’s', () => {
  let h: Harness;
  let tools: CountingToolSource;
  let base: string;

  beforeAll(async () => {
    tools = new CountingToolSource(SOURCE_ID, [removeTool]);
    const gateway = { ...testAgent({ id: 'gw', name: 'Test gateway', systemPrompt: '' }), model: undefined };
    h = await startHarness({
      config: { models: {}, toolSources: {}, agents: [gateway], plugins: [] },
      toolSources: [tools],
    });
    base = h.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the client’s arguments, a decline hint for the tool, Cancel call; no model, no agent that finishes', async () => {
    screenshotOnFailure('gateway-call', () => pages.slice(-1));
    const client = new Client({ name: 'probe-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base)));
    const call = client.callTool({ name: 'remove', arguments: { id: 3 } });
    const page = await open(`${base}/inbox`);
    const shown = card(page).first();
    await shown.getByRole('button', { name: 'Cancel call' }).waitFor();
    expect(await shown.getByRole('button', { name: 'Cancel turn' }).count()).toBe(0);
    expect(await shown.innerText()).toMatch(/Gateway\s+Test gateway/);
    expect(await shown.innerText()).toContain('probe-client called remove.');

    await shown.getByRole('button', { name: 'Decline…' }).click();
    const reason = shown.getByLabel('Why, for the client (optional)');
    expect(await reason.getAttribute('placeholder')).toBe('e.g. why "Remove a record" must not run now');
    await reason.fill('record 3 is still in use');
    await shown.getByRole('button', { name: 'Decline', exact: true }).click();
    await shown.getByText('DECLINED', { exact: true }).waitFor();
    await shown.getByText('The call is done; its client has the result.').waitFor();
    const text = await shown.innerText();
    expect(text).toContain('The client’s arguments (not run)');
    for (const word of ['model', 'The agent finished', 'Cancel turn']) expect(text).not.toContain(word);

    const result = (await call) as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content.map((block) => block.text).join('')).toContain('record 3 is still in use');
    expect(tools.count('remove')).toBe(0);
    await client.close();

    // Its thread is the one call: the client's words, and no box to message a gateway.
    await shown.getByRole('link', { name: 'probe-client called remove.' }).click();
    await page.getByRole('heading', { name: 'A client’s call through Test gateway' }).waitFor();
    expect(await page.getByRole('textbox').count()).toBe(0);
    expect(await page.locator('.messages').innerText()).not.toContain('You');
  });
});

describe('the inbox with auth: a token prompt, and each user sees only their own', () => {
  let h: Harness;
  let base: string;
  const tokens = { alice: 'alice-secret-token', bob: 'bob-secret-token' };

  beforeAll(async () => {
    h = await startHarness({
      config: inboxConfig({
        tokens: [
          { token: tokens.alice, user: 'alice', admin: false },
          { token: tokens.bob, user: 'bob', admin: false },
        ],
      }),
      models: { [MODEL_ID]: removerModel() },
      toolSources: [new CountingToolSource(SOURCE_ID, [removeTool])],
    });
    base = h.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await h?.close();
  });

  async function signIn(token: string): Promise<Page> {
    const page = await open(`${base}/inbox`);
    const field = page.getByLabel('Access token');
    await field.fill(token);
    await field.press('Enter');
    return page;
  }

  it('a wrong token is refused in words; a right one signs in for the tab session', async () => {
    screenshotOnFailure('auth-token', () => pages.slice(-1));
    const page = await signIn('not-a-token');
    await page.getByText('The server did not accept that token').waitFor();
    await page.getByLabel('Access token').fill(tokens.alice);
    await page.getByLabel('Access token').press('Enter');
    await page.getByText('Signed in as alice').waitFor();
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['toolgate.inbox.token']);
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    await page.reload();
    await page.getByText('Signed in as alice').waitFor();
  });

  it('two users see nothing of each other', async () => {
    screenshotOnFailure('two-users', () => pages.slice(-2));
    const alice = await signIn(tokens.alice);
    const bob = await signIn(tokens.bob);
    await alice.getByText('Signed in as alice').waitFor();
    await bob.getByText('Signed in as bob').waitFor();
    await bob.getByText('Nothing waits for your answer.', { exact: false }).first().waitFor();

    const started = dataOf(
      await h.gql(
        START_TURN,
        { input: { agentId: 'tester', message: 'remove 21' } },
        { authorization: `Bearer ${tokens.alice}` },
      ),
    ).startTurn;
    const id = started.turn.pendingElicitations[0].id;
    await alice.locator(`article[data-elicitation-id="${id}"]`).waitFor();
    // Bob's inbox got the same chance to show it (same server, same moment), and shows nothing.
    await bob.waitForTimeout(500);
    expect(await card(bob).count()).toBe(0);

    // Nor does his history, nor alice's thread by its URL.
    await bob.goto(`${base}/inbox/history`);
    await bob.getByText('0 requests, newest first.').waitFor();
    await bob.goto(`${base}/inbox/threads/${started.thread.id}`);
    await bob.getByText('This thread does not exist, or it is not yours.').waitFor();
    await alice.goto(`${base}/inbox/threads/${started.thread.id}`);
    await alice.locator(`article[data-elicitation-id="${id}"]`).waitFor();
  });
});
