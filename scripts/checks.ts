// `npm test`'s static checks (the npm scripts named as arguments), as many at a time as the machine has cores: each
// runs on its own, its output is printed whole when it ends, and the run fails when one of them failed. One line per
// check says how it ended and how long it took.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

interface Outcome {
  name: string;
  code: number | null;
  output: string;
  seconds: number;
}

function run(name: string): Promise<Outcome> {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => resolve({ name, code, output, seconds: (performance.now() - started) / 1000 })),
  );
}

const names = process.argv.slice(2);
const queue = [...names];
const failed: string[] = [];
async function worker(): Promise<void> {
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const outcome = await run(name);
    if (outcome.output.trim())
      process.stdout.write(outcome.output.endsWith('\n') ? outcome.output : `${outcome.output}\n`);
    const verdict = outcome.code === 0 ? 'passed' : `FAILED (exit ${outcome.code})`;
    console.log(`check: ${name} ${verdict} in ${outcome.seconds.toFixed(1)} s`);
    if (outcome.code !== 0) failed.push(name);
  }
}
await Promise.all(Array.from({ length: Math.min(availableParallelism(), names.length) }, worker));
if (failed.length) {
  console.error(`checks: ${failed.length} of ${names.length} failed: ${failed.join(', ')}`);
  process.exit(1);
}
