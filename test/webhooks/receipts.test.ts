// The receipt in a webhook's body (docs/webhooks.md, docs/receipts.md): a real server on 127.0.0.1 and a real receiver
// that checks every Standard Webhooks signature. The delivered `data.receipt` is the signed decision record of the
// request's outcome; it verifies against the keys the server publishes, and the ACCEPTED one binds the arguments that
// ran, edited or not.
import { afterEach, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import type { SqlStore } from '../../src/db/sql-store.js';
import {
  argumentsDigest,
  verifyRecords,
  type DecisionRecord,
  type PublicJwk,
} from '../../src/domain/decision-records.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook-events.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { memoryLog } from '../support/log.js';
import { onceRecorded, WebhookReceiver } from './receiver.js';

const ADMIN = { authorization: 'Bearer admin-token' };

let harness: Harness | null = null;
let hooks: WebhookReceiver | null = null;
afterEach(async () => {
  await harness?.close();
  await hooks?.close();
  harness = null;
  hooks = null;
});

async function serve(options: { clock?: () => Date } = {}): Promise<{ h: Harness; hooks: WebhookReceiver }> {
  hooks = await WebhookReceiver.start();
  const config: ToolgateConfig = {
    ...demoConfig,
    auth: { tokens: [{ token: 'admin-token', user: 'admin', admin: true, roles: ['ops'] }] },
    webhooks: [{ url: hooks.url, secret: hooks.secret, events: [...WEBHOOK_EVENT_TYPES], initialBackoffSeconds: 0.2 }],
  };
  harness = await startHarness({
    config,
    logger: memoryLog('info').logger,
    webhookDelivery: { pollIntervalMs: 50 },
    ...options,
  });
  return { h: harness, hooks };
}

const START = `mutation Start($message: String!) {
  startTurn(input: {agentId: "demo", message: $message}) {
    turn { id status pendingElicitations { id } }
    userErrors { code message }
  }
}`;
const RESOLVE = `mutation Resolve($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { turn { id status text } userErrors { code message } }
}`;
const DELIVERIES = `{ webhookDeliveries(first: 50) { edges { node { id eventType payload } } } }`;

async function pause(h: Harness) {
  const started = dataOf(await h.gql(START, { message: 'Delete entities 1, 2 and 3' }, ADMIN)).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return { turnId: started.turn.id as string, elicitationId: started.turn.pendingElicitations[0].id as string };
}

/** The JWKS at the well-known URL, as a verifier without the server would fetch it once. */
async function publishedKeys(h: Harness): Promise<PublicJwk[]> {
  const response = await fetch(new URL('/.well-known/toolgate-receipt-keys.json', h.url));
  return ((await response.json()) as { keys: PublicJwk[] }).keys;
}

const verifies = (record: DecisionRecord, keys: PublicJwk[]) => verifyRecords([record], keys, { startsChain: false });

describe('the receipt in webhook bodies', () => {
  it('ACCEPT with edited arguments: elicitation.resolved carries the signed ACCEPTED record of the arguments that ran, and who answered', async () => {
    const { h, hooks } = await serve();
    const { turnId, elicitationId } = await pause(h);
    const edited = { ids: [2] };
    const resolved = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT', arguments: edited } }, ADMIN),
    ).resolveElicitation;
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toContain('(2)');

    await hooks.waitFor('three deliveries', () => hooks.delivered().length === 3);
    const [requested, answered] = hooks.delivered();
    expect(requested!.payload.data.receipt).toBeNull();
    const { receipt, answeredBy, answeredByIdentity } = answered!.payload.data;
    expect(answeredBy).toBe('admin');
    expect(answeredByIdentity).toEqual({ name: null, issuer: null, subject: null, roles: ['ops'] });
    expect(receipt).toMatchObject({
      kind: 'ACCEPTED',
      turnId,
      elicitationId,
      toolId: 'demo:delete_entities',
      argsDigest: argumentsDigest(edited),
      actor: { id: 'admin', identity: answeredByIdentity },
    });
    expect(receipt.argsDigest).not.toBe(argumentsDigest({ ids: [1, 2, 3] }));
    // Checked as a receiver would: against the published keys alone.
    expect(verifies(receipt, await publishedKeys(h))).toBeNull();
    // A receipt altered on the way is detected.
    const forged = { ...receipt, argsDigest: argumentsDigest({ ids: [1, 2, 3] }) };
    expect(verifies(forged, await publishedKeys(h))?.problem).toMatch(/altered/);

    // It is the record in the chain, and the call's RAN record there binds the same arguments.
    const chain = await (h.server.services.store as SqlStore).decisionRecords(null, null);
    expect(chain.find((r) => r.seq === receipt.seq)).toEqual(receipt);
    expect(chain.find((r) => r.kind === 'RAN' && r.turnId === turnId)?.argsDigest).toBe(argumentsDigest(edited));
    expect(verifyRecords(chain, await publishedKeys(h))).toBeNull();

    // The admin query lists each payload as it was sent, receipt included.
    const listed = await onceRecorded(
      async () => dataOf(await h.gql(DELIVERIES, {}, ADMIN)).webhookDeliveries.edges.map((e: any) => e.node),
      (rows: any[]) => rows.length === 3,
    );
    expect(listed.map((d: any) => d.payload)).toEqual(hooks.delivered().map((r) => r.payload));
    expect(hooks.rejected).toEqual([]);
  });

  it('DECLINE: the deciding DECLINED record, verifiable; no ACCEPTED record, no run', async () => {
    const { h, hooks } = await serve();
    const { turnId, elicitationId } = await pause(h);
    await h.gql(RESOLVE, { input: { elicitationId, action: 'DECLINE' } }, ADMIN);
    const answered = await hooks.waitFor('elicitation.resolved', () =>
      hooks.delivered().find((r) => r.eventType === 'elicitation.resolved'),
    );
    const { receipt } = answered.payload.data;
    expect(receipt).toMatchObject({ kind: 'DECLINED', elicitationId, argsDigest: argumentsDigest({ ids: [1, 2, 3] }) });
    expect(verifies(receipt, await publishedKeys(h))).toBeNull();
    const chain = await (h.server.services.store as SqlStore).decisionRecords(null, null);
    expect(chain.filter((r) => r.turnId === turnId).map((r) => r.kind)).toEqual(['ASKED', 'DECLINED']);
  });

  it('expiry: elicitation.expired carries the EXPIRED record, whose actor is the system (null)', async () => {
    let offsetMs = 0;
    const { h, hooks } = await serve({ clock: () => new Date(Date.now() + offsetMs) });
    const { elicitationId } = await pause(h);
    offsetMs = 3601_000; // past pauseTtlSeconds (3600)
    expect(await h.server.sweep()).toMatchObject({ expiredTurns: 1 });
    const expired = await hooks.waitFor('elicitation.expired', () =>
      hooks.delivered().find((r) => r.eventType === 'elicitation.expired'),
    );
    const { receipt, answeredByIdentity } = expired.payload.data;
    expect(answeredByIdentity).toBeNull();
    expect(receipt).toMatchObject({ kind: 'EXPIRED', elicitationId, actor: null });
    expect(verifies(receipt, await publishedKeys(h))).toBeNull();
  });
});
