// Config errors name the file, the path inside it and what is wrong.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { checkAgentTools } from '../../src/config/tool-ids.js';
import { tempDir } from '../support/harness.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);

const base = {
  models: { main: { provider: 'scripted' } },
  toolSources: { demo: { type: 'builtin' } },
  agents: [{ id: 'editor', name: 'Editor', model: 'main', tools: ['demo:*'] }],
};

function errorOf(config: unknown, name = 'config.json'): string {
  const file = join(dir, name);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  try {
    loadConfigFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the config loaded without an error');
}

describe('loadConfigFile', () => {
  it('accepts a valid config and fills in the defaults', () => {
    const file = join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(base));
    const { config } = loadConfigFile(file);
    expect(config.agents[0]).toMatchObject({
      requireToolConfirmation: false,
      pauseTtlSeconds: 3600,
      maxIterations: 10,
      toolConfirmation: {},
    });
  });

  it('takes the limits of the server section', () => {
    const file = join(dir, 'limits.json');
    const server = { maxToolArgumentsBytes: 4096, maxSubscriptionsPerSocket: 10, maxSubscriptionsPerUser: 50 };
    writeFileSync(file, JSON.stringify({ ...base, server }));
    expect(loadConfigFile(file).config.server).toEqual(server);
  });

  it('accepts any token of visible ASCII characters, RFC 6750 b64token and beyond', () => {
    const file = join(dir, 'tokens.json');
    const tokens = ['abc', 'A-Z.a_z~0+9/==', '!#$%&\'*^`|:;<>?@[]{}\\"(),'];
    writeFileSync(
      file,
      JSON.stringify({ ...base, auth: { tokens: tokens.map((token, i) => ({ token, user: `u${i}` })) } }),
    );
    expect(loadConfigFile(file).config.auth!.tokens!.map((entry) => entry.token)).toEqual(tokens);
  });

  it.each(['a b', '', ' padded', 'tab\there', 'line\nbreak', 'café', 'no\u00a0break'])(
    'names the path of a token that no Authorization header can carry: %j',
    (token) => {
      const tokens = [
        { token: 'fine-token', user: 'alice' },
        { token, user: 'bob' },
      ];
      expect(errorOf({ ...base, auth: { tokens } })).toMatch(
        /config\.json: auth\.tokens\[1\]\.token: expected a bearer token, one or more visible ASCII characters \("!" to "~"; no spaces\), or "env:NAME"$/,
      );
    },
  );

  it.each([
    ['a missing file', null, /missing\.json: cannot read the config file \(ENOENT\)$/],
    ['broken JSON', '{"models": ', /config\.json: not valid JSON: /],
    [
      'a wrong type',
      { ...base, agents: [{ ...base.agents[0], maxIterations: 'ten' }] },
      /config\.json: agents\[0\]\.maxIterations: Invalid input: expected number, received string$/,
    ],
    [
      'an unknown field',
      { ...base, plugin: [] },
      /config\.json: \(top level\): unknown key "plugin": did you mean "plugins"\?$/,
    ],
    [
      'a bad base URL',
      { ...base, models: { main: { provider: 'openai-compatible', baseURL: 'not a url', model: 'm' } } },
      /config\.json: models\.main\.baseURL: Invalid URL$/,
    ],
    [
      'an unknown provider',
      { ...base, models: { main: { provider: 'anthropic' } } },
      /config\.json: models\.main\.provider: /,
    ],
    [
      'an unknown model id',
      { ...base, agents: [{ ...base.agents[0], model: 'gpt' }] },
      /config\.json: agents\[0\]\.model: unknown model "gpt" \(models: main\)$/,
    ],
    [
      'an unknown tool source',
      { ...base, agents: [{ ...base.agents[0], tools: ['fs:read_file'] }] },
      /config\.json: agents\[0\]\.tools\[0\]: unknown tool source "fs" in "fs:read_file"$/,
    ],
    [
      'a malformed tool id',
      { ...base, agents: [{ ...base.agents[0], tools: ['read_file'] }] },
      /config\.json: agents\[0\]\.tools\[0\]: a tool id "<source>:<name>" or "<source>:\*"$/,
    ],
    [
      'a pattern as an override',
      { ...base, agents: [{ ...base.agents[0], toolConfirmation: { 'demo:*': 'ALWAYS' } }] },
      /config\.json: agents\[0\]\.toolConfirmation\.demo:\*: an override names one tool id, not a pattern$/,
    ],
    [
      'an MCP source with neither command nor url',
      { ...base, toolSources: { fs: { type: 'mcp' } } },
      /config\.json: toolSources\.fs: an MCP source needs "command" \(a stdio server\) or "url" \(a Streamable HTTP server\)$/,
    ],
    [
      'an MCP source with both command and url',
      { ...base, toolSources: { fs: { type: 'mcp', command: 'x', url: 'http://127.0.0.1:1/mcp' } } },
      /config\.json: toolSources\.fs: an MCP source has "command" \(stdio\) or "url" \(Streamable HTTP\), not both$/,
    ],
    [
      'a role name with capitals',
      { ...base, auth: { tokens: [{ token: 'fine-token', user: 'alice', roles: ['reviewer', 'Ops'] }] } },
      /config\.json: auth\.tokens\[0\]\.roles\[1\]: a role: lowercase letters, digits, "_" or "-", at most 64$/,
    ],
    [
      'no subscriptions at all per socket',
      { ...base, server: { maxSubscriptionsPerSocket: 0 } },
      /config\.json: server\.maxSubscriptionsPerSocket: Too small: expected number to be >=1$/,
    ],
    [
      'a tool arguments limit that is not a whole number',
      { ...base, server: { maxToolArgumentsBytes: 1.5 } },
      /config\.json: server\.maxToolArgumentsBytes: Invalid input: expected int, received number$/,
    ],
  ])('names file, path and problem for %s', (_what, config, expected) => {
    const message =
      config === null
        ? (() => {
            try {
              loadConfigFile(join(dir, 'missing.json'));
            } catch (e) {
              return (e as Error).message;
            }
            return '';
          })()
        : errorOf(config);
    expect(message).toMatch(expected);
    expect(message.startsWith(dir)).toBe(true);
  });
});

describe('an unknown key', () => {
  const agent = base.agents[0]!;
  it.each([
    ['a swap of two letters', { ...base, agnets: [] }, '(top level): unknown key "agnets": did you mean "agents"?'],
    [
      'another case',
      { ...base, ToolSources: {} },
      '(top level): unknown key "ToolSources": did you mean "toolSources"?',
    ],
    [
      'a letter missing, in an agent',
      { ...base, agents: [{ ...agent, requireToolConfirmaton: true }] },
      'agents[0]: unknown key "requireToolConfirmaton": did you mean "requireToolConfirmation"?',
    ],
    [
      "a key of the model's own provider",
      {
        ...base,
        models: { main: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', model: 'm', stram: true } },
      },
      'models.main: unknown key "stram": did you mean "stream"?',
    ],
    [
      "not a key of another provider's: the scripted model has only provider",
      { ...base, models: { main: { provider: 'scripted', stram: true } } },
      'models.main: unknown key "stram" (allowed here: provider)',
    ],
    [
      'nothing like it: the keys allowed there',
      { ...base, agents: [{ ...agent, color: 'red' }] },
      'agents[0]: unknown key "color" (allowed here: id, name, description, model, systemPrompt, tools, requireToolConfirmation, toolConfirmation, allowEdit, approvers, stepUp, pauseTtlSeconds, maxIterations)',
    ],
  ])('%s', (_what, config, expected) => {
    expect(errorOf(config)).toBe(`${join(dir, 'config.json')}: ${expected}`);
  });

  it('one line per unknown key', () => {
    expect(errorOf({ ...base, agnets: [], modles: {} }).split('\n')).toEqual([
      `${join(dir, 'config.json')}: (top level): unknown key "agnets": did you mean "agents"?`,
      `${join(dir, 'config.json')}: (top level): unknown key "modles": did you mean "models"?`,
    ]);
  });
});

describe('loadConfigFile on JSON with comments', () => {
  function load(text: string) {
    const file = join(dir, 'commented.jsonc');
    writeFileSync(file, text);
    return loadConfigFile(file).config;
  }

  it('reads line and block comments and trailing commas, as `toolgate init` writes them', () => {
    const config = load(`// The starter.
{
  /* models by id */
  "models": { "main": { "provider": "scripted" }, },
  "toolSources": {
    "demo": { "type": "builtin" }, // the demo tools
    // "memory": { "type": "mcp", "command": "npx" },
  },
  "agents": [{ "id": "editor", "name": "Editor", "model": "main", "tools": ["demo:*",], }, /* no more */ ],
}
`);
    expect(config.models).toEqual({ main: { provider: 'scripted' } });
    expect(Object.keys(config.toolSources)).toEqual(['demo']);
    expect(config.agents.map((agent) => [agent.id, agent.tools])).toEqual([['editor', ['demo:*']]]);
  });

  it('keeps what only looks like a comment or a trailing comma inside a string', () => {
    const config = load(`{
  "models": { "main": { "provider": "openai-compatible", "baseURL": "https://example.com/v1", "model": "a,}/*b*/" } },
  "agents": [{ "id": "e", "name": "Say \\"// not a comment\\"", "model": "main", "tools": [], "systemPrompt": "x, ]" }]
}`);
    expect(config.models.main).toMatchObject({ baseURL: 'https://example.com/v1', model: 'a,}/*b*/' });
    expect(config.agents[0]).toMatchObject({ name: 'Say "// not a comment"', systemPrompt: 'x, ]' });
  });

  it('points a JSON error at the place in the file as written, comments counted', () => {
    // JSON.parse names the position of the stray token: the same with the comment before it as without.
    const withComment = errorOf('/* 12345 */ {"models": x}', 'c1.json').replace(/^.*not valid JSON: /, '');
    const spaces = errorOf('            {"models": x}', 'c2.json').replace(/^.*not valid JSON: /, '');
    expect(withComment).toBe(spaces);
  });

  it('refuses a block comment that never ends, naming the file and where it starts', () => {
    expect(errorOf('{"models": {}} /* open', 'c3.json')).toMatch(/c3\.json: not valid JSON: .*position 15/);
  });
});

describe('checkAgentTools', () => {
  const tools = [
    { id: 'fs:read_file', source: 'fs', name: 'read_file' },
    { id: 'fs:write_file', source: 'fs', name: 'write_file' },
  ];
  const agent = (toolIds: string[], toolConfirmation: Record<string, 'ALWAYS'> = {}) => ({
    agents: [
      {
        id: 'a',
        name: 'A',
        model: 'm',
        systemPrompt: '',
        tools: toolIds,
        requireToolConfirmation: true,
        toolConfirmation,
        pauseTtlSeconds: 60,
        maxIterations: 3,
      },
    ],
  });

  it('accepts listed ids and patterns, even a pattern whose source lists nothing yet', () => {
    expect(() => checkAgentTools(agent(['fs:read_file', 'fs:*', 'later:*']), 'c.json', tools)).not.toThrow();
  });

  it('names a tool id that no source lists, and what the source does list', () => {
    expect(() => checkAgentTools(agent(['fs:read_file', 'fs:wirte_file']), 'c.json', tools)).toThrow(
      'c.json: agents[0].tools[1]: no tool source lists "fs:wirte_file" ("fs" lists: read_file, write_file)',
    );
  });

  it('names an override for a tool that no source lists', () => {
    expect(() => checkAgentTools(agent(['fs:*'], { 'fs:delete_file': 'ALWAYS' }), 'c.json', tools)).toThrow(
      'c.json: agents[0].toolConfirmation.fs:delete_file: no tool source lists "fs:delete_file" ("fs" lists: read_file, write_file)',
    );
  });
});
