// `npm run inbox:screenshots`: the pictures of the inbox in docs/inbox/ (docs/inbox.md). Starts the
// built-in demo on an in-memory database, creates pauses through the API and photographs the inbox in headless
// Chromium: the pending list, one card, a thread with a pause inline, and the pending list at phone width.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { createServer } from '../src/server.js';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../test/support/chromium.js';
import { buildInbox } from './inbox-build.js';

const out = resolve(import.meta.dirname, '../docs/inbox');
mkdirSync(out, { recursive: true });
await buildInbox({ ifStale: true });

const server = await createServer({ database: ':memory:', sweepIntervalSeconds: 0, logger: undefined });
const url = await server.listen(0, '127.0.0.1');
const base = url.replace(/\/graphql$/, '');
const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the script reads a few fields of untyped JSON
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
};
const START = `mutation ($message: String!, $threadId: ID) {
  startTurn(input: {agentId: "demo", message: $message, threadId: $threadId}) {
    thread { id } turn { pendingElicitations { id } }
  }
}`;

const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
try {
  const shot = async (page: Page, name: string) => {
    // The countdown and the times differ on each run; a still moment is all a picture needs.
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(out, name), fullPage: true });
    console.log(`wrote docs/inbox/${name}`);
  };

  // A thread whose first request was declined with instructions, so that its view shows a conversation.
  const first = (await gql(START, { message: 'Delete entities 1, 2 and 3' })).startTurn;
  await gql(
    `mutation ($id: ID!) { resolveElicitation(input: {elicitationId: $id, action: DECLINE, content: {instructions: "Only delete 3"}}) { userErrors { code } } }`,
    { id: first.turn.pendingElicitations[0].id },
  );
  await gql(START, { message: 'Create entity named zulu' });

  const desktop = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  await desktop.goto(`${base}/inbox`);
  await desktop.locator('article.card').nth(1).waitFor();
  await shot(desktop, 'pending.png');

  const card = desktop.locator('article.card').first();
  await card.getByRole('button', { name: 'Decline…' }).click();
  await card.getByLabel('Instructions for the agent (optional)').fill('Only delete entity 3, keep the others');
  await card.screenshot({ path: join(out, 'card.png') });
  console.log('wrote docs/inbox/card.png');

  await desktop.goto(`${base}/inbox/threads/${first.thread.id}`);
  await desktop.locator('article.card').waitFor();
  await shot(desktop, 'thread.png');

  const phone = await (
    await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true })
  ).newPage();
  await phone.goto(`${base}/inbox`);
  await phone.locator('article.card').nth(1).waitFor();
  await shot(phone, 'phone.png');
} finally {
  await browser.close();
  await server.close();
}
