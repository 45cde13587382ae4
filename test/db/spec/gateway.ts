// A gateway's calls (src/domain/gateway.ts): a turn that starts with its client's call saved as its step, in the
// start's transaction; the result the client gets, kept with the call's journal and read back as written; and the
// idempotency key naming the call by its tool and arguments.
import { describe, expect } from 'vitest';
import { GATEWAY_MODEL_ID } from '../../../src/domain/gateway.js';
import {
  ANN,
  BOB,
  agentConfig,
  answer,
  at,
  lease,
  pausedTurn,
  startInput,
  toolCall,
  type TurnOptions,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

const GATEWAY = 'agent-gateway';

export function registerGatewaySpec(spec: StoreSpec): void {
  const it = spec.it.extend<{ gateway: void }>({
    gateway: [
      async ({ store }, use) => {
        await store.syncAgent(agentConfig(GATEWAY, { modelId: GATEWAY_MODEL_ID }), at(0));
        await use();
      },
      { auto: true },
    ],
  });
  describe("a gateway's calls", () => {
    /** startTurn's input for a call to the gateway. */
    const callInput = (options: TurnOptions = {}) => startInput({ agentId: GATEWAY, ...options });

    it('startTurn refuses a message to a gateway, and a call to an agent with a model; nothing is written', async ({
      store,
    }) => {
      const message = await store.startTurn(callInput());
      expect(message).toEqual({ ok: false, code: 'INVALID_INPUT', reason: 'GATEWAY' });
      const call = await store.startTurn({ ...startInput({}), call: toolCall('wipe') });
      expect(call).toEqual({ ok: false, code: 'NOT_FOUND', of: 'agent' });
      expect((await store.listThreads(ANN, null, 10, null)).items).toEqual([]);
    });

    it('startTurn with a call saves it as the turn’s step after the message, in one transaction', async ({ store }) => {
      const call = toolCall('wipe', { ids: [1, 2], note: 'ünïcode' });
      const result = await store.startTurn({ ...callInput({ lease: lease('host:1:a') }), call });
      if (!result.ok || result.replayed) throw new Error(JSON.stringify(result));
      const messages = await store.listTurnMessages(result.turn.id);
      expect(messages.map((m) => [m.role, m.toolCalls])).toEqual([
        ['USER', []],
        ['ASSISTANT', [call]],
      ]);
    });

    it('finishTool keeps a result as given and getToolResult reads it back; none kept reads null', async ({
      store,
    }) => {
      const call = toolCall('wipe');
      const started = await store.startTurn({ ...callInput({ lease: lease('host:1:a') }), call });
      if (!started.ok || started.replayed) throw new Error(JSON.stringify(started));
      const turnId = started.turn.id;
      const writer = store.turnWriter({ turnId, lease: { owner: 'host:1:a' } });
      expect(await store.getToolResult(turnId, call.id)).toBeNull();
      await writer.markToolStarted({ toolCallId: call.id, now: at(1) });
      const kept = {
        content: [
          { type: 'text', text: 'wiped' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        structuredContent: { wiped: 2, nested: { list: [1, null, 'x'] } },
        isError: false,
      };
      await writer.finishTool({ message: { toolCallId: call.id, text: 'wiped' }, result: kept, now: at(2) });
      expect(await store.getToolResult(turnId, call.id)).toEqual(kept);
      expect(await store.getToolResult(turnId, 'other-call')).toBeNull();
      expect(await store.getToolResult('other-turn', call.id)).toBeNull();
    });

    it('recordCallRan writes a read-only call whole; refused as startTurn refuses, nothing written', async ({
      store,
    }) => {
      const call = toolCall('lookup', { q: 1 });
      const result = { content: [{ type: 'text', text: 'found' }], isError: false };
      const input = {
        ...callInput({ lease: lease('host:1:a') }),
        call,
        running: { toolId: call.toolId, arguments: call.arguments, toolDefinitionDigest: null },
        text: 'found',
        result,
        finishedAt: at(3),
      };
      const refused = await store.recordCallRan({ ...input, agentId: 'nobody' });
      expect(refused).toEqual({ ok: false, code: 'NOT_FOUND', of: 'agent' });
      expect((await store.listThreads(ANN, null, 10, null)).items).toEqual([]);
      const ran = await store.recordCallRan(input);
      if (!ran.ok || ran.replayed) throw new Error(JSON.stringify(ran));
      expect(ran.turn).toMatchObject({ status: 'COMPLETED', text: 'found', updatedAt: at(3) });
      expect(await store.loadTurn(ran.turn.id)).toEqual(ran.turn);
      const messages = await store.listTurnMessages(ran.turn.id);
      expect(messages.map((m) => [m.role, m.text])).toEqual([
        ['USER', input.message],
        ['ASSISTANT', null],
        ['TOOL', 'found'],
      ]);
      expect(await store.getToolResult(ran.turn.id, call.id)).toEqual(result);
      expect(await store.listUnfinishedToolCalls(ran.turn.id)).toEqual([]);
    });

    it('finishTool without a result keeps none', async ({ store }) => {
      const call = toolCall('lookup');
      const started = await store.startTurn({ ...callInput({}), call });
      if (!started.ok || started.replayed) throw new Error(JSON.stringify(started));
      const writer = store.unleasedTurnWriter(started.turn.id);
      await writer.markToolStarted({ toolCallId: call.id, now: at(1) });
      await writer.finishTool({ message: { toolCallId: call.id, text: 'found' }, now: at(2) });
      expect(await store.getToolResult(started.turn.id, call.id)).toBeNull();
    });

    it('a key names the call by its tool and arguments: the same call again replays, another is refused', async ({
      store,
    }) => {
      const call = toolCall('wipe', { ids: [1], flags: { a: 1, b: 2 } });
      const first = await store.startTurn({
        ...callInput({ idempotencyKey: 'k', message: 'client A called wipe.' }),
        call,
      });
      if (!first.ok || first.replayed) throw new Error(JSON.stringify(first));
      // Another message (another client's name), another call id, the arguments' keys in another order: the same call.
      const again = await store.startTurn({
        ...callInput({ idempotencyKey: 'k', message: 'client B called wipe.' }),
        call: { ...call, id: 'call-other', arguments: { flags: { b: 2, a: 1 }, ids: [1] } },
      });
      expect(again).toMatchObject({ ok: true, replayed: true, turn: { id: first.turn.id } });
      const other = await store.startTurn({
        ...callInput({ idempotencyKey: 'k' }),
        call: { ...call, arguments: { ids: [2] } },
      });
      expect(other).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_REUSED' });
      // Keys are per owner: Bob's 'k' is his own.
      const bobs = await store.startTurn({ ...callInput({ idempotencyKey: 'k', ownerId: BOB }), call });
      expect(bobs).toMatchObject({ ok: true });
      expect((bobs as { replayed?: boolean }).replayed).toBeUndefined();
    });

    it('markCallerWaiting marks the owner’s pending requests of the call, and clears them; others are left', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 2 });
      const [first, second] = paused.elicitations.map((e) => e.id);
      await answer(store, first!, { action: 'DECLINE', content: null });
      await store.markCallerWaiting(paused.turn.id, BOB, at(30));
      expect((await store.getElicitation(second!, ANN))?.callerWaitingUntil).toBeNull();
      await store.markCallerWaiting(paused.turn.id, ANN, at(30));
      expect((await store.getElicitation(first!, ANN))?.callerWaitingUntil).toBeNull();
      expect(Date.parse((await store.getElicitation(second!, ANN))!.callerWaitingUntil!)).toBe(Date.parse(at(30)));
      await store.markCallerWaiting(paused.turn.id, ANN, null);
      expect((await store.getElicitation(second!, ANN))?.callerWaitingUntil).toBeNull();
    });

    it('a CANCEL on behalf of a caller that stopped waiting keeps why; any other answer keeps none', async ({
      store,
    }) => {
      const paused = await pausedTurn(store);
      const id = paused.elicitations[0]!.id;
      const result = await store.resolveElicitation({
        elicitationId: id,
        ownerId: ANN,
        answeredBy: ANN,
        answer: { action: 'CANCEL', content: null },
        withdrawn: 'DISCONNECTED',
        now: at(10),
      });
      expect(result).toMatchObject({ ok: true, kind: 'cancelled' });
      expect(await store.getElicitation(id, ANN)).toMatchObject({ status: 'CANCELLED', withdrawn: 'DISCONNECTED' });
      const other = await pausedTurn(store);
      await answer(store, other.elicitations[0]!.id, { action: 'CANCEL', content: null });
      expect((await store.getElicitation(other.elicitations[0]!.id, ANN))?.withdrawn).toBeNull();
    });
  });
}
