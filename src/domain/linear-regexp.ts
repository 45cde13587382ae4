// The regular expression engine of every ajv in toolgate: JSON Schema patterns (`pattern`, `patternProperties`,
// `propertyNames`) come from administrators and MCP servers and are evaluated on strings that models and users wrote,
// so they run on re2js, a pure-JavaScript RE2 whose matching time is linear in the input. V8's backtracking
// engine takes exponential time on patterns such as ^(a+)+$ and would block the event loop for as long.
// docs/approvals.md "Patterns in schemas" says how it keeps ECMA-262's meaning and what it refuses.
import type { CodeOptions } from 'ajv';
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';
import { toRe2Pattern, UnsupportedPatternError } from './re2-pattern.js';

export { UnsupportedPatternError };

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

class LinearRegExp {
  readonly #engine: RE2JS;

  constructor(
    readonly source: string,
    engine: RE2JS,
  ) {
    this.#engine = engine;
  }

  test(text: string): boolean {
    return this.#engine.test(text);
  }

  /** ajv shares one compiled pattern between the schemas that use it, keyed by this text. */
  toString(): string {
    return `/${this.source}/u`;
  }
}

/**
 * A JSON Schema pattern compiled for linear-time matching. Throws a SyntaxError for a pattern ECMA-262 refuses and
 * UnsupportedPatternError for one that cannot be matched in linear time (backreferences, lookaround), each naming
 * the pattern.
 */
export function compileLinearPattern(pattern: string): LinearRegExp {
  // V8's own syntax check first (compiling runs nothing): its messages, and exactly the patterns Node accepts.
  new RegExp(pattern, 'u');
  try {
    return new LinearRegExp(pattern, RE2JS.compile(toRe2Pattern(pattern)));
  } catch (error) {
    if (error instanceof UnsupportedPatternError)
      throw new UnsupportedPatternError(`the pattern "${pattern}" ${error.message}`);
    if (error instanceof RE2JSSyntaxException && /^\\[pP]\{/.test(error.input ?? ''))
      throw new UnsupportedPatternError(
        `the pattern "${pattern}": the linear-time engine knows no Unicode property ${error.input}`,
      );
    if (error instanceof RE2JSException) {
      const reason = error.message.replace(/^error parsing regexp: /, '');
      throw new UnsupportedPatternError(`the pattern "${pattern}" cannot be matched in linear time: ${reason}`);
    }
    throw error;
  }
}

/** ajv's `code.regExp`: ajv asks for every pattern with the `u` flag (its `unicodeRegExp` default, kept). */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    if (flags !== 'u') throw new Error(`patterns are compiled with the u flag only, not "${flags}"`);
    return compileLinearPattern(pattern);
  },
  // Only read when ajv writes standalone validation code, which toolgate never does.
  { code: 'linearRegExp' },
);

/** The `code` option of every ajv instance that compiles schemas: `new Ajv({ ..., code: linearPatterns() })`. */
export function linearPatterns(): CodeOptions {
  return { regExp: linearRegExp };
}
