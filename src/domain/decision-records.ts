// Decision records: one per gate outcome, hash-chained and signed, so that who approved exactly which arguments can be
// checked offline (docs/receipts.md). Pure rules over node:crypto: the stores append them, the CLI verifies them.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { assertionProblem, type RecordedAssertion, type RecordedPasskey } from './passkey-challenge.js';
import type { AnswerIdentity, ElicitationApproval, JsonObject } from './records.js';

export type DecisionKind = 'ASKED' | 'ACCEPTED' | 'DECLINED' | 'CANCELLED' | 'EXPIRED' | 'RAN' | 'PASSKEY_REGISTERED';

/** Who a record names: the answer's identity (issuer and subject, or the static user), or the system (null). */
export interface DecisionActor {
  id: string;
  identity: AnswerIdentity | null;
}

/** What a script knows of a decision when it appends it. */
export interface DecisionDraft {
  kind: DecisionKind;
  turnId: string;
  toolCallId: string;
  elicitationId: string | null;
  agentId: string;
  toolId: string;
  /** SHA-256 (hex) of the canonical arguments that will run (or were asked about). */
  argsDigest: string;
  /** SHA-256 (hex) of the canonical approval policy the request was gated under; null: the requester alone. */
  policyDigest: string | null;
  actor: DecisionActor | null;
  at: string;
  /** PASSKEY_REGISTERED: the credential the actor registered (its id and public key). */
  passkey?: RecordedPasskey;
  /** An ACCEPT under passkey step-up: the approver's WebAuthn assertion over the decision's challenge. */
  assertion?: RecordedAssertion;
}

/** A record as stored and exported (one JSON line each). */
export interface DecisionRecord extends DecisionDraft {
  /** Its position in the deployment's chain, from 1. */
  seq: number;
  /** The previous record's hash; the genesis value for the first. */
  prevHash: string;
  /** SHA-256 (hex) of the signed payload. */
  hash: string;
  keyId: string;
  /** Ed25519 over the payload, base64url. */
  signature: string;
}

export const GENESIS_HASH = '0'.repeat(64);

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The digest of arguments as JSON (object keys sorted, as canonicalJson writes them). */
export const argumentsDigest = (args: JsonObject): string => sha256Hex(canonicalJson(args));

/** The digest of the approval policy a request was gated under; null without one. */
export const policyDigest = (approval: ElicitationApproval | null): string | null =>
  approval === null ? null : sha256Hex(canonicalJson(approval));

/** The bytes a record's hash and signature cover: every field but the hash and signature, canonical. */
export function recordPayload(record: Omit<DecisionRecord, 'hash' | 'signature'>): string {
  const { seq, prevHash, keyId, ...draft } = record;
  return canonicalJson({ ...draftFields(draft), seq, prevHash, keyId });
}

function draftFields(d: DecisionDraft): DecisionDraft {
  return {
    kind: d.kind,
    turnId: d.turnId,
    toolCallId: d.toolCallId,
    elicitationId: d.elicitationId,
    agentId: d.agentId,
    toolId: d.toolId,
    argsDigest: d.argsDigest,
    policyDigest: d.policyDigest,
    actor: d.actor,
    at: d.at,
    // Only when present: the records without them hash as before.
    ...(d.passkey !== undefined && { passkey: d.passkey }),
    ...(d.assertion !== undefined && { assertion: d.assertion }),
  };
}

/** The deployment's signing key: the first of its configured keys. */
export interface ReceiptSigner {
  keyId: string;
  privateKey: KeyObject;
}

/** The record that follows `head` (null: none yet), hashed and signed. */
export function sealRecord(
  draft: DecisionDraft,
  head: { seq: number; hash: string } | null,
  signer: ReceiptSigner,
): DecisionRecord {
  const unsigned = {
    ...draftFields(draft),
    seq: (head?.seq ?? 0) + 1,
    prevHash: head?.hash ?? GENESIS_HASH,
    keyId: signer.keyId,
  };
  const payload = recordPayload(unsigned);
  return {
    ...unsigned,
    hash: sha256Hex(payload),
    signature: sign(null, Buffer.from(payload), signer.privateKey).toString('base64url'),
  };
}

/** The id of the key a deployment without a configured one generates and keeps in its database. */
export const GENERATED_RECEIPT_KEY_ID = 'toolgate-generated-1';

/** A signer from a PKCS8 PEM or an OKP JWK (its text). */
export function signerFrom(keyId: string, secret: string): ReceiptSigner {
  const text = secret.trim();
  const privateKey = text.startsWith('{')
    ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' })
    : createPrivateKey(text);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`receipt key ${keyId}: not an Ed25519 key`);
  return { keyId, privateKey };
}

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** The public half of a signer as a JWK (what the well-known JWKS publishes). */
export function publicJwk(signer: ReceiptSigner): PublicJwk {
  const { x } = createPublicKey(signer.privateKey).export({ format: 'jwk' }) as { x: string };
  return { kty: 'OKP', crv: 'Ed25519', x, kid: signer.keyId, alg: 'EdDSA', use: 'sig' };
}

/** Why verification stopped: the first bad record and what is wrong with it. */
export interface VerifyFailure {
  seq: number | null;
  line: number;
  problem: string;
}

/**
 * Checks records in export order: each links to the one before (hash and seq), its hash and signature hold under a
 * published key, and every RAN call has exactly one ACCEPTED decision bound to its argument digest (or ran unasked:
 * no ASKED record for it). The first failure, or null.
 */
export function verifyRecords(
  records: readonly DecisionRecord[],
  keys: readonly PublicJwk[],
  options: { startsChain?: boolean } = {},
): VerifyFailure | null {
  const byKid = new Map(keys.map((k) => [k.kid, createPublicKey({ key: { ...k }, format: 'jwk' })]));
  const asked = new Set<string>();
  const accepted = new Map<string, DecisionRecord[]>();
  const passkeys = new Map<string, { passkey: RecordedPasskey; userId: string | undefined }>();
  let prev: DecisionRecord | null = null;
  for (const [index, record] of records.entries()) {
    const fail = (problem: string): VerifyFailure => ({ seq: record.seq ?? null, line: index + 1, problem });
    if (prev === null && (options.startsChain ?? true) && record.prevHash !== GENESIS_HASH) {
      return fail('the first record does not start the chain (a record before it is missing)');
    }
    if (prev !== null && record.seq !== prev.seq + 1) {
      return fail(`seq ${record.seq} follows ${prev.seq}: a record is missing or out of order`);
    }
    if (prev !== null && record.prevHash !== prev.hash) {
      return fail(`prevHash does not match record ${prev.seq}'s hash: a record is missing or out of order`);
    }
    const payload = recordPayload(record);
    if (sha256Hex(payload) !== record.hash) return fail('hash does not match its contents: the record was altered');
    const key = byKid.get(record.keyId);
    if (!key) return fail(`signed with an unknown key ${JSON.stringify(record.keyId)}`);
    if (!verify(null, Buffer.from(payload), key, Buffer.from(record.signature, 'base64url'))) {
      return fail('signature does not verify');
    }
    if (record.kind === 'PASSKEY_REGISTERED' && record.passkey) {
      passkeys.set(record.passkey.credentialId, { passkey: record.passkey, userId: record.actor?.id });
    }
    if (record.assertion) {
      const registered = passkeys.get(record.assertion.credentialId);
      if (!registered) return fail('its passkey assertion names a credential no earlier record registered');
      if (registered.userId !== record.actor?.id) return fail("its passkey assertion is by another user's credential");
      const problem = assertionProblem(record.assertion, stepUpSubjectOf(record), registered.passkey);
      if (problem) return fail(`passkey assertion: ${problem}`);
    }
    const call = `${record.turnId}\u0000${record.toolCallId}`;
    if (record.kind === 'ASKED') asked.add(call);
    if (record.kind === 'ACCEPTED') accepted.set(call, [...(accepted.get(call) ?? []), record]);
    if (record.kind === 'RAN' && asked.has(call)) {
      const accepting = (accepted.get(call) ?? []).filter((a) => a.argsDigest === record.argsDigest);
      if (accepting.length !== 1) {
        return fail(`ran with ${accepting.length} accepting decisions bound to its argument digest (expected 1)`);
      }
    }
    prev = record;
  }
  return null;
}

const stepUpSubjectOf = (r: DecisionRecord) => ({
  elicitationId: r.elicitationId ?? '',
  argsDigest: r.argsDigest,
  policyDigest: r.policyDigest,
});
