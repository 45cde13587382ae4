// Passkeys (docs/receipts.md#passkey-step-up): one pending registration per user, taken once and only before it
// expires; credentials kept per user, a credential id registered once; the counter moves only forward.
import { describe, expect } from 'vitest';
import type { PasskeyRecord } from '../../../src/domain/passkeys.js';
import { ANN, at, BOB } from './fixtures.js';
import type { StoreSpec } from './harness.js';

const passkeyOf = (userId: string, credentialId: string, counter = 0): PasskeyRecord => ({
  credentialId,
  userId,
  publicKey: 'pQECAyYgASFYIA',
  algorithm: -7,
  rpId: 'toolgate.example.com',
  counter,
  transports: ['internal', 'hybrid'],
  createdAt: at(1),
  lastUsedAt: null,
});
const JWK = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' };

export function registerPasskeysSpec({ itEmpty }: StoreSpec): void {
  describe('passkeys', () => {
    itEmpty('a pending registration is replaced, taken once, and not after it expired', async ({ store }) => {
      const rpId = 'toolgate.example.com';
      await store.savePasskeyChallenge({ userId: ANN, challenge: 'first', rpId, expiresAt: at(60) });
      await store.savePasskeyChallenge({ userId: ANN, challenge: 'second', rpId, expiresAt: at(60) });
      await store.savePasskeyChallenge({ userId: BOB, challenge: 'bobs', rpId, expiresAt: at(60) });
      expect(await store.takePasskeyChallenge(ANN, at(10))).toEqual({
        userId: ANN,
        challenge: 'second',
        rpId,
        expiresAt: at(60),
      });
      expect(await store.takePasskeyChallenge(ANN, at(10))).toBeNull();
      // Expired: gone, and not handed out.
      expect(await store.takePasskeyChallenge(BOB, at(60))).toBeNull();
      expect(await store.takePasskeyChallenge(BOB, at(10))).toBeNull();
    });

    itEmpty('keeps credentials per user, each id once', async ({ store }) => {
      const actor = { id: ANN, identity: null };
      expect(await store.addPasskey(passkeyOf(ANN, 'cred-a'), actor, JWK)).toBe(true);
      expect(await store.addPasskey(passkeyOf(ANN, 'cred-b'), actor, JWK)).toBe(true);
      // The same credential id again, even for another user: refused, the first stays.
      expect(await store.addPasskey(passkeyOf(BOB, 'cred-a'), { id: BOB, identity: null }, JWK)).toBe(false);
      expect((await store.listPasskeys(ANN)).map((p) => p.credentialId)).toEqual(['cred-a', 'cred-b']);
      expect(await store.listPasskeys(BOB)).toEqual([]);
      expect(await store.getPasskey('cred-a')).toEqual(passkeyOf(ANN, 'cred-a'));
      expect(await store.getPasskey('cred-z')).toBeNull();
    });

    itEmpty('the counter moves only forward (0 stays 0 for an authenticator that keeps none)', async ({ store }) => {
      const actor = { id: ANN, identity: null };
      await store.addPasskey(passkeyOf(ANN, 'counted', 5), actor, JWK);
      await store.addPasskey(passkeyOf(ANN, 'uncounted', 0), actor, JWK);
      expect(await store.advancePasskeyCounter('counted', 5, at(2))).toBe(false);
      expect(await store.advancePasskeyCounter('counted', 4, at(2))).toBe(false);
      expect(await store.advancePasskeyCounter('counted', 6, at(3))).toBe(true);
      expect(await store.getPasskey('counted')).toMatchObject({ counter: 6, lastUsedAt: at(3) });
      expect(await store.advancePasskeyCounter('uncounted', 0, at(4))).toBe(true);
      expect(await store.advancePasskeyCounter('missing', 1, at(4))).toBe(false);
    });
  });
}
