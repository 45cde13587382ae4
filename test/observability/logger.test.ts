// createLogger: the level from LOG_LEVEL (a bad value is a one-line config error), JSON lines, pretty lines written
// synchronously, redaction of credential-like fields, errors with their stack.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { LEVEL, memoryLog } from '../support/log.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A destination collecting what is written. */
function sink() {
  const out = { text: '' };
  return {
    out,
    destination: {
      write(chunk: string) {
        out.text += chunk;
      },
    },
  };
}

describe('the level', () => {
  it('is info without LOG_LEVEL, else LOG_LEVEL (any case)', () => {
    vi.stubEnv('LOG_LEVEL', undefined);
    expect(createLogger({ destination: sink().destination }).level).toBe('info');
    vi.stubEnv('LOG_LEVEL', 'debug');
    expect(createLogger({ destination: sink().destination }).level).toBe('debug');
    vi.stubEnv('LOG_LEVEL', 'WARN');
    expect(createLogger({ destination: sink().destination }).level).toBe('warn');
    vi.stubEnv('LOG_LEVEL', 'silent');
    const silent = sink();
    createLogger({ destination: silent.destination }).fatal('not written');
    expect(silent.out.text).toBe('');
  });

  it('an invalid LOG_LEVEL is a ConfigError naming the variable, the value and the allowed levels, on one line', () => {
    vi.stubEnv('LOG_LEVEL', 'verbose');
    let thrown: unknown;
    try {
      createLogger({ destination: sink().destination });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toBe(
      'LOG_LEVEL: "verbose" is not a log level (one of trace, debug, info, warn, error, fatal, silent)',
    );
  });

  it('an explicit level wins over LOG_LEVEL, and is checked too', () => {
    vi.stubEnv('LOG_LEVEL', 'verbose');
    expect(createLogger({ level: 'error', destination: sink().destination }).level).toBe('error');
    expect(() => createLogger({ level: 'loud', destination: sink().destination })).toThrow(
      /^log level: "loud" is not a log level/,
    );
  });
});

describe('the output', () => {
  it('is one JSON object per line, with level, time, name and message', () => {
    const log = memoryLog('info');
    log.logger.info({ turnId: 'trn_1' }, 'hello');
    log.logger.debug('below the level');
    expect(log.text().endsWith('\n')).toBe(true);
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: LEVEL.info,
        name: 'toolgate',
        msg: 'hello',
        turnId: 'trn_1',
        time: expect.any(Number),
      }),
    ]);
  });

  it('pretty: readable lines, written before the call returns', () => {
    const { out, destination } = sink();
    const logger = createLogger({ level: 'info', pretty: true, destination });
    logger.info({ turnId: 'trn_1' }, 'hello');
    expect(out.text).toMatch(/INFO.*: hello\n/);
    expect(out.text).toContain('turnId: "trn_1"');
    expect(() => JSON.parse(out.text)).toThrow();
  });

  it('censors credential-like fields wherever a caller puts them', () => {
    const log = memoryLog('info');
    log.logger.info(
      {
        authorization: 'Bearer top-secret-1',
        headers: { authorization: 'Bearer top-secret-2' },
        request: { headers: { authorization: 'Bearer top-secret-3' } },
        connectionParams: { authorization: 'Bearer top-secret-4' },
        model: { apiKey: 'top-secret-5' },
        token: 'top-secret-6',
        variables: { message: 'top-secret-7' },
        toolCall: { arguments: { path: 'top-secret-8' } },
      },
      'careless',
    );
    expect(log.text()).not.toContain('top-secret');
    expect(log.text()).toContain('[redacted]');
  });

  it('an error is logged with its type, message and stack', () => {
    const log = memoryLog('info');
    log.logger.error({ err: new TypeError('disk on fire') }, 'unexpected fault');
    const [line] = log.lines();
    expect(line).toMatchObject({
      level: LEVEL.error,
      msg: 'unexpected fault',
      err: { type: 'TypeError', message: 'disk on fire' },
    });
    expect((line!.err as { stack: string }).stack).toMatch(/TypeError: disk on fire\n\s+at .*logger\.test\.ts:\d+/);
  });
});
