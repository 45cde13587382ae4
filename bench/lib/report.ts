// Figures with their targets, printed to the console and written to bench/RESULTS.md.
import type { Machine } from './machine.js';
import type { Plan } from './plan.js';

export interface Figure {
  name: string;
  value: string;
  target?: string;
  /** true: met; false: missed; undefined: no target. */
  pass?: boolean;
}

export interface PartResult {
  part: number;
  title: string;
  /** What is measured and how, in a sentence or two. */
  method: string;
  figures: Figure[];
  /** Each run's raw figures, for the record. */
  runs: string[];
  notes: string[];
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export const ms = (value: number) => `${fmt(value, value < 10 ? 3 : 1)} ms`;
export const perSecond = (value: number) => `${fmt(value, 0)}/s`;
export const mib = (bytes: number) => `${fmt(bytes / 2 ** 20, 1)} MiB`;

function verdict(figure: Figure): string {
  return figure.pass === undefined ? '' : figure.pass ? 'pass' : 'MISS';
}

export function printPart(result: PartResult): void {
  console.log(`\n== ${result.part}. ${result.title}`);
  for (const figure of result.figures) {
    const target = figure.target ? `  (target ${figure.target}: ${verdict(figure)})` : '';
    console.log(`   ${figure.name}: ${figure.value}${target}`);
  }
  for (const note of result.notes) console.log(`   note: ${note}`);
}

export function renderMarkdown(machine: Machine, plan: Plan, results: PartResult[], elapsedSeconds: number): string {
  const lines: string[] = [
    '# toolgate benchmark results',
    '',
    'Written by `npm run bench` (bench/run.ts); do not edit by hand. How each figure is measured: docs/bench.md.',
    '',
    `- date: ${machine.date}`,
    `- machine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGiB} GiB memory, load average at start ${machine.loadAverage}`,
    `- node ${machine.node}, commit ${machine.commit}`,
    `- mode: ${plan.quick ? "**quick (BENCH_QUICK=1): small sizes, not the targets' sizes**" : 'full'}; every figure is the median of ${plan.runs} runs; ${plan.seconds} s per throughput run, ${plan.connections} connections`,
    `- the whole run took ${fmt(elapsedSeconds, 0)} s`,
    '',
    '| # | figure | value | target | result |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const result of results) {
    for (const figure of result.figures) {
      lines.push(`| ${result.part} | ${figure.name} | ${figure.value} | ${figure.target ?? ''} | ${verdict(figure)} |`);
    }
  }
  for (const result of results) {
    lines.push('', `## ${result.part}. ${result.title}`, '', result.method, '');
    if (result.runs.length) lines.push('Runs:', '', ...result.runs.map((r) => `- ${r}`), '');
    if (result.notes.length) lines.push(...result.notes.map((n) => `Note: ${n}`), '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
