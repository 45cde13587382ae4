// Passkey step-up in the config file (docs/receipts.md#passkey-step-up): stepUp on an agent or a tool, the tool's
// own winning; a value that is not one is one line naming the file, the field and the problem.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { stepUpFromConfig } from '../../src/config/step-up.js';
import { tempDir } from '../support/harness.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);

function configWith(agent: Record<string, unknown>) {
  return {
    models: { main: { provider: 'scripted' } },
    toolSources: { fs: { type: 'builtin' } },
    agents: [{ id: 'files', name: 'Files', model: 'main', tools: ['fs:*'], ...agent }],
  };
}

function load(config: unknown) {
  const file = join(dir, 'toolgate.json');
  writeFileSync(file, JSON.stringify(config));
  return { file, config: loadConfigFile(file).config };
}

describe('stepUp in the config file', () => {
  it('requires a passkey for a tool, or for every tool of an agent but the ones that say none', () => {
    const perTool = stepUpFromConfig(
      load(configWith({ toolConfirmation: { 'fs:write_file': { mode: 'ALWAYS', stepUp: 'passkey' } } })).config,
    );
    expect(perTool('files', 'fs:write_file')).toBe(true);
    expect(perTool('files', 'fs:read_file')).toBe(false);
    expect(perTool('other', 'fs:write_file')).toBe(false);
    const perAgent = stepUpFromConfig(
      load(configWith({ stepUp: 'passkey', toolConfirmation: { 'fs:read_file': { stepUp: 'none' } } })).config,
    );
    expect(perAgent('files', 'fs:write_file')).toBe(true);
    expect(perAgent('files', 'fs:read_file')).toBe(false);
  });

  it('refuses another value with one line naming the file and the field', () => {
    let message = '';
    try {
      load(configWith({ toolConfirmation: { 'fs:write_file': { stepUp: 'yubikey' } } }));
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/toolgate\.json.*agents\[0\]\.toolConfirmation\.fs:write_file\.stepUp.*passkey/);
    expect(message.split('\n')).toHaveLength(1);
  });
});
