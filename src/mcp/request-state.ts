// The `requestState` of a gateway call answered `input_required` (MCP 2026-07-28): it names the call's turn and the
// confirmations the client was asked, for one user, one gateway and one tool, until it expires. It is signed (HMAC-
// SHA256) with the deployment's first key and accepted under any of its keys, so that a key can be rotated with an
// overlap: add the new one first, drop the old one once the states it signed have expired. Signed, not encrypted: the
// client can read it, and nothing in it is secret. What it allows is decided by the ledger, never by the state: it
// only says which call to look at, and an answer goes through answerElicitation like any other.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface RequestStateKey {
  /** Names the key in the states it signs, so that a state is checked with the key that signed it. */
  id: string;
  secret: string;
}

/** What a state says; the names are short, it travels with every retry. */
export interface CallState {
  /** The call's turn. */
  turnId: string;
  /** The confirmations the client was asked (inputRequests' keys). */
  elicitationIds: string[];
  /** The user it was issued to. */
  viewerId: string;
  /** The gateway agent. */
  agentId: string;
  /** The tool called. */
  toolName: string;
}

export type OpenedState = { ok: true; state: CallState } | { ok: false; reason: StateRefusal };

/** Why a state is refused (for the log; the client is told "Invalid or expired requestState" whatever the reason). */
export type StateRefusal = 'malformed' | 'unknown key' | 'signature' | 'expired' | 'another user' | 'another call';

export interface RequestStateSigner {
  sign(state: CallState): string;
  /** The state, when it is well signed, not expired, and issued to this user for this gateway and tool. */
  open(wire: string, expected: { viewerId: string; agentId: string; toolName: string }): OpenedState;
}

const PREFIX = 'tg1';
/** A secret shorter than this many bytes is refused at start: an HMAC key must not be guessable. */
export const MIN_SECRET_BYTES = 32;

/**
 * A signer over `keys` (the first signs; any verifies); without keys, one random key of this process: its states are
 * then refused after a restart and by other instances (the client's idempotency key still finds the call).
 */
export function createRequestStateSigner(options: {
  keys: readonly RequestStateKey[];
  ttlSeconds: number;
  now: () => Date;
}): RequestStateSigner {
  const keys = options.keys.length > 0 ? options.keys : [{ id: 'process', secret: randomBytes(32).toString('hex') }];
  const byId = new Map(keys.map((key) => [key.id, Buffer.from(key.secret, 'utf8')]));
  const signing = keys[0]!;
  const mac = (secret: Buffer, signed: string) => createHmac('sha256', secret).update(signed).digest();
  const nowMs = () => options.now().getTime();

  return {
    sign(state) {
      const body = {
        t: state.turnId,
        e: state.elicitationIds,
        u: state.viewerId,
        a: state.agentId,
        n: state.toolName,
        // Rounded up: a state holds at least ttlSeconds, whatever the second it was issued in.
        x: Math.ceil(nowMs() / 1000) + options.ttlSeconds,
      };
      const signed = `${PREFIX}.${signing.id}.${Buffer.from(JSON.stringify(body)).toString('base64url')}`;
      return `${signed}.${mac(byId.get(signing.id)!, signed).toString('base64url')}`;
    },
    open(wire, expected) {
      const parts = wire.split('.');
      if (parts.length !== 4 || parts[0] !== PREFIX) return { ok: false, reason: 'malformed' };
      const [, keyId, payload, signature] = parts as [string, string, string, string];
      const secret = byId.get(keyId);
      if (!secret) return { ok: false, reason: 'unknown key' };
      const given = Buffer.from(signature, 'base64url');
      const wanted = mac(secret, `${PREFIX}.${keyId}.${payload}`);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return { ok: false, reason: 'signature' };
      const body = parseBody(payload);
      if (!body) return { ok: false, reason: 'malformed' };
      if (body.x * 1000 <= nowMs()) return { ok: false, reason: 'expired' };
      if (body.u !== expected.viewerId) return { ok: false, reason: 'another user' };
      if (body.a !== expected.agentId || body.n !== expected.toolName) return { ok: false, reason: 'another call' };
      return {
        ok: true,
        state: { turnId: body.t, elicitationIds: body.e, viewerId: body.u, agentId: body.a, toolName: body.n },
      };
    },
  };
}

interface Body {
  t: string;
  e: string[];
  u: string;
  a: string;
  n: string;
  x: number;
}

/** A signed body is ours, but read it as strictly as any input: a key shared with an older version may differ. */
function parseBody(payload: string): Body | null {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { t, e, u, a, n, x } = body as Record<string, unknown>;
  const strings = [t, u, a, n].every((value) => typeof value === 'string');
  const ids = Array.isArray(e) && e.every((id) => typeof id === 'string');
  return strings && ids && typeof x === 'number' ? (body as Body) : null;
}
