// `server.mcpRequestState` resolved at start: secrets read (a missing env:NAME stops the start), defaults filled in.
import { ConfigError, resolveSecret } from './load.js';
import {
  DEFAULT_REQUEST_STATE_TTL_SECONDS,
  DEFAULT_REQUEST_STATE_WAIT_SECONDS,
  REQUEST_STATE_SECRET_MIN_LENGTH,
} from './mcp-request-state.js';
import type { ToolgateConfig } from './schema.js';

export interface McpRequestStateSettings {
  /** The first signs; every one verifies. Empty: a random key of the process. */
  keys: { id: string; secret: string }[];
  ttlSeconds: number;
  waitSeconds: number;
}

export function mcpRequestStateSettings(config: ToolgateConfig, where = '<config>'): McpRequestStateSettings {
  const section = config.server?.mcpRequestState;
  const keys = (section?.keys ?? []).map((key, i) => {
    const at = `${where}: server.mcpRequestState.keys[${i}].secret`;
    const secret = resolveSecret(key.secret, at);
    if (secret.length < REQUEST_STATE_SECRET_MIN_LENGTH) {
      throw new ConfigError(
        `${at}: ${secret.length} characters; at least ${REQUEST_STATE_SECRET_MIN_LENGTH} random ones are needed`,
      );
    }
    return { id: key.id, secret };
  });
  return {
    keys,
    ttlSeconds: section?.ttlSeconds ?? DEFAULT_REQUEST_STATE_TTL_SECONDS,
    waitSeconds: section?.waitSeconds ?? DEFAULT_REQUEST_STATE_WAIT_SECONDS,
  };
}
