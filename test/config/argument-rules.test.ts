// Argument rules and allowEdit in the config file: the object form of toolConfirmation, and the one-line errors for
// rules that cannot be used (file, path of the rule, problem). The server refuses them too when the config is given
// in code, before it opens anything.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gateDecision } from '../../src/domain/gate/gating.js';
import { gatingFromConfig } from '../../src/config/agent-gating.js';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { createServer } from '../../src/server.js';
import { tool } from '../support/definitions.js';
import { tempDir } from '../support/harness.js';
import { testConfig } from '../support/scenario.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);

const TMP_ONLY = { properties: { path: { pattern: '^/tmp/' } }, required: ['path'] };

function configWith(toolConfirmation: unknown, agent: Record<string, unknown> = {}) {
  return {
    models: { main: { provider: 'scripted' } },
    toolSources: { fs: { type: 'builtin' } },
    agents: [{ id: 'files', name: 'Files', model: 'main', tools: ['fs:*'], toolConfirmation, ...agent }],
  };
}

function load(config: unknown) {
  const file = join(dir, 'toolgate.json');
  writeFileSync(file, JSON.stringify(config));
  return loadConfigFile(file).config;
}

function errorOf(config: unknown): string {
  try {
    load(config);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the config loaded without an error');
}

describe('the config file', () => {
  it('takes a mode or the object form, and the agent gets modes, rules and allowEdit from it', () => {
    const config = load(
      configWith(
        {
          'fs:read_file': 'NEVER',
          'fs:write_file': {
            rules: [
              { match: TMP_ONLY, mode: 'NEVER' },
              { match: { properties: { path: { pattern: '^/etc/' } } }, mode: 'DENY', reason: 'system files' },
            ],
            allowEdit: false,
          },
          'fs:delete_file': { mode: 'ALWAYS' },
        },
        { allowEdit: true },
      ),
    );
    expect(gatingFromConfig(config.agents[0]!)).toEqual({
      toolConfirmation: { 'fs:read_file': 'NEVER', 'fs:write_file': 'BY_ANNOTATION', 'fs:delete_file': 'ALWAYS' },
      toolRules: {
        'fs:write_file': [
          { match: TMP_ONLY, mode: 'NEVER' },
          { match: { properties: { path: { pattern: '^/etc/' } } }, mode: 'DENY', reason: 'system files' },
        ],
      },
      toolAllowEdit: { 'fs:write_file': false },
      allowEdit: true,
      approvers: 'REQUESTER',
      toolApprovers: {},
    });
  });

  it('allowEdit defaults to true', () => {
    expect(gatingFromConfig(load(configWith({})).agents[0]!).allowEdit).toBe(true);
    expect(gatingFromConfig(load(configWith({}, { allowEdit: false })).agents[0]!).allowEdit).toBe(false);
  });

  it.each([
    [
      'a schema ajv refuses',
      {
        'fs:write_file': {
          rules: [
            { match: {}, mode: 'NEVER' },
            { match: { patern: '^/tmp/' }, mode: 'NEVER' },
          ],
        },
      },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[1].match: not a usable JSON Schema: strict mode: unknown keyword: "patern"',
    ],
    [
      'a broken regular expression',
      { 'fs:write_file': { rules: [{ match: { properties: { path: { pattern: '(' } } }, mode: 'ALWAYS' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].match: not a usable JSON Schema: Invalid regular expression: /(/u: Unterminated group',
    ],
    [
      'a pattern with a backreference (no linear-time match)',
      {
        'fs:write_file': { rules: [{ match: { properties: { path: { pattern: '^/(\\w+)/\\1/' } } }, mode: 'NEVER' }] },
      },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].match: not a usable JSON Schema: the pattern "^/(\\w+)/\\1/" uses a backreference, \\1, which cannot be matched in linear time',
    ],
    [
      'a lookahead in patternProperties',
      { 'fs:write_file': { rules: [{ match: { patternProperties: { '^(?!path$)': false } }, mode: 'NEVER' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].match: not a usable JSON Schema: the pattern "^(?!path$)" uses a lookahead, (?!path$), which cannot be matched in linear time',
    ],
    [
      'a DENY without a reason',
      { 'fs:write_file': { rules: [{ match: TMP_ONLY, mode: 'DENY' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].reason: a DENY rule needs a reason: the model is told it',
    ],
    [
      'an unknown rule mode',
      { 'fs:write_file': { rules: [{ match: TMP_ONLY, mode: 'SOMETIMES' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].mode: Invalid option: expected one of "ALWAYS"|"NEVER"|"DENY"',
    ],
    [
      'a match that is not an object',
      { 'fs:write_file': { rules: [{ match: '^/tmp/', mode: 'NEVER' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].match: Invalid input: expected record, received string',
    ],
    [
      'a rule without match',
      { 'fs:write_file': { rules: [{ mode: 'NEVER' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0].match: Invalid input: expected record, received undefined',
    ],
    [
      'an unknown key in a rule',
      { 'fs:write_file': { rules: [{ match: {}, mode: 'NEVER', when: 'now' }] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.rules[0]: unknown key "when" (allowed here: match, mode, reason, approvers)',
    ],
    [
      'an unknown key in the object form',
      { 'fs:write_file': { mode: 'NEVER', rule: [] } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file: unknown key "rule": did you mean "rules"?',
    ],
    [
      'an unknown mode string',
      { 'fs:write_file': 'SOMETIMES' },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file: "ALWAYS", "NEVER", "BY_ANNOTATION", or an object {"mode", "rules", "allowEdit", "approvers"}',
    ],
    [
      'a tool allowEdit that is not a boolean',
      { 'fs:write_file': { allowEdit: 'no' } },
      'toolgate.json: agents[0].toolConfirmation.fs:write_file.allowEdit: Invalid input: expected boolean, received string',
    ],
  ])('%s is one line naming the file and the path', (_label, toolConfirmation, expected) => {
    const message = errorOf(configWith(toolConfirmation));
    expect(message).toBe(join(dir, expected));
  });

  it('names every bad rule, of every agent, one line each', () => {
    const config = configWith({
      'fs:write_file': {
        rules: [
          { match: { type: 'strin' }, mode: 'NEVER' },
          { match: {}, mode: 'DENY' },
        ],
      },
    });
    const lines = errorOf(config).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('agents[0].toolConfirmation.fs:write_file.rules[0].match: not a usable JSON Schema');
    expect(lines[1]).toContain('agents[0].toolConfirmation.fs:write_file.rules[1].reason: a DENY rule needs a reason');
  });

  it('an agent allowEdit that is not a boolean', () => {
    expect(errorOf(configWith({}, { allowEdit: 'yes' }))).toBe(
      `${join(dir, 'toolgate.json')}: agents[0].allowEdit: Invalid input: expected boolean, received string`,
    );
  });
});

describe('the example of docs/argument-rules.md', () => {
  it('loads, and gates as the page says: /tmp/ runs, /etc/ is denied, the rest asks', () => {
    const page = readFileSync(new URL('../../docs/argument-rules.md', import.meta.url), 'utf8');
    const block = /```json\n([\s\S]*?)```/.exec(page)![1]!;
    const config = load(configWith(JSON.parse(`{${block}}`).toolConfirmation, { requireToolConfirmation: true }));
    const agent = { ...gatingFromConfig(config.agents[0]!), requireToolConfirmation: true };
    expect(agent.toolAllowEdit).toEqual({ 'fs:write_file': false });
    const writeFile = tool('write_file', {}, { id: 'fs:write_file' });
    expect(gateDecision(agent, writeFile, { path: '/tmp/out.txt' }).action).toBe('run');
    expect(gateDecision(agent, writeFile, { path: '/tmp/../etc/passwd' }).action).toBe('ask');
    expect(gateDecision(agent, writeFile, { path: '/etc/hosts' })).toMatchObject({
      action: 'deny',
      reason: 'system files are off limits',
    });
    expect(gateDecision(agent, writeFile, { path: '/home/me/x' }).action).toBe('ask');
  });
});

describe('a config given in code', () => {
  it('with an unusable rule stops createServer with the same one-line error', async () => {
    const config = testConfig({
      toolConfirmation: { 't:write_file': { rules: [{ match: { patern: 'x' }, mode: 'NEVER' }] } },
    });
    await expect(createServer({ config, configFile: 'code.json', database: ':memory:' })).rejects.toThrow(
      new ConfigError(
        'code.json: agents[0].toolConfirmation.t:write_file.rules[0].match: not a usable JSON Schema: strict mode: unknown keyword: "patern"',
      ),
    );
  });
});
