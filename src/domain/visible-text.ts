// What a person is shown of untrusted text (model output, tool arguments): every character that does not show on
// screen, or that changes how the text around it is laid out, written as a visible escape, and the words that mix
// look-alike alphabets. Bidi controls reorder what is displayed (`invoice\u202Egpj.exe` displays as `invoiceexe.jpg`),
// zero-width and tag characters hide text inside text (`ad\u200Bmin` displays as `admin`), and `paypal` spelt with a
// Cyrillic а (U+0430) looks Latin. Pure: no I/O, no Node APIs, so that the inbox can apply the same rule to text
// still streaming.

/** A character that is written as an escape in the visible text. */
export interface HiddenCharacter {
  /** Its Unicode code point, e.g. 0x202E. */
  codePoint: number;
  /** Where its escape starts in the visible text, in UTF-16 code units (a JavaScript string's index). */
  offset: number;
  /** The escape that stands for it in the visible text, e.g. `\u202E`. */
  escape: string;
}

/** A word whose letters come from more than one of the alphabets in LOOKALIKE_SCRIPTS. */
export interface MixedScriptWord {
  /** The word in its visible form (a hidden character inside it is written as its escape). */
  word: string;
  /** The alphabets its letters come from, in LOOKALIKE_SCRIPTS order, e.g. ['Latin', 'Cyrillic']. */
  scripts: string[];
}

/** Text as it may be shown to a person: nothing hidden, nothing reordered, and what was found. */
export interface VisibleText {
  text: string;
  /** Each hidden character of the input, in order: one entry per occurrence. */
  hiddenCharacters: HiddenCharacter[];
  /** Each distinct word that mixes look-alike alphabets, in order of first occurrence. */
  mixedScriptWords: MixedScriptWord[];
}

// Hidden: format characters (Cf: bidi embeddings, overrides and isolates, LRM/RLM/ALM, zero-width space and joiners,
// word joiner, invisible operators, BOM, soft hyphen, tag characters), everything Unicode says to render invisibly
// when unsupported (Default_Ignorable_Code_Point: variation selectors, the combining grapheme joiner, Hangul fillers,
// …), control characters except tab, line feed and carriage return (C0, DEL, C1), the line and paragraph separators,
// and unpaired surrogates.
const HIDDEN_CLASS = String.raw`(?![\t\n\r])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]`;
const HIDDEN = new RegExp(`^${HIDDEN_CLASS}$`, 'u');
const HIDDEN_ANYWHERE = new RegExp(HIDDEN_CLASS, 'u');

/** Whether this character (one code point) is written as an escape (but see isHiddenAt for emoji). */
export function isHiddenCharacter(char: string): boolean {
  return HIDDEN.test(char);
}

/** Whether the text holds any character isHiddenCharacter is true of. */
export function hasHiddenCharacters(text: string): boolean {
  return HIDDEN_ANYWHERE.test(text);
}

// Inside an emoji, a variation selector and a zero-width joiner are part of a visible picture: ❤️ is U+2764 U+FE0F,
// 👩‍💻 is U+1F469 U+200D U+1F4BB. There they are left as they are: one text or emoji selector right after an emoji
// character, a joiner between two pictographs, neither of which can hide anything. Anywhere else (a run of selectors
// smuggling bytes after an emoji, a joiner inside a word) they are escaped like any hidden character.
const EMOJI = /^\p{Emoji}$/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const EMOJI_MODIFIER = /^\p{Emoji_Modifier}$/u;

/** Whether the character at this index of the text (`char`, one code point) is written as an escape. */
function isHiddenAt(text: string, index: number, char: string): boolean {
  if (!isHiddenCharacter(char)) return false;
  if (char === '\uFE0F' || char === '\uFE0E') return !EMOJI.test(charBefore(text, index));
  if (char === '\u200D') {
    const before = charBefore(text, index);
    const afterEmoji =
      PICTOGRAPH.test(before) ||
      EMOJI_MODIFIER.test(before) ||
      (before === '\uFE0F' && !isHiddenAt(text, index - 1, before));
    return !(afterEmoji && PICTOGRAPH.test(charAt(text, index + 1)));
  }
  return true;
}

/** The code point that ends right before this index ('' at the start). */
function charBefore(text: string, index: number): string {
  const low = text.charCodeAt(index - 1);
  const high = text.charCodeAt(index - 2);
  const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
  return pair ? text.slice(index - 2, index) : text.charAt(index - 1);
}

/** The code point that starts at this index ('' at the end). */
function charAt(text: string, index: number): string {
  const codePoint = text.codePointAt(index);
  return codePoint === undefined ? '' : String.fromCodePoint(codePoint);
}

const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');

/** `\u202E`; above U+FFFF `\u{E0041}`. */
function textEscape(codePoint: number): string {
  return codePoint > 0xffff ? `\\u{${hex(codePoint)}}` : `\\u${hex(codePoint)}`;
}

/** `\u202E`; above U+FFFF its UTF-16 surrogate pair `\uDB40\uDC41`, as JSON writes it. */
function jsonEscape(codePoint: number): string {
  if (codePoint <= 0xffff) return `\\u${hex(codePoint)}`;
  const unit = String.fromCodePoint(codePoint);
  return `\\u${hex(unit.charCodeAt(0))}\\u${hex(unit.charCodeAt(1))}`;
}

/** Accumulates visible text and the hidden characters written into it. */
class Writer {
  text = '';
  readonly hidden: HiddenCharacter[] = [];

  plain(text: string): void {
    this.text += text;
  }

  escape(char: string, escapeOf: (codePoint: number) => string): void {
    const codePoint = char.codePointAt(0)!;
    const escape = escapeOf(codePoint);
    this.hidden.push({ codePoint, offset: this.text.length, escape });
    this.text += escape;
  }
}

// What follows a backslash in an escape, or in text that would read as one (sticky: tested at a given index).
const READS_AS_ESCAPE = /u(?:[0-9A-Fa-f]{4}|\{[0-9A-Fa-f]+\})/y;

/**
 * Free text, visible: each hidden character becomes `\uXXXX` (`\u{XXXXX}` above U+FFFF). So that such an escape never
 * reads as the input's own text, a run of backslashes that the input has right before `uXXXX`, `u{X…}` or a hidden
 * character is doubled: an escape always follows an even number of backslashes (none, usually), and the input's own
 * `\u202E` is shown as `\\u202E`. Other backslashes (`C:\users`) stay as they are.
 */
export function visibleText(text: string): VisibleText {
  const out = new Writer();
  writeText(text, out);
  return { text: out.text, hiddenCharacters: out.hidden, mixedScriptWords: mixedScriptWords([text]) };
}

function writeText(text: string, out: Writer): void {
  if (!hasHiddenCharacters(text) && !text.includes('\\')) {
    out.plain(text);
    return;
  }
  let i = 0;
  while (i < text.length) {
    const char = charAt(text, i);
    if (char === '\\') {
      let end = i;
      while (text[end] === '\\') end++;
      READS_AS_ESCAPE.lastIndex = end;
      const doubled = READS_AS_ESCAPE.test(text) || isHiddenAt(text, end, charAt(text, end));
      out.plain('\\'.repeat(doubled ? (end - i) * 2 : end - i));
      i = end;
      continue;
    }
    if (isHiddenAt(text, i, char)) out.escape(char, textEscape);
    else out.plain(char);
    i += char.length;
  }
}

/**
 * Levels of objects and arrays written one entry per line, indented as JSON.stringify(value, null, 2) does; deeper
 * ones are written compactly, as JSON.stringify(value) does. An indent is repeated on every line inside its level, so
 * indenting every level makes the text grow with the square of the depth; with a bound it grows linearly with the
 * value's JSON, however deep it nests.
 */
export const INDENTED_JSON_LEVELS = 8;

/**
 * A JSON value, visible: the text of JSON.stringify(value, null, 2), down to INDENTED_JSON_LEVELS levels (deeper
 * values compact), with each hidden character, in keys and in values, written as a JSON escape (`\u202E`; a
 * surrogate pair above U+FFFF). The result is still JSON, and parses to exactly the value given: JSON already writes
 * the input's own backslashes as `\\`, so an escape is never ambiguous. Tab, line feed and carriage return keep
 * JSON's `\t`, `\n`, `\r`. Written by a loop with its own stack, not by recursion: no depth overflows it.
 */
export function visibleJson(value: unknown): VisibleText {
  const out = new Writer();
  const strings: string[] = [];
  writeJson(value, out, strings);
  return { text: out.text, hiddenCharacters: out.hidden, mixedScriptWords: mixedScriptWords(strings) };
}

const JSON_SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function writeJsonString(text: string, out: Writer, strings: string[]): void {
  strings.push(text);
  out.plain('"');
  for (let i = 0; i < text.length;) {
    const char = charAt(text, i);
    const short = JSON_SHORT_ESCAPES[char];
    if (short !== undefined) out.plain(short);
    else if (isHiddenAt(text, i, char)) out.escape(char, jsonEscape);
    else out.plain(char);
    i += char.length;
  }
  out.plain('"');
}

/** What is left to write, last first: punctuation and whitespace, a key, or a value `level` containers deep. */
type JsonPart = { plain: string } | { key: string } | { value: unknown; level: number };

function writeJson(root: unknown, out: Writer, strings: string[]): void {
  const parts: JsonPart[] = [{ value: root, level: 0 }];
  for (let part = parts.pop(); part; part = parts.pop()) {
    if ('plain' in part) {
      out.plain(part.plain);
      continue;
    }
    if ('key' in part) {
      writeJsonString(part.key, out, strings);
      continue;
    }
    const { value, level } = part;
    if (typeof value === 'string') {
      writeJsonString(value, out, strings);
      continue;
    }
    if (value === null || typeof value !== 'object') {
      // Numbers, booleans and null as JSON writes them (non-finite numbers, undefined and functions as null: a JSON
      // value has none, but nothing here may throw on one).
      out.plain(JSON.stringify(value) ?? 'null');
      continue;
    }
    const isArray = Array.isArray(value);
    const entries: [string | null, unknown][] = isArray
      ? Array.from(value, (item: unknown): [null, unknown] => [null, item])
      : Object.entries(value).filter(([, item]) => item !== undefined && typeof item !== 'function');
    if (entries.length === 0) {
      out.plain(isArray ? '[]' : '{}');
      continue;
    }
    const indented = level < INDENTED_JSON_LEVELS;
    const entryStart = indented ? `\n${'  '.repeat(level + 1)}` : '';
    out.plain(isArray ? '[' : '{');
    parts.push({ plain: `${indented ? `\n${'  '.repeat(level)}` : ''}${isArray ? ']' : '}'}` });
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      parts.push({ value: item, level: level + 1 });
      if (key !== null) parts.push({ plain: indented ? ': ' : ':' }, { key });
      parts.push({ plain: i === 0 ? entryStart : `,${entryStart}` });
    }
  }
}

/**
 * The alphabets with letters that look like each other's (Cyrillic `а`, Greek `ο`, Armenian `օ`, Cherokee `Ꭺ` for
 * Latin `a`, `o`, `o`, `A`). A word mixing them is what UTS #39 (restriction levels) calls mixed-script and a spoofing
 * sign; a word mixing any of them with another script (Latin with Han, say) is not reported.
 */
export const LOOKALIKE_SCRIPTS: readonly { name: string; letter: RegExp }[] = [
  { name: 'Latin', letter: /\p{Script=Latin}/u },
  { name: 'Greek', letter: /\p{Script=Greek}/u },
  { name: 'Cyrillic', letter: /\p{Script=Cyrillic}/u },
  { name: 'Armenian', letter: /\p{Script=Armenian}/u },
  { name: 'Cherokee', letter: /\p{Script=Cherokee}/u },
];

// A word: letters, marks and digits, with any hidden characters inside it (`p\u200Bаypal` is one word, not two).
const WORD = new RegExp(String.raw`(?:[\p{L}\p{M}\p{N}]|${HIDDEN_CLASS})+`, 'gu');
const LETTER = /\p{L}/u;

function mixedScriptWords(texts: string[]): MixedScriptWord[] {
  const found = new Map<string, MixedScriptWord>();
  for (const text of texts) {
    for (const [word] of text.matchAll(WORD)) {
      const scripts = scriptsOf(word);
      if (scripts.length < 2) continue;
      const visible = new Writer();
      writeText(word, visible);
      if (!found.has(visible.text)) found.set(visible.text, { word: visible.text, scripts });
    }
  }
  return [...found.values()];
}

function scriptsOf(word: string): string[] {
  const seen = new Set<string>();
  for (const char of word) {
    if (!LETTER.test(char)) continue;
    const script = LOOKALIKE_SCRIPTS.find((s) => s.letter.test(char));
    if (script) seen.add(script.name);
  }
  return LOOKALIKE_SCRIPTS.filter((s) => seen.has(s.name)).map((s) => s.name);
}
