// Turns and answers through the use cases, for the test/app files (test/support/app.ts builds the app): a turn
// paused on the calls its message names, an answer that must be refused without a trace, and what a turn told the
// model.
import { expect } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import { startTurn } from '../../src/app/start-turn.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ElicitationRecord } from '../../src/domain/records.js';
import type { AppScenario } from './app.js';
import { AGENT_ID } from './scenario.js';
import { expectValidModelRequests, expectValidTranscript, type TranscriptMessage } from './transcript.js';

/**
 * Starts a new turn of `viewer` whose message names the tools to call (the model is `callsWhatIsNamed`): the
 * confirmation requests it paused with.
 */
export async function pausedOn(
  s: AppScenario,
  viewer: Viewer,
  message: string,
  agentId = AGENT_ID,
): Promise<ElicitationRecord[]> {
  const outcome = await startTurn(s.app, viewer, { agentId, threadId: null, message, background: false });
  if (!outcome.ok || !outcome.pausedWith) throw new Error(`did not pause: ${JSON.stringify(outcome)}`);
  return outcome.pausedWith;
}

/** The answer is refused with `refusal`, and nothing is stored, nothing run. */
export async function expectRefused(
  s: AppScenario,
  viewer: Viewer,
  input: AnswerElicitationInput,
  refusal: object,
): Promise<void> {
  const before = await s.snapshot();
  const runs = JSON.stringify([...s.tools.runs]);
  expect(await answerElicitation(s.app, viewer, input)).toEqual({ ok: false, ...refusal });
  expect(await s.snapshot()).toEqual(before);
  expect(JSON.stringify([...s.tools.runs])).toBe(runs);
}

/** The texts of a turn's TOOL messages, in order: what the model was told of its calls. */
export async function toolTextsOf(s: AppScenario, turnId: string): Promise<(string | null)[]> {
  return (await s.app.store.listTurnMessages(turnId)).filter((m) => m.role === 'TOOL').map((m) => m.text);
}

/** The thread's transcript is valid (its last step may wait while its turn is PAUSED), and so was every model request. */
export async function expectConsistent(s: AppScenario, threadId: string): Promise<void> {
  const paused = (await s.app.store.listTurns(threadId)).at(-1)?.status === 'PAUSED';
  expectValidTranscript(await s.app.store.listThreadMessages(threadId), { openLastStep: paused });
  expectValidModelRequests(s.model.requests as { messages: TranscriptMessage[] }[]);
}
