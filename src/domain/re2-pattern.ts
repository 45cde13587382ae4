// A JSON Schema pattern (an ECMA-262 regular expression with the `u` flag) rewritten in RE2 syntax with the same
// meaning, from its parse tree (regexpp). Where the two syntaxes read alike but mean different things (`.`, `\s`,
// `[^]`, `[]`, `[[`), the meaning is written out as code point ranges; what has no linear-time equivalent
// (backreferences, lookaround) is refused. Capturing groups become plain groups: only whether a string matches is
// asked, never what a group captured.
import { RegExpParser, type AST } from '@eslint-community/regexpp';

/** The pattern uses what the linear-time engine cannot run; the message names it. */
export class UnsupportedPatternError extends Error {
  override name = 'UnsupportedPatternError';
}

type Range = readonly [number, number];

const MAX_CODE_POINT = 0x10ffff;
const DIGIT: Range[] = [[0x30, 0x39]];
const WORD: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
// ECMA-262 WhiteSpace and LineTerminator (RE2's \s is ASCII only).
const SPACE: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const LINE_TERMINATORS: Range[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
/** Binary properties RE2 has no name for, as ranges. */
const PROPERTY_RANGES: Record<string, Range[]> = { ASCII: [[0, 0x7f]], Any: [[0, MAX_CODE_POINT]] };

/** ECMA-262 accepts the long names of the general categories; RE2 knows the short ones. */
const GENERAL_CATEGORY: Record<string, string> = {
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Unassigned: 'Cn',
  Private_Use: 'Co',
  Surrogate: 'Cs',
  Letter: 'L',
  Cased_Letter: 'LC',
  Lowercase_Letter: 'Ll',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Titlecase_Letter: 'Lt',
  Uppercase_Letter: 'Lu',
  Mark: 'M',
  Combining_Mark: 'M',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Nonspacing_Mark: 'Mn',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Close_Punctuation: 'Pe',
  Final_Punctuation: 'Pf',
  Initial_Punctuation: 'Pi',
  Other_Punctuation: 'Po',
  Open_Punctuation: 'Ps',
  Symbol: 'S',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Math_Symbol: 'Sm',
  Other_Symbol: 'So',
  Separator: 'Z',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Space_Separator: 'Zs',
};

const parser = new RegExpParser({ ecmaVersion: 2024 });

/**
 * The pattern in RE2 syntax. Throws the parser's SyntaxError for a pattern ECMA-262 refuses, and
 * UnsupportedPatternError for one RE2 cannot express.
 */
export function toRe2Pattern(pattern: string): string {
  return alternatives(parser.parsePattern(pattern, 0, pattern.length, { unicode: true }).alternatives);
}

function alternatives(list: AST.Alternative[]): string {
  return list.map((alternative) => alternative.elements.map(element).join('')).join('|');
}

function element(node: AST.Element): string {
  switch (node.type) {
    case 'Character':
      return codePoint(node.value);
    case 'CharacterSet':
      return node.kind === 'any' ? rangeClass(complement(LINE_TERMINATORS)) : rangeClass(...setItems(node));
    case 'CharacterClass':
      return characterClass(node);
    case 'Group':
    case 'CapturingGroup':
      return `(?:${alternatives(node.alternatives)})`;
    case 'Quantifier':
      return `(?:${element(node.element)})${quantifier(node)}`;
    case 'Assertion':
      switch (node.kind) {
        case 'start':
          return '\\A';
        case 'end':
          return '\\z';
        case 'word':
          return node.negate ? '\\B' : '\\b';
        default:
          throw unsupported(node.kind === 'lookahead' ? 'a lookahead' : 'a lookbehind', node.raw);
      }
    case 'Backreference':
      throw unsupported('a backreference', node.raw);
    default:
      throw unsupported('a construct', node.raw);
  }
}

function quantifier({ min, max, greedy }: AST.Quantifier): string {
  const bounds = max === Infinity ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
  return greedy ? bounds : `${bounds}?`;
}

function characterClass(node: AST.CharacterClass): string {
  const ranges: Range[] = [];
  const properties: string[] = [];
  for (const item of node.elements) {
    switch (item.type) {
      case 'Character':
        ranges.push([item.value, item.value]);
        break;
      case 'CharacterClassRange':
        ranges.push([item.min.value, item.max.value]);
        break;
      case 'CharacterSet': {
        const [itemRanges, itemProperty] = setItems(item);
        ranges.push(...itemRanges);
        if (itemProperty) properties.push(itemProperty);
        break;
      }
      default:
        throw unsupported('a construct', item.raw);
    }
  }
  return rangeClass(ranges, properties.join(''), node.negate);
}

/** A `\d`, `\s`, `\w` or `\p{…}` (or their negations) as ranges, or as an RE2 property escape. */
function setItems(node: AST.EscapeCharacterSet | AST.UnicodePropertyCharacterSet): [Range[], string?] {
  const negated = (ranges: Range[]): Range[] => (node.negate ? complement(ranges) : ranges);
  switch (node.kind) {
    case 'digit':
      return [negated(DIGIT)];
    case 'space':
      return [negated(SPACE)];
    case 'word':
      return [negated(WORD)];
    case 'property': {
      if (node.strings) throw unsupported('a property of strings', node.raw);
      const ranges = node.value === null ? PROPERTY_RANGES[node.key] : undefined;
      if (ranges) return [negated(ranges)];
      return [[], `${node.negate ? '\\P' : '\\p'}{${propertyName(node)}}`];
    }
  }
}

/** The name RE2 knows the property by: short general categories, long script names, binary properties as named. */
function propertyName(node: AST.UnicodePropertyCharacterSet): string {
  if (node.value === null) return node.key;
  if (node.key === 'General_Category' || node.key === 'gc') return GENERAL_CATEGORY[node.value] ?? node.value;
  if (node.key === 'Script' || node.key === 'sc') return node.value;
  throw unsupported('a Script_Extensions property', node.raw, 'which the linear-time engine does not know');
}

/** A class of these ranges (and RE2 property escapes); an empty one matches nothing, as `[]` does. */
function rangeClass(ranges: Range[], properties = '', negate = false): string {
  const items = merge(ranges).map(([from, to]) =>
    from === to ? codePoint(from) : `${codePoint(from)}-${codePoint(to)}`,
  );
  if (items.length === 0 && !properties) return `[${negate ? '' : '^'}${codePoint(0)}-${codePoint(MAX_CODE_POINT)}]`;
  return `[${negate ? '^' : ''}${items.join('')}${properties}]`;
}

function merge(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = merged.at(-1);
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}

function complement(ranges: Range[]): Range[] {
  const result: Range[] = [];
  let next = 0;
  for (const [from, to] of merge(ranges)) {
    if (from > next) result.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}

function codePoint(value: number): string {
  return `\\x{${value.toString(16)}}`;
}

function unsupported(
  what: string,
  raw: string,
  why = 'which cannot be matched in linear time',
): UnsupportedPatternError {
  return new UnsupportedPatternError(`uses ${what}, ${raw}, ${why}`);
}
