// How big and how long: the full run (about ten minutes here) or BENCH_QUICK=1 / --quick (about a minute,
// small sizes, for building and debugging the bench itself; its figures are not the targets' sizes).

export interface Plan {
  quick: boolean;
  /** Every figure is the median of this many runs (at least 3). */
  runs: number;
  /** Seconds of load per run of a throughput figure. */
  seconds: number;
  /** Concurrent HTTP connections of a throughput figure (autocannon's default). */
  connections: number;
  transcriptLengths: number[];
  pendingRows: number;
  pendingUsers: number;
  subscriberCounts: number[];
  /** Events published per run of the push figure, by subscriber count. */
  pushEvents: (subscribers: number) => number;
  pausedTurns: number;
  /** Parts to run (1-10). */
  parts: Set<number>;
}

export function makePlan(argv: string[], env: NodeJS.ProcessEnv): Plan {
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  const only = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? env.BENCH_ONLY;
  const parts = new Set(
    (only ? only.split(',') : ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'])
      .map(Number)
      .filter((n) => n >= 1 && n <= 10),
  );
  const runs = Math.max(3, Number(env.BENCH_RUNS ?? 3) || 3);
  const pausedTurns = (n: number) => Number(env.BENCH_PAUSED_TURNS ?? n) || n;
  return quick
    ? {
        quick,
        runs,
        parts,
        seconds: Number(env.BENCH_SECONDS ?? 1),
        connections: 10,
        transcriptLengths: [10, 100, 1000],
        pendingRows: 20_000,
        pendingUsers: 200,
        subscriberCounts: [1, 50],
        pushEvents: (n) => (n === 1 ? 20 : 5),
        pausedTurns: pausedTurns(500),
      }
    : {
        quick,
        runs,
        parts,
        seconds: Number(env.BENCH_SECONDS ?? 5),
        connections: 10,
        transcriptLengths: [10, 100, 1000],
        pendingRows: 1_000_000,
        pendingUsers: 10_000,
        subscriberCounts: [1, 1000],
        pushEvents: (n) => (n === 1 ? 50 : 10),
        pausedTurns: pausedTurns(10_000),
      };
}
