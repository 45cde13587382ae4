// The requestState signer: a state opens under the key list that signed it, with a rotation's overlap; a changed,
// expired, unknown-key or other user's state does not.
import { describe, expect, it } from 'vitest';
import { createRequestStateSigner, type CallState } from '../../src/mcp/request-state.js';

const OLD = { id: 'old', secret: 'the-old-key-of-at-least-32-characters-01' };
const NEW = { id: 'new', secret: 'the-new-key-of-at-least-32-characters-02' };
const STATE: CallState = {
  turnId: 'trn_1',
  elicitationIds: ['eli_1'],
  viewerId: 'alice',
  agentId: 'gw',
  toolName: 'drop',
};
const FOR_ALICE = { viewerId: 'alice', agentId: 'gw', toolName: 'drop' };

function signer(keys: (typeof OLD)[], at = { now: 1_000_000_000_000 }) {
  return createRequestStateSigner({ keys, ttlSeconds: 60, now: () => new Date(at.now) });
}

describe('the requestState signer', () => {
  it('opens what it signed, for the user, gateway and tool it was signed for', () => {
    const s = signer([OLD]);
    expect(s.open(s.sign(STATE), FOR_ALICE)).toEqual({ ok: true, state: STATE });
    expect(s.open(s.sign(STATE), { ...FOR_ALICE, viewerId: 'bob' })).toEqual({ ok: false, reason: 'another user' });
    expect(s.open(s.sign(STATE), { ...FOR_ALICE, toolName: 'look' })).toEqual({ ok: false, reason: 'another call' });
    expect(s.open(s.sign(STATE), { ...FOR_ALICE, agentId: 'other' })).toEqual({ ok: false, reason: 'another call' });
  });

  it('rotation: new states are signed with the first key; states of the old one open while it is listed', () => {
    const before = signer([OLD]);
    const during = signer([NEW, OLD]);
    const after = signer([NEW]);
    const old = before.sign(STATE);
    expect(during.open(old, FOR_ALICE).ok).toBe(true);
    expect(during.sign(STATE).split('.')[1]).toBe('new');
    expect(after.open(during.sign(STATE), FOR_ALICE).ok).toBe(true);
    expect(after.open(old, FOR_ALICE)).toEqual({ ok: false, reason: 'unknown key' });
  });

  it('a state past its time is refused', () => {
    const clock = { now: 1_000_000_000_000 };
    const s = signer([OLD], clock);
    const wire = s.sign(STATE);
    clock.now += 59_000;
    expect(s.open(wire, FOR_ALICE).ok).toBe(true);
    clock.now += 1_000;
    expect(s.open(wire, FOR_ALICE)).toEqual({ ok: false, reason: 'expired' });
  });

  it('a changed state is refused: its body, its signature, a key id swapped, or not a state at all', () => {
    const s = signer([NEW, OLD]);
    const wire = s.sign(STATE);
    const [prefix, keyId, body, mac] = wire.split('.') as [string, string, string, string];
    const other = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), u: 'bob' }));
    expect(s.open([prefix, keyId, other.toString('base64url'), mac].join('.'), FOR_ALICE)).toEqual({
      ok: false,
      reason: 'signature',
    });
    expect(s.open([prefix, keyId, body, `${mac.slice(0, -2)}AA`].join('.'), FOR_ALICE).ok).toBe(false);
    expect(s.open([prefix, 'old', body, mac].join('.'), FOR_ALICE)).toEqual({ ok: false, reason: 'signature' });
    for (const junk of ['', 'x', 'tg1.new.e30', `${wire}.x`, 'tg2.new.e30.AA']) {
      expect(s.open(junk, FOR_ALICE)).toMatchObject({ ok: false });
    }
  });

  it('without keys, a random key of the process: another signer (a restart, another instance) refuses its states', () => {
    const first = signer([]);
    const second = signer([]);
    expect(first.open(first.sign(STATE), FOR_ALICE).ok).toBe(true);
    expect(second.open(first.sign(STATE), FOR_ALICE)).toEqual({ ok: false, reason: 'signature' });
  });
});

describe('the requestState signer, between seconds', () => {
  it('a state holds at least ttlSeconds, whatever the millisecond it was issued at', () => {
    const clock = { now: 1_000_000_000_999 };
    const s = createRequestStateSigner({ keys: [OLD], ttlSeconds: 1, now: () => new Date(clock.now) });
    const wire = s.sign(STATE);
    clock.now += 999;
    expect(s.open(wire, FOR_ALICE).ok).toBe(true);
  });
});
