// The step-up challenge (docs/receipts.md#passkey-step-up): base64url(SHA-256(canonical JSON of the decision)), the
// same for the same decision whatever the key order, another for another request, other arguments or another policy.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { stepUpChallenge } from '../../src/domain/passkey-challenge.js';

const SUBJECT = { elicitationId: 'eli_1', argsDigest: 'a'.repeat(64), policyDigest: null };

describe('the step-up challenge', () => {
  it('is base64url of SHA-256 over the canonical JSON of {elicitationId, argsDigest, policyDigest}', () => {
    const text = `{"argsDigest":"${'a'.repeat(64)}","elicitationId":"eli_1","policyDigest":null}`;
    expect(stepUpChallenge(SUBJECT)).toBe(createHash('sha256').update(text).digest('base64url'));
    expect(stepUpChallenge({ policyDigest: null, argsDigest: 'a'.repeat(64), elicitationId: 'eli_1' })).toBe(
      stepUpChallenge(SUBJECT),
    );
  });

  it('differs for another request, other arguments or another policy', () => {
    const challenges = new Set([
      stepUpChallenge(SUBJECT),
      stepUpChallenge({ ...SUBJECT, elicitationId: 'eli_2' }),
      stepUpChallenge({ ...SUBJECT, argsDigest: 'b'.repeat(64) }),
      stepUpChallenge({ ...SUBJECT, policyDigest: 'c'.repeat(64) }),
    ]);
    expect(challenges.size).toBe(4);
  });
});
