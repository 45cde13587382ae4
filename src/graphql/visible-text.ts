// The display forms of untrusted text: tool arguments, message text, and a tool's name and title (an upstream MCP
// server chooses them) as they may be shown to a person, with hidden characters written as marked escapes and
// look-alike alphabets reported (src/domain/visible-text.ts has the rule). Fields next to the raw ones, which stay
// exactly as they were: `arguments` is still what runs.
import { characterName } from '../domain/character-names.js';
import { turnTextAt } from '../domain/expiry.js';
import type { HiddenCharacter, MixedScriptWord, VisibleText } from '../domain/visible-text.js';
import { INDENTED_JSON_LEVELS, LOOKALIKE_SCRIPTS, visibleJson, visibleText } from '../domain/visible-text.js';
import { AgentToolRef } from './agents.js';
import { builder } from './builder.js';
import { ElicitationResponseRef, ElicitationToolCallRef } from './elicitations.js';
import { MessageRef, ToolAnnotationsRef, TurnRef } from './refs.js';
import { ToolCallRef } from './threads.js';

const HiddenCharacterRef = builder.objectRef<HiddenCharacter>('HiddenCharacter').implement({
  description:
    'A character of the original text that does not show on screen or changes how the text around it is displayed ' +
    '(a bidi control such as U+202E, a zero-width or other format character, a variation selector, a tag character, ' +
    'a control character other than tab, line feed and carriage return, a line or paragraph separator, an unpaired ' +
    'surrogate), written in DisplayText.text as an escape. A variation selector right after an emoji and a joiner ' +
    'between two pictographs are part of a visible emoji and are left as they are.',
  fields: (t) => ({
    codePoint: t.exposeInt('codePoint', { description: 'Its Unicode code point, e.g. 8238 for U+202E.' }),
    name: t.string({
      description: 'Its Unicode name, e.g. RIGHT-TO-LEFT OVERRIDE (an alias or a <label> where it has no name).',
      resolve: (c) => characterName(c.codePoint),
    }),
    offset: t.exposeInt('offset', {
      description: 'Where its escape starts in DisplayText.text, in UTF-16 code units (a JavaScript string index).',
    }),
    escape: t.exposeString('escape', {
      description:
        'Its escape as written in DisplayText.text: `\\u202E`; above U+FFFF `\\u{E0041}` in text and a surrogate ' +
        'pair `\\uDB40\\uDC41` in JSON. Mark text[offset, offset + escape.length) to show it as an escape.',
    }),
  }),
});

const MixedScriptWordRef = builder.objectRef<MixedScriptWord>('MixedScriptWord').implement({
  description:
    `A word whose letters come from more than one of the look-alike alphabets ` +
    `(${LOOKALIKE_SCRIPTS.map((s) => s.name).join(', ')}), such as "pаypal" with a Cyrillic а: a sign of spoofing.`,
  fields: (t) => ({
    word: t.exposeString('word', { description: 'The word, in its display form (hidden characters escaped).' }),
    scripts: t.exposeStringList('scripts', {
      description: 'The alphabets its letters come from, e.g. [Latin, Cyrillic].',
    }),
  }),
});

const DisplayTextRef = builder.objectRef<VisibleText>('DisplayText').implement({
  description:
    "Untrusted text (model output, tool arguments, a tool's name or title) as it may be shown to a person: every " +
    'hidden character written ' +
    'as a visible escape, so that nothing is invisible or reordered on screen, and what was found. Show `text` with ' +
    'each hiddenCharacters escape marked, and warn when either list is not empty.',
  fields: (t) => ({
    text: t.exposeString('text', {
      description:
        'The text with each hidden character replaced by its escape. In free text, a run of backslashes that the ' +
        'original has right before `uXXXX`, `u{X…}` or a hidden character is doubled, so an escape always follows ' +
        'an even number of backslashes and the original\'s own "\\u202E" reads "\\\\u202E". Arguments are JSON ' +
        `as JSON.stringify(arguments, null, 2) writes it, down to ${INDENTED_JSON_LEVELS} levels of objects and ` +
        'arrays (deeper ones compact, as JSON.stringify(value) writes them, so that the text grows linearly with ' +
        'the arguments however deep they nest), with JSON escapes: still JSON, parsing to exactly the arguments.',
    }),
    hiddenCharacters: t.field({
      type: [HiddenCharacterRef],
      description: 'Every hidden character of the original, in order, one entry per occurrence.',
      resolve: (d) => d.hiddenCharacters,
    }),
    mixedScriptWords: t.field({
      type: [MixedScriptWordRef],
      description: 'Each distinct word mixing look-alike alphabets, in order of first occurrence.',
      resolve: (d) => d.mixedScriptWords,
    }),
  }),
});

const ARGUMENTS_DISPLAY =
  'The arguments as they may be shown to a person: pretty-printed JSON with hidden characters escaped and reported.';

builder.objectField(ToolCallRef, 'argumentsDisplay', (t) =>
  t.field({ type: DisplayTextRef, description: ARGUMENTS_DISPLAY, resolve: (c) => visibleJson(c.arguments) }),
);

builder.objectField(ElicitationToolCallRef, 'argumentsDisplay', (t) =>
  t.field({ type: DisplayTextRef, description: ARGUMENTS_DISPLAY, resolve: (c) => visibleJson(c.arguments) }),
);

builder.objectField(ElicitationResponseRef, 'argumentsDisplay', (t) =>
  t.field({
    type: DisplayTextRef,
    nullable: true,
    description: 'The edited arguments (`arguments`) as they may be shown to a person; null when there are none.',
    resolve: (r) => (r.arguments ? visibleJson(r.arguments) : null),
  }),
);

builder.objectField(MessageRef, 'textDisplay', (t) =>
  t.field({
    type: DisplayTextRef,
    nullable: true,
    description: '`text` as it may be shown to a person (hidden characters escaped and reported); null when it is.',
    resolve: (m) => (m.text === null ? null : visibleText(m.text)),
  }),
);

builder.objectField(TurnRef, 'textDisplay', (t) =>
  t.field({
    type: DisplayTextRef,
    nullable: true,
    description: '`text` as it may be shown to a person (hidden characters escaped and reported); null when it is.',
    resolve: (turn, _args, ctx) => {
      const text = turnTextAt(turn, ctx.services.clock().toISOString());
      return text === null ? null : visibleText(text);
    },
  }),
);

// A tool's name and title come from its source (an upstream MCP server chooses them; a model, for a tool the agent
// does not have): a look-alike letter in them is as much a sign of spoofing as in the arguments.
const TOOL_NAME_DISPLAY =
  '`name` as it may be shown to a person (hidden characters escaped and reported, look-alike alphabets reported).';

builder.objectField(ToolCallRef, 'nameDisplay', (t) =>
  t.field({ type: DisplayTextRef, description: TOOL_NAME_DISPLAY, resolve: (c) => visibleText(c.name) }),
);

builder.objectField(ElicitationToolCallRef, 'nameDisplay', (t) =>
  t.field({ type: DisplayTextRef, description: TOOL_NAME_DISPLAY, resolve: (c) => visibleText(c.name) }),
);

builder.objectField(AgentToolRef, 'nameDisplay', (t) =>
  t.field({ type: DisplayTextRef, description: TOOL_NAME_DISPLAY, resolve: ({ tool }) => visibleText(tool.name) }),
);

builder.objectField(AgentToolRef, 'labelDisplay', (t) =>
  t.field({
    type: DisplayTextRef,
    description:
      '`label` as it may be shown to a person (hidden characters escaped and reported, look-alike alphabets reported).',
    resolve: ({ tool }) => visibleText(tool.label),
  }),
);

builder.objectField(ToolAnnotationsRef, 'titleDisplay', (t) =>
  t.field({
    type: DisplayTextRef,
    nullable: true,
    description:
      '`title` as it may be shown to a person (hidden characters escaped and reported, look-alike alphabets ' +
      'reported); null without a title.',
    resolve: (annotations) => (annotations.title == null ? null : visibleText(annotations.title)),
  }),
);
