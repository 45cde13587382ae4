// Passkeys as toolgate keeps them (docs/receipts.md#passkey-step-up): each user's registered WebAuthn credentials, the
// registration in progress, and what the store does with them.
import type { JsonWebKey } from 'node:crypto';
import type { DecisionActor } from './decision-records.js';

/** A registered credential of a user. */
export interface PasskeyRecord {
  /** base64url, as WebAuthn names it. */
  credentialId: string;
  userId: string;
  /** The public key as the authenticator gave it (COSE), base64url. */
  publicKey: string;
  /** Its COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256). */
  algorithm: number;
  /** The relying party id (a host name) the credential is bound to. */
  rpId: string;
  /** The signature counter of its last assertion (0: the authenticator keeps none). */
  counter: number;
  /** How the browser may reach it (internal, usb, hybrid, …). */
  transports: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** A registration in progress: the challenge the user's authenticator must sign for `rpId`, until `expiresAt`. */
export interface PasskeyChallenge {
  userId: string;
  challenge: string;
  rpId: string;
  expiresAt: string;
}

/** The store's part: credentials per user, one pending registration per user. */
export interface Passkeys {
  /** Replaces the user's pending registration, if any. */
  savePasskeyChallenge(challenge: PasskeyChallenge): Promise<void>;
  /** The user's pending registration, removed as it is taken; null when none, or it expired at `now`. */
  takePasskeyChallenge(userId: string, now: string): Promise<PasskeyChallenge | null>;
  /**
   * Keeps the credential and appends its PASSKEY_REGISTERED decision record (the actor, its id and public key) in the
   * same transaction; false (nothing written) when the credential id is registered already.
   */
  addPasskey(passkey: PasskeyRecord, actor: DecisionActor, jwk: JsonWebKey): Promise<boolean>;
  listPasskeys(userId: string): Promise<PasskeyRecord[]>;
  getPasskey(credentialId: string): Promise<PasskeyRecord | null>;
  /**
   * Records an assertion's counter: only forward (or 0 for an authenticator that keeps none), so a replayed assertion
   * fails; false when it did not move forward.
   */
  advancePasskeyCounter(credentialId: string, counter: number, now: string): Promise<boolean>;
}
