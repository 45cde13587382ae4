// The runner of the suite's child bundles itself (run-bundle.mjs): a bundle runs as `node <bundle> …` would, its
// stack traces name the sources, and its code cache is written once and survives being unusable.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const RUN_BUNDLE = join(import.meta.dirname, 'run-bundle.mjs');
const run = promisify(execFile);

describe('run-bundle.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-run-bundle-'));
  const bundle = join(dir, 'entry.cjs');
  const cache = `${bundle}.v8-cache`;
  beforeAll(() => {
    // A program that prints its arguments, then after a while (so that the runner writes its cache) fails if asked.
    writeFileSync(
      join(dir, 'entry.ts'),
      [
        'console.log(JSON.stringify(process.argv.slice(1)));',
        'function fail(): never {',
        "  throw new Error('failed on purpose');",
        '}',
        "if (process.argv.includes('--fail')) setTimeout(fail, 1500);",
        '',
      ].join('\n'),
    );
    buildSync({
      entryPoints: [join(dir, 'entry.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      sourcemap: 'linked',
      logLevel: 'error',
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the bundle with the arguments node would give it', async () => {
    const { stdout } = await run(process.execPath, [RUN_BUNDLE, bundle, 'one', 'two']);
    expect(JSON.parse(stdout)).toEqual([bundle, 'one', 'two']);
  });

  it("names the source's line in a stack trace, and writes the code cache once the program has lived a second", async () => {
    const failure = await run(process.execPath, [RUN_BUNDLE, bundle, '--fail']).catch(
      (error: { stderr: string }) => error,
    );
    expect(failure.stderr).toContain('Error: failed on purpose');
    expect(failure.stderr).toContain(`at fail (${join(dir, 'entry.ts')}:3:9)`);
    expect(existsSync(cache)).toBe(true);
  });

  it('runs as before from a cache that V8 cannot use, and writes a good one', async () => {
    writeFileSync(cache, 'not a code cache');
    const { stdout } = await run(process.execPath, [RUN_BUNDLE, bundle, 'again']);
    expect(JSON.parse(stdout)).toEqual([bundle, 'again']);
    const failure = await run(process.execPath, [RUN_BUNDLE, bundle, '--fail']).catch(
      (error: { stderr: string }) => error,
    );
    expect(failure.stderr).toContain(`at fail (${join(dir, 'entry.ts')}:3:9)`);
    expect(readFileSync(cache).length).toBeGreaterThan(100);
  });
});
