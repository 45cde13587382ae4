// The passkey tables' rows as both dialects return them, and the records they are (src/domain/passkeys.ts).
import type { PasskeyChallenge, PasskeyRecord } from '../domain/passkeys.js';

export interface PasskeyRow {
  credential_id: string;
  user_id: string;
  public_key: string;
  algorithm: number;
  rp_id: string;
  /** bigint: PostgreSQL may hand it back as text. */
  counter: number | string;
  /** JSON text (SQLite) or the parsed list (PostgreSQL jsonb). */
  transports: string | string[];
  created_at: string | Date;
  last_used_at: string | Date | null;
}

export interface PasskeyChallengeRow {
  user_id: string;
  challenge: string;
  rp_id: string;
  expires_at: string | Date;
}

const iso = (value: string | Date) => new Date(value).toISOString();

export function passkeyRecord(row: PasskeyRow): PasskeyRecord {
  return {
    credentialId: row.credential_id,
    userId: row.user_id,
    publicKey: row.public_key,
    algorithm: Number(row.algorithm),
    rpId: row.rp_id,
    counter: Number(row.counter),
    transports: typeof row.transports === 'string' ? (JSON.parse(row.transports) as string[]) : row.transports,
    createdAt: iso(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : iso(row.last_used_at),
  };
}

export function passkeyChallengeRecord(row: PasskeyChallengeRow): PasskeyChallenge {
  return { userId: row.user_id, challenge: row.challenge, rpId: row.rp_id, expiresAt: iso(row.expires_at) };
}
