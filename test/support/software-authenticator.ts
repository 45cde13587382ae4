// A passkey authenticator in the test process (P-256, attestation "none", user verified): what a browser's
// startRegistration and startAuthentication would return for it, byte for byte as WebAuthn writes them, so that the
// API's step-up can be tested on both backends without a browser (the inbox tests use Chromium's virtual one).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64 = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url');
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export class SoftwareAuthenticator {
  readonly #key: KeyObject;
  readonly credentialId = randomBytes(16);
  counter = 0;
  readonly #rpId: string;

  /** `origin`: the page the browser would be on; its host is the relying party. */
  constructor(readonly origin: string) {
    this.#rpId = new URL(origin).hostname;
    this.#key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  }

  get id(): string {
    return b64(this.credentialId);
  }

  /** startRegistration's result for options whose challenge is `challenge`. */
  register(challenge: string): object {
    const jwk = this.#key.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.#authDataHead(UP | UV | AT),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(isoCBOR.encode(cose)),
    ]);
    const attestation = new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]);
    const clientData = { type: 'webauthn.create', challenge, origin: this.origin, crossOrigin: false };
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64(Buffer.from(JSON.stringify(clientData))),
        attestationObject: b64(isoCBOR.encode(attestation as never)),
        transports: ['internal'],
      },
    };
  }

  /** startAuthentication's result over `challenge` (base64url), as if the page were at `origin`. */
  assert(challenge: string, options: { origin?: string; userVerified?: boolean } = {}): object {
    this.counter += 1;
    const authData = this.#authDataHead(options.userVerified === false ? UP : UP | UV);
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge, origin: options.origin ?? this.origin, crossOrigin: false }),
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.#key);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        authenticatorData: b64(authData),
        clientDataJSON: b64(clientDataJSON),
        signature: b64(signature),
      },
    };
  }

  #authDataHead(flags: number): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(this.#rpId), Buffer.from([flags]), counter]);
  }
}
