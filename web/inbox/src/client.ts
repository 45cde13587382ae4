// One urql client per way of signing in: queries and mutations over HTTP (fetch), subscriptions over one graphql-ws
// socket. With a token, it travels in the Authorization header and in connectionParams.authorization; with the
// server's session, the browser sends the HttpOnly cookie itself and each HTTP request carries the session header.
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { SESSION_HEADERS } from './session';

/** idle: no subscription is open, so the socket is closed (graphql-ws is lazy); nothing needs to be live. */
export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'idle';

/** A bearer token (or none, in the local mode), or the session cookie of the server's own sign-in. */
export type Credentials =
  | { kind: 'token'; token: string | null }
  | {
      kind: 'session';
      /** The server refused the session (HTTP 401, or a socket closed with 4401): renew it; false when it is over. */
      renew(): Promise<boolean>;
      /** The socket closed because the session's token expired: reconnect after renewing. */
      onExpired(): void;
    };

export interface ApiClient {
  client: Client;
  ws: WsClient;
  dispose(): void;
}

function isCloseEvent(value: unknown): value is CloseEvent {
  return typeof value === 'object' && value !== null && 'code' in value;
}

export function createApiClient(credentials: Credentials, onLink: (state: LinkState) => void): ApiClient {
  const authorization = credentials.kind === 'token' && credentials.token ? `Bearer ${credentials.token}` : undefined;
  const wsUrl = new URL('/graphql', location.href);
  wsUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = createWsClient({
    url: wsUrl.href,
    connectionParams: authorization ? { authorization } : {},
    // Reconnect for as long as the page is open: a server restart must not leave the inbox silently stale.
    retryAttempts: Infinity,
    // A refused token (4401, 4403) is not retried: the HTTP check shows the token prompt instead; a session renews.
    shouldRetry: (event) => !(isCloseEvent(event) && (event.code === 4401 || event.code === 4403)),
    on: {
      connecting: () => onLink('connecting'),
      connected: () => onLink('live'),
      closed: (event) => {
        if (credentials.kind === 'session' && isCloseEvent(event) && event.code === 4401) credentials.onExpired();
        // 1000: the lazy client closed the socket after its last subscription ended.
        onLink(isCloseEvent(event) && event.code === 1000 ? 'idle' : 'reconnecting');
      },
    },
  });
  const client = new Client({
    url: '/graphql',
    // Lists must never show what the server no longer holds: ask the network, show the cache meanwhile.
    requestPolicy: 'cache-and-network',
    fetchOptions: (): RequestInit => {
      if (credentials.kind === 'session') return { headers: SESSION_HEADERS, credentials: 'same-origin' };
      return authorization ? { headers: { authorization } } : {};
    },
    // With a session, a request refused because its token just expired is sent again once the session renewed.
    fetch:
      credentials.kind === 'session'
        ? async (input, init) => {
            const response = await fetch(input, init);
            if (response.status !== 401 || !(await credentials.renew())) return response;
            return fetch(input, init);
          }
        : undefined,
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
