// The relay of one tools/call (src/tools/call-relay.ts): what the upstream server sends and asks while the call
// runs reaches this client on the call's own response stream. Its progress when the client asked for progress, its
// log messages at or above the client's logging level, its elicitation/create when the client can elicit, its
// sampling/createMessage when the client offers sampling. The notifications are relayed alike for a 2026-07-28
// client (upstreamNotifications); the questions need a session's server-to-client requests.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
  type LoggingLevel,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../domain/records.js';
import type { CallRelay } from '../tools/call-relay.js';
import type { RequestExtra } from './elicitation-relay.js';

const LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** A notification to the calling client, on its request's stream. */
export type NotifyClient = (notification: {
  method: 'notifications/progress' | 'notifications/message';
  params: JsonObject;
}) => void;

/**
 * The upstream's progress (when the client sent a progress token) and its log messages at or above `least` (none
 * when it gives null), as notifications to the client.
 */
export function upstreamNotifications(
  notify: NotifyClient,
  progressToken: string | number | undefined,
  least: () => LoggingLevel | null,
): Pick<CallRelay, 'progress' | 'log'> {
  return {
    ...(progressToken !== undefined && {
      progress: (update) => notify({ method: 'notifications/progress', params: { ...update, progressToken } }),
    }),
    log: (params) => {
      const level = least();
      if (level === null || LEVELS.indexOf(params.level as LoggingLevel) < LEVELS.indexOf(level)) return;
      notify({ method: 'notifications/message', params });
    },
  };
}

export function upstreamRelay(
  server: Server,
  extra: RequestExtra,
  progressToken: string | number | undefined,
  logLevel: () => LoggingLevel | null,
): CallRelay {
  const client = server.getClientCapabilities();
  const notify: NotifyClient = (notification) =>
    void extra.sendNotification(notification as ServerNotification).catch(() => {});
  return {
    // A session's client gets every level until it sets one.
    ...upstreamNotifications(notify, progressToken, () => logLevel() ?? 'debug'),
    ...(client?.elicitation && {
      elicit: async (params) =>
        (await extra.sendRequest(
          { method: 'elicitation/create', params: params as ElicitRequestParams },
          ElicitResultSchema,
        )) as JsonObject,
    }),
    ...(client?.sampling && {
      sample: async (params) =>
        (await extra.sendRequest(
          { method: 'sampling/createMessage', params: params as CreateMessageRequestParams },
          CreateMessageResultSchema,
        )) as JsonObject,
    }),
  };
}
