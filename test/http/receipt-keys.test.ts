// The public keys of the decision records at /.well-known/toolgate-receipt-keys.json: a deployment without a
// configured key generates one, keeps it in its database (a restart publishes the same) and signs with it; an export
// of a server's records verifies against what it publishes.
import { afterEach, describe, expect, it } from 'vitest';
import {
  argumentsDigest,
  verifyRecords,
  type DecisionRecord,
  type PublicJwk,
} from '../../src/domain/decision-records.js';
import type { SqlStore } from '../../src/db/sql-store.js';
import { ACCEPT, AGENT, agentConfig, answer, at, DECLINE, pausedTurn } from '../db/spec/fixtures.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';

let harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses) await h.close();
  harnesses = [];
});

async function publishedKeys(h: Harness): Promise<PublicJwk[]> {
  const response = await fetch(new URL('/.well-known/toolgate-receipt-keys.json', h.url));
  expect(response.status).toBe(200);
  return ((await response.json()) as { keys: PublicJwk[] }).keys;
}

describe('the receipt keys', () => {
  it('publishes the generated key, the same after a restart, and the records verify against it', async () => {
    const first = await startHarness();
    harnesses.push(first);
    const keys = await publishedKeys(first);
    expect(keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', kid: 'toolgate-generated-1' })]);
    const store = first.server.services.store as SqlStore;
    await store.syncAgent(agentConfig(AGENT), at(0));
    const paused = await pausedTurn(store);
    await answer(store, paused.elicitations[0]!.id, ACCEPT);
    const records = await store.decisionRecords(null, null);
    expect(records.map((r) => r.kind)).toEqual(['ASKED', 'ACCEPTED']);
    await first.close();
    harnesses = [];
    const again = await startHarness({ database: first.database });
    harnesses.push(again);
    expect(await publishedKeys(again)).toEqual(keys);
    expect(verifyRecords(records, keys)).toBeNull();
  });

  it('Elicitation.receipt is the signed record of the ACCEPT, which verifies against the published keys', async () => {
    const h = await startHarness();
    harnesses.push(h);
    const store = h.server.services.store as SqlStore;
    await store.syncAgent(agentConfig(AGENT), at(0));
    const [accepted, declined] = (await pausedTurn(store, { ownerId: 'local', elicitations: 2 })).elicitations;
    await answer(store, accepted!.id, { ...ACCEPT, arguments: { note: 'edited' } }, { ownerId: 'local' });
    await answer(store, declined!.id, DECLINE, { ownerId: 'local' });
    const query = 'query ($id: ID!) { elicitation(id: $id) { receipt } }';
    const receiptOf = async (id: string) =>
      dataOf<{ elicitation: { receipt: DecisionRecord | null } }>(await h.gql(query, { id })).elicitation.receipt;
    const receipt = await receiptOf(accepted!.id);
    expect(receipt).toMatchObject({
      kind: 'ACCEPTED',
      elicitationId: accepted!.id,
      argsDigest: argumentsDigest({ note: 'edited' }),
    });
    expect(verifyRecords([receipt!], await publishedKeys(h), { startsChain: false })).toBeNull();
    expect(await receiptOf(declined!.id)).toBeNull();
  });
});
