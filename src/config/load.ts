import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import stripJsonComments from 'strip-json-comments';
import type { z } from 'zod';
import { approversConfigProblems, argumentRuleConfigProblems } from './agent-gating.js';
import { configSchema, type ToolgateConfig } from './schema.js';
import { allowedKeysAt, unknownKeyMessage } from './unknown-keys.js';

/** A config problem: one line naming the file, the path inside it and what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadedConfig {
  config: ToolgateConfig;
  /** The file it came from; null for the built-in demo. */
  file: string | null;
}

export function loadConfigFile(path: string): LoadedConfig {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `${file}: cannot read the config file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let data: unknown;
  try {
    // Comments and trailing commas (as editors read .jsonc; `toolgate init` writes a commented starter) become
    // spaces, so that JSON.parse's positions still point into the file as written.
    data = JSON.parse(stripJsonComments(text, { trailingCommas: true }));
  } catch (error) {
    throw new ConfigError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  return { config: parseConfig(data, file), file };
}

export function parseConfig(data: unknown, file = '<config>'): ToolgateConfig {
  const result = configSchema.safeParse(data);
  if (!result.success) throw new ConfigError(formatIssues(file, result.error.issues, data));
  const config = result.data;
  const problems: string[] = [];
  const sources = new Set(Object.keys(config.toolSources));
  const seen = new Set<string>();
  config.agents.forEach((agent, i) => {
    if (seen.has(agent.id)) problems.push(`${file}: agents[${i}].id: duplicate agent id "${agent.id}"`);
    seen.add(agent.id);
    if (agent.model !== undefined && !config.models[agent.model]) {
      problems.push(
        `${file}: agents[${i}].model: unknown model "${agent.model}" (models: ${Object.keys(config.models).join(', ') || 'none'})`,
      );
    }
    agent.tools.forEach((tool, j) => {
      const source = tool.split(':')[0]!;
      if (!sources.has(source))
        problems.push(`${file}: agents[${i}].tools[${j}]: unknown tool source "${source}" in "${tool}"`);
    });
    for (const tool of Object.keys(agent.toolConfirmation)) {
      if (!sources.has(tool.split(':')[0]!))
        problems.push(`${file}: agents[${i}].toolConfirmation.${tool}: unknown tool source in "${tool}"`);
      // Overrides apply to one tool each (gating looks them up by id): a pattern here would silently do nothing.
      else if (tool.endsWith(':*'))
        problems.push(`${file}: agents[${i}].toolConfirmation.${tool}: an override names one tool id, not a pattern`);
    }
  });
  problems.push(...argumentRuleConfigProblems(config.agents, file));
  problems.push(...approversConfigProblems(config.agents, file));
  // The outbox names an endpoint by its URL: one entry per URL.
  const webhookUrls = new Set<string>();
  config.webhooks?.forEach((webhook, i) => {
    if (webhookUrls.has(webhook.url))
      problems.push(
        `${file}: webhooks[${i}].url: another entry has the same URL "${webhook.url}"; list its events in one entry`,
      );
    webhookUrls.add(webhook.url);
  });
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return config;
}

function formatIssues(file: string, issues: z.core.$ZodIssue[], data: unknown): string {
  return issues
    .flatMap(unionBranchIssues)
    .flatMap((issue) => {
      if (issue.code !== 'unrecognized_keys') return [`${file}: ${formatPath(issue.path)}: ${issue.message}`];
      const allowed = allowedKeysAt(configSchema, issue.path, data);
      return issue.keys.map((key) => `${file}: ${formatPath(issue.path)}: ${unknownKeyMessage(key, allowed)}`);
    })
    .join('\n');
}

/**
 * A union zod left at "Invalid input", where the value has the shape of exactly one option (every other option fails
 * at the value itself), is reported as that option's own problems, e.g. `…toolConfirmation.x.rules[0].mode: …`.
 */
function unionBranchIssues(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.message !== 'Invalid input') return [issue];
  const shaped = issue.errors.filter((branch) => branch.every((inner) => inner.path.length > 0));
  if (shaped.length !== 1) return [issue];
  return shaped[0]!.flatMap((inner) => unionBranchIssues({ ...inner, path: [...issue.path, ...inner.path] }));
}

function formatPath(path: PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

/** `env:NAME` reads the environment; anything else is the literal. */
export function resolveSecret(value: string, where: string): string {
  if (!value.startsWith('env:')) return value;
  const name = value.slice(4);
  const found = process.env[name];
  if (found === undefined || found === '')
    throw new ConfigError(`${where}: the environment variable ${name} is not set`);
  return found;
}
