// One urql client per token: queries and mutations over HTTP (fetch), subscriptions over one graphql-ws socket
// that carries the token in connectionParams.authorization (how the server authenticates a WebSocket).
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

export type LinkState = 'connecting' | 'live' | 'reconnecting';

export interface ApiClient {
  client: Client;
  ws: WsClient;
  dispose(): void;
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
    shouldRetry: () => true,
    on: {
      connected: () => onLink('live'),
      closed: () => onLink('reconnecting'),
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
