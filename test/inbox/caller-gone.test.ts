// The inbox card of a gateway call whose MCP client stopped waiting, in headless Chromium against a real toolgate
// (local mode): one that can come back (an idempotency key) says its caller is not connected; one without a key is
// withdrawn, and the open card says so without a reload.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInbox } from '../../scripts/inbox-build.js';
import { openBrowser, screenshotOnFailure, type Browser } from '../support/browser.js';
import { dataOf, type Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import { connectClient, GATEWAY_ID, mcpUrl, startGateway } from '../mcp/support.js';

let browser: Browser;
let h: Harness;
let tools: CountingToolSource;
const pages: Page[] = [];

beforeAll(async () => {
  await buildInbox({ ifStale: true });
  browser = await openBrowser();
  ({ h, tools } = await startGateway({ local: true }));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function inbox(): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  await page.goto(`${h.url.replace(/\/graphql$/, '')}/inbox`);
  return page;
}

const PENDING = '{ pendingElicitations(first: 10) { edges { node { id } } } }';

/** The one pending request of the local user, once there is one: each test leaves none behind. */
async function onlyPending(): Promise<{ id: string }> {
  for (let tries = 0; ; tries++) {
    const nodes = dataOf<any>(await h.gql(PENDING)).pendingElicitations.edges.map((e: any) => e.node);
    if (nodes.length > 0 || tries > 200) {
      expect(nodes).toHaveLength(1);
      return nodes[0];
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the inbox, for a gateway call whose caller stopped waiting', () => {
  it('with an idempotency key: the card says the caller is not connected, and Accept runs it once', async () => {
    screenshotOnFailure('caller-not-connected', () => pages.slice(-1));
    const { client } = await connectClient(mcpUrl(h, `/mcp/${GATEWAY_ID}`));
    const params = { name: 'drop', arguments: { ids: [1] }, _meta: { 'dev.toolgate/idempotency-key': 'inbox-drop-1' } };
    client.callTool(params).catch(() => {});
    const pending = await onlyPending();
    await client.close();
    // The mark is cleared once the request has ended; the card reads it as it loads.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const page = await inbox();
    const card = page.locator(`article[data-elicitation-id="${pending.id}"]`);
    await card.getByText('The caller is not connected.').waitFor();
    await card.getByRole('button', { name: 'Accept', exact: true }).click();
    await expect.poll(() => tools.count('drop')).toBe(1);
  });

  it('without a key: the open card turns into "Withdrawn" when the client cancels, and offers no answer', async () => {
    screenshotOnFailure('caller-withdrawn', () => pages.slice(-1));
    const page = await inbox();
    const { client } = await connectClient(mcpUrl(h, `/mcp/${GATEWAY_ID}`));
    const cancel = new AbortController();
    const call = client.callTool({ name: 'drop', arguments: { ids: [2] } }, undefined, { signal: cancel.signal });
    call.catch(() => {});
    const pending = await onlyPending();
    const card = page.locator(`article[data-elicitation-id="${pending.id}"]`);
    await card.getByRole('button', { name: 'Accept', exact: true }).waitFor();
    expect(await card.getByText('The caller is not connected.').count()).toBe(0);

    cancel.abort('gave up');
    await card.getByText('Withdrawn:').waitFor();
    expect(await card.innerText()).toContain('its client cancelled the call');
    expect(await card.getByRole('button', { name: 'Accept', exact: true }).count()).toBe(0);
    expect(tools.count('drop')).toBe(1);
    await client.close();
  });
});
