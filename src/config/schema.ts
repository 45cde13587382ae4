// The config file (TOOLGATE_CONFIG, JSON), validated with zod. schema/toolgate.schema.json is generated from it.
import { z } from 'zod';

/** A literal, or `env:NAME` read from the environment at start. */
const secret = z.string().min(1).describe('A literal value, or "env:NAME" to read it from the environment variable NAME');

const scriptedModel = z.object({
  provider: z.literal('scripted'),
}).strict();

const openAiCompatibleModel = z.object({
  provider: z.literal('openai-compatible'),
  baseURL: z.url(),
  model: z.string().min(1),
  apiKey: secret.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  temperature: z.number().min(0).max(2).optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
}).strict();

export const modelConfig = z.discriminatedUnion('provider', [scriptedModel, openAiCompatibleModel]);

const builtinSource = z.object({ type: z.literal('builtin') }).strict();

const mcpStdioSource = z.object({
  type: z.literal('mcp'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
}).strict();

const mcpHttpSource = z.object({
  type: z.literal('mcp'),
  url: z.url(),
  headers: z.record(z.string(), z.string()).optional(),
}).strict();

export const toolSourceConfig = z.union([builtinSource, mcpStdioSource, mcpHttpSource]);

const toolId = z.string().regex(/^[A-Za-z0-9_.-]+:(\*|[^\s]+)$/, 'a tool id "<source>:<name>" or "<source>:*"');

export const agentConfig = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64'),
  name: z.string().min(1),
  description: z.string().optional(),
  model: z.string().min(1),
  systemPrompt: z.string().default('You are a helpful assistant.'),
  tools: z.array(toolId).default([]),
  requireToolConfirmation: z.boolean().default(false),
  toolConfirmation: z.record(toolId, z.enum(['ALWAYS', 'NEVER', 'BY_ANNOTATION'])).default({}),
  pauseTtlSeconds: z.number().int().min(1).max(30 * 24 * 3600).default(3600),
  maxIterations: z.number().int().min(1).max(100).default(10),
}).strict();

export const authConfig = z.object({
  tokens: z.array(z.object({ token: secret, user: z.string().min(1), admin: z.boolean().default(false) }).strict()).min(1),
}).strict();

export const configSchema = z.object({
  $schema: z.string().optional(),
  models: z.record(z.string(), modelConfig),
  toolSources: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), toolSourceConfig).default({}),
  agents: z.array(agentConfig).min(1),
  auth: authConfig.optional(),
  plugins: z.array(z.string().min(1)).default([]),
}).strict();

export type ToolgateConfig = z.infer<typeof configSchema>;
export type ModelConfig = z.infer<typeof modelConfig>;
export type ToolSourceConfig = z.infer<typeof toolSourceConfig>;
export type AgentConfig = z.infer<typeof agentConfig>;
