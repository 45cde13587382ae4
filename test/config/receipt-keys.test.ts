// `receipts.keys`: a PKCS8 PEM or a JWK, literal or env:NAME; the first signs; a bad or missing key is one line.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { receiptSigners } from '../../src/config/receipt-keys.js';
import { demoConfig } from '../../src/config/demo.js';
import { publicJwk, sealRecord, verifyRecords } from '../../src/domain/decision-records.js';

const pair = () => generateKeyPairSync('ed25519');
const config = (keys: { id: string; privateKey: string }[]) => ({ ...demoConfig, receipts: { keys } });

afterEach(() => {
  delete process.env.TEST_RECEIPT_KEY;
});

describe('receipts.keys', () => {
  it('reads a PEM from the environment and a JWK literal; the first signs, both verify their own records', () => {
    const [pem, jwk] = [pair(), pair()];
    process.env.TEST_RECEIPT_KEY = pem.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const signers = receiptSigners(
      config([
        { id: 'new', privateKey: 'env:TEST_RECEIPT_KEY' },
        { id: 'old', privateKey: JSON.stringify(jwk.privateKey.export({ format: 'jwk' })) },
      ]),
      'toolgate.json',
    );
    expect(signers.map((s) => s.keyId)).toEqual(['new', 'old']);
    const draft = {
      kind: 'ASKED' as const,
      ...{ turnId: 't', toolCallId: 'c', elicitationId: 'e', agentId: 'a', toolId: 'demo:x' },
      ...{ argsDigest: 'a'.repeat(64), policyDigest: null, actor: null, at: '2026-01-01T00:00:00.000Z' },
    };
    const record = sealRecord(draft, null, signers[0]!);
    expect(verifyRecords([record], signers.map(publicJwk))).toBeNull();
    expect(verifyRecords([record], [publicJwk(signers[1]!)])).toMatchObject({
      problem: expect.stringContaining('unknown key'),
    });
  });

  it('a missing variable or a key that is not Ed25519 stops the start naming it', () => {
    expect(() => receiptSigners(config([{ id: 'k', privateKey: 'env:TEST_RECEIPT_KEY' }]), 'toolgate.json')).toThrow(
      'toolgate.json: receipts.keys[0].privateKey: the environment variable TEST_RECEIPT_KEY is not set',
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    const pem = rsa.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => receiptSigners(config([{ id: 'k', privateKey: pem }]), 'toolgate.json')).toThrow(
      'toolgate.json: receipts.keys[0].privateKey: not an Ed25519 private key (PKCS8 PEM or JWK)',
    );
  });
});
