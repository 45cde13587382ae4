// Edit, then accept (docs/approvals.md) over the real HTTP API, the API's side of it: the payload of an edited ACCEPT
// (the user's arguments as its response, the model's as its toolCall), the refusals as userErrors on
// input.arguments and the path of the argument at fault, canEdit and canRemember, and an "edit" that changes nothing
// reported to webhooks and logged as a plain ACCEPT. What an edit may be, what it runs and tells the model, and its
// idempotency are the use case's, asserted in test/app/edit-accept.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model.js';
import { callsWhatIsNamed, otherAgent } from '../support/app.js';
import { dataOf, START_TURN } from '../support/harness.js';
import { memoryLog } from '../support/log.js';
import {
  AGENT_ID,
  call,
  callStep,
  startScenario,
  testConfig,
  textStep,
  toolTexts,
  type Scenario,
} from '../support/scenario.js';
import { NOTE_SCHEMA } from '../support/notes.js';
import type { CountingTool } from '../support/tools.js';
import { toolMessageFor } from '../support/transcript.js';
import { WebhookReceiver } from '../webhooks/receiver.js';

const EDIT_NOTE: CountingTool = { name: 'edit_note', inputSchema: NOTE_SCHEMA };
const MODEL_ARGUMENTS = { id: 'n1', text: 'model text' };

const ANSWER = `mutation Answer($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status toolCall { arguments } response { action content arguments remember { scope ttlSeconds } } }
    turn { id status text messages { role text toolCallId toolCalls { id arguments } } pendingElicitations { id } elicitations { id } }
    userErrors { code message field }
  }
}`;

const ELICITATION = `query Elicitation($id: ID!) {
  elicitation(id: $id) { id status toolCall { arguments } response { action content arguments } canEdit canRemember }
}`;

describe('one server: edit_note, locked_note (ALWAYS, editing off), and an agent with editing off but for edit_note', () => {
  let s: Scenario;
  beforeAll(async () => {
    const config = testConfig({ toolConfirmation: { 't:locked_note': { mode: 'ALWAYS', allowEdit: false } } });
    config.agents.push(otherAgent({ allowEdit: false, toolConfirmation: { 't:edit_note': { allowEdit: true } } }));
    s = await startScenario({
      tools: [EDIT_NOTE, { ...EDIT_NOTE, name: 'locked_note' }],
      script: [callsWhatIsNamed({ edit_note: MODEL_ARGUMENTS, locked_note: MODEL_ARGUMENTS })],
      config,
    });
  });
  afterAll(() => s?.close());

  const answer = async (input: Record<string, unknown>) => dataOf(await s.h.gql(ANSWER, { input })).resolveElicitation;
  const elicitation = async (id: string) => dataOf(await s.h.gql(ELICITATION, { id })).elicitation;
  /** Alice's new turn calling `tool`: its one request's id. */
  async function requestOf(tool: string, agentId = AGENT_ID): Promise<string> {
    const { startTurn } = dataOf(await s.h.gql(START_TURN, { input: { agentId, message: `t_${tool}` } }));
    expect(startTurn.turn.status).toBe('PAUSED');
    return startTurn.turn.pendingElicitations[0].id;
  }

  it("an edited ACCEPT: the user's arguments are the response, the model's stay the toolCall's, read back alike", async () => {
    const elicitationId = await requestOf('edit_note');
    const edited = { id: 'n1', text: 'user text', priority: 2 };
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: edited });
    expect(result.userErrors).toEqual([]);
    expect(result.turn.status).toBe('COMPLETED');
    const audit = { status: 'ACCEPTED', toolCall: { arguments: MODEL_ARGUMENTS } };
    expect(result.elicitation).toMatchObject({
      ...audit,
      response: { action: 'ACCEPT', content: null, arguments: edited, remember: null },
    });
    expect(await elicitation(elicitationId)).toMatchObject({ ...audit, response: { arguments: edited } });
    const assistant = result.turn.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length);
    expect(assistant.toolCalls[0].arguments).toEqual(MODEL_ARGUMENTS);

    // A plain ACCEPT reads back without arguments of its own.
    const plainId = await requestOf('edit_note');
    const plain = await answer({ elicitationId: plainId, action: 'ACCEPT' });
    expect(plain.elicitation.response).toEqual({ action: 'ACCEPT', content: null, arguments: null, remember: null });
  });

  it('a refused edit is a userError on input.arguments (and the path of the argument at fault); nothing changes', async () => {
    const elicitationId = await requestOf('edit_note');
    const lockedId = await requestOf('locked_note');
    const ran = s.tools.count('edit_note') + s.tools.count('locked_note');
    const refusals: [string, Record<string, unknown>, { code: string; message: unknown; field: string[] }][] = [
      [
        elicitationId,
        { action: 'ACCEPT', arguments: { id: 'n1', priority: 'high' } },
        {
          code: 'INVALID_CONTENT',
          message: expect.stringMatching(/^arguments/),
          field: ['input', 'arguments', 'priority'],
        },
      ],
      [
        elicitationId,
        { action: 'ACCEPT', arguments: ['n1'] },
        { code: 'INVALID_CONTENT', message: expect.stringMatching(/^arguments/), field: ['input', 'arguments'] },
      ],
      [
        elicitationId,
        { action: 'ACCEPT', arguments: { id: 'n1', tag: `${'a'.repeat(30)}!` } },
        {
          code: 'INVALID_CONTENT',
          message: 'arguments.tag must match pattern "^(a+)+$".',
          field: ['input', 'arguments', 'tag'],
        },
      ],
      [
        elicitationId,
        { action: 'DECLINE', arguments: { id: 'n2' } },
        { code: 'INVALID_INPUT', message: 'arguments can only be given with ACCEPT.', field: ['input', 'arguments'] },
      ],
      [
        lockedId,
        { action: 'ACCEPT', arguments: { id: 'n2' } },
        {
          code: 'FORBIDDEN',
          message: 'Editing the arguments of locked_note is turned off for this agent (allowEdit).',
          field: ['input', 'arguments'],
        },
      ],
    ];
    for (const [id, input, userError] of refusals) {
      expect(await answer({ elicitationId: id, ...input })).toEqual({
        elicitation: null,
        turn: null,
        userErrors: [userError],
      });
    }
    for (const id of [elicitationId, lockedId]) expect((await elicitation(id)).status).toBe('PENDING');
    expect(s.tools.count('edit_note') + s.tools.count('locked_note')).toBe(ran);
  });

  it('canEdit and canRemember say before an answer whether an edit and a remember would be taken', async () => {
    const can = async (id: string) => {
      const { canEdit, canRemember } = await elicitation(id);
      return { canEdit, canRemember };
    };
    expect(await can(await requestOf('edit_note'))).toEqual({ canEdit: true, canRemember: true });
    // ALWAYS: asks every time, nothing to remember.
    expect(await can(await requestOf('locked_note'))).toEqual({ canEdit: false, canRemember: false });
    expect(await can(await requestOf('edit_note', 'other'))).toEqual({ canEdit: true, canRemember: true });
  });
});

describe("an ACCEPT whose arguments are the model's own (key order aside)", () => {
  const PLAIN_TOOL_MESSAGE = 'edit_note ran with {"id":"n1","text":"model text"}';

  it('is reported to webhooks and logged as a plain ACCEPT', async () => {
    const hooks = await WebhookReceiver.start();
    const log = memoryLog('info');
    let s: Scenario | undefined;
    try {
      s = await startScenario({
        tools: [EDIT_NOTE],
        script: [callStep(call('edit_note', MODEL_ARGUMENTS)), textStep('Done.')],
        config: {
          ...testConfig(),
          webhooks: [{ url: hooks.url, secret: hooks.secret, events: ['elicitation.resolved'] }],
        },
        webhookDelivery: { pollIntervalMs: 50 },
        logger: log.logger,
      });
      const { turn, thread } = await s.start('edit n1');
      const result = dataOf(
        await s.h.gql(ANSWER, {
          input: {
            elicitationId: turn.pendingElicitations[0].id,
            action: 'ACCEPT',
            arguments: { text: 'model text', id: 'n1' },
          },
        }),
      ).resolveElicitation;
      expect(result.userErrors).toEqual([]);
      expect(result.elicitation.response).toEqual({ action: 'ACCEPT', content: null, arguments: null, remember: null });
      expect(toolTexts(result.turn.messages)).toEqual([PLAIN_TOOL_MESSAGE]);
      expect(toolMessageFor((s.model.requests[1] as ModelRequest).messages, 'call_edit_note')?.text).toBe(
        PLAIN_TOOL_MESSAGE,
      );
      const resolved = await hooks.waitFor('elicitation.resolved', () => hooks.delivered()[0]);
      expect(resolved.payload.data.answer).toMatchObject({ action: 'ACCEPT', arguments: null });
      expect(log.find('tool started')).toHaveLength(1);
      expect(log.find('tool started')[0]).not.toHaveProperty('edited');
      await s.expectConsistent(thread.id);
    } finally {
      await s?.close();
      await hooks.close();
    }
  });
});
