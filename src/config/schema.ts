// The config file (TOOLGATE_CONFIG, JSON), validated with zod. schema/toolgate.config.schema.json is generated
// from it (`npm run config:schema`).
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-events.js';
import { BEARER_TOKEN_CHARS, BEARER_TOKEN_FORMAT } from './bearer-token.js';
import { isWebhookSecret, WEBHOOK_SECRET_FORMAT } from './webhook-secret.js';
import { inboxSignInConfig } from './inbox-sign-in.js';
import { mcpRequestStateConfig } from './mcp-request-state.js';

/** A literal, or `env:NAME` read from the environment at start. */
const secret = z
  .string()
  .min(1)
  .describe('A literal value, or "env:NAME" to read it from the environment variable NAME');

const scriptedModel = z
  .object({
    provider: z.literal('scripted'),
  })
  .strict();

const openAiCompatibleModel = z
  .object({
    provider: z.literal('openai-compatible'),
    baseURL: z
      .url()
      .describe('The Chat Completions base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (Ollama)'),
    model: z.string().min(1).describe('The model name the server knows, e.g. gpt-4o-mini or llama3.1'),
    apiKey: secret
      .optional()
      .describe('Sent as "Authorization: Bearer <key>"; "env:NAME" reads it from the environment'),
    headers: z.record(z.string(), z.string()).optional().describe('Extra HTTP headers; values may be "env:NAME"'),
    temperature: z.number().min(0).max(2).optional(),
    timeoutMs: z.number().int().positive().optional().describe('Longest one model call may take, retries included'),
    maxRetries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .optional()
      .describe('Retries on 429, 408, 409 and 5xx with exponential backoff (default 2)'),
    stream: z
      .boolean()
      .optional()
      .describe(
        'Ask for a streamed answer: its text is pushed live to turnEvents subscribers as it is generated (docs/live.md, "Streamed text"); default false',
      ),
  })
  .strict();

export const modelConfig = z.discriminatedUnion('provider', [scriptedModel, openAiCompatibleModel]);

const builtinSource = z.object({ type: z.literal('builtin') }).strict();

const mcpStdioSource = z
  .object({
    type: z.literal('mcp'),
    command: z.string().min(1).describe('The MCP server program, started as a child process speaking MCP over stdio'),
    args: z.array(z.string()).optional(),
    env: z
      .record(z.string(), z.string())
      .optional()
      .describe('Environment of the server process (added to PATH, HOME, …); values may be "env:NAME"'),
    cwd: z
      .string()
      .optional()
      .describe(
        "Working directory of the server process, relative to the config file; default: the config file's directory",
      ),
    timeoutMs: z.number().int().positive().optional().describe('Longest a tool call may take (default 60000)'),
  })
  .strict();

const mcpHttpSource = z
  .object({
    type: z.literal('mcp'),
    url: z.url().describe('The Streamable HTTP endpoint of the MCP server'),
    headers: z.record(z.string(), z.string()).optional().describe('HTTP headers; values may be "env:NAME"'),
    timeoutMs: z.number().int().positive().optional().describe('Longest a tool call may take (default 60000)'),
  })
  .strict();

export const toolSourceConfig = z.union([builtinSource, mcpStdioSource, mcpHttpSource], {
  // zod's own message for a union is "Invalid input"; say which shape was meant.
  error: (issue) => {
    if (issue.code !== 'invalid_union') return undefined;
    const input = issue.input as Record<string, unknown> | undefined;
    if (typeof input !== 'object' || input === null || (input.type !== 'builtin' && input.type !== 'mcp'))
      return 'needs "type": "builtin" or "mcp"';
    if (input.type === 'mcp' && 'command' in input && 'url' in input)
      return 'an MCP source has "command" (stdio) or "url" (Streamable HTTP), not both';
    if (input.type === 'mcp' && !('command' in input) && !('url' in input))
      return 'an MCP source needs "command" (a stdio server) or "url" (a Streamable HTTP server)';
    return undefined;
  },
});

const toolId = z.string().regex(/^[A-Za-z0-9_.-]+:(\*|[^\s]+)$/, 'a tool id "<source>:<name>" or "<source>:*"');

/** A role a token's user holds; approvers policies name roles (docs/approvers.md). */
export const roleName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, 'a role: lowercase letters, digits, "_" or "-", at most 64');

// ---- approvers (docs/approvers.md) ----

const approversPolicyConfig = z
  .object({
    roles: z.array(roleName).min(1).describe('Members of any of these roles (auth.tokens[].roles) may answer'),
    required: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(1)
      .describe('The distinct approvers whose ACCEPT resolves a request (M of N; default 1)'),
    requester: z
      .enum(['ALSO', 'EXCLUDED'])
      .default('ALSO')
      .describe(
        'ALSO (default): the requester may answer too and counts as one approver; EXCLUDED: four eyes, the requester may only CANCEL',
      ),
    escalate: z
      .object({
        afterSeconds: z
          .number()
          .int()
          .min(1)
          .describe("Offered to these roles as well when nobody answered this long; below the agent's pauseTtlSeconds"),
        roles: z.array(roleName).min(1),
      })
      .strict()
      .optional(),
  })
  .strict();

/** "REQUESTER" (the default: the requester alone answers), or a policy. */
export const approversConfig = z.union([z.literal('REQUESTER'), approversPolicyConfig], {
  error: (issue) => {
    if (issue.code !== 'invalid_union') return undefined;
    const input = issue.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return '"REQUESTER", or an object {"roles", "required", "requester", "escalate"}';
    return undefined;
  },
});

// ---- argument rules and editing (docs/argument-rules.md) ----

const toolConfirmationMode = z.enum(['ALWAYS', 'NEVER', 'BY_ANNOTATION']);

export const argumentRuleConfig = z
  .object({
    match: z
      .record(z.string(), z.unknown())
      .describe("A JSON Schema (2020-12) for the call's arguments; the rule applies to the calls it accepts"),
    mode: z
      .enum(['ALWAYS', 'NEVER', 'DENY'])
      .describe('ALWAYS: ask (every time), NEVER: run unasked, DENY: refuse the call with "reason"'),
    reason: z
      .string()
      .min(1)
      .optional()
      .describe('Why; required for DENY: the model is told "Execution of <tool> was denied: <reason>"'),
    approvers: approversConfig
      .optional()
      .describe("ALWAYS rules only: who answers the calls this rule asks about; default: the tool's, else the agent's"),
  })
  .strict();

/** Passkey step-up (docs/receipts.md#passkey-step-up): required, or (a tool under an agent that requires it) not. */
const stepUpConfig = z.enum(['passkey', 'none']);

const toolGatingConfig = z
  .object({
    mode: toolConfirmationMode
      .optional()
      .describe('When no rule matches, as a plain mode value (default BY_ANNOTATION)'),
    rules: z
      .array(argumentRuleConfig)
      .optional()
      .describe('Evaluated in order before "mode": the first whose "match" accepts the arguments decides'),
    allowEdit: z
      .boolean()
      .optional()
      .describe("May a user edit this tool's arguments when accepting a call; default: the agent's allowEdit"),
    approvers: approversConfig
      .optional()
      .describe("Who answers this tool's confirmations (docs/approvers.md); default: the agent's"),
    stepUp: stepUpConfig
      .optional()
      .describe(
        '"passkey": an ACCEPT counts only with the approver\'s WebAuthn assertion over the decision (docs/receipts.md#passkey-step-up), "none": not for this tool; default: the agent\'s',
      ),
  })
  .strict();

/** A mode, or the object form with argument rules and allowEdit. */
const toolConfirmationValue = z.union([toolConfirmationMode, toolGatingConfig], {
  // zod's own message for a union is "Invalid input"; an object's own problems are reported by the loader.
  error: (issue) => {
    if (issue.code !== 'invalid_union') return undefined;
    const input = issue.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return '"ALWAYS", "NEVER", "BY_ANNOTATION", or an object {"mode", "rules", "allowEdit", "approvers"}';
    return undefined;
  },
});

// ---- end of argument rules and editing ----

export const agentConfig = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64'),
    name: z.string().min(1),
    description: z.string().optional(),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A key of "models"; without one the agent is an MCP gateway: MCP clients call its tools at /mcp/<id> (docs/mcp-gateway.md)',
      ),
    systemPrompt: z.string().default('You are a helpful assistant.'),
    tools: z
      .array(toolId)
      .default([])
      .describe('Tool ids "<source>:<name>" (each must be listed by its source at start) or "<source>:*"'),
    requireToolConfirmation: z
      .boolean()
      .default(false)
      .describe(
        'Ask a human before tools run (per the annotations and overrides); updateAgent changes persist over this',
      ),
    toolConfirmation: z
      .record(toolId, toolConfirmationValue)
      .default({})
      .describe(
        'Per-tool overrides by exact tool id: a mode, or {"mode", "rules", "allowEdit", "approvers"} (docs/argument-rules.md, docs/approvers.md)',
      ),
    allowEdit: z
      .boolean()
      .optional()
      .describe(
        "May a user edit a call's arguments when accepting it (default true); a tool's own allowEdit wins; updateAgent changes persist over this",
      ),
    approvers: approversConfig
      .optional()
      .describe(
        'Who answers the confirmations of this agent\'s calls: "REQUESTER" (default: the user who started the turn or made the call), or {"roles", "required", "requester", "escalate"} (docs/approvers.md); a tool\'s and an argument rule\'s own win',
      ),
    stepUp: stepUpConfig
      .optional()
      .describe(
        "\"passkey\": every ACCEPT of this agent's calls counts only with the approver's WebAuthn assertion over the decision (docs/receipts.md#passkey-step-up); a tool's own wins",
      ),
    pauseTtlSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600)
      .default(3600),
    maxIterations: z.number().int().min(1).max(100).default(10),
  })
  .strict();

/** A token that "Authorization: Bearer <token>" can carry (src/config/bearer-token.ts), or env:NAME (checked at start). */
const bearerToken = z
  .string()
  .regex(
    new RegExp(`^(env:.*|${BEARER_TOKEN_CHARS}+)$`),
    `expected a bearer token, ${BEARER_TOKEN_FORMAT}, or "env:NAME"`,
  )
  .describe(`A bearer token, ${BEARER_TOKEN_FORMAT}; "env:NAME" reads it from the environment`);

/** The signature algorithms an identity provider's access tokens may use: asymmetric only, never "none" or HMAC. */
export const OIDC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

export const DEFAULT_OIDC_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** The scopes an MCP client asks for when auth.oidc names none. */
export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email'] as const;

/** An http(s) URL without query or fragment, as an issuer or a server's public address is written. */
const plainUrl = z.url({ protocol: /^https?$/ }).refine((value) => {
  // Not a URL at all: z.url() has said so already.
  if (!URL.canParse(value)) return true;
  const url = new URL(value);
  return url.search === '' && url.hash === '' && url.username === '' && url.password === '';
}, 'expected an http:// or https:// URL without query, fragment or credentials');

/** One identity provider whose JWT access tokens the server accepts (docs/identity.md). */
export const oidcIssuerConfig = z
  .object({
    issuer: plainUrl.describe(
      'The identity provider, exactly as its tokens\' "iss" claim says; its discovery document is at <issuer>/.well-known/openid-configuration',
    ),
    audience: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The "aud" a token must carry: the resource this server is (RFC 8707); default server.publicUrl, else http://<host>:<port> as listened',
      ),
    userClaim: z.string().min(1).default('sub').describe('The claim that names the user (default "sub")'),
    nameClaim: z
      .string()
      .min(1)
      .default('name')
      .describe('The claim with the display name (default "name"; "email" when that claim is absent)'),
    rolesClaim: z
      .string()
      .min(1)
      .default('groups')
      .describe('The claim with the groups or roles: a list or a space-separated string (default "groups")'),
    roleMap: z
      .record(z.string().min(1), z.union([roleName, z.array(roleName)]))
      .optional()
      .describe(
        "The provider's group names to toolgate role names; with a map, groups it does not name give no role. Without one, every group is a role by its own name",
      ),
    adminRoles: z
      .array(roleName)
      .optional()
      .describe('Roles (after roleMap) that make their holder an admin; default none'),
    userPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_.:@-]{1,32}$/, 'letters, digits, "_", ".", ":", "@" or "-", at most 32')
      .optional()
      .describe(
        'Put before every user id of this issuer, e.g. "corp:"; needed, and distinct, when there are several issuers, so that no two issuers\' users share an id',
      ),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'a scope token: printable ASCII, no space, " or \\'))
      .optional()
      .describe(
        `The scopes an MCP client asks for at this provider, so that its access token carries the roles claim (the protected resource metadata's scopes_supported); default ${DEFAULT_OIDC_SCOPES.join(', ')}`,
      ),
    clockToleranceSeconds: z
      .number()
      .int()
      .min(0)
      .max(300)
      .default(60)
      .describe('Leeway for "exp" and "nbf", in seconds, for clocks that differ (default 60)'),
    algorithms: z
      .array(z.enum(OIDC_ALGORITHMS))
      .min(1)
      .optional()
      .describe(`Signature algorithms accepted (default ${DEFAULT_OIDC_ALGORITHMS.join(', ')}); never "none" or HMAC`),
  })
  .strict();

export const authConfig = z
  .object({
    tokens: z
      .array(
        z
          .object({
            token: bearerToken,
            user: z.string().min(1),
            admin: z.boolean().default(false),
            roles: z
              .array(roleName)
              .optional()
              .describe(
                "The roles of this token's user (default none): approvers policies name roles (docs/approvers.md)",
              ),
          })
          .strict(),
      )
      .min(1)
      .optional()
      .describe('Static bearer tokens: for development and service accounts (docs/identity.md)'),
    oidc: z
      .union([oidcIssuerConfig, z.array(oidcIssuerConfig).min(1)])
      .optional()
      .describe(
        "JWT access tokens of an OpenID provider (or a list of them): roles from the token's groups (docs/identity.md)",
      ),
    inbox: inboxSignInConfig.optional(),
  })
  .strict()
  .refine((auth) => auth.tokens !== undefined || auth.oidc !== undefined, {
    message: 'expected "tokens", "oidc" or both',
  });

/** What the GraphQL endpoint exposes and how much it (and the loop, from a model) accepts; see docs/security.md. */
export const serverConfig = z
  .object({
    publicUrl: plainUrl
      .optional()
      .describe(
        'The URL clients reach this server at (behind a proxy: its address there), e.g. https://toolgate.example.com; the default audience of auth.oidc',
      ),
    graphiql: z
      .boolean()
      .optional()
      .describe('Serve GraphiQL on GET /graphql from a browser; default: on without an "auth" section, off with one'),
    introspection: z
      .boolean()
      .optional()
      .describe('Answer schema introspection (__schema, __type); default: on without an "auth" section, off with one'),
    maxRequestBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .optional()
      .describe('Largest HTTP request body and WebSocket message, in bytes (default 1048576)'),
    maxMessageLength: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .optional()
      .describe('Longest user message, in characters (default 32000)'),
    maxContentBytes: z
      .number()
      .int()
      .min(64)
      .max(10_000_000)
      .optional()
      .describe('Largest elicitation answer content, in bytes of JSON (default 16384)'),
    maxToolArgumentsBytes: z
      .number()
      .int()
      .min(64)
      .max(64 * 1024 * 1024)
      .optional()
      .describe(
        "Largest arguments of a model's tool call, in UTF-8 bytes of JSON; a larger call does not run and is not asked about, the model is told why (default 262144)",
      ),
    maxToolArgumentsDepth: z
      .number()
      .int()
      .min(1)
      // Deeper, the functions that walk arguments (store, compare, show them) would come near the stack's end.
      .max(1000)
      .optional()
      .describe(
        "Deepest arguments of a model's tool call, in levels of objects and arrays (the arguments object is the first); a deeper call does not run and is not asked about, the model is told why (default 64)",
      ),
    maxSubscriptionsPerSocket: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        'Subscriptions one WebSocket may hold open at once; one more gets TOO_MANY_SUBSCRIPTIONS (default 100)',
      ),
    maxSubscriptionsPerUser: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        'Subscriptions one user may hold open at once on this instance, over WebSocket and SSE together; one more gets TOO_MANY_SUBSCRIPTIONS (default 500)',
      ),
    mcpSessionIdleSeconds: z
      .number()
      .min(1)
      .max(604_800)
      .optional()
      .describe(
        "Seconds an MCP session at /mcp may go without a request and without an open response (a tools/call waiting for confirmation, a client's GET stream) before it is ended; a client that left without DELETE frees its session so (default 1800)",
      ),
    maxMcpSessionsPerUser: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        'MCP sessions one user may hold open at once on this instance; one more initialize gets HTTP 429 (default 100)',
      ),
    mcpRequestState: mcpRequestStateConfig
      .optional()
      .describe(
        'MCP revision 2026-07-28: the keys that sign the requestState of a call answered input_required, and its timing (docs/mcp-revisions.md)',
      ),
    metrics: z
      .enum(['admin', 'public', 'off'])
      .optional()
      .describe(
        'GET /metrics (Prometheus): "admin" (default) needs an admin token when there is an "auth" section (open on loopback without one), "public" is open to anyone who reaches the port, "off" answers 404',
      ),
  })
  .strict();

/** The background sweeper: expiry of paused turns, retention of expired state, recovery; see docs/durability.md. */
export const sweeperConfig = z
  .object({
    intervalSeconds: z
      .number()
      .min(0)
      .max(3600)
      .optional()
      .describe(
        'Seconds between sweeps that expire paused turns, delete long-expired state and take over turns of dead processes; 0 turns the timer off (default 5)',
      ),
    batchSize: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe('Rows per sweeper transaction; the sweeper yields to requests between batches (default 100)'),
    retentionDays: z
      .number()
      .min(0)
      .max(36_500)
      .optional()
      .describe(
        'Days an expired, never answered confirmation request is kept before it is deleted, and a delivered webhook delivery and a revoked or expired approval grant; turns, messages and FAILED deliveries stay (default 30)',
      ),
    idempotencyKeyHours: z
      .number()
      .min(0.01)
      .max(24 * 365)
      .optional()
      .describe(
        "Hours an idempotency key is kept (startTurn's, and an MCP gateway call's in _meta): a retry with the key within that time gets the first request's turn, or the call's kept result (default 24)",
      ),
  })
  .strict();

/** Pub/sub between instances serving one database; see docs/live.md. Without it: in process (one instance). */
export const pubsubConfig = z
  .object({
    redis: z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
      .describe(
        'Redis URL, e.g. redis://127.0.0.1:6379 (redis://:password@host:port/db, rediss:// for TLS); the TOOLGATE_REDIS environment variable overrides it',
      ),
    prefix: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Put before every Redis channel name, so that deployments sharing one Redis stay apart (default "toolgate:")',
      ),
  })
  .strict();

/** Where toolgate keeps its state; see docs/durability.md. Without it: SQLite at TOOLGATE_DB or ./data/toolgate.db. */
export const databaseConfig = z
  .object({
    url: z
      .string()
      .min(1)
      .describe(
        'A postgres:// (or postgresql://) URL for PostgreSQL, shared by several instances; else an SQLite file path (relative to the working directory) or ":memory:". The TOOLGATE_DB environment variable overrides it',
      ),
    poolSize: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('PostgreSQL: connections per instance (default 10)'),
  })
  .strict();

/** A webhook endpoint: events POSTed to `url`, signed per Standard Webhooks, retried; see docs/webhooks.md. */
export const webhookConfig = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .describe('Where events are POSTed (http:// or https://); one entry per URL. Redirects are not followed'),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES))
      .min(1)
      .describe('The events this endpoint gets: ' + WEBHOOK_EVENT_TYPES.join(', ')),
    secret: secret
      .refine(
        (value) => value.startsWith('env:') || isWebhookSecret(value),
        `expected ${WEBHOOK_SECRET_FORMAT}, or "env:NAME"`,
      )
      .describe(`The signing secret: ${WEBHOOK_SECRET_FORMAT}; "env:NAME" reads it from the environment`),
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Attempts before a delivery is FAILED for good (default 12: about 2.5 hours with the default backoff)'),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(120_000)
      .optional()
      .describe('Longest one attempt may take, from connecting to the response status (default 10000)'),
    initialBackoffSeconds: z
      .number()
      .min(0.01)
      .max(86_400)
      .optional()
      .describe('Wait before the first retry; each further one waits twice as long, ±20 % jitter (default 5)'),
    maxBackoffSeconds: z
      .number()
      .min(0.01)
      .max(7 * 86_400)
      .optional()
      .describe('Longest wait between two attempts (default 3600)'),
  })
  .strict();

/** Slack approval cards (docs/slack.md): the app's credentials, where requests are posted, who a Slack user is. */
const slackChannelId = z.string().regex(/^[A-Z0-9]{2,64}$/, 'a Slack channel id, e.g. "C0123456789"');
export const slackConfig = z
  .object({
    botToken: secret.describe('The bot token (xoxb-…) of the Slack app; "env:NAME" reads it from the environment'),
    signingSecret: secret.describe(
      'The Slack app\'s signing secret, which interaction requests are verified with; "env:NAME" reads it',
    ),
    channels: z
      .object({
        default: slackChannelId.optional().describe('Where a request goes when nothing more specific names a channel'),
        agents: z
          .record(z.string(), slackChannelId)
          .optional()
          .describe('A channel per agent or gateway id: its requests are posted there'),
        roles: z
          .record(roleName, slackChannelId)
          .optional()
          .describe(
            "A channel per approver role: a request under an approvers policy goes to its first role's channel, an escalation to its escalation roles' channel",
          ),
      })
      .strict()
      .describe("Where requests are posted: a role's channel first, then the agent's, then the default"),
    users: z
      .array(
        z
          .object({
            slackUserId: z
              .string()
              .regex(/^[UW][A-Z0-9]{2,64}$/)
              .optional()
              .describe('The Slack user id (U… or W…)'),
            email: z.string().min(3).max(320).optional().describe("The Slack profile's email (with mapByEmail)"),
            user: z.string().min(1).describe('The toolgate user id clicks of this Slack user answer as'),
            roles: z
              .array(roleName)
              .optional()
              .describe('Their roles (default: those of auth.tokens entries of the same user)'),
          })
          .strict()
          .refine((entry) => entry.slackUserId !== undefined || entry.email !== undefined, {
            message: 'expected "slackUserId", "email" or both',
          }),
      )
      .default([])
      .describe('Who a Slack user is in toolgate; anyone unlisted is refused (or, with mapByEmail, matched by email)'),
    mapByEmail: z
      .boolean()
      .default(false)
      .describe(
        "Look a clicking Slack user's email up (users.info, scope users:read.email): an entry with that email, else the email itself as the user id",
      ),
    apiUrl: plainUrl
      .optional()
      .describe('The Slack Web API base URL (default https://slack.com/api/); tests point it at a stand-in'),
    maxAttempts: z.number().int().min(1).max(100).optional().describe('Attempts per post or update (default 12)'),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(120_000)
      .optional()
      .describe('Longest one Slack call may take (default 10000)'),
    initialBackoffSeconds: z
      .number()
      .min(0.01)
      .max(86_400)
      .optional()
      .describe('Wait before the first retry (default 2)'),
    maxBackoffSeconds: z
      .number()
      .min(0.01)
      .max(7 * 86_400)
      .optional()
      .describe('Longest wait between attempts (default 600)'),
  })
  .strict();

export const receiptsConfig = z
  .object({
    keys: z
      .array(
        z
          .object({
            id: z.string().min(1).max(100).describe('The key id (kid) records name and the JWKS publishes'),
            privateKey: z
              .string()
              .min(1)
              .describe('The Ed25519 private key as a PKCS8 PEM or a JWK; "env:NAME" reads it from the environment'),
          })
          .strict(),
      )
      .min(1)
      .describe('Signing keys of the decision records: the first signs, all are published (rotation)'),
  })
  .strict();

export const configSchema = z
  .object({
    $schema: z.string().optional(),
    models: z.record(z.string(), modelConfig),
    toolSources: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), toolSourceConfig).default({}),
    agents: z.array(agentConfig).min(1),
    auth: authConfig.optional(),
    server: serverConfig.optional(),
    plugins: z.array(z.string().min(1)).default([]).describe('Listener modules, relative to this file'),
    sweeper: sweeperConfig.optional(),
    pubsub: pubsubConfig.optional(),
    database: databaseConfig.optional(),
    webhooks: z.array(webhookConfig).optional().describe('Endpoints that get events over HTTP (docs/webhooks.md)'),
    slack: slackConfig.optional().describe('Approval cards in Slack (docs/slack.md)'),
    receipts: receiptsConfig
      .optional()
      .describe('Decision records (docs/receipts.md); without keys, one is generated and kept in the database'),
  })
  .strict();

export type ToolgateConfig = z.infer<typeof configSchema>;
export type ModelConfig = z.infer<typeof modelConfig>;
export type ToolSourceConfig = z.infer<typeof toolSourceConfig>;
export type AgentConfig = z.infer<typeof agentConfig>;
export type ArgumentRuleConfig = z.infer<typeof argumentRuleConfig>;
export type ApproversConfig = z.infer<typeof approversConfig>;
export type PubSubConfig = z.infer<typeof pubsubConfig>;
export type DatabaseConfig = z.infer<typeof databaseConfig>;
export type WebhookConfig = z.infer<typeof webhookConfig>;
export type SlackConfig = z.infer<typeof slackConfig>;
export type OidcIssuerConfig = z.infer<typeof oidcIssuerConfig>;
