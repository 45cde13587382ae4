// The display forms of untrusted text over the real HTTP API: tool arguments, model text and a tool's name and title
// with their hidden characters written as escapes and named, and words mixing look-alike alphabets reported, beside the
// raw fields, which stay exactly as they were (the raw arguments are what runs).
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { AGENT_ID, call, callStep, startScenario, textStep, type Scenario } from '../support/scenario.js';

const ARGS = { id: 'invoice\u202Egpj.exe', notify: 'ad\u200Bmin@corp', payee: 'p\u0430ypal' };
const MODEL_TEXT = 'Sending invoice\u202Egpj.exe now.';

const DISPLAY = `text hiddenCharacters { codePoint name offset escape } mixedScriptWords { word scripts }`;

const ELICITATION = `query Elicitation($id: ID!) {
  elicitation(id: $id) {
    toolCall { arguments argumentsDisplay { ${DISPLAY} } }
    response { arguments argumentsDisplay { ${DISPLAY} } }
  }
}`;

const THREAD = `query Thread($id: ID!) {
  thread(id: $id) {
    messages { role text textDisplay { ${DISPLAY} } toolCalls { arguments argumentsDisplay { ${DISPLAY} } } }
    turns { status text textDisplay { ${DISPLAY} } }
  }
}`;

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

async function paused() {
  s = await startScenario({
    tools: [{ name: 'send_invoice' }],
    script: [
      { text: MODEL_TEXT, toolCalls: [call('send_invoice', ARGS, 'c1')] },
      textStep('Sent to ad\u200Bmin@corp.'),
    ],
  });
  const { turn, thread } = await s.start('send the invoice');
  expect(turn.status).toBe('PAUSED');
  return { elicitationId: turn.pendingElicitations[0].id as string, threadId: thread.id as string };
}

describe('DisplayText over HTTP', () => {
  it("shows the confirmation's arguments with \\u202E and \\u200B escaped and named, and the Cyrillic a (U+0430) reported", async () => {
    const { elicitationId } = await paused();
    const { toolCall } = dataOf(await s.h.gql(ELICITATION, { id: elicitationId })).elicitation;
    // The raw arguments are untouched: they are what runs.
    expect(toolCall.arguments).toEqual(ARGS);
    const display = toolCall.argumentsDisplay;
    // JSON as JSON.stringify writes it, in the stored key order (PostgreSQL's jsonb keeps its own), escapes and all.
    expect(display.text).toBe(
      JSON.stringify(toolCall.arguments, null, 2).replace('\u202E', '\\u202E').replace('\u200B', '\\u200B'),
    );
    expect(display.text).toContain('"id": "invoice\\u202Egpj.exe"');
    expect(display.text).toContain('"notify": "ad\\u200Bmin@corp"');
    expect(display.text).not.toMatch(/[\u202E\u200B]/);
    expect(JSON.parse(display.text)).toEqual(ARGS);
    const at = (escape: string) => display.text.indexOf(escape);
    expect(display.hiddenCharacters).toEqual(
      [
        { codePoint: 0x202e, name: 'RIGHT-TO-LEFT OVERRIDE', offset: at('\\u202E'), escape: '\\u202E' },
        { codePoint: 0x200b, name: 'ZERO WIDTH SPACE', offset: at('\\u200B'), escape: '\\u200B' },
      ].sort((a, b) => a.offset - b.offset),
    );
    expect(display.mixedScriptWords).toEqual([{ word: 'p\u0430ypal', scripts: ['Latin', 'Cyrillic'] }]);
  });

  it("shows the model's text and its tool calls in the thread, and the turn's final text", async () => {
    const { elicitationId, threadId } = await paused();
    await s.resolve(elicitationId, 'ACCEPT');
    const { messages, turns } = dataOf(await s.h.gql(THREAD, { id: threadId })).thread;
    const assistant = messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length > 0);
    expect(assistant.text).toBe(MODEL_TEXT);
    expect(assistant.textDisplay).toEqual({
      text: 'Sending invoice\\u202Egpj.exe now.',
      hiddenCharacters: [{ codePoint: 0x202e, name: 'RIGHT-TO-LEFT OVERRIDE', offset: 15, escape: '\\u202E' }],
      mixedScriptWords: [],
    });
    expect(assistant.toolCalls[0].argumentsDisplay.hiddenCharacters.map((c: any) => c.codePoint)).toEqual([
      0x202e, 0x200b,
    ]);
    // A message without text has no display form; one without anything hidden has an empty list.
    expect(messages.find((m: any) => m.role === 'USER').textDisplay).toEqual({
      text: 'send the invoice',
      hiddenCharacters: [],
      mixedScriptWords: [],
    });
    const turn = turns.at(-1);
    expect(turn.status).toBe('COMPLETED');
    expect(turn.textDisplay.text).toBe('Sent to ad\\u200Bmin@corp.');
    expect(turn.textDisplay.hiddenCharacters).toEqual([
      { codePoint: 0x200b, name: 'ZERO WIDTH SPACE', offset: 10, escape: '\\u200B' },
    ]);
  });

  it("reports a look-alike letter in a tool's title and name as in its arguments, wherever the API gives them", async () => {
    // An upstream server's tool, named and titled with a Cyrillic а (U+0430), its name with a zero-width space too.
    s = await startScenario({
      tools: [{ name: 'p\u0430y\u200Bnow', annotations: { title: 'Pay with p\u0430ypal' } }],
      // The model calls it by the valid name toolgate gives it.
      script: [(request) => callStep(call(request.tools[0]!.name, { to: 'me' }, 'c1')), textStep('Paid.')],
    });
    const { turn, thread } = await s.start('pay');
    const pending = turn.pendingElicitations[0].id;
    const warned = (text: string, word: string, hidden: { codePoint: number; offset: number }[] = []) => ({
      text,
      hiddenCharacters: hidden.map((c) => expect.objectContaining(c)),
      mixedScriptWords: [{ word, scripts: ['Latin', 'Cyrillic'] }],
    });
    const name = warned('p\u0430y\\u200Bnow', 'p\u0430y\\u200Bnow', [{ codePoint: 0x200b, offset: 3 }]);
    const title = warned('Pay with p\u0430ypal', 'p\u0430ypal');

    const { elicitation } = dataOf(
      await s.h.gql(
        `query E($id: ID!) { elicitation(id: $id) { toolCall {
          nameDisplay { ${DISPLAY} } annotations { titleDisplay { ${DISPLAY} } } } } }`,
        { id: pending },
      ),
    );
    expect(elicitation.toolCall).toEqual({ nameDisplay: name, annotations: { titleDisplay: title } });

    const { agent } = dataOf(
      await s.h.gql(`{ agent(id: "${AGENT_ID}") { tools { label labelDisplay { ${DISPLAY} } nameDisplay { ${DISPLAY} }
        annotations { titleDisplay { ${DISPLAY} } } } } }`),
    );
    expect(agent.tools).toEqual([
      { label: 'Pay with p\u0430ypal', labelDisplay: title, nameDisplay: name, annotations: { titleDisplay: title } },
    ]);

    const { thread: read } = dataOf(
      await s.h.gql(`query T($id: ID!) { thread(id: $id) { messages { toolCalls { nameDisplay { ${DISPLAY} } } } } }`, {
        id: thread.id,
      }),
    );
    expect(read.messages.flatMap((m: any) => m.toolCalls)).toEqual([{ nameDisplay: name }]);
  });

  it('gives a tool without a title no titleDisplay, and a plain name no warning', async () => {
    const { elicitationId } = await paused();
    const { elicitation } = dataOf(
      await s.h.gql(
        `query E($id: ID!) { elicitation(id: $id) { toolCall {
          nameDisplay { ${DISPLAY} } annotations { titleDisplay { ${DISPLAY} } } } } }`,
        { id: elicitationId },
      ),
    );
    expect(elicitation.toolCall).toEqual({
      nameDisplay: { text: 'send_invoice', hiddenCharacters: [], mixedScriptWords: [] },
      annotations: { titleDisplay: null },
    });
  });

  it('shows edited arguments the same way, and has none for a plain accept', async () => {
    const { elicitationId } = await paused();
    const edited = { id: 'invoice.pdf', notify: 'ops\u2066@corp' };
    const answered = dataOf(
      await s.h.gql(
        `mutation Answer($input: ResolveElicitationInput!) {
          resolveElicitation(input: $input) { userErrors { code } }
        }`,
        { input: { elicitationId, action: 'ACCEPT', arguments: edited } },
      ),
    ).resolveElicitation;
    expect(answered.userErrors).toEqual([]);
    const { response } = dataOf(await s.h.gql(ELICITATION, { id: elicitationId })).elicitation;
    expect(response.arguments).toEqual(edited);
    expect(response.argumentsDisplay.text).toContain('"ops\\u2066@corp"');
    expect(response.argumentsDisplay.hiddenCharacters).toEqual([
      expect.objectContaining({ codePoint: 0x2066, name: 'LEFT-TO-RIGHT ISOLATE' }),
    ]);

    await s.close();
    const other = await paused();
    await s.resolve(other.elicitationId, 'ACCEPT');
    const plain = dataOf(await s.h.gql(ELICITATION, { id: other.elicitationId })).elicitation;
    expect(plain.response.argumentsDisplay).toBeNull();
  });
});
