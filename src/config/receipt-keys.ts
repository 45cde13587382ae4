// `receipts.keys` resolved at start: each secret read (a missing env:NAME stops the start) and parsed as an Ed25519
// private key; a key that is not one is one line naming it.
import { signerFrom, type ReceiptSigner } from '../domain/decision-records.js';
import { ConfigError, resolveSecret } from './load.js';
import type { ToolgateConfig } from './schema.js';

/** The configured signing keys, first the one that signs; empty: the deployment generates one. */
export function receiptSigners(config: ToolgateConfig | undefined, configFile: string): ReceiptSigner[] {
  return (config?.receipts?.keys ?? []).map(({ id, privateKey }, index) => {
    const where = `${configFile}: receipts.keys[${index}].privateKey`;
    try {
      return signerFrom(id, resolveSecret(privateKey, where));
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`${where}: not an Ed25519 private key (PKCS8 PEM or JWK)`);
    }
  });
}
