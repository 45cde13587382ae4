// Users with roles and the approvers policies the live approver tests share (docs/approvers.md): a requester, three
// reviewers, an on-call member, a user of an unrelated role and an administrator, each with a bearer token of their
// own.
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';

export const APPROVER_USERS = {
  alice: { roles: [] as string[] },
  bob: { roles: ['reviewer'] },
  carol: { roles: ['reviewer'] },
  dave: { roles: ['reviewer', 'ops'] },
  erin: { roles: ['oncall'] },
  mallory: { roles: ['ops'] },
  root: { roles: [] as string[], admin: true },
} as const;
export type ApproverUser = keyof typeof APPROVER_USERS;

export const tokenOf = (user: ApproverUser) => `${user}-token-8e41a7c2d95b`;
export const authorizationOf = (user: ApproverUser) => `Bearer ${tokenOf(user)}`;
export const as = (user: ApproverUser) => ({ authorization: authorizationOf(user) });

export const approverAuth: NonNullable<ToolgateConfig['auth']> = {
  tokens: Object.entries(APPROVER_USERS).map(([user, spec]) => ({
    token: tokenOf(user as ApproverUser),
    user,
    admin: 'admin' in spec,
    roles: [...spec.roles],
  })),
};

/** The test agent's tools (`t:<name>`) and their policies. */
export const APPROVER_AGENT: Partial<AgentConfig> = {
  toolConfirmation: {
    // Four eyes, two reviewers.
    't:deploy': { approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' } },
    // Reviewers or ops, one of them; oncall after a minute.
    't:restart': {
      approvers: {
        roles: ['reviewer', 'ops'],
        required: 1,
        requester: 'EXCLUDED',
        escalate: { afterSeconds: 60, roles: ['oncall'] },
      },
    },
    // t:wipe: no policy, the requester alone.
  },
};
export const APPROVER_TOOLS = [{ name: 'deploy' }, { name: 'restart' }, { name: 'wipe' }];
