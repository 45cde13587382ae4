// One urql client per token: queries and mutations over HTTP (fetch), subscriptions over one graphql-ws socket
// that carries the token in connectionParams.authorization (how the server authenticates a WebSocket).
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

/** idle: no subscription is open, so the socket is closed (graphql-ws is lazy); nothing needs to be live. */
export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'idle';

export interface ApiClient {
  client: Client;
  ws: WsClient;
  dispose(): void;
}

function isCloseEvent(value: unknown): value is CloseEvent {
  return typeof value === 'object' && value !== null && 'code' in value;
}

export function createApiClient(token: string | null, onLink: (state: LinkState) => void): ApiClient {
  const authorization = token ? `Bearer ${token}` : undefined;
  const wsUrl = new URL('/graphql', location.href);
  wsUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = createWsClient({
    url: wsUrl.href,
    connectionParams: authorization ? { authorization } : {},
    // Reconnect for as long as the page is open: a server restart must not leave the inbox silently stale.
    retryAttempts: Infinity,
    // A refused token (4401, 4403) is not retried: the HTTP check shows the token prompt instead.
    shouldRetry: (event) => !(isCloseEvent(event) && (event.code === 4401 || event.code === 4403)),
    on: {
      connecting: () => onLink('connecting'),
      connected: () => onLink('live'),
      // 1000: the lazy client closed the socket after its last subscription ended.
      closed: (event) => onLink(isCloseEvent(event) && event.code === 1000 ? 'idle' : 'reconnecting'),
    },
  });
  const client = new Client({
    url: '/graphql',
    // Lists must never show what the server no longer holds: ask the network, show the cache meanwhile.
    requestPolicy: 'cache-and-network',
    fetchOptions: (): RequestInit => (authorization ? { headers: { authorization } } : {}),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, ws, dispose: () => void ws.dispose() };
}
