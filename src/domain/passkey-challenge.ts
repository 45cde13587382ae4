// Passkey step-up (docs/receipts.md#passkey-step-up): the challenge an approver's authenticator signs is derived from
// what the answer decides (the request, the digest of the arguments that will run, the policy), never stored; and
// the offline check that a recorded assertion is this credential's signature over exactly that challenge.
import { createHash, createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** What an ACCEPT under step-up decides, and so what its assertion must sign. */
export interface StepUpSubject {
  elicitationId: string;
  /** SHA-256 (hex) of the canonical arguments that will run: an edit changes it. */
  argsDigest: string;
  policyDigest: string | null;
}

/** base64url(SHA-256(canonical JSON {elicitationId, argsDigest, policyDigest})): the WebAuthn challenge. */
export function stepUpChallenge(subject: StepUpSubject): string {
  const text = canonicalJson({
    elicitationId: subject.elicitationId,
    argsDigest: subject.argsDigest,
    policyDigest: subject.policyDigest,
  });
  return createHash('sha256').update(text).digest('base64url');
}

/** A registered passkey as its PASSKEY_REGISTERED record names it: enough to check its assertions offline. */
export interface RecordedPasskey {
  /** The credential id, base64url. */
  credentialId: string;
  /** The credential's public key as the authenticator gave it (COSE), base64url. */
  publicKey: string;
  /** The same key as a JWK, for verifiers without a COSE decoder. */
  publicKeyJwk: JsonWebKey;
  /** Its COSE algorithm: -7 (ES256), -8 (EdDSA) or -257 (RS256). */
  algorithm: number;
  /** The relying party id the credential is bound to (a host name). */
  rpId: string;
}

/** A WebAuthn assertion as an ACCEPTED record keeps it: every part base64url, as the browser sent it. */
export interface RecordedAssertion {
  credentialId: string;
  authenticatorData: string;
  clientDataJSON: string;
  signature: string;
}

/** The COSE algorithms a passkey may use here (registration offers these, the offline check knows them). */
export const PASSKEY_ALGORITHMS = [-8, -7, -257] as const;

/** A COSE public key (decoded CBOR map: integer labels) as a JWK; null for a key type or curve not supported here. */
export function coseToJwk(cose: ReadonlyMap<number, unknown>): JsonWebKey | null {
  const b64 = (label: number) => {
    const value = cose.get(label);
    return value instanceof Uint8Array ? Buffer.from(value).toString('base64url') : null;
  };
  const kty = cose.get(1);
  const crv = cose.get(-1);
  if (kty === 2 && crv === 1) {
    const [x, y] = [b64(-2), b64(-3)];
    return x && y ? { kty: 'EC', crv: 'P-256', x, y } : null;
  }
  if (kty === 1 && crv === 6) {
    const x = b64(-2);
    return x ? { kty: 'OKP', crv: 'Ed25519', x } : null;
  }
  if (kty === 3) {
    const [n, e] = [b64(-1), b64(-2)];
    return n && e ? { kty: 'RSA', n, e } : null;
  }
  return null;
}

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

/**
 * Why `assertion` is not `passkey`'s signature over the challenge of `subject`, with the user verified, for its
 * relying party; null when it is. Pure and synchronous: what `audit verify` runs without the server.
 */
export function assertionProblem(
  assertion: RecordedAssertion,
  subject: StepUpSubject,
  passkey: RecordedPasskey,
): string | null {
  if (assertion.credentialId !== passkey.credentialId) return 'signed by another credential than the one named';
  const clientDataBytes = Buffer.from(assertion.clientDataJSON, 'base64url');
  let clientData: { type?: unknown; challenge?: unknown; origin?: unknown };
  try {
    clientData = JSON.parse(clientDataBytes.toString('utf8')) as typeof clientData;
  } catch {
    return 'clientDataJSON is not JSON';
  }
  if (clientData.type !== 'webauthn.get') return `clientDataJSON type is ${JSON.stringify(clientData.type)}`;
  if (clientData.challenge !== stepUpChallenge(subject)) {
    return "the challenge is not this decision's (another request, other arguments or another policy)";
  }
  if (typeof clientData.origin !== 'string' || !originMatches(clientData.origin, passkey.rpId)) {
    return `origin ${JSON.stringify(clientData.origin)} is not of the relying party ${passkey.rpId}`;
  }
  const authData = Buffer.from(assertion.authenticatorData, 'base64url');
  if (authData.length < 37) return 'authenticatorData is too short';
  if (!authData.subarray(0, 32).equals(createHash('sha256').update(passkey.rpId).digest())) {
    return `authenticatorData is not for the relying party ${passkey.rpId}`;
  }
  const flags = authData[32]!;
  if (!(flags & FLAG_USER_PRESENT) || !(flags & FLAG_USER_VERIFIED)) return 'the user was not verified';
  const signed = Buffer.concat([authData, createHash('sha256').update(clientDataBytes).digest()]);
  const key = createPublicKey({ key: passkey.publicKeyJwk, format: 'jwk' });
  const signature = Buffer.from(assertion.signature, 'base64url');
  const hash = passkey.algorithm === -8 ? null : 'sha256';
  let valid: boolean;
  try {
    valid = verify(hash, signed, key, signature);
  } catch {
    valid = false;
  }
  return valid ? null : 'the signature does not verify under the registered public key';
}

/** The origin's host is the relying party id or a host beneath it (what WebAuthn allows). */
function originMatches(origin: string, rpId: string): boolean {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return false;
  }
  return host === rpId || host.endsWith(`.${rpId}`);
}
