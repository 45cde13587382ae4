import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { characterName } from '../../src/domain/character-names.js';
import {
  INDENTED_JSON_LEVELS,
  isHiddenCharacter,
  visibleJson,
  visibleText,
  type VisibleText,
} from '../../src/domain/visible-text.js';

/**
 * The reading rule the visible text promises, as a reader applies it: an odd run of backslashes before `uXXXX` or
 * `u{X…}` ends in an escape; an even run is that many halved backslashes of the original.
 */
function readBack(visible: string): string {
  return visible.replace(
    /(\\+)(u(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{4})))/g,
    (match, run: string, rest: string, astral, bmp) => {
      if (run.length % 2 === 0) return `${'\\'.repeat(run.length / 2)}${rest}`;
      return `${'\\'.repeat((run.length - 1) / 2)}${String.fromCodePoint(parseInt(astral ?? bmp, 16))}`;
    },
  );
}

/** Every escape is where its entry says, and nothing but the escapes differs from the original's characters. */
function expectOffsetsHold(shown: VisibleText): void {
  for (const c of shown.hiddenCharacters) {
    expect(shown.text.slice(c.offset, c.offset + c.escape.length)).toBe(c.escape);
  }
  expect(shown.text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B\u200C\u200E\u200F\uFEFF]/);
}

const codes = (shown: VisibleText) => shown.hiddenCharacters.map((c) => c.codePoint);

describe('visible text', () => {
  it('writes a bidi override as an escape, where it was', () => {
    const shown = visibleText('invoice\u202Egpj.exe');
    expect(shown.text).toBe('invoice\\u202Egpj.exe');
    expect(shown.hiddenCharacters).toEqual([{ codePoint: 0x202e, offset: 7, escape: '\\u202E' }]);
    expect(shown.mixedScriptWords).toEqual([]);
  });

  it('writes a zero-width space as an escape: ad\\u200Bmin@corp is not admin@corp', () => {
    const shown = visibleText('ad\u200Bmin@corp');
    expect(shown.text).toBe('ad\\u200Bmin@corp');
    expect(codes(shown)).toEqual([0x200b]);
  });

  const listed: [string, number, number][] = [
    ['bidi embeddings and overrides', 0x202a, 0x202e],
    ['bidi isolates', 0x2066, 0x2069],
    ['LRM and RLM', 0x200e, 0x200f],
    ['the Arabic letter mark', 0x061c, 0x061c],
    ['zero-width space, non-joiner, joiner', 0x200b, 0x200d],
    ['word joiner and invisible operators', 0x2060, 0x2064],
    ['the byte order mark', 0xfeff, 0xfeff],
    ['the soft hyphen', 0x00ad, 0x00ad],
    ['the tag block', 0xe0000, 0xe007f],
    ['variation selectors', 0xfe00, 0xfe0f],
    ['supplementary variation selectors', 0xe0100, 0xe01ef],
    ['C0 controls other than tab, LF, CR', 0x0000, 0x0008],
    ['DEL and the C1 controls', 0x007f, 0x009f],
    ['the line and paragraph separators', 0x2028, 0x2029],
  ];
  it.each(listed)('counts %s as hidden', (_label, from, to) => {
    for (let cp = from; cp <= to; cp++) expect(isHiddenCharacter(String.fromCodePoint(cp)), cp.toString(16)).toBe(true);
  });

  it('counts every format character (Unicode category Cf) as hidden, and an unpaired surrogate', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      if (/\p{Cf}/u.test(char)) expect(isHiddenCharacter(char), cp.toString(16)).toBe(true);
    }
    expect(visibleText('a\uD800b').text).toBe('a\\uD800b');
  });

  it('leaves visible text alone: letters of any script, emoji, spaces, tab and line breaks', () => {
    for (const text of ['héllo wörld', 'привет мир', 'שלום', '東京 タワー', '👋 🎉', 'a\tb\nc\r\nd', 'C:\\users\\me']) {
      expect(visibleText(text)).toEqual({ text, hiddenCharacters: [], mixedScriptWords: [] });
    }
  });

  it('leaves the selector and joiners of an emoji alone, and escapes them anywhere else', () => {
    for (const emoji of [
      '\u2764\uFE0F',
      '\u{1F469}\u{1F3FD}\u200D\u{1F4BB}',
      '\u{1F3F3}\uFE0F\u200D\u{1F308}',
      '1\uFE0F\u20E3',
    ]) {
      expect(visibleText(`ok ${emoji}`).hiddenCharacters, emoji).toEqual([]);
    }
    // Selectors smuggling bytes after an emoji, a second selector, a joiner in a word or at an emoji's end.
    expect(codes(visibleText('\u{1F44D}\u{E0100}\u{E0101}'))).toEqual([0xe0100, 0xe0101]);
    expect(codes(visibleText('\u2764\uFE0F\uFE0F'))).toEqual([0xfe0f]);
    expect(codes(visibleText('a\uFE0F\u200D\u{1F44D}'))).toEqual([0xfe0f, 0x200d]);
    expect(codes(visibleText('ad\u200Dmin \u{1F469}\u200D'))).toEqual([0x200d, 0x200d]);
  });

  it('writes a character above U+FFFF as \\u{…}: tag characters spelling hidden text show', () => {
    const shown = visibleText('ok\u{E0068}\u{E0069}');
    expect(shown.text).toBe('ok\\u{E0068}\\u{E0069}');
    expect(shown.hiddenCharacters).toEqual([
      { codePoint: 0xe0068, offset: 2, escape: '\\u{E0068}' },
      { codePoint: 0xe0069, offset: 11, escape: '\\u{E0069}' },
    ]);
  });

  it("keeps the original's own backslash-u text apart from an escape: it is doubled", () => {
    // The six characters \u202E typed as text, then the real character.
    const shown = visibleText('\\u202E and \u202E');
    expect(shown.text).toBe('\\\\u202E and \\u202E');
    expect(shown.hiddenCharacters).toEqual([{ codePoint: 0x202e, offset: 12, escape: '\\u202E' }]);
    expect(visibleText('\\u{E0041}').text).toBe('\\\\u{E0041}');
    // A backslash right before a hidden character: its escape must not read as the original's \\ plus u200B.
    expect(visibleText('\\\u200B').text).toBe('\\\\\\u200B');
    // A backslash that cannot be read as an escape stays single.
    expect(visibleText('\\user \\u12 \\n').text).toBe('\\user \\u12 \\n');
  });

  it('is unambiguous: reading the visible text back gives the original, whatever it holds', () => {
    const tricky = fc.constantFrom('\\', 'u', '{', '}', 'A', '0', 'e', '\u202E', '\u200B', '\u{E0041}', '\uD800', 'x');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: tricky }), fc.string({ unit: 'binary' })), (text) => {
        const shown = visibleText(text);
        expect(readBack(shown.text)).toBe(text);
        expectOffsetsHold(shown);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('visible JSON', () => {
  it('is JSON.stringify(value, null, 2) when nothing is hidden', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'grapheme-ascii' }), (value) => {
        const shown = visibleJson(value);
        expect(shown.text).toBe(JSON.stringify(value, null, 2));
        expect(shown.hiddenCharacters).toEqual([]);
      }),
    );
  });

  it('escapes hidden characters in values and keys, and stays JSON of exactly the same value', () => {
    const value = { id: 'invoice\u202Egpj.exe', ['to\u200B']: ['ad\u200Bmin@corp', 1, null, { tag: '\u{E0041}' }] };
    const shown = visibleJson(value);
    expect(shown.text).toBe(
      '{\n  "id": "invoice\\u202Egpj.exe",\n  "to\\u200B": [\n    "ad\\u200Bmin@corp",\n    1,\n    null,\n' +
        '    {\n      "tag": "\\uDB40\\uDC41"\n    }\n  ]\n}',
    );
    expect(JSON.parse(shown.text)).toEqual(value);
    expect(codes(shown)).toEqual([0x202e, 0x200b, 0x200b, 0xe0041]);
    expectOffsetsHold(shown);
  });

  it("keeps JSON's own escapes: a typed \\u202E stays \\\\u202E, a control character is escaped", () => {
    const shown = visibleJson({ a: '\\u202E', b: 'x\u0007\b\n\t"' });
    expect(shown.text).toBe('{\n  "a": "\\\\u202E",\n  "b": "x\\u0007\\u0008\\n\\t\\""\n}');
    expect(codes(shown)).toEqual([0x7, 0x8]);
  });

  it('indents INDENTED_JSON_LEVELS levels and writes deeper ones compactly, as JSON.stringify(value) does', () => {
    expect(INDENTED_JSON_LEVELS).toBe(8);
    const deepest = { k: ['x\u200By', { l: 1 }], m: {} };
    let value: unknown = deepest;
    for (let level = 0; level < 7; level++) value = [value];
    const shown = visibleJson({ top: value });
    const lines = shown.text.split('\n');
    // The top object and its 7 arrays are indented; the object inside them, the ninth level, is one line.
    expect(lines).toHaveLength(2 * 8 + 1);
    expect(lines[8]).toBe(`${'  '.repeat(8)}{"k":["x\\u200By",{"l":1}],"m":{}}`);
    expect(JSON.parse(shown.text)).toEqual({ top: value });
    expect(codes(shown)).toEqual([0x200b]);
    expectOffsetsHold(shown);
  });

  it('grows linearly with the JSON, however deep or wide the value, and walks any depth without overflowing', () => {
    /** `levels` levels of arrays around `inner`. */
    const nest = (levels: number, inner: unknown = []) => {
      let value = inner;
      for (let level = 1; level < levels; level++) value = [value];
      return value;
    };
    const cases = [
      // 4 KB nested 2,000 deep: JSON.stringify(value, null, 2) writes about 8 MB of it.
      { v: nest(2000), pad: 'x'.repeat(96) },
      nest(
        8,
        Array.from({ length: 1000 }, () => 0),
      ),
      nest(
        7,
        Array.from({ length: 1000 }, () => ({})),
      ),
      nest(
        20,
        Array.from({ length: 1000 }, () => '\u{E0041}'),
      ),
    ];
    for (const value of cases) {
      const shown = visibleJson(value);
      expect(JSON.parse(shown.text)).toEqual(value);
      expect(shown.text.length).toBeLessThanOrEqual(10 * JSON.stringify(value).length);
    }
    expect(visibleJson(cases[0]).text.length).toBeLessThan(4400);
    // Deeper than JSON.stringify, JSON.parse's check or a recursive walk could go: 100,000 levels, 200,000 characters.
    const text = visibleJson(nest(100_000)).text;
    expect(text.replace(/\s/g, '')).toBe(`${'['.repeat(99_999)}[]${']'.repeat(99_999)}`);
    expect(text.length).toBeLessThan(200_200);
  });

  it('parses back to the value given, whatever its strings hold', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        const shown = visibleJson(value);
        // As JSON.stringify's text would (JSON has no -0: it reads back as 0).
        expect(JSON.parse(shown.text)).toEqual(JSON.parse(JSON.stringify(value)));
        expectOffsetsHold(shown);
      }),
      { numRuns: 500 },
    );
  });
});

describe('mixed scripts', () => {
  it('reports a word mixing Latin with a Cyrillic а, once', () => {
    expect(visibleText('pay p\u0430ypal now, p\u0430ypal').mixedScriptWords).toEqual([
      { word: 'p\u0430ypal', scripts: ['Latin', 'Cyrillic'] },
    ]);
  });

  it.each([
    ['Greek omicron in a Latin word', 'micr\u03BFsoft', ['Latin', 'Greek']],
    ['Latin o in a Cyrillic word', '\u043Fo\u0447\u0442\u0430', ['Latin', 'Cyrillic']],
    ['Armenian o in a Latin word', 'g\u0585ogle', ['Latin', 'Armenian']],
  ])('reports %s', (_label, word, scripts) => {
    expect(visibleText(`see ${word}.`).mixedScriptWords).toEqual([{ word, scripts }]);
  });

  it('does not report words of one alphabet each, nor Latin beside Han, nor digits', () => {
    expect(visibleText('hello привет γειά 東京Tokyo route66 Ω').mixedScriptWords).toEqual([]);
  });

  it('sees through a hidden character inside the word, and shows the word with its escape', () => {
    expect(visibleText('p\u200Bаypal').mixedScriptWords).toEqual([
      { word: 'p\\u200Bаypal', scripts: ['Latin', 'Cyrillic'] },
    ]);
  });

  it('checks the keys and string values of JSON', () => {
    expect(visibleJson({ pаyee: 'ok', to: ['ok', 'b\u0430nk'] }).mixedScriptWords).toEqual([
      { word: 'p\u0430yee', scripts: ['Latin', 'Cyrillic'] },
      { word: 'b\u0430nk', scripts: ['Latin', 'Cyrillic'] },
    ]);
  });
});

describe('character names', () => {
  it.each([
    ['U+202E', 0x202e, 'RIGHT-TO-LEFT OVERRIDE'],
    ['U+200B', 0x200b, 'ZERO WIDTH SPACE'],
    ['U+E0041', 0xe0041, 'TAG LATIN CAPITAL LETTER A'],
    ['U+FE0F', 0xfe0f, 'VARIATION SELECTOR-16'],
    ['U+0007', 0x0007, 'ALERT'],
    ['U+D800', 0xd800, '<surrogate-D800>'],
  ])('names %s', async (_label, codePoint, name) => {
    expect(await characterName(codePoint)).toBe(name);
  });
});
