// `server.mcpRequestState`: the keys that sign the requestState of a gateway call answered `input_required` to an MCP
// 2026-07-28 client (src/mcp/request-state.ts), how long a state holds, and how long one request waits on others'
// answers before it is answered with a state only. Every instance needs the same keys (docs/mcp-revisions.md).
import { z } from 'zod';

/** The shortest key secret: 32 characters of a random string are enough for HMAC-SHA256. */
export const REQUEST_STATE_SECRET_MIN_LENGTH = 32;
export const DEFAULT_REQUEST_STATE_TTL_SECONDS = 3600;
export const DEFAULT_REQUEST_STATE_WAIT_SECONDS = 30;

export const mcpRequestStateConfig = z
  .object({
    keys: z
      .array(
        z
          .object({
            id: z
              .string()
              .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1 to 64 letters, digits, "_" or "-"')
              .describe('Names the key in the states it signs'),
            secret: z
              .string()
              .min(1)
              .describe(
                `At least ${REQUEST_STATE_SECRET_MIN_LENGTH} random characters; "env:NAME" reads it from the environment`,
              ),
          })
          .strict(),
      )
      .min(1)
      .refine((keys) => new Set(keys.map((key) => key.id)).size === keys.length, 'key ids must be unique')
      .optional()
      .describe(
        'HMAC keys: the first signs new states, every one is accepted (rotate: add the new key first, remove the old one after ttlSeconds). Without keys, a random key of this process: states then do not survive a restart or reach another instance',
      ),
    ttlSeconds: z
      .number()
      .int()
      .min(1)
      .max(604_800)
      .optional()
      .describe(
        `Seconds a requestState is accepted after it was issued (default ${DEFAULT_REQUEST_STATE_TTL_SECONDS}); after that the call's idempotency key still finds it`,
      ),
    waitSeconds: z
      .number()
      .min(0)
      .max(3600)
      .optional()
      .describe(
        `Seconds one tools/call request waits for a call decided by someone else (approvers, the inbox) before it is answered input_required with a requestState only, to come back with (default ${DEFAULT_REQUEST_STATE_WAIT_SECONDS})`,
      ),
  })
  .strict();
