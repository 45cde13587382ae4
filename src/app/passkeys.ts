// Passkey step-up (docs/receipts.md#passkey-step-up): a signed-in user registers a passkey (options, then the
// browser's response, verified by @simplewebauthn/server); an ACCEPT of a call whose tool requires step-up counts
// only with that user's assertion over the challenge derived from the decision (request, arguments that will run,
// policy), verified here before anything is recorded.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { createHash } from 'node:crypto';
import { argumentsDigest, policyDigest } from '../domain/decision-records.js';
import { coseToJwk, PASSKEY_ALGORITHMS, stepUpChallenge, type RecordedAssertion } from '../domain/passkey-challenge.js';
import type { PasskeyRecord, Passkeys } from '../domain/passkeys.js';
import type { ElicitationRecord, JsonObject } from '../domain/records.js';
import type { Outcome } from './outcome.js';
import { answerIdentityOf, type Viewer } from './viewer.js';

/** The config's step-up settings, as the use cases read them. */
export interface PasskeySettings {
  /** Whether an ACCEPT of this agent's call of this tool needs the approver's passkey (stepUp: "passkey"). */
  required(agentId: string, toolId: string): boolean;
  /** The origin of server.publicUrl when configured: the relying party. null: the request's Origin. */
  publicOrigin: string | null;
}

/** What the passkey use cases reach. */
export interface PasskeyDeps {
  store: Passkeys;
  clock: () => Date;
  passkeys?: PasskeySettings;
}

/** How long a registration waits for the browser's response. */
const REGISTRATION_TTL_MS = 5 * 60_000;
const RP_NAME = 'toolgate';

export type PasskeyRefusal =
  /** The tool requires step-up and the answer carries no assertion. */
  | { code: 'PASSKEY_REQUIRED'; field: 'passkeyAssertion' }
  /** The assertion (or registration response) does not verify: `problem` says why. */
  | { code: 'PASSKEY_INVALID'; field: 'passkeyAssertion' | 'response'; problem: string };

interface RelyingParty {
  id: string;
  origin: string;
}

/** server.publicUrl when configured, else the origin the request came from (a browser's Origin header). */
function relyingParty(deps: PasskeyDeps, requestOrigin: string | null): RelyingParty | null {
  const origin = deps.passkeys?.publicOrigin ?? requestOrigin;
  if (!origin) return null;
  try {
    const url = new URL(origin);
    return { id: url.hostname, origin: url.origin };
  } catch {
    return null;
  }
}

const NO_RELYING_PARTY =
  'no relying party: set server.publicUrl, or call from the browser page that registers or answers (its Origin)';

/** Options for the browser's startRegistration; the challenge is kept for the user until the response comes. */
export async function startPasskeyRegistration(
  deps: PasskeyDeps,
  viewer: Viewer,
  requestOrigin: string | null,
): Promise<Outcome<{ options: PublicKeyCredentialCreationOptionsJSON }, PasskeyRefusal>> {
  const rp = relyingParty(deps, requestOrigin);
  if (!rp) return { ok: false, code: 'PASSKEY_INVALID', field: 'response', problem: NO_RELYING_PARTY };
  const existing = await deps.store.listPasskeys(viewer.id);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: viewer.id,
    userDisplayName: viewer.name ?? viewer.id,
    // Stable per user and without the id itself: the authenticator keeps one passkey per user and site.
    userID: createHash('sha256').update(viewer.id).digest(),
    attestationType: 'none',
    excludeCredentials: existing.filter((p) => p.rpId === rp.id).map((p) => ({ id: p.credentialId })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
  });
  const expiresAt = new Date(deps.clock().getTime() + REGISTRATION_TTL_MS).toISOString();
  await deps.store.savePasskeyChallenge({ userId: viewer.id, challenge: options.challenge, rpId: rp.id, expiresAt });
  return { ok: true, options };
}

/** The browser's registration response, verified against the user's pending challenge; the passkey is kept. */
export async function registerPasskey(
  deps: PasskeyDeps,
  viewer: Viewer,
  requestOrigin: string | null,
  response: unknown,
): Promise<Outcome<{ passkey: PasskeyRecord }, PasskeyRefusal>> {
  const invalid = (problem: string) => ({
    ok: false as const,
    code: 'PASSKEY_INVALID' as const,
    field: 'response' as const,
    problem,
  });
  const rp = relyingParty(deps, requestOrigin);
  if (!rp) return invalid(NO_RELYING_PARTY);
  const now = deps.clock().toISOString();
  const pending = await deps.store.takePasskeyChallenge(viewer.id, now);
  if (!pending) return invalid('no registration is waiting (or it expired): start one again');
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: pending.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: pending.rpId,
      requireUserVerification: true,
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
  } catch (error) {
    return invalid(error instanceof Error ? error.message : String(error));
  }
  if (!verified.verified) return invalid('the registration response does not verify');
  const { credential } = verified.registrationInfo;
  const cose = decodeCredentialPublicKey(credential.publicKey) as unknown as Map<number, unknown>;
  const jwk = coseToJwk(cose);
  const algorithm = cose.get(3);
  if (!jwk || typeof algorithm !== 'number') return invalid('the passkey uses a key type toolgate does not support');
  const passkey: PasskeyRecord = {
    credentialId: credential.id,
    userId: viewer.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    algorithm,
    rpId: pending.rpId,
    counter: credential.counter,
    transports: credential.transports ?? [],
    createdAt: now,
    lastUsedAt: null,
  };
  const added = await deps.store.addPasskey(passkey, { id: viewer.id, identity: answerIdentityOf(viewer) }, jwk);
  if (!added) return invalid('this passkey is registered already');
  return { ok: true, passkey };
}

/** What the browser needs to approve a request: whether step-up applies, and the challenge and options for it. */
export interface StepUp {
  required: boolean;
  /** base64url; null when not required. */
  challenge: string | null;
  /** For the browser's startAuthentication; null when not required, or no relying party is known. */
  options: PublicKeyCredentialRequestOptionsJSON | null;
}

export const stepUpRequired = (deps: PasskeyDeps, e: ElicitationRecord): boolean =>
  deps.passkeys?.required(e.agentId, e.toolCall.toolId) ?? false;

/** The challenge an ACCEPT of `e` with `args` (the arguments that will run) must carry an assertion over. */
export const challengeOf = (e: ElicitationRecord, args: JsonObject): string =>
  stepUpChallenge({ elicitationId: e.id, argsDigest: argumentsDigest(args), policyDigest: policyDigest(e.approval) });

/** The step-up of an ACCEPT of `e`, with `edited` arguments if the viewer edits them. */
export async function stepUpOf(
  deps: PasskeyDeps,
  viewer: Viewer,
  requestOrigin: string | null,
  e: ElicitationRecord,
  edited: JsonObject | null,
): Promise<StepUp> {
  if (!stepUpRequired(deps, e)) return { required: false, challenge: null, options: null };
  const challenge = challengeOf(e, edited ?? e.toolCall.arguments);
  const rp = relyingParty(deps, requestOrigin);
  if (!rp) return { required: true, challenge, options: null };
  const mine = (await deps.store.listPasskeys(viewer.id)).filter((p) => p.rpId === rp.id);
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    challenge: Buffer.from(challenge, 'base64url'),
    allowCredentials: mine.map((p) => ({
      id: p.credentialId,
      transports: p.transports as NonNullable<
        PublicKeyCredentialRequestOptionsJSON['allowCredentials']
      >[number]['transports'],
    })),
    userVerification: 'required',
  });
  return { required: true, challenge, options };
}

/**
 * The viewer's assertion over the ACCEPT of `e` that runs `args`, verified: one of their passkeys, the user verified,
 * the derived challenge, the relying party, a counter that moves forward. What the ACCEPTED record keeps, or why not.
 */
export async function verifyStepUp(
  deps: PasskeyDeps,
  viewer: Viewer,
  requestOrigin: string | null,
  e: ElicitationRecord,
  args: JsonObject,
  assertion: unknown,
): Promise<Outcome<{ assertion: RecordedAssertion }, PasskeyRefusal>> {
  if (assertion == null) return { ok: false, code: 'PASSKEY_REQUIRED', field: 'passkeyAssertion' };
  const invalid = (problem: string) => ({
    ok: false as const,
    code: 'PASSKEY_INVALID' as const,
    field: 'passkeyAssertion' as const,
    problem,
  });
  const response = assertionParts(assertion);
  if (!response) return invalid('not a WebAuthn assertion (startAuthentication’s result)');
  const passkey = await deps.store.getPasskey(response.id);
  if (!passkey || passkey.userId !== viewer.id) return invalid('the assertion is not by a passkey you registered');
  const rp = relyingParty(deps, requestOrigin);
  if (!rp) return invalid(NO_RELYING_PARTY);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response: assertion as AuthenticationResponseJSON,
      expectedChallenge: challengeOf(e, args),
      expectedOrigin: rp.origin,
      expectedRPID: passkey.rpId,
      credential: {
        id: passkey.credentialId,
        publicKey: Buffer.from(passkey.publicKey, 'base64url'),
        counter: passkey.counter,
      },
      requireUserVerification: true,
    });
  } catch (error) {
    return invalid(error instanceof Error ? error.message : String(error));
  }
  if (!verified.verified) return invalid('the assertion does not verify');
  const { newCounter } = verified.authenticationInfo;
  if (!(await deps.store.advancePasskeyCounter(passkey.credentialId, newCounter, deps.clock().toISOString()))) {
    return invalid('the assertion was used before (its counter did not move forward)');
  }
  return {
    ok: true,
    assertion: {
      credentialId: passkey.credentialId,
      authenticatorData: response.authenticatorData,
      clientDataJSON: response.clientDataJSON,
      signature: response.signature,
    },
  };
}

/** The parts of an AuthenticationResponseJSON, when it has them as strings. */
function assertionParts(
  value: unknown,
): { id: string; authenticatorData: string; clientDataJSON: string; signature: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { id, response } = value as { id?: unknown; response?: unknown };
  if (typeof id !== 'string' || typeof response !== 'object' || response === null) return null;
  const { authenticatorData, clientDataJSON, signature } = response as Record<string, unknown>;
  if (typeof authenticatorData !== 'string' || typeof clientDataJSON !== 'string' || typeof signature !== 'string') {
    return null;
  }
  return { id, authenticatorData, clientDataJSON, signature };
}
