// Passkey step-up over the API, on both backends (docs/receipts.md#passkey-step-up): a user registers a passkey (a
// software authenticator stands in for the browser's), a tool set to stepUp "passkey" runs only after an ACCEPT that
// carries that user's assertion over the request's derived challenge; a missing, foreign or stale assertion is
// refused with a code and changes nothing; the ACCEPTED record keeps the assertion and verifies offline, and a
// tampered one does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import {
  publicJwk,
  sealRecord,
  verifyRecords,
  type DecisionRecord,
  type PublicJwk,
  type ReceiptSigner,
} from '../../src/domain/decision-records.js';
import type { SqlStore } from '../../src/db/sql-store.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { SoftwareAuthenticator } from '../support/software-authenticator.js';
import { CountingToolSource } from '../support/tools.js';

const TOKENS = {
  alice: 'alice-passkey-token-1',
  bob: 'bob-passkey-token-2',
  carol: 'carol-passkey-token-3',
  dave: 'dave-passkey-token-4',
};
const ARGUMENTS = { service: 'web', replicas: 3 };

let h: Harness;
let tools: CountingToolSource;
let origin: string;
let alice: SoftwareAuthenticator;

const as = (user: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[user]}`, origin });

const STEP_UP = `query StepUp($id: ID!, $arguments: JSON) {
  elicitation(id: $id) { id status canRemember stepUp(arguments: $arguments) { required challenge options } }
}`;

async function register(user: keyof typeof TOKENS, authenticator: SoftwareAuthenticator) {
  const started = dataOf(
    await h.gql('mutation { startPasskeyRegistration { options userErrors { code message } } }', {}, as(user)),
  ).startPasskeyRegistration;
  expect(started.userErrors).toEqual([]);
  const response = authenticator.register(started.options.challenge);
  return dataOf(
    await h.gql(
      `mutation Register($input: RegisterPasskeyInput!) {
        registerPasskey(input: $input) { passkey { credentialId rpId } userErrors { code message field } }
      }`,
      { input: { response } },
      as(user),
    ),
  ).registerPasskey;
}

/** A new turn of alice's that asks about one deploy. */
async function pausedDeploy(): Promise<{ id: string; turnId: string }> {
  const started = dataOf(
    await h.gql(START_TURN, { input: { agentId: AGENT_ID, message: 't_deploy' } }, as('alice')),
  ).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return { id: started.turn.pendingElicitations[0].id, turnId: started.turn.id };
}

const stepUpOf = async (id: string, args?: object, user: keyof typeof TOKENS = 'alice') =>
  dataOf(await h.gql(STEP_UP, { id, arguments: args ?? null }, as(user))).elicitation;

const accept = async (id: string, extra: Record<string, unknown> = {}, user: keyof typeof TOKENS = 'alice') =>
  (await h.gql(RESOLVE, { input: { elicitationId: id, action: 'ACCEPT', ...extra } }, as(user))).data!
    .resolveElicitation;

const records = (): Promise<DecisionRecord[]> =>
  (h.server.services.store as unknown as SqlStore).decisionRecords(null, null);

/** The records signed anew, in order, with `change` made to each first: what a holder of the signing key could forge. */
function resealed(all: DecisionRecord[], change: (r: DecisionRecord) => DecisionRecord, signer: ReceiptSigner) {
  let head: DecisionRecord | null = null;
  return all.map((r) => (head = sealRecord(change(r), head, signer)));
}

beforeAll(async () => {
  tools = new CountingToolSource(SOURCE_ID, [
    { name: 'deploy', annotations: { destructiveHint: true } },
    { name: 'scale', annotations: { destructiveHint: true } },
  ]);
  h = await startHarness({
    config: {
      ...testConfig({
        toolConfirmation: {
          // Asked by its annotation (destructive), so rememberable but for its step-up.
          't:deploy': { stepUp: 'passkey' },
          't:scale': {
            mode: 'ALWAYS',
            stepUp: 'passkey',
            approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' },
          },
        },
      }),
      auth: {
        tokens: [
          { token: TOKENS.alice, user: 'alice', admin: false },
          { token: TOKENS.bob, user: 'bob', admin: false },
          { token: TOKENS.carol, user: 'carol', admin: false, roles: ['reviewer'] },
          { token: TOKENS.dave, user: 'dave', admin: false, roles: ['reviewer'] },
        ],
      },
    },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ deploy: ARGUMENTS, scale: ARGUMENTS })]) },
    toolSources: [tools],
  });
  // A passkey's relying party is a host name: the browser's page would be at localhost.
  origin = `http://localhost:${new URL(h.url).port}`;
  alice = new SoftwareAuthenticator(origin);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('passkey step-up', () => {
  it('registers a passkey and records who registered which public key', async () => {
    const registered = await register('alice', alice);
    expect(registered.userErrors).toEqual([]);
    expect(registered.passkey).toEqual({ credentialId: alice.id, rpId: 'localhost' });
    const viewer = dataOf(await h.gql('{ viewer { passkeys { credentialId } } }', {}, as('alice'))).viewer;
    expect(viewer.passkeys).toEqual([{ credentialId: alice.id }]);
    const record = (await records()).find((r) => r.kind === 'PASSKEY_REGISTERED')!;
    expect(record.actor?.id).toBe('alice');
    expect(record.passkey).toMatchObject({ credentialId: alice.id, algorithm: -7, rpId: 'localhost' });
    expect(record.passkey!.publicKeyJwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    // The same response again: no registration waits for it.
    const again = await register('alice', alice);
    expect(again.userErrors[0]).toMatchObject({ code: 'PASSKEY_INVALID', message: expect.stringContaining('already') });
  });

  it('refuses an ACCEPT without an assertion, and a remembered approval; nothing runs', async () => {
    const request = await pausedDeploy();
    const { stepUp, canRemember } = await stepUpOf(request.id);
    expect(stepUp.required).toBe(true);
    expect(canRemember).toBe(false);
    expect(stepUp.options).toMatchObject({
      challenge: stepUp.challenge,
      rpId: 'localhost',
      userVerification: 'required',
      allowCredentials: [{ id: alice.id, type: 'public-key' }],
    });
    const missing = await accept(request.id);
    expect(missing.userErrors).toEqual([
      expect.objectContaining({ code: 'PASSKEY_REQUIRED', field: ['input', 'passkeyAssertion'] }),
    ]);
    const remembered = await accept(request.id, {
      remember: { scope: 'AGENT', ttlSeconds: 60 },
      passkeyAssertion: alice.assert(stepUp.challenge),
    });
    expect(remembered.userErrors[0]).toMatchObject({
      code: 'INVALID_INPUT',
      field: ['input', 'remember'],
      message: expect.stringContaining('passkey'),
    });
    expect((await stepUpOf(request.id)).status).toBe('PENDING');
    expect(tools.count('deploy')).toBe(0);
  });

  it("refuses an assertion over another request's challenge, over other arguments, without user verification, or by another user's passkey", async () => {
    const request = await pausedDeploy();
    const other = await pausedDeploy();
    const otherChallenge = (await stepUpOf(other.id)).stepUp.challenge;
    const edited = { service: 'web', replicas: 30 };
    const ownChallenge = (await stepUpOf(request.id)).stepUp.challenge;
    const editedChallenge = (await stepUpOf(request.id, edited)).stepUp.challenge;
    expect(editedChallenge).not.toBe(ownChallenge);

    const foreign = await accept(request.id, { passkeyAssertion: alice.assert(otherChallenge) });
    expect(foreign.userErrors[0]).toMatchObject({
      code: 'PASSKEY_INVALID',
      message: expect.stringContaining('challenge'),
    });
    // Signed for the model's arguments, sent with an edit: the edit needs an assertion of its own.
    const stale = await accept(request.id, { arguments: edited, passkeyAssertion: alice.assert(ownChallenge) });
    expect(stale.userErrors[0]).toMatchObject({ code: 'PASSKEY_INVALID' });
    const unverified = await accept(request.id, {
      passkeyAssertion: alice.assert(ownChallenge, { userVerified: false }),
    });
    expect(unverified.userErrors[0]).toMatchObject({
      code: 'PASSKEY_INVALID',
      message: expect.stringMatching(/verif/i),
    });
    const bobs = new SoftwareAuthenticator(origin);
    expect((await register('bob', bobs)).userErrors).toEqual([]);
    const byBob = await accept(request.id, { passkeyAssertion: bobs.assert(ownChallenge) });
    expect(byBob.userErrors[0]).toMatchObject({ code: 'PASSKEY_INVALID', message: expect.stringContaining('you') });
    const elsewhere = await accept(request.id, {
      passkeyAssertion: alice.assert(ownChallenge, { origin: 'http://localhost:1' }),
    });
    expect(elsewhere.userErrors[0]).toMatchObject({
      code: 'PASSKEY_INVALID',
      message: expect.stringContaining('origin'),
    });

    expect((await stepUpOf(request.id)).status).toBe('PENDING');
    expect(tools.count('deploy')).toBe(0);
    // Nothing of the refusals was recorded: no ACCEPTED record for either request.
    expect((await records()).filter((r) => r.kind === 'ACCEPTED' && r.turnId === request.turnId)).toEqual([]);
  });

  it('runs an edited call once after a verified assertion; the receipt keeps it and verifies offline, a tampered one does not', async () => {
    const before = tools.count('deploy');
    const request = await pausedDeploy();
    const edited = { service: 'web', replicas: 5 };
    const { challenge } = (await stepUpOf(request.id, edited)).stepUp;
    const passkeyAssertion = alice.assert(challenge);
    const answered = await accept(request.id, { arguments: edited, passkeyAssertion });
    expect(answered.userErrors).toEqual([]);
    expect(answered.elicitation.status).toBe('ACCEPTED');
    await expect.poll(() => tools.count('deploy')).toBe(before + 1);
    expect(tools.runs.get('deploy')!.at(-1)).toEqual(edited);

    const receipt = dataOf(
      await h.gql('query R($id: ID!) { elicitation(id: $id) { receipt } }', { id: request.id }, as('alice')),
    ).elicitation.receipt as DecisionRecord;
    expect(receipt.assertion).toEqual({
      credentialId: alice.id,
      authenticatorData: (passkeyAssertion as { response: { authenticatorData: string } }).response.authenticatorData,
      clientDataJSON: (passkeyAssertion as { response: { clientDataJSON: string } }).response.clientDataJSON,
      signature: (passkeyAssertion as { response: { signature: string } }).response.signature,
    });
    // The same assertion again, on the answered request: the answer stands, nothing runs twice.
    await accept(request.id, { arguments: edited, passkeyAssertion });
    expect(tools.count('deploy')).toBe(before + 1);

    const all = await records();
    const published = await fetch(new URL('/.well-known/toolgate-receipt-keys.json', h.url));
    const { keys } = (await published.json()) as { keys: PublicJwk[] };
    expect(verifyRecords(all, keys)).toBeNull();

    // Altered after signing: the record's hash names it.
    const record = all.find((r) => r.kind === 'ACCEPTED' && r.elicitationId === request.id)!;
    const flipped = Buffer.from(record.assertion!.signature, 'base64url');
    flipped[10]! ^= 1;
    const badSignature = { ...record.assertion!, signature: flipped.toString('base64url') };
    const altered = all.map((r) => (r.seq === record.seq ? { ...r, assertion: badSignature } : r));
    expect(verifyRecords(altered, keys)).toMatchObject({
      seq: record.seq,
      problem: expect.stringContaining('altered'),
    });

    // Signed anew by whoever holds the deployment's key: the passkey check still names each forgery.
    const forger: ReceiptSigner = { keyId: 'forger', privateKey: generateKeyPairSync('ed25519').privateKey };
    const forgerKeys = [publicJwk(forger)];
    expect(
      verifyRecords(
        resealed(all, (r) => r, forger),
        forgerKeys,
      ),
    ).toBeNull();
    const forgeries: [string, (r: DecisionRecord) => DecisionRecord, string][] = [
      ['a flipped signature', (r) => (r.seq === record.seq ? { ...r, assertion: badSignature } : r), 'signature'],
      ['other arguments', (r) => (r.seq === record.seq ? { ...r, argsDigest: '0'.repeat(64) } : r), 'challenge'],
      [
        'another approver',
        (r) => (r.seq === record.seq ? { ...r, actor: { id: 'bob', identity: null } } : r),
        "another user's",
      ],
    ];
    for (const [, change, named] of forgeries) {
      expect(verifyRecords(resealed(all, change, forger), forgerKeys)).toMatchObject({
        problem: expect.stringContaining(named),
      });
    }
  });

  it('under an approvers policy, each approver accepts with their own passkey; the deciding one is kept and verifies', async () => {
    const started = dataOf(
      await h.gql(START_TURN, { input: { agentId: AGENT_ID, message: 't_scale' } }, as('alice')),
    ).startTurn;
    const id = started.turn.pendingElicitations[0].id as string;
    const carol = new SoftwareAuthenticator(origin);
    const dave = new SoftwareAuthenticator(origin);
    expect((await register('carol', carol)).userErrors).toEqual([]);
    expect((await register('dave', dave)).userErrors).toEqual([]);
    const { challenge } = (await stepUpOf(id, undefined, 'carol')).stepUp;
    expect((await accept(id, {}, 'carol')).userErrors[0]).toMatchObject({ code: 'PASSKEY_REQUIRED' });
    // Another approver's passkey does not count for carol.
    const byDave = await accept(id, { passkeyAssertion: dave.assert(challenge) }, 'carol');
    expect(byDave.userErrors[0]).toMatchObject({ code: 'PASSKEY_INVALID' });
    expect((await accept(id, { passkeyAssertion: carol.assert(challenge) }, 'carol')).userErrors).toEqual([]);
    expect(tools.count('scale')).toBe(0);
    expect((await accept(id, { passkeyAssertion: dave.assert(challenge) }, 'dave')).userErrors).toEqual([]);
    await expect.poll(() => tools.count('scale')).toBe(1);
    const all = await records();
    const decided = all.find((r) => r.kind === 'ACCEPTED' && r.elicitationId === id)!;
    expect(decided.actor?.id).toBe('dave');
    expect(decided.assertion?.credentialId).toBe(dave.id);
    const { keys } = (await (await fetch(new URL('/.well-known/toolgate-receipt-keys.json', h.url))).json()) as {
      keys: PublicJwk[];
    };
    expect(verifyRecords(all, keys)).toBeNull();
  });
});
