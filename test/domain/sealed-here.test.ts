import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkSeal,
  publicJwk,
  SealedHere,
  sealRecord,
  verifyingKeys,
  type DecisionDraft,
} from '../../src/domain/decision-records.js';

const signer = { keyId: 'k1', privateKey: generateKeyPairSync('ed25519').privateKey };
const keys = verifyingKeys([publicJwk(signer)]);
const noKeys = verifyingKeys([]);
const draft = (n: number): DecisionDraft => ({
  kind: 'ASKED',
  turnId: `trn_${n}`,
  toolCallId: 'call_1',
  elicitationId: `elc_${n}`,
  agentId: 'a',
  toolId: 'demo:delete',
  argsDigest: '0'.repeat(64),
  policyDigest: null,
  actor: null,
  at: '2026-12-06T00:00:00.000Z',
});

describe('checkSeal with the records this process signed', () => {
  it('takes a record it signed, read back unchanged, without verifying its signature again', () => {
    const sealed = new SealedHere();
    const record = sealRecord(draft(1), null, signer);
    sealed.add(record);
    // No key to verify with: only the memory of having signed these bytes can accept it.
    expect(checkSeal(record, noKeys, sealed)).toBeNull();
    expect(checkSeal(record, noKeys)).toMatch(/unknown key/);
  });

  it('still refuses an altered record, or one whose signature was replaced', () => {
    const sealed = new SealedHere();
    const record = sealRecord(draft(1), null, signer);
    sealed.add(record);
    expect(checkSeal({ ...record, argsDigest: '1'.repeat(64) }, keys, sealed)).toMatch(/altered/);
    const other = sealRecord(draft(2), null, signer);
    expect(checkSeal({ ...record, signature: other.signature }, keys, sealed)).toBe('signature does not verify');
  });

  it('forgets the oldest past its capacity, whose signatures are then verified again', () => {
    const sealed = new SealedHere(2);
    const [first, second, third] = [1, 2, 3].map((n) => sealRecord(draft(n), null, signer));
    for (const record of [first!, second!, third!]) sealed.add(record);
    expect(checkSeal(first!, noKeys, sealed)).toMatch(/unknown key/);
    expect(checkSeal(first!, keys, sealed)).toBeNull();
    expect(checkSeal(third!, noKeys, sealed)).toBeNull();
  });
});
