// Where a command's CPU goes, by kind of process: runs the command (by default the test suite, `npx vitest run`),
// reads every process's CPU time from /proc while it runs, and prints the CPU-seconds and number of processes of each
// kind (vitest's forks, the children started from the test bundles, Chromium's renderers, PostgreSQL's backends…),
// then how many cores were busy on average. docs/contributing.md's breakdowns of the suite are made this way.
// Linux only: `npm run bench:suite-cpu [-- <command> <args…>]`, with nothing else running meanwhile.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { processStatOf } from './lib/processes.js';

const SAMPLE_MS = 300;

/** The kind of a process, from its command line (a kernel thread has none: its name). */
function kindOf(commandLine: string, name: string): string {
  if (!commandLine) return `kernel ${name.split(/[/:]/)[0]!.replace(/[.\d]+$/, '')}`;
  if (/chrom/.test(commandLine)) return `chromium ${/--type=([\w-]+)/.exec(commandLine)?.[1] ?? 'browser'}`;
  if (commandLine.startsWith('postgres')) return 'postgresql backend';
  if (/vitest\/dist\/workers|forks\.js/.test(commandLine)) return 'vitest fork';
  if (commandLine.includes('vitest')) return 'vitest main';
  if (commandLine.includes('run-bundle')) return 'child from a test bundle';
  const fixture = /test\/fixtures\/[\w-]+\.mjs/.exec(commandLine)?.[0];
  if (fixture) return fixture;
  if (/\bnpm(-cli)?\b/.test(commandLine)) return 'npm';
  if (/\btsc\b/.test(commandLine)) return 'tsc';
  if (commandLine.includes('esbuild')) return 'esbuild';
  if (commandLine.includes('vitepress')) return 'vitepress';
  if (/node_modules\/(\.bin\/)?toolgate\b/.test(commandLine)) return 'installed toolgate command';
  if (commandLine.includes('--import tsx') || commandLine.includes('tsx/dist')) return 'node under tsx';
  return `other ${commandLine.slice(0, 60)}`;
}

interface Seen {
  kind: string;
  /** CPU milliseconds when first seen (kept for a process that was already running), and when last seen. */
  first: number;
  last: number;
}

/** pid:starttime → what was seen of it: a pid reused by a new process is a new key. */
const seen = new Map<string, Seen>();

function sample(before: boolean): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const { cpuMs, startedAt } = processStatOf(Number(pid));
      const key = `${pid}:${startedAt}`;
      const known = seen.get(key);
      if (known) {
        known.last = cpuMs;
        continue;
      }
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      seen.set(key, { kind: kindOf(commandLine, name), first: before ? cpuMs : 0, last: cpuMs });
    } catch {
      // The process ended between listing and reading.
    }
  }
}

/** Busy and total ticks of the whole machine (/proc/stat's first line: idle and iowait are not busy). */
function machineTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = values.map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

const given = process.argv.slice(2);
const named = given[0] === '--' ? given.slice(1) : given;
const command = named.length > 0 ? named : ['npx', 'vitest', 'run'];

sample(true);
const machineBefore = machineTicks();
const started = performance.now();
const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
const timer = setInterval(() => sample(false), SAMPLE_MS);
const code = await new Promise<number>((resolve) => child.once('exit', (exitCode) => resolve(exitCode ?? 1)));
clearInterval(timer);
sample(false);
const seconds = (performance.now() - started) / 1000;
const machineAfter = machineTicks();

const byKind = new Map<string, { seconds: number; processes: number }>();
for (const { kind, first, last } of seen.values()) {
  const entry = byKind.get(kind) ?? { seconds: 0, processes: 0 };
  entry.seconds += (last - first) / 1000;
  entry.processes += last > first ? 1 : 0;
  byKind.set(kind, entry);
}
const rows = [...byKind].filter(([, entry]) => entry.seconds >= 0.5).sort((a, b) => b[1].seconds - a[1].seconds);
const sampled = rows.reduce((sum, [, entry]) => sum + entry.seconds, 0);
const busyCores =
  ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * availableParallelism();

console.log(`\n${command.join(' ')}: exit ${code}, ${seconds.toFixed(1)} s, ${busyCores.toFixed(2)} busy cores`);
console.log(
  `CPU-seconds by kind of process (${sampled.toFixed(0)} s seen; a process shorter than a sample is missed):`,
);
for (const [kind, entry] of rows)
  console.log(`${entry.seconds.toFixed(1).padStart(8)}  ${String(entry.processes).padStart(5)}  ${kind}`);
process.exitCode = code;
