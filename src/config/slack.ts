// The config's `slack` section as the server uses it (docs/slack.md): secrets resolved (`env:NAME`), defaults applied,
// and who each Slack user is: their toolgate user and roles.
import { ConfigError, resolveSecret } from './load.js';
import type { SlackConfig, ToolgateConfig } from './schema.js';

export interface SlackUser {
  user: string;
  roles: string[];
}

export interface SlackSettings {
  botToken: string;
  signingSecret: string;
  apiUrl: string;
  channels: { default: string | null; agents: Record<string, string>; roles: Record<string, string> };
  /** By Slack user id, and by email (lowercased). */
  usersById: Map<string, SlackUser>;
  usersByEmail: Map<string, SlackUser>;
  mapByEmail: boolean;
  /** The roles of a toolgate user by the config's auth.tokens (for an email-mapped user without an entry). */
  rolesOf(user: string): string[];
  maxAttempts: number;
  timeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const SLACK_DEFAULTS = {
  apiUrl: 'https://slack.com/api/',
  maxAttempts: 12,
  timeoutMs: 10_000,
  initialBackoffSeconds: 2,
  maxBackoffSeconds: 600,
} as const;

/** null without a `slack` section; a missing secret or a bot token that is not one stops the start, naming the field. */
export function resolveSlack(config: ToolgateConfig, where: string): SlackSettings | null {
  const slack: SlackConfig | undefined = config.slack;
  if (!slack) return null;
  const botToken = resolveSecret(slack.botToken, `${where}: slack.botToken`);
  if (!/^xox[bp]-[A-Za-z0-9-]+$/.test(botToken)) {
    // Never the value itself: it is a secret, even when malformed.
    throw new ConfigError(`${where}: slack.botToken: expected a Slack bot token ("xoxb-…")`);
  }
  const signingSecret = resolveSecret(slack.signingSecret, `${where}: slack.signingSecret`);
  const tokenRoles = new Map<string, Set<string>>();
  for (const token of config.auth?.tokens ?? []) {
    const roles = tokenRoles.get(token.user) ?? new Set<string>();
    for (const role of token.roles ?? []) roles.add(role);
    tokenRoles.set(token.user, roles);
  }
  const rolesOf = (user: string) => [...(tokenRoles.get(user) ?? [])].sort();
  const usersById = new Map<string, SlackUser>();
  const usersByEmail = new Map<string, SlackUser>();
  for (const entry of slack.users) {
    const user = { user: entry.user, roles: entry.roles ?? rolesOf(entry.user) };
    if (entry.slackUserId) usersById.set(entry.slackUserId, user);
    if (entry.email) usersByEmail.set(entry.email.toLowerCase(), user);
  }
  return {
    botToken,
    signingSecret,
    apiUrl: slack.apiUrl ? (slack.apiUrl.endsWith('/') ? slack.apiUrl : `${slack.apiUrl}/`) : SLACK_DEFAULTS.apiUrl,
    channels: {
      default: slack.channels.default ?? null,
      agents: slack.channels.agents ?? {},
      roles: slack.channels.roles ?? {},
    },
    usersById,
    usersByEmail,
    mapByEmail: slack.mapByEmail,
    rolesOf,
    maxAttempts: slack.maxAttempts ?? SLACK_DEFAULTS.maxAttempts,
    timeoutMs: slack.timeoutMs ?? SLACK_DEFAULTS.timeoutMs,
    initialBackoffMs: (slack.initialBackoffSeconds ?? SLACK_DEFAULTS.initialBackoffSeconds) * 1000,
    maxBackoffMs: (slack.maxBackoffSeconds ?? SLACK_DEFAULTS.maxBackoffSeconds) * 1000,
  };
}
