// The passkey transaction script (docs/receipts.md#passkey-step-up): a registered credential and its decision record,
// written together, for both dialects (see scripts.ts for how a script runs).
import type { JsonWebKey } from 'node:crypto';
import type { DecisionActor } from '../domain/decision-records.js';
import type { PasskeyRecord } from '../domain/passkeys.js';
import { recordDecision, type Script, type ScriptContext } from './scripts.js';

/** Keeps the credential and appends PASSKEY_REGISTERED; false (nothing written) when it was registered before. */
export function* addPasskey(
  c: ScriptContext,
  passkey: PasskeyRecord,
  actor: DecisionActor,
  jwk: JsonWebKey,
): Script<boolean> {
  const inserted: number = yield c.q.insertPasskey({
    credentialId: passkey.credentialId,
    userId: passkey.userId,
    publicKey: passkey.publicKey,
    algorithm: passkey.algorithm,
    rpId: passkey.rpId,
    counter: passkey.counter,
    transports: JSON.stringify(passkey.transports),
    now: passkey.createdAt,
  });
  if (inserted !== 1) return false;
  // A registration is no call of a tool: the call's fields are empty, the record is about the credential.
  recordDecision(c, {
    kind: 'PASSKEY_REGISTERED',
    turnId: '',
    toolCallId: '',
    elicitationId: null,
    agentId: '',
    toolId: '',
    argsDigest: '',
    policyDigest: null,
    actor,
    at: passkey.createdAt,
    passkey: {
      credentialId: passkey.credentialId,
      publicKey: passkey.publicKey,
      publicKeyJwk: jwk,
      algorithm: passkey.algorithm,
      rpId: passkey.rpId,
    },
  });
  return true;
}
