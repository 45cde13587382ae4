// The turn log: startTurn (a new or an existing thread, its refusals, superseding a PAUSED turn) and the loop's writes
// through a TurnWriter (messages, the tool-call journal, pause, finish), leased or not. A pause stores its PendingStep
// and a resume reads it back: it must come back exactly as given, or a resumed step would run other calls.
import { describe, expect } from 'vitest';
import { toolText } from '../../../src/domain/gate/messages.js';
import type { ElicitationAnswer, PendingStep } from '../../../src/domain/records.js';
import { LeaseLostError, type Store } from '../../../src/domain/store.js';
import {
  at,
  ANN,
  BOB,
  AGENT,
  outcome,
  SIDE_AGENT,
  ACCEPT,
  lease,
  agentConfig,
  toolCall,
  assistantMessage,
  askingStep,
  draftFor,
  startInput,
  runningTurn,
  pausedTurn,
  answer,
  toolAnswers,
  closing,
  callNamed,
  stateOf,
  ids,
  sorted,
  statusesOf,
  rejection,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerTurnLogSpec({ it }: StoreSpec): void {
  describe('starting turns', () => {
    it('without a thread: a new thread of the owner and agent, a RUNNING turn with its lease, the USER message', async ({
      store,
    }) => {
      const result = await store.startTurn({
        turnId: 'turn-a',
        newThreadId: 'thread-a',
        threadId: null,
        agentId: AGENT,
        ownerId: ANN,
        message: 'Hello there',
        now: at(5),
        lease: lease('host:1:a'),
      });
      expect(result).toEqual({
        ok: true,
        thread: { id: 'thread-a', agentId: AGENT, ownerId: ANN, createdAt: at(5) },
        turn: {
          id: 'turn-a',
          threadId: 'thread-a',
          agentId: AGENT,
          ownerId: ANN,
          status: 'RUNNING',
          text: null,
          error: null,
          iterations: 0,
          step: null,
          createdAt: at(5),
          updatedAt: at(5),
          expiresAt: null,
        },
        superseded: null,
        agent: agentConfig(AGENT),
        message: {
          id: expect.any(String),
          threadId: 'thread-a',
          turnId: 'turn-a',
          role: 'USER',
          text: 'Hello there',
          toolCalls: [],
          toolCallId: null,
          createdAt: at(5),
        },
      });
      expect(await store.listThreadMessages('thread-a')).toEqual([result.ok && result.message]);
      expect(await store.getThread('thread-a', ANN)).toEqual(result.ok && result.thread);
      expect(await store.loadTurn('turn-a')).toEqual(result.ok && result.turn);
      expect(await store.holdsLease('turn-a', 'host:1:a')).toBe(true);
    });

    it('on an existing thread of the owner, once its last turn ended: the same thread, a new RUNNING turn', async ({
      store,
    }) => {
      const first = await runningTurn(store, { now: at(0) });
      await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(1) });
      const next = await runningTurn(store, { threadId: first.thread.id, now: at(2), message: 'And now?' });
      expect(next.thread).toEqual(first.thread);
      expect(next.turn).toMatchObject({ threadId: first.thread.id, status: 'RUNNING', createdAt: at(2) });
      expect(next.superseded).toBeNull();
      expect(ids(await store.listTurns(first.thread.id))).toEqual([first.turn.id, next.turn.id]);
      const users = (await store.listThreadMessages(first.thread.id)).filter((m) => m.role === 'USER');
      expect(users.map((m) => [m.turnId, m.text])).toEqual([
        [first.turn.id, 'Tidy my notes.'],
        [next.turn.id, 'And now?'],
      ]);
    });

    it("refuses another owner's thread and an unknown one as NOT_FOUND, another agent's as OTHER_AGENT, writing nothing", async ({
      store,
    }) => {
      const { thread, turn } = await runningTurn(store);
      await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
      const refused = [
        await store.startTurn(startInput({ threadId: thread.id, ownerId: BOB, turnId: 'turn-bob' })),
        await store.startTurn(startInput({ threadId: 'thread-nowhere', turnId: 'turn-lost' })),
        await store.startTurn(startInput({ threadId: thread.id, agentId: SIDE_AGENT, turnId: 'turn-side' })),
      ];
      expect(refused).toEqual([
        { ok: false, code: 'NOT_FOUND', of: 'thread', reason: 'NO_SUCH_THREAD' },
        { ok: false, code: 'NOT_FOUND', of: 'thread', reason: 'NO_SUCH_THREAD' },
        { ok: false, code: 'NOT_FOUND', of: 'thread', reason: 'OTHER_AGENT' },
      ]);
      for (const id of ['turn-bob', 'turn-lost', 'turn-side']) expect(await store.loadTurn(id)).toBeNull();
      expect(ids(await store.listTurns(thread.id))).toEqual([turn.id]);
      expect(await store.listThreadMessages(thread.id)).toHaveLength(1);
      expect((await store.listThreads(BOB, null, 10, null)).items).toEqual([]);
    });

    it('refuses an unknown agent as NOT_FOUND, writing nothing, even on an existing thread', async ({ store }) => {
      const { thread } = await runningTurn(store);
      expect(await store.startTurn(startInput({ agentId: 'agent-none', turnId: 'turn-none' }))).toEqual({
        ok: false,
        code: 'NOT_FOUND',
        of: 'agent',
      });
      expect(
        await store.startTurn(startInput({ agentId: 'agent-none', threadId: thread.id, turnId: 'turn-none-2' })),
      ).toEqual({ ok: false, code: 'NOT_FOUND', of: 'agent' });
      expect(await store.loadTurn('turn-none')).toBeNull();
      expect(await store.loadTurn('turn-none-2')).toBeNull();
      expect((await store.listThreads(ANN, null, 10, null)).items).toHaveLength(1);
    });

    it('returns the agent as committed when the turn starts: a gating change before it applies', async ({ store }) => {
      await store.updateAgentGating(
        AGENT,
        { requireToolConfirmation: false, toolConfirmation: { 'demo:x': 'NEVER' } },
        at(1),
      );
      const started = await runningTurn(store, { now: at(2) });
      expect(started.agent).toMatchObject({
        requireToolConfirmation: false,
        toolConfirmation: { 'demo:x': 'NEVER' },
      });
    });

    it('refuses a thread whose turn is RUNNING with THREAD_BUSY, writing nothing', async ({ store }) => {
      const { thread, turn } = await runningTurn(store, { lease: lease('host:1:a') });
      const before = await stateOf(store, turn.id);
      const result = await store.startTurn(startInput({ threadId: thread.id, turnId: 'turn-late' }));
      expect(result).toEqual({ ok: false, code: 'THREAD_BUSY' });
      expect(await store.loadTurn('turn-late')).toBeNull();
      expect(await stateOf(store, turn.id)).toEqual(before);
      expect(await store.listThreadMessages(thread.id)).toHaveLength(1);
    });

    it('supersedes a PAUSED turn: CANCELLED, its elicitations closed, one synthetic TOOL message per call, before the new USER message', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 2, mixed: true, now: at(0) });
      const result = await store.startTurn(
        startInput({ threadId: paused.thread.id, now: at(20), message: 'Never mind.', turnId: 'turn-new' }),
      );
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.superseded).toMatchObject({
        id: paused.turn.id,
        status: 'CANCELLED',
        step: null,
        updatedAt: at(20),
      });
      expect(await store.loadTurn(paused.turn.id)).toEqual(result.superseded);
      expect(result.turn).toMatchObject({ id: 'turn-new', status: 'RUNNING', threadId: paused.thread.id });
      expect(await statusesOf(store, paused.turn.id)).toEqual(paused.elicitations.map((e) => [e.id, 'CANCELLED']));

      const expected = closing(paused.step, 'superseded');
      expect(await toolAnswers(store, paused.turn.id)).toEqual(expected);
      expect(expected).toEqual([
        [callNamed(paused, 'lookup').id, toolText.superseded('lookup')],
        [callNamed(paused, 'wipe').id, toolText.denied('wipe', 'policy says no')],
        [callNamed(paused, 'edit_1').id, toolText.superseded('edit_1')],
        [callNamed(paused, 'edit_2').id, toolText.superseded('edit_2')],
      ]);
      const transcript = await store.listThreadMessages(paused.thread.id);
      expect(transcript.map((m) => [m.role, m.turnId])).toEqual([
        ['USER', paused.turn.id],
        ['ASSISTANT', paused.turn.id],
        ['TOOL', paused.turn.id],
        ['TOOL', paused.turn.id],
        ['TOOL', paused.turn.id],
        ['TOOL', paused.turn.id],
        ['USER', 'turn-new'],
      ]);
    });

    it('supersedes a PAUSED turn past its expiry as EXPIRED, with the expired texts, keeping answers given', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
      const [first, second] = paused.elicitations;
      const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'use a copy' } };
      expect(outcome(await answer(store, first!.id, declined, { now: at(30) }))).toBe('recorded');
      const result = await store.startTurn(startInput({ threadId: paused.thread.id, now: at(60) }));
      expect(result.ok && result.superseded).toMatchObject({ id: paused.turn.id, status: 'EXPIRED' });
      expect(await statusesOf(store, paused.turn.id)).toEqual([
        [first!.id, 'DECLINED'],
        [second!.id, 'EXPIRED'],
      ]);
      expect(await toolAnswers(store, paused.turn.id)).toEqual([
        [callNamed(paused, 'edit_1').id, toolText.declined('edit_1', 'use a copy')],
        [callNamed(paused, 'edit_2').id, toolText.expired('edit_2')],
      ]);
    });
  });

  describe("the loop's writes", () => {
    it('appendAssistantMessage sets the iteration count with the message, or leaves it when not given', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store);
      await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage('one'), iterations: 1, now: at(1) });
      expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 1 });
      await store.unleasedTurnWriter(turn.id).appendAssistantMessage({ message: assistantMessage('two'), now: at(2) });
      expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 1 });
      await store.unleasedTurnWriter(turn.id).setIterations({ iterations: 4, now: at(3) });
      expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 4, updatedAt: at(3) });
    });

    it('markToolStarted is true once per call, then false; finishTool appends its TOOL message and journals it finished', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store);
      const [a, b] = [toolCall('edit_note'), toolCall('read_graph')];
      await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(1) });
      expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(1) })).toBe(true);
      expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(2) })).toBe(false);
      expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: b.id, now: at(2) })).toBe(true);
      expect(sorted(await store.listUnfinishedToolCalls(turn.id))).toEqual(sorted([a.id, b.id]));

      await store.unleasedTurnWriter(turn.id).finishTool({ message: { toolCallId: a.id, text: 'edited' }, now: at(3) });
      expect(await store.loadTurn(turn.id)).toMatchObject({ id: turn.id, status: 'RUNNING', iterations: 1 });
      expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([b.id]);
      expect(await toolAnswers(store, turn.id)).toEqual([[a.id, 'edited']]);
      expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(4) })).toBe(false); // finished is still started
      expect(await store.listUnfinishedToolCalls('turn-none')).toEqual([]);
    });

    it('a call gets one TOOL message: a second one for the same call is dropped, whichever write brings it', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store);
      const [a, b] = [toolCall('edit_note'), toolCall('read_graph')];
      await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(1) });
      await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(1) });
      await store.unleasedTurnWriter(turn.id).finishTool({ message: { toolCallId: a.id, text: 'first' }, now: at(2) });
      await store
        .unleasedTurnWriter(turn.id)
        .finishTool({ message: { toolCallId: a.id, text: 'late result' }, now: at(3) });
      await store.unleasedTurnWriter(turn.id).appendToolMessages({
        messages: [
          { toolCallId: a.id, text: 'synthetic' },
          { toolCallId: b.id, text: 'b once' },
          { toolCallId: b.id, text: 'b twice' },
        ],
        now: at(4),
      });
      expect(await toolAnswers(store, turn.id)).toEqual([
        [a.id, 'first'],
        [b.id, 'b once'],
      ]);
      expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([]);
    });

    it('the same tool call id in two turns is two calls: each gets its TOOL message', async ({ store }) => {
      const first = await runningTurn(store, { now: at(0) });
      const second = await runningTurn(store, { now: at(0) });
      for (const { turn } of [first, second]) {
        await store
          .unleasedTurnWriter(turn.id)
          .appendToolMessages({ messages: [{ toolCallId: 'call_0', text: `for ${turn.id}` }], now: at(1) });
        expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: 'call_0', now: at(1) })).toBe(
          true,
        );
      }
      expect(await toolAnswers(store, first.turn.id)).toEqual([['call_0', `for ${first.turn.id}`]]);
      expect(await toolAnswers(store, second.turn.id)).toEqual([['call_0', `for ${second.turn.id}`]]);
    });

    it("pauseTurn with the step's answer appends it and sets the iteration count in the same commit", async ({
      store,
    }) => {
      const { turn, thread } = await runningTurn(store, { now: at(0) });
      const call = toolCall('edit_note', { id: 'n1' });
      const step = askingStep(call, 'elc-1');
      const answer = { message: assistantMessage('Let me edit it.', [call]), iterations: 1 };
      const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
        step,
        elicitations: [draftFor(call, 'elc-1')],
        text: 'May I edit n1?',
        expiresAt: at(61),
        answer,
        now: at(1),
      });
      expect(paused.turn).toMatchObject({ status: 'PAUSED', iterations: 1, step });
      expect(await store.loadTurn(turn.id)).toEqual(paused.turn);
      const messages = await store.listThreadMessages(thread.id);
      expect(messages.map((m) => [m.role, m.text, m.toolCalls])).toEqual([
        ['USER', 'Tidy my notes.', []],
        ['ASSISTANT', 'Let me edit it.', [call]],
      ]);
      expect(messages[1]).toMatchObject({ turnId: turn.id, threadId: thread.id, createdAt: at(1), toolCallId: null });
      expect(await store.listTurnMessages(turn.id)).toEqual(messages);
    });

    it('pauseTurn stores the step, text and expiry with PENDING elicitations, and returns both as stored', async ({
      store,
    }) => {
      const { turn, thread } = await runningTurn(store, { now: at(0) });
      const call = toolCall('edit_note', { id: 'n1' });
      const step = askingStep(call, 'elc-1');
      await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: at(1) });
      const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
        step,
        elicitations: [draftFor(call, 'elc-1')],
        text: 'May I edit n1?',
        expiresAt: at(61),
        now: at(1),
      });
      expect(paused.turn).toEqual({
        ...turn,
        status: 'PAUSED',
        text: 'May I edit n1?',
        iterations: 1,
        step,
        updatedAt: at(1),
        expiresAt: at(61),
      });
      expect(paused.elicitations).toEqual([
        {
          ...draftFor(call, 'elc-1'),
          turnId: turn.id,
          threadId: thread.id,
          agentId: AGENT,
          ownerId: ANN,
          status: 'PENDING',
          response: null,
          grantId: null,
          resolvedBy: null,
          resolvedByIdentity: null,
          resolvedAt: null,
          withdrawn: null,
          createdAt: at(1),
          expiresAt: at(61),
          approval: null,
          escalatedAt: null,
          callerWaitingUntil: null,
        },
      ]);
      expect(await store.loadTurn(turn.id)).toEqual(paused.turn);
      expect(await store.listTurnElicitations(turn.id)).toEqual(paused.elicitations);
      expect(await store.getElicitation('elc-1', ANN)).toEqual(paused.elicitations[0]);
      expect(await store.listRunningTurns()).toEqual([]);
    });

    it('listTurnElicitations lists a turn’s elicitations in the order created, and only its own', async ({ store }) => {
      const paused = await pausedTurn(store, { elicitations: 3 });
      await pausedTurn(store, { elicitations: 1 });
      expect(ids(await store.listTurnElicitations(paused.turn.id))).toEqual(ids(paused.elicitations));
      expect(await store.listTurnElicitations('turn-none')).toEqual([]);
    });

    it.for([
      ['COMPLETED', { text: 'All done.' }, { text: 'All done.', error: null }],
      ['FAILED', { error: 'The model failed.' }, { text: null, error: 'The model failed.' }],
      ['CANCELLED', {}, { text: null, error: null }],
    ] as const)('finishTurn ends a RUNNING turn %s with its fields', async ([status, fields, expected], { store }) => {
      const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
      const finished = await store.unleasedTurnWriter(turn.id).finishTurn({ status, ...fields, now: at(7) });
      expect(finished).toEqual({ ...turn, status, ...expected, step: null, expiresAt: null, updatedAt: at(7) });
      expect(await store.loadTurn(turn.id)).toEqual(finished);
      expect(await store.listRunningTurns()).toEqual([]);
      expect(await store.holdsLease(turn.id, 'host:1:a')).toBe(false);
    });

    it('finishTurn with the final answer: the ASSISTANT message and the iteration count commit with the end', async ({
      store,
    }) => {
      const { turn, thread } = await runningTurn(store, { lease: lease('host:1:a') });
      const finished = await store.turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } }).finishTurn({
        status: 'COMPLETED',
        text: 'All done.',
        answer: { message: assistantMessage('All done.'), iterations: 3 },
        now: at(7),
      });
      expect(finished).toMatchObject({ status: 'COMPLETED', text: 'All done.', iterations: 3, updatedAt: at(7) });
      expect((await store.listThreadMessages(thread.id)).map((m) => [m.role, m.text, m.turnId, m.createdAt])).toEqual([
        ['USER', 'Tidy my notes.', turn.id, at(0)],
        ['ASSISTANT', 'All done.', turn.id, at(7)],
      ]);
      // Held by another process: neither the end nor the answer is written.
      const other = await runningTurn(store, { lease: lease('host:1:a') });
      const lost = await rejection(
        store.turnWriter({ turnId: other.turn.id, lease: { owner: 'host:2:b' } }).finishTurn({
          status: 'COMPLETED',
          text: 'x',
          answer: { message: assistantMessage('x'), iterations: 1 },
          now: at(8),
        }),
      );
      expect(lost).toBeInstanceOf(LeaseLostError);
      expect(await store.loadTurn(other.turn.id)).toMatchObject({ status: 'RUNNING', iterations: 0 });
      expect(await store.listThreadMessages(other.thread.id)).toHaveLength(1);
    });

    describe('with leaseOwner: only while that process holds the lease, else LeaseLostError and nothing written', () => {
      type Write = (s: Store, turnId: string, owner: string) => Promise<unknown>;
      const CALL = 'call-journal';
      const writes: [string, Write][] = [
        [
          'appendAssistantMessage',
          (s, t, o) =>
            s
              .turnWriter({ turnId: t, lease: { owner: o } })
              .appendAssistantMessage({ message: assistantMessage('late'), iterations: 5, now: at(9) }),
        ],
        [
          'appendToolMessages',
          (s, t, o) =>
            s
              .turnWriter({ turnId: t, lease: { owner: o } })
              .appendToolMessages({ messages: [{ toolCallId: 'call-x', text: 'x' }], now: at(9) }),
        ],
        [
          'markToolStarted',
          (s, t, o) =>
            s.turnWriter({ turnId: t, lease: { owner: o } }).markToolStarted({ toolCallId: 'call-y', now: at(9) }),
        ],
        [
          'finishTool',
          (s, t, o) =>
            s
              .turnWriter({ turnId: t, lease: { owner: o } })
              .finishTool({ message: { toolCallId: CALL, text: 'result' }, now: at(9) }),
        ],
        [
          'pauseTurn',
          (s, t, o) => {
            const call = { ...toolCall('edit_note'), id: 'call-z' };
            const step = askingStep(call, 'elc-z');
            return s.turnWriter({ turnId: t, lease: { owner: o } }).pauseTurn({
              step,
              elicitations: [draftFor(call, 'elc-z')],
              text: 'May I?',
              expiresAt: at(99),
              now: at(9),
            });
          },
        ],
        [
          "pauseTurn with the step's answer",
          (s, t, o) => {
            const call = { ...toolCall('edit_note'), id: 'call-w' };
            const step = askingStep(call, 'elc-w');
            const answer = { message: assistantMessage(null, [call]), iterations: 4 };
            return s.turnWriter({ turnId: t, lease: { owner: o } }).pauseTurn({
              step,
              elicitations: [draftFor(call, 'elc-w')],
              text: 'May I?',
              expiresAt: at(99),
              answer,
              now: at(9),
            });
          },
        ],
        [
          'finishTurn',
          (s, t, o) =>
            s
              .turnWriter({ turnId: t, lease: { owner: o } })
              .finishTurn({ status: 'COMPLETED', text: 'late', now: at(9) }),
        ],
        [
          'setIterations',
          (s, t, o) => s.turnWriter({ turnId: t, lease: { owner: o } }).setIterations({ iterations: 7, now: at(9) }),
        ],
      ];

      /** A RUNNING turn held by host:1:a, with one call journaled as started (for finishTool). */
      async function heldTurn(store: Store): Promise<string> {
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .markToolStarted({ toolCallId: CALL, now: at(1) });
        return turn.id;
      }

      it.for(writes)('%s by the holder is written', async ([, write], { store }) => {
        const turnId = await heldTurn(store);
        const before = await stateOf(store, turnId);
        await write(store, turnId, 'host:1:a');
        expect(await stateOf(store, turnId)).not.toEqual(before);
      });

      it.for(writes)('%s by a process whose lease was taken over', async ([, write], { store }) => {
        const turnId = await heldTurn(store);
        expect(await store.claimTurn(turnId, 'host:1:a', lease('host:2:b'), at(5))).not.toBeNull();
        const before = await stateOf(store, turnId);
        const error = await rejection(write(store, turnId, 'host:1:a'));
        expect(error).toBeInstanceOf(LeaseLostError);
        expect((error as LeaseLostError).turnId).toBe(turnId);
        expect(await stateOf(store, turnId)).toEqual(before);
      });

      it.for(writes)('%s to a turn that has no lease', async ([, write], { store }) => {
        const { turn } = await runningTurn(store);
        const before = await stateOf(store, turn.id);
        expect(await rejection(write(store, turn.id, 'host:1:a'))).toBeInstanceOf(LeaseLostError);
        expect(await stateOf(store, turn.id)).toEqual(before);
      });

      it.for(writes)('%s to a turn that is no longer RUNNING (paused)', async ([, write], { store }) => {
        const paused = await pausedTurn(store, { lease: lease('host:1:a') });
        const before = await stateOf(store, paused.turn.id);
        expect(await rejection(write(store, paused.turn.id, 'host:1:a'))).toBeInstanceOf(LeaseLostError);
        expect(await stateOf(store, paused.turn.id)).toEqual(before);
      });
    });
  });

  describe('the PendingStep', () => {
    it('reads back equal to the step given to pauseTurn, every outcome and argument intact', async ({ store }) => {
      const { turn } = await runningTurn(store);
      const calls = {
        run: toolCall('read_graph', { depth: 2, filter: null, names: ['a', 'b'], nested: { deep: { ok: true } } }),
        vetoed: toolCall('wipe', { all: true }),
        rejected: toolCall('nope', { 'key.with.dots': 'v', unicode: 'naïve ✓ 日本', empty: {}, list: [] }),
        confirm: toolCall('delete_entities', { names: ['x'], count: 12345678, ratio: 0.25, negative: -3 }),
      };
      const step: PendingStep = {
        version: 1,
        calls: [
          { toolCall: calls.run, outcome: { kind: 'run' } },
          { toolCall: calls.vetoed, outcome: { kind: 'vetoed', reason: 'destructive tools are off "today"' } },
          { toolCall: calls.rejected, outcome: { kind: 'rejected', text: toolText.unknownTool('nope') } },
          { toolCall: calls.confirm, outcome: { kind: 'confirm', elicitationId: 'elc-step' } },
        ],
      };
      const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
        step: structuredClone(step),
        elicitations: [draftFor(calls.confirm, 'elc-step')],
        text: 'Allow delete_entities?',
        expiresAt: at(60),
        now: at(1),
      });
      expect(paused.turn.step).toEqual(step);
      expect((await store.loadTurn(turn.id))!.step).toEqual(step);
      expect((await store.getTurn(turn.id, ANN))!.step).toEqual(step);
      const resumed = await answer(store, 'elc-step', ACCEPT, { now: at(2) });
      expect(outcome(resumed)).toBe('resume');
      expect(resumed.ok && resumed.kind === 'resume' && resumed.turn.step).toEqual(step);
    });
  });
}
