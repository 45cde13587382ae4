// Small statistics over samples: nearest-rank percentiles and medians.

/** Nearest-rank percentile (0 < p <= 100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return Number.NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of one field over several runs. */
export function medianOf<T>(runs: readonly T[], pick: (run: T) => number): number {
  return median(runs.map(pick));
}

/** A wall-clock time in milliseconds with sub-millisecond precision, comparable between processes on one machine. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}
