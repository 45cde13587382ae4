// `npm test`'s first step (scripts/test-preflight.ts): on a machine without Chromium, Redis or PostgreSQL it stops
// within seconds, one line per missing part naming the fix, before the type-check and the suite.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** A port on 127.0.0.1 that nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function preflight(env: Record<string, string>) {
  const started = Date.now();
  const result = await run(process.execPath, ['--import', 'tsx', 'scripts/test-preflight.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  return { ...result, seconds: (Date.now() - started) / 1000 };
}

describe('the test preflight', () => {
  it('stops within seconds naming the fix for a missing Chromium, Redis and PostgreSQL', async () => {
    const port = await closedPort();
    const result = await preflight({
      TOOLGATE_CHROMIUM: '/nonexistent/chromium',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      TOOLGATE_TEST_POSTGRES: `postgres://postgres@127.0.0.1:${port}/test`,
    });
    expect(result.code).toBe(1);
    expect(result.seconds).toBeLessThan(15);
    expect(result.stderr).toContain(
      'Chromium not found at /nonexistent/chromium: apt-get install chromium-headless-shell, or set TOOLGATE_CHROMIUM',
    );
    expect(result.stderr).toMatch(
      new RegExp(`Redis at redis://127.0.0.1:${port} does not answer \\(connect ECONNREFUSED[^)]*\\): .*set REDIS_URL`),
    );
    expect(result.stderr).toMatch(
      new RegExp(
        `PostgreSQL at postgres://postgres@127.0.0.1:${port}/test cannot be used \\(connect ECONNREFUSED[^)]*\\): .*set TOOLGATE_TEST_POSTGRES`,
      ),
    );
  });

  it('names only what is missing, and hides a password in the URL', async () => {
    const port = await closedPort();
    const result = await preflight({
      TOOLGATE_CHROMIUM: '/nonexistent/chromium',
      REDIS_URL: `redis://:hunter2@127.0.0.1:${port}`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stderr).toContain(`Redis at redis://:***@127.0.0.1:${port} does not answer`);
    expect(result.stderr).not.toContain('PostgreSQL');
  });

  it('passes on this machine, where the suite runs, naming the Chromium the browser tests will drive', async () => {
    const result = await preflight({});
    expect(result).toMatchObject({ code: 0, stderr: '' });
    // The one TOOLGATE_CHROMIUM names; else Debian's headless build when it is installed, the full browser otherwise.
    const expected =
      process.env.TOOLGATE_CHROMIUM ??
      (existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium');
    expect(result.stdout).toContain(`PostgreSQL, Redis and Chromium (${expected}) are there`);
  });

  it('TOOLGATE_CHROMIUM names the executable to drive instead', async () => {
    // Any executable passes the preflight, which looks only for the file.
    const result = await preflight({ TOOLGATE_CHROMIUM: process.execPath });
    expect(result.stdout).toContain(`Chromium (${process.execPath}) are there`);
  });
});
