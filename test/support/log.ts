// A logger like the CLI's (createLogger: same redaction and serializers), writing JSON lines into memory.
import { createLogger, type Logger } from '../../src/observability/logger.js';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface MemoryLog {
  logger: Logger;
  /** Everything written so far, as written. */
  text(): string;
  lines(): LogLine[];
  /** The lines with this message (and these fields, when given). */
  find(msg: string, fields?: Record<string, unknown>): LogLine[];
  /** Resolves with the first line with this message and fields, once it is written; rejects after `timeoutMs`. */
  waitFor(msg: string, fields?: Record<string, unknown>, timeoutMs?: number): Promise<LogLine>;
}

/** pino's numeric levels. */
export const LEVEL = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export function memoryLog(level = 'trace'): MemoryLog {
  let text = '';
  const logger = createLogger({
    level,
    pretty: false,
    destination: {
      write(chunk: string) {
        text += chunk;
      },
    },
  });
  const lines = () =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  const find = (msg: string, fields: Record<string, unknown> = {}) =>
    lines().filter(
      (line) => line.msg === msg && Object.entries(fields).every(([key, value]) => Object.is(line[key], value)),
    );
  return {
    logger,
    text: () => text,
    lines,
    find,
    async waitFor(msg, fields, timeoutMs = 5_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const [found] = find(msg, fields);
        if (found) return found;
        if (Date.now() > end) throw new Error(`no log line "${msg}" ${JSON.stringify(fields ?? {})} in:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}
