// What every child process of part 9 shares: answering the bench's IPC calls (which may be async here: a call
// can run a load for seconds), stopping on SIGTERM or when the bench goes away, and the in-process load loop.
import { runWorkers } from '../lib/http-workers.js';
import type { CallMessage, ReplyMessage } from '../lib/processes.js';
import { percentile } from '../lib/stats.js';

export type Commands = Record<string, (args: Record<string, unknown>) => unknown>;

/** Answers IPC calls with `commands`, and reports ready with `url` ('' for a child without a server). */
export function serveCommands(commands: Commands, url: string, close: () => Promise<void>): void {
  if (!process.send) throw new Error('a part 9 child is started by bench/run.ts (IPC)');
  process.on('message', (message: CallMessage) => {
    if (message.type !== 'call') return;
    const reply = (fields: Omit<ReplyMessage, 'type' | 'id'>) =>
      process.send!({ type: 'reply', id: message.id, ...fields } satisfies ReplyMessage);
    Promise.resolve()
      .then(() => {
        const command = commands[message.command];
        if (!command) throw new Error(`unknown command ${message.command}`);
        return command(message.args);
      })
      .then(
        (result) => reply({ result: result ?? null }),
        (error: unknown) => reply({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      );
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop); // the bench died: do not outlive it
  process.send({ type: 'ready', url });
}

export interface FlowsRun {
  completed: number;
  failures: number;
  firstFailure?: string;
  /** Seconds until the last round trip settled. */
  elapsed: number;
  p50: number;
  p99: number;
}

/**
 * `flows` concurrent loops in this process for `seconds`, each running `roundTrip` again as soon as the last one
 * settled; a round trip that throws is a failure.
 */
export async function runFlows(
  flows: number,
  seconds: number,
  roundTrip: (flow: number, k: number) => Promise<void>,
): Promise<FlowsRun> {
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const elapsed = await runWorkers(flows, seconds, async (flow, k) => {
    const t0 = performance.now();
    try {
      await roundTrip(flow, k);
      samples.push(performance.now() - t0);
    } catch (error) {
      failures++;
      firstFailure ??= (error instanceof Error ? error.message : String(error)).slice(0, 300);
    }
  });
  return {
    completed: samples.length,
    failures,
    firstFailure,
    elapsed,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
  };
}

/** The prior messages of a thread with `length` messages: the texts bench/lib/seed.ts seeds toolgate's with. */
export function priorMessages(length: number): { role: 'user' | 'assistant'; text: string }[] {
  return Array.from({ length }, (_, i) =>
    i % 2 === 0
      ? {
          role: 'user' as const,
          text: `Message ${i}: please tell me what the entities in the demo store are called and which of them are new.`,
        }
      : {
          role: 'assistant' as const,
          text: `Message ${i}: the demo store holds a handful of entities; none of them changed since you last asked, as far as I can see.`,
        },
  );
}
