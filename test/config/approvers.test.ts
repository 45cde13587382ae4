// Approvers in the config (docs/approvers.md): a policy on the agent, a tool and an argument rule, its defaults, and
// the policies that cannot work, each refused with one line naming the file and the path.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approversFor } from '../../src/domain/gate/gating.js';
import { gatingFromConfig } from '../../src/config/agent-gating.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';

const base = {
  models: { main: { provider: 'scripted' } },
  toolSources: { fs: { type: 'builtin' } },
};
const withAgent = (agent: Record<string, unknown>) => ({
  ...base,
  agents: [{ id: 'editor', name: 'Editor', model: 'main', tools: ['fs:*'], ...agent }],
});

function errorOf(config: unknown): string {
  try {
    parseConfig(config, 'toolgate.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('approvers in the config', () => {
  it('reads a policy on the agent, a tool and an ALWAYS rule, with their defaults', () => {
    const config = parseConfig(
      withAgent({
        approvers: { roles: ['reviewer'], escalate: { afterSeconds: 900, roles: ['oncall'] } },
        toolConfirmation: {
          'fs:delete': { approvers: { roles: ['admin', 'admin'], required: 2, requester: 'EXCLUDED' } },
          'fs:read': { mode: 'NEVER', approvers: 'REQUESTER' },
          'fs:write': {
            rules: [
              { match: { required: ['path'] }, mode: 'ALWAYS', approvers: { roles: ['security'] } },
              { match: {}, mode: 'NEVER' },
            ],
          },
        },
      }),
    );
    const gating = gatingFromConfig(config.agents[0]!);
    expect(gating.approvers).toEqual({
      roles: ['reviewer'],
      required: 1,
      requester: 'ALSO',
      escalate: { afterSeconds: 900, roles: ['oncall'] },
    });
    expect(gating.toolApprovers).toEqual({
      'fs:delete': { roles: ['admin'], required: 2, requester: 'EXCLUDED', escalate: null },
      'fs:read': 'REQUESTER',
    });
    expect(gating.toolRules['fs:write']).toEqual([
      {
        match: { required: ['path'] },
        mode: 'ALWAYS',
        approvers: { roles: ['security'], required: 1, requester: 'ALSO', escalate: null },
      },
      { match: {}, mode: 'NEVER' },
    ]);
  });

  it('without approvers, the requester alone answers', () => {
    const gating = gatingFromConfig(parseConfig(withAgent({})).agents[0]!);
    expect(gating.approvers).toBe('REQUESTER');
    expect(gating.toolApprovers).toEqual({});
  });

  it.each([
    [
      'an escalation at the expiry',
      { pauseTtlSeconds: 600, approvers: { roles: ['reviewer'], escalate: { afterSeconds: 600, roles: ['oncall'] } } },
      "toolgate.json: agents[0].approvers.escalate.afterSeconds: 600 is not below the agent's pauseTtlSeconds (600): the request would expire before it escalates",
    ],
    [
      "an escalation after a tool's expiry",
      {
        toolConfirmation: {
          'fs:delete': { approvers: { roles: ['reviewer'], escalate: { afterSeconds: 7200, roles: ['oncall'] } } },
        },
      },
      "toolgate.json: agents[0].toolConfirmation.fs:delete.approvers.escalate.afterSeconds: 7200 is not below the agent's pauseTtlSeconds (3600): the request would expire before it escalates",
    ],
    [
      'approvers on a rule that never asks',
      {
        toolConfirmation: { 'fs:write': { rules: [{ match: {}, mode: 'NEVER', approvers: { roles: ['reviewer'] } }] } },
      },
      'toolgate.json: agents[0].toolConfirmation.fs:write.rules[0].approvers: only a rule that asks (mode ALWAYS) has approvers; a NEVER rule asks no one',
    ],
    [
      'no approver required',
      { approvers: { roles: ['reviewer'], required: 0 } },
      'toolgate.json: agents[0].approvers.required: Too small: expected number to be >=1',
    ],
    [
      'no roles',
      { approvers: { roles: [] } },
      'toolgate.json: agents[0].approvers.roles: Too small: expected array to have >=1 items',
    ],
    [
      'a role that is no role name',
      { approvers: { roles: ['Reviewers'] } },
      'toolgate.json: agents[0].approvers.roles[0]: a role: lowercase letters, digits, "_" or "-", at most 64',
    ],
    [
      'an unknown requester part',
      { approvers: { roles: ['reviewer'], requester: 'NEVER' } },
      'toolgate.json: agents[0].approvers.requester: Invalid option: expected one of "ALSO"|"EXCLUDED"',
    ],
    [
      'a word that is no policy',
      { approvers: 'ANYONE' },
      'toolgate.json: agents[0].approvers: "REQUESTER", or an object {"roles", "required", "requester", "escalate"}',
    ],
  ])('refuses %s, naming the path', (_what, agent, expected) => {
    expect(errorOf(withAgent(agent))).toBe(expected);
  });
});

describe("the README's four-eyes example", () => {
  it('loads: two reviewers of a deletion, the requester excluded, oncall after 15 minutes; other tools the requester alone', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Four eyes'));
    const block = /```json\n([\s\S]*?)```/.exec(section)![1]!;
    const config = parseConfig({ ...base, ...JSON.parse(`{${block}}`) }, 'README.md');
    expect(config.auth?.tokens?.map((t) => [t.user, t.roles ?? []])).toEqual([
      ['alice', []],
      ['bob', ['reviewer']],
      ['carol', ['reviewer']],
      ['erin', ['oncall']],
    ]);
    const agent = gatingFromConfig(config.agents[0]!);
    expect(approversFor(agent, 'fs:delete_file', {})).toEqual({
      roles: ['reviewer'],
      required: 2,
      requester: 'EXCLUDED',
      escalate: { afterSeconds: 900, roles: ['oncall'] },
    });
    expect(approversFor(agent, 'fs:read_file', {})).toBe('REQUESTER');
  });
});
