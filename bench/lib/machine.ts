// What the numbers were measured on: written at the top of bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export interface Machine {
  date: string;
  nproc: number;
  memoryGiB: number;
  node: string;
  cpu: string;
  loadAverage: string;
  commit: string;
}

export function describeMachine(): Machine {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', timeout: 5000 }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8', timeout: 5000 }).trim();
    if (dirty) commit += ' + uncommitted changes';
  } catch {
    /* not a git checkout */
  }
  return {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    loadAverage: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    commit,
  };
}
