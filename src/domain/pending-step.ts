// A paused turn's PendingStep as stored: JSON with a format version. What a store reads back is validated here and,
// if an earlier release wrote it, upgraded; anything else is an error that names the turn, never a step half-read.
//
// Versions:
//   (none)  `{ calls: [{ toolCall, outcome }] }`, written before steps had a version: the same calls as version 1.
//   1       `{ version: 1, calls: [{ toolCall, outcome }] }`.
import { z } from 'zod';
import type { PendingStep } from './records.js';

export const PENDING_STEP_VERSION = 1;

const toolCall = z.object({
  id: z.string(),
  name: z.string(),
  toolId: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  modelName: z.string().optional(),
  refusal: z.string().optional(),
});

const gateOutcome = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('run'), grantId: z.string().optional() }),
  z.object({ kind: z.literal('vetoed'), reason: z.string(), byRule: z.literal(true).optional() }),
  z.object({ kind: z.literal('rejected'), text: z.string() }),
  z.object({ kind: z.literal('confirm'), elicitationId: z.string() }),
]);

const calls = z.array(z.object({ toolCall, outcome: gateOutcome }));

const version1 = z.object({ version: z.literal(PENDING_STEP_VERSION), calls }) satisfies z.ZodType<PendingStep>;
/** Before versions: the calls alone. */
const unversioned = z.object({ calls });

/** A stored step that is not one this server can run. */
export class StoredStepError extends Error {
  constructor(
    readonly turnId: string,
    detail: string,
  ) {
    super(`The stored step of turn ${turnId} cannot be read: ${detail}`);
    this.name = 'StoredStepError';
  }
}

/**
 * The step as stored (the parsed JSON of its column) to the current PendingStep: validated, and upgraded when an
 * earlier release wrote it. Throws StoredStepError, naming `turnId`, for anything else.
 */
export function loadPendingStep(stored: unknown, turnId: string): PendingStep {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) {
    throw new StoredStepError(turnId, `expected an object with its calls, got ${describe(stored)}.`);
  }
  if (!('version' in stored)) return { version: PENDING_STEP_VERSION, calls: parse(unversioned, stored, turnId).calls };
  if (stored.version !== PENDING_STEP_VERSION) {
    throw new StoredStepError(
      turnId,
      `its format version ${JSON.stringify(stored.version)} is not one this server knows (${PENDING_STEP_VERSION}).`,
    );
  }
  return parse(version1, stored, turnId);
}

function parse<T>(schema: z.ZodType<T>, stored: unknown, turnId: string): T {
  const result = schema.safeParse(stored);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`);
    const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
    throw new StoredStepError(turnId, `${issues.slice(0, 3).join('; ')}${more}.`);
  }
  return result.data;
}

/** `calls[0].toolCall.id`, as the JSON is written. */
function pathOf(path: PropertyKey[]): string {
  const joined = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return joined.startsWith('.') ? joined.slice(1) : joined || '(the step)';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}
