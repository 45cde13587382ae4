// The relay of one tools/call (src/tools/call-relay.ts): what the upstream server sends and asks while the call
// runs reaches this client on the call's own response stream. Its progress when the client asked for progress, its
// log messages at or above the client's logging level, its elicitation/create when the client can elicit, its
// sampling/createMessage when the client offers sampling.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
  type LoggingLevel,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../domain/records.js';
import type { CallRelay } from '../tools/call-relay.js';
import type { RequestExtra } from './elicitation-relay.js';

const LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export function upstreamRelay(
  server: Server,
  extra: RequestExtra,
  progressToken: string | number | undefined,
  logLevel: () => LoggingLevel | null,
): CallRelay {
  const client = server.getClientCapabilities();
  const notify = (notification: Parameters<RequestExtra['sendNotification']>[0]) =>
    void extra.sendNotification(notification).catch(() => {});
  return {
    ...(progressToken !== undefined && {
      progress: (update) => notify({ method: 'notifications/progress', params: { ...update, progressToken } }),
    }),
    log: (params) => {
      const message = params as LoggingMessageNotification['params'];
      const least = logLevel();
      if (least && LEVELS.indexOf(message.level) < LEVELS.indexOf(least)) return;
      notify({ method: 'notifications/message', params: message });
    },
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
