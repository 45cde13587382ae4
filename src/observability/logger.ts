// The server's structured log (pino): JSON lines, or pino-pretty's readable lines on a terminal. Pretty output is
// formatted in-process and written synchronously (no worker thread), like the JSON, so a process that exits right
// after logging (a fatal start error, a test) loses no line.
import { Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { ConfigError } from '../config/load.js';

export type { Logger } from 'pino';

/** The levels LOG_LEVEL takes, most to least verbose; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Default: the LOG_LEVEL environment variable, else `info`. */
  level?: string;
  /** A file descriptor (default 1, stdout; 2 is stderr) or a stream (tests: an in-memory one). */
  destination?: number | DestinationStream;
  /** pino-pretty's readable lines instead of JSON. Default: when the destination is a file descriptor on a TTY. */
  pretty?: boolean;
}

/**
 * Defensive: nothing logs these today (request lines carry no headers, variables or tool arguments), but a field
 * added later under one of these names is censored rather than written out.
 */
export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'connectionParams',
  '*.connectionParams',
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
  'variables',
  '*.variables',
  'arguments',
  '*.arguments',
];

/** A level name (any case); anything else is a ConfigError naming `name` and the allowed values. */
export function parseLogLevel(value: string, name = 'LOG_LEVEL'): LogLevel {
  const level = value.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new ConfigError(`${name}: "${value}" is not a log level (one of ${LOG_LEVELS.join(', ')})`);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const fromEnv = process.env.LOG_LEVEL;
  const level =
    options.level !== undefined
      ? parseLogLevel(options.level, 'log level')
      : fromEnv !== undefined && fromEnv !== ''
        ? parseLogLevel(fromEnv)
        : 'info';
  const destination = options.destination ?? 1;
  const readable = options.pretty ?? (typeof destination === 'number' && isatty(destination));
  const stream: DestinationStream = readable
    ? pretty({
        sync: true,
        // pino-pretty pipes into a Node stream: a bare { write } destination (tests) is wrapped in one.
        destination: typeof destination === 'number' ? destination : asWritable(destination),
        colorize: typeof destination === 'number' && isatty(destination),
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,name',
      })
    : typeof destination === 'number'
      ? pino.destination({ dest: destination, sync: true })
      : destination;
  return pino(
    {
      name: 'toolgate',
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Errors carry type, message, stack (and cause): server side only; clients get Yoga's masked errors.
      serializers: { err: pino.stdSerializers.err },
    },
    stream,
  );
}

function asWritable(destination: DestinationStream): Writable {
  if (destination instanceof Writable) return destination;
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      destination.write(chunk.toString());
      done();
    },
  });
}

/** Milliseconds rounded to 0.1 ms, for durations in log lines. */
export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

let fallback: Logger | undefined;

/** createServer's logger when none is given: warnings and errors only, on stderr (JSON, or pretty on a terminal). */
export function defaultServerLogger(): Logger {
  fallback ??= createLogger({ level: 'warn', destination: 2 });
  return fallback;
}
