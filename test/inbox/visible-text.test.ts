// Hidden characters and look-alike letters in what the approver is shown, in headless Chromium against a real
// toolgate: a bidi override must not turn `invoice\u202Egpj.exe` into `invoiceexe.jpg` on screen, a zero-width space
// must not make `ad\u200Bmin@corp` pass for `admin@corp`, and a Cyrillic а must not pass for a Latin a unremarked.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import type { ModelRequest, ModelResponse } from '../../src/models/model.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { call, callStep, MODEL_ID, SOURCE_ID, testAgent, testConfig, textStep } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const INVOICE = { id: 'invoice\u202Egpj.exe', notify: 'ad\u200Bmin@corp' };
const PAYEE = { payee: 'p\u0430ypal' };
const SAYS = 'Sending invoice\u202Egpj.exe now.';
const HIDDEN = /[\u202E\u200B]/;
const GATEWAY = 'gw';
/** A tool an upstream server named with a zero-width space and titled with a bidi override. */
const RENAME = { name: 'rename\u200Bfile', title: 'Rename \u202Efdp.exe' };
/** A tool an upstream server titled with a Cyrillic а (U+0430). */
const WIRE = { name: 'wire', title: 'Pay with p\u0430ypal' };
/** An MCP client that names itself with a zero-width space. */
const CLIENT_NAME = 'Cl\u200Baude';

/** "invoice" asks to send INVOICE (saying SAYS), "pay" asks to pay PAYEE; after a tool result it reports back. */
function senderModel(): ScriptedModel {
  return new ScriptedModel([
    (request: ModelRequest): ModelResponse => {
      const last = request.messages.at(-1)!;
      const id = `call_${request.messages.length}`;
      if (last.role === 'TOOL') return textStep('Sent to ad\u200Bmin@corp.');
      if (last.text?.includes('invoice')) return { text: SAYS, toolCalls: [call('send', INVOICE, id)] };
      if (last.text?.includes('pay')) return callStep(call('pay', PAYEE, id));
      // The model knows that tool by the API-valid name toolgate gives it.
      const rename = request.tools.find((t) => t.name.includes('rename'))!.name;
      if (last.text?.includes('rename')) return callStep(call(rename, {}, id));
      if (last.text?.includes('wire')) return callStep(call(WIRE.name, { amount: 5 }, id));
      return textStep('Nothing to do.');
    },
  ]);
}

let browser: Browser;
let h: Harness;
let tools: CountingToolSource;
let base: string;
const pages: Page[] = [];

async function open(url: string): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  await page.goto(url);
  await page.getByText('Signed in as local').waitFor();
  return page;
}

const start = async (message: string) =>
  dataOf(await h.gql(START_TURN, { input: { agentId: 'tester', message } })).startTurn;

beforeAll(async () => {
  await buildInbox({ ifStale: true });
  browser = await openBrowser();
  tools = new CountingToolSource(SOURCE_ID, [
    { name: 'send' },
    { name: 'pay' },
    { name: RENAME.name, annotations: { title: RENAME.title } },
    { name: WIRE.name, annotations: { title: WIRE.title } },
  ]);
  const config = testConfig();
  // And a gateway on the same tools, for MCP clients: its calls run unasked.
  const gateway = { ...testAgent({ id: GATEWAY, requireToolConfirmation: false }), model: undefined };
  config.agents.push(gateway);
  h = await startHarness({ config, models: { [MODEL_ID]: senderModel() }, toolSources: [tools] });
  base = h.url.replace(/\/graphql$/, '');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('hidden characters in the inbox', () => {
  it('the card shows the arguments with marked \\u escapes and a warning; what it shows is what runs', async () => {
    screenshotOnFailure('hidden-card', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    const started = await start('send the invoice');
    const shown = page.locator(`article[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    const args = shown.locator('section.arguments pre');
    await args.waitFor();

    const text = await args.innerText();
    expect(text).toContain('"id": "invoice\\u202Egpj.exe"');
    expect(text).toContain('"notify": "ad\\u200Bmin@corp"');
    expect(text).not.toMatch(HIDDEN);
    const marks = args.locator('mark.hidden-char');
    expect(await marks.allInnerTexts()).toEqual(['\\u202E', '\\u200B']);
    expect(await marks.first().getAttribute('title')).toBe('Hidden character U+202E RIGHT-TO-LEFT OVERRIDE');
    expect(await shown.getByRole('note').allInnerTexts()).toEqual([
      expect.stringContaining(
        'Hidden characters in these arguments: U+202E RIGHT-TO-LEFT OVERRIDE, U+200B ZERO WIDTH SPACE.',
      ),
    ]);

    // The edit box shows the same: the escapes, never the raw characters; left as it is, it is the same arguments.
    await shown.getByRole('button', { name: 'Edit arguments…' }).click();
    const editBox = shown.getByLabel('Arguments to run instead (JSON)');
    expect(await editBox.inputValue()).toBe(text);
    await shown.getByRole('button', { name: 'Keep the original arguments' }).click();

    await shown.getByRole('button', { name: 'Accept', exact: true }).click();
    await shown.getByText('COMPLETED').waitFor();
    // The shown text is JSON of exactly the arguments that ran.
    expect(tools.runs.get('send')).toEqual([JSON.parse(text)]);
    expect(tools.runs.get('send')).toEqual([INVOICE]);
    // The agent's final text, after the answer, is shown the same way.
    const final = shown.locator('.assistant.final');
    expect(await final.innerText()).toBe('Sent to ad\\u200Bmin@corp.');
    expect(await final.locator('mark.hidden-char').getAttribute('title')).toBe(
      'Hidden character U+200B ZERO WIDTH SPACE',
    );

    // The thread: the model's text and its call, escaped; the raw characters nowhere on the page.
    await page.goto(`${base}/inbox/threads/${started.thread.id}`);
    const assistant = page.locator('.message-assistant').first();
    await assistant.getByText('Sending invoice', { exact: false }).waitFor();
    expect(await assistant.locator('p').first().innerText()).toBe('Sending invoice\\u202Egpj.exe now.');
    expect(await assistant.locator('pre').innerText()).toBe(text);
    await assistant.getByRole('note').getByText('Hidden characters in these arguments', { exact: false }).waitFor();
    expect(await page.locator('main').innerText()).not.toMatch(HIDDEN);

    // The history's record of the request, likewise.
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator(`ol.history li[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    await row.getByText('Arguments and answer').click();
    expect(await row.locator('pre').first().innerText()).toBe(text);
    await row.getByRole('note').getByText('Hidden characters in these arguments', { exact: false }).waitFor();
  });

  it('the card warns of a word mixing Latin and Cyrillic letters', async () => {
    screenshotOnFailure('mixed-script-card', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    const started = await start('pay the bill');
    const shown = page.locator(`article[data-elicitation-id="${started.turn.pendingElicitations[0].id}"]`);
    await shown.locator('section.arguments pre').waitFor();
    expect(await shown.getByRole('note').allInnerTexts()).toEqual([
      'Look-alike letters in these arguments: “p\u0430ypal” mixes Latin and Cyrillic letters. A word spelt so can ' +
        'imitate another.',
    ]);
    // Nothing hidden here, so no escape and no hidden-character warning.
    expect(await shown.locator('mark.hidden-char').count()).toBe(0);
  });

  it("the card shows a tool's name, id and title with marked escapes, and the question made from them", async () => {
    screenshotOnFailure('hidden-tool-card', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    // The requester's own message, shown on the card as its request, holds a hidden character too.
    const started = await start('rename\u200B it');
    const id = started.turn.pendingElicitations[0].id;
    const shown = page.locator(`article[data-elicitation-id="${id}"]`);
    await shown.locator('section.arguments pre').waitFor();
    const head = shown.locator('header.card-head');
    expect(await head.locator('h3').innerText()).toBe('Rename \\u202Efdp.exe');
    expect(await head.locator('code.tool-id').innerText()).toBe(`${SOURCE_ID}:rename\\u200Bfile`);
    expect(await head.locator('mark.hidden-char').allInnerTexts()).toEqual(['\\u202E', '\\u200B']);
    const question = shown.locator('p.question');
    expect(await question.innerText()).toContain('"Rename \\u202Efdp.exe"');
    // The title, and the name in the tool's description.
    expect(await question.locator('mark.hidden-char').allInnerTexts()).toEqual(['\\u202E', '\\u200B']);
    expect(await head.innerText()).not.toMatch(HIDDEN);
    expect(await question.innerText()).not.toMatch(HIDDEN);
    const request = shown.locator('dd.request');
    expect(await request.innerText()).toBe('rename\\u200B it');
    expect(await request.locator('mark.hidden-char').allInnerTexts()).toEqual(['\\u200B']);

    // The history's row of the request, likewise; what ran is the tool so named.
    await shown.getByRole('button', { name: 'Accept', exact: true }).click();
    await shown.getByText('COMPLETED').waitFor();
    expect(tools.count(RENAME.name)).toBe(1);
    // The status line for screen readers names the tool as the card does.
    const status = page.locator('section[aria-labelledby="pending-heading"] > p[role="status"]');
    await expect.poll(() => status.textContent()).toContain('Rename \\u202Efdp.exe: accepted.');
    expect(await status.textContent()).not.toMatch(HIDDEN);
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator(`ol.history li[data-elicitation-id="${id}"]`);
    await row.locator('code.tool-id').waitFor();
    expect(await row.locator('p').first().innerText()).not.toMatch(HIDDEN);
    expect(await row.locator('code.tool-id').innerText()).toBe(`${SOURCE_ID}:rename\\u200Bfile`);
    expect(await row.locator('dd.request').innerText()).toBe('rename\\u200B it');
  });

  it("the card and the history warn of a look-alike letter in the tool's title, as in arguments", async () => {
    screenshotOnFailure('mixed-script-title', () => pages.slice(-1));
    const page = await open(`${base}/inbox`);
    const started = await start('wire the money');
    const id = started.turn.pendingElicitations[0].id;
    const shown = page.locator(`article[data-elicitation-id="${id}"]`);
    await shown.locator('section.arguments pre').waitFor();
    const warning =
      "Look-alike letters in the tool's title or name: “p\u0430ypal” mixes Latin and Cyrillic letters. A word " +
      'spelt so can imitate another.';
    expect(await shown.locator('header.card-head h3').innerText()).toBe(WIRE.title);
    // The only warning: the arguments hold nothing of the kind.
    expect(await shown.getByRole('note').allInnerTexts()).toEqual([warning]);

    await shown.getByRole('button', { name: 'Accept', exact: true }).click();
    await shown.getByText('COMPLETED').waitFor();
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator(`ol.history li[data-elicitation-id="${id}"]`);
    await row.locator('code.tool-id').waitFor();
    expect(await row.getByRole('note').allInnerTexts()).toEqual([warning]);
  });

  it("the thread list shows an MCP client's name with its hidden characters marked", async () => {
    screenshotOnFailure('hidden-client-name', () => pages.slice(-1));
    const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp/${GATEWAY}`, base)));
    expect(await client.callTool({ name: 'send', arguments: {} })).toMatchObject({ isError: false });
    await client.close();

    const page = await open(`${base}/inbox/threads`);
    const link = page.locator('ul.threads li a', { hasText: 'called send' });
    await link.waitFor();
    expect(await link.innerText()).toBe('Cl\\u200Baude called send.');
    expect(await link.locator('mark.hidden-char').allInnerTexts()).toEqual(['\\u200B']);
    expect(await page.locator('main').innerText()).not.toMatch(HIDDEN);
  });
});
