// The `toolgate` command's own commands (src/cli.ts) in a process of their own, built from the sources: --help,
// --version, an unknown command, and `init`, whose starter config must be the built-in demo and is never written over
// a file.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { loadConfigFile } from '../../src/config/load.js';
import { nodeArgsFor } from '../support/entries.js';
import { tempDir } from '../support/harness.js';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const temp = tempDir();
afterAll(() => temp.cleanup());

/** `toolgate <args>` from `cwd`: node on the run's bundle of src/cli.ts (test/support/entries.ts). */
async function toolgate(args: string[], cwd = temp.dir): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...nodeArgsFor('src/cli.ts'), ...args], {
      cwd,
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A fresh empty folder under the test's temp dir. */
function folder(name: string): string {
  const dir = join(temp.dir, name);
  mkdirSync(dir);
  return dir;
}

describe('toolgate --help, --version, an unknown command', () => {
  it('--help names every command and the variables the server and the bridge read', async () => {
    const help = await toolgate(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(new RegExp(`^toolgate ${PACKAGE.version.replaceAll('.', '\\.')}: `));
    for (const word of ['toolgate init [file]', 'toolgate mcp', 'toolgate --version', 'HOST', 'PORT', 'LOG_LEVEL'])
      expect(help.stdout).toContain(word);
    for (const name of ['TOOLGATE_CONFIG', 'TOOLGATE_DB', 'TOOLGATE_REDIS', 'TOOLGATE_URL', 'TOOLGATE_TOKEN'])
      expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect((await toolgate(['-h'])).stdout).toBe(help.stdout);
  });

  it('--help names where the docs are, and the files it names are there', async () => {
    const { stdout } = await toolgate(['--help']);
    const folder = /The docs come with the package, in (.+): /.exec(stdout)?.[1];
    expect(folder).toBeDefined();
    const named = [...stdout.matchAll(/\b(README\.md|docs\/[\w./-]+\.md)/g)].map((m) => m[1]!);
    expect(named).toEqual(['README.md', 'docs/config.md', 'docs/reference/config.md']);
    for (const file of named) expect(existsSync(join(folder!, file)), file).toBe(true);
  });

  it("--version prints the package's version", async () => {
    expect(await toolgate(['--version'])).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
  });

  it('an unknown command is one line on stderr and exit status 2; nothing starts', async () => {
    expect(await toolgate(['serve'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'toolgate: unknown command "serve" (toolgate --help lists the commands)\n',
    });
  });
});

describe('toolgate init', () => {
  it('writes toolgate.jsonc, a commented config that loads as exactly the built-in demo', async () => {
    const dir = folder('init-default');
    const run = await toolgate(['init'], dir);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('TOOLGATE_CONFIG=toolgate.jsonc npx toolgate');
    const text = readFileSync(join(dir, 'toolgate.jsonc'), 'utf8');
    expect(text).toMatch(/^\/\/ toolgate config\./);
    // The sections a user turns on next are there, commented out.
    for (const section of ['"openai-compatible"', '"type": "mcp"', '"auth"', '"database"', '"pubsub"'])
      expect(text).toMatch(new RegExp(`^\\s*// .*${section}`, 'm'));
    const { $schema, ...config } = loadConfigFile(join(dir, 'toolgate.jsonc')).config;
    expect($schema).toBe('./node_modules/toolgate/schema/toolgate.config.schema.json');
    expect(config).toEqual(demoConfig);
  });

  it('writes to the file it is given', async () => {
    const dir = folder('init-named');
    expect((await toolgate(['init', 'configs.d/agents.jsonc'], dir)).code).toBe(1); // no such folder: nothing made
    mkdirSync(join(dir, 'configs.d'));
    expect(await toolgate(['init', 'configs.d/agents.jsonc'], dir)).toMatchObject({ code: 0, stderr: '' });
    expect(loadConfigFile(join(dir, 'configs.d/agents.jsonc')).config.agents[0]!.id).toBe('demo');
  });

  it('refuses to overwrite an existing file with one line, and leaves it as it was', async () => {
    const dir = folder('init-existing');
    writeFileSync(join(dir, 'toolgate.jsonc'), '{"mine": true}\n');
    expect(await toolgate(['init'], dir)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'toolgate init: toolgate.jsonc already exists; it is left as it is (name another file: toolgate init <file>)\n',
    });
    expect(readFileSync(join(dir, 'toolgate.jsonc'), 'utf8')).toBe('{"mine": true}\n');
  });

  it('refuses a second argument or an option, and writes nothing', async () => {
    const dir = folder('init-usage');
    for (const args of [
      ['init', 'a.jsonc', 'b.jsonc'],
      ['init', '--force'],
    ]) {
      expect(await toolgate(args, dir)).toEqual({
        code: 2,
        stdout: '',
        stderr: 'toolgate init: usage: toolgate init [file]\n',
      });
    }
    expect(existsSync(join(dir, 'a.jsonc')) || existsSync(join(dir, 'toolgate.jsonc'))).toBe(false);
  });
});
