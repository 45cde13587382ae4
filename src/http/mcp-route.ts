// MCP over Streamable HTTP at /mcp (the first gateway agent) and /mcp/<agentId>, in two revisions on one endpoint
// (docs/mcp-revisions.md): a 2026-07-28 request (its revision in its _meta, no session) is served per request by
// mcp-modern.ts; a 2025 client (initialize, then Mcp-Session-Id) by the v1 SDK's transport in stateful
// mode, one gateway Server and transport per session, kept until the client ends it (DELETE), it is idle for
// `sessionIdleMs`, or the server closes (src/http/mcp-sessions.ts). Every request is authenticated as /graphql's
// are, and a session belongs to the user who opened it: another user's session id reads as unknown. Bodies are read
// here, within the API's limit, so that the ids of the requests a POST carries are known: a client that goes away
// before their responses has cancelled them.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, isInitializeRequest, isJSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { gatewayAgentIds } from '../app/call-tool.js';
import type { AppDeps } from '../app/deps.js';
import type { Viewer } from '../app/viewer.js';
import { createGatewayServer } from '../mcp/gateway-server.js';
import { CLIENT_CLOSED_CONNECTION } from '../mcp/withdrawal.js';
import type { Logger } from '../observability/logger.js';
import { mcpRequestLog } from '../observability/request-log.js';
import { bearerChallenge, NO_VALID_TOKEN, refusalMessage, type Authenticator } from './auth.js';
import { createModernMcp } from './mcp-modern.js';
import { createHandlings } from './mcp-handlings.js';
import { McpSessions, type McpSession } from './mcp-sessions.js';
import type { ProtectedResource } from './protected-resource.js';
import type { RequestStateSigner } from '../mcp/request-state.js';

export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  app: AppDeps;
  authenticator: Authenticator;
  /** The store's flush: what a call's request tells its client is on disk first (src/mcp/on-disk.ts). */
  flush: () => Promise<void>;
  /** Largest request body, in bytes (the API's limit). */
  maxRequestBytes: number;
  /** Milliseconds between progress notifications while a call waits (tests); default: the use case's. */
  progressIntervalMs?: number;
  /** Milliseconds a task's client is asked to wait between polls (tests); default: src/mcp/tasks.ts's. */
  taskPollIntervalMs?: number;
  /** Milliseconds a session may go without a request and without an open response before it is ended. */
  sessionIdleMs: number;
  /** Sessions one user may hold open at once; one more initialize gets 429. */
  maxSessionsPerUser: number;
  /** One line per request when its response ends (method, path, user, status, duration). */
  logger?: Logger;
  /** With `auth.oidc`: a 401 names the metadata of the path asked for, so that a client signs in by itself. */
  protectedResource?: ProtectedResource;
  /** Counts a request refused for its credentials. */
  onRefused?: () => void;
  /** Revision 2026-07-28 (per request, no session): its requestState's signer, and how long a call is held. */
  modern: { requestState: RequestStateSigner; waitMs: number };
  onError: (error: unknown) => void;
}

export interface McpRoute {
  handles(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Whether a path is one an MCP client connects to (/mcp, /mcp/<id>), whichever gateway agents there are. */
  serves(path: string): Promise<boolean>;
  /**
   * Ends every session: waiting calls stop waiting, and their confirmations stay pending (the caller did not leave).
   * Requests' handling still under way gets until `deadline` (epoch ms).
   */
  close(deadline: number): Promise<void>;
}

export function createMcpRoute(options: McpRouteOptions): McpRoute {
  const sessions = new McpSessions({
    idleMs: options.sessionIdleMs,
    maxPerUser: options.maxSessionsPerUser,
    onError: options.onError,
  });
  // What the requests of both revisions are still doing: the store closes after it (mcp-handlings.ts).
  const handlings = createHandlings();
  const modern = createModernMcp({
    app: options.app,
    track: handlings.track,
    flush: options.flush,
    requestState: options.modern.requestState,
    waitMs: options.modern.waitMs,
    progressIntervalMs: options.progressIntervalMs,
    maxRequestBytes: options.maxRequestBytes,
    logger: options.logger,
    onError: options.onError,
  });
  let closed = false;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (closed) return reply(res, 503, SERVER_ERROR, 'The server is shutting down', { connection: 'close' });
    const path = pathOf(req);
    const logged = options.logger ? mcpRequestLog(options.logger, req, res, path) : null;
    const authentication = await options.authenticator.authenticate(req.headers.authorization);
    if (!authentication.ok) {
      options.onRefused?.();
      if (authentication.status === 503) {
        return reply(res, 503, SERVER_ERROR, refusalMessage(authentication), { 'retry-after': '5' });
      }
      const resource = options.protectedResource;
      if (!resource) {
        return reply(res, 401, SERVER_ERROR, refusalMessage(authentication), {
          'www-authenticate': bearerChallenge(authentication),
        });
      }
      // RFC 6750: a token that was sent and refused is an invalid_token, whatever the reason.
      const refused = presented(req) ? authentication.reason : undefined;
      const message = authentication.reason === NO_VALID_TOKEN ? SIGN_IN : refusalMessage(authentication);
      return reply(res, 401, SERVER_ERROR, message, { 'www-authenticate': resource.challenge(path, refused) });
    }
    const { viewer } = authentication;
    if (logged) logged.viewerId = viewer.id;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, options.maxRequestBytes);
      if (read.problem !== null) return refuseBody(res, read.problem, options.maxRequestBytes);
      body = read.body;
    }
    const sessionId = req.headers['mcp-session-id'];
    // A 2026-07-28 request carries its revision in every request's _meta, and has no session.
    if (sessionId === undefined && (await modern.isModern(req, body))) {
      const agentId = await gatewayOf(path);
      if (agentId === null) return noGateway(res, path);
      return modern.serve(req, res, body, { viewer, agentId });
    }
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session || session.viewerId !== viewer.id || session.path !== path) {
        return reply(res, 404, SESSION_NOT_FOUND, 'Session not found');
      }
      sessions.busyUntilClosed(session, res);
      return handle(session.transport, req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(res, 400, SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required');
    }
    const agentId = await gatewayOf(path);
    if (agentId === null) return noGateway(res, path);
    if (!sessions.hasRoomFor(viewer.id)) {
      const message =
        `Too many open MCP sessions for this user (server.maxMcpSessionsPerUser is ${options.maxSessionsPerUser}): ` +
        'end one with DELETE, or wait until an idle one expires';
      return reply(res, 429, SERVER_ERROR, message);
    }
    const session = openSession(viewer, agentId, path);
    sessions.busyUntilClosed(session, res);
    return handle(session.transport, req, res, body);
  }

  /** The gateway agent a path names, /mcp the first; null when there is none. */
  async function gatewayOf(path: string): Promise<string | null> {
    const ids = await gatewayAgentIds(options.app);
    if (path === MCP_PATH) return ids[0] ?? null;
    // Agent ids are URL-safe: the path's segment is the id as it is.
    const id = path.slice(MCP_PATH.length + 1);
    return ids.includes(id) ? id : null;
  }

  function openSession(viewer: Viewer, agentId: string, path: string): McpSession {
    const { app, onError, progressIntervalMs, taskPollIntervalMs } = options;
    const server = createGatewayServer({
      app,
      viewer,
      agentId,
      onError,
      progressIntervalMs,
      taskPollIntervalMs,
      serverClosing: () => closed,
      track: handlings.track,
      flush: options.flush,
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => sessions.named(session, id),
    });
    const session: McpSession = { server, transport, viewerId: viewer.id, path };
    sessions.add(session);
    const endSession = server.onclose;
    server.onclose = () => {
      endSession?.();
      sessions.remove(session);
    };
    // connect() only starts the transport; it rejects when the transport was started before, which it was not.
    server.connect(transport).catch(options.onError);
    return session;
  }

  return {
    handles: (req) => isMcpPath(pathOf(req)),
    // Every gateway path, configured or not: whether an agent id exists is for signed-in clients to learn.
    serves: (path) => {
      const id = path.startsWith(`${MCP_PATH}/`) ? path.slice(MCP_PATH.length + 1) : null;
      return Promise.resolve(path === MCP_PATH || (id !== null && id !== '' && !id.includes('/')));
    },
    serve: (req, res) =>
      serve(req, res).catch((error: unknown) => {
        options.onError(error);
        if (!res.headersSent) reply(res, 500, ErrorCode.InternalError, 'Internal error');
        else res.end();
      }),
    async close(deadline) {
      closed = true;
      // A 2026-07-28 call waiting on others is answered with its requestState (the client comes back with it to
      // another instance, or to this one once it is back); a 2025 session ends, its call's key brings it back.
      modern.stopWaiting();
      await Promise.all([sessions.closeAll(), handlings.settled(deadline)]);
      await modern.close();
    },
  };
}

/** The codes the SDK's transport answers with: a server error, and an unknown session. */
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

const SIGN_IN =
  'Authentication required: sign in at the identity provider that the resource metadata names (WWW-Authenticate), ' +
  'and send "Authorization: Bearer <token>".';

/** Whether the request carried a bearer token at all (a refusal then says the token was invalid, RFC 6750). */
const presented = (req: IncomingMessage) => /^\s*bearer\s+\S/i.test(req.headers.authorization ?? '');

/** Hands the request to the session's transport; requests of its body still open when the client leaves are cancelled. */
async function handle(
  transport: StreamableHTTPServerTransport,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const requestIds: RequestId[] = (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest).map((m) => m.id);
  if (requestIds.length > 0) {
    res.once('close', () => {
      if (res.writableFinished) return;
      for (const requestId of requestIds) {
        transport.onmessage?.({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId, reason: CLIENT_CLOSED_CONNECTION },
        });
      }
    });
  }
  await transport.handleRequest(req, res, body);
}

function noGateway(res: ServerResponse, path: string): void {
  const message =
    path === MCP_PATH ? 'No gateway agent is configured' : `No gateway agent "${path.slice(MCP_PATH.length + 1)}"`;
  reply(res, 404, ErrorCode.InvalidRequest, message);
}

const isMcpPath = (path: string) => path === MCP_PATH || path.startsWith(`${MCP_PATH}/`);

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** An error as the SDK's transport words its own: a JSON-RPC error without an id. */
function reply(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function refuseBody(res: ServerResponse, problem: NonNullable<BodyRead['problem']>, maxBytes: number): void {
  switch (problem) {
    case 'TOO_LARGE':
      return reply(res, 413, SERVER_ERROR, `The request body is larger than ${maxBytes} bytes.`, {
        connection: 'close',
      });
    case 'INVALID_JSON':
      return reply(res, 400, ErrorCode.ParseError, 'Parse error: Invalid JSON');
    case 'GONE':
      return;
  }
}

/** GONE: the client closed the connection before the body ended; there is no one to answer. */
type BodyRead = { problem: null; body: unknown } | { problem: 'TOO_LARGE' | 'INVALID_JSON' | 'GONE' };

/** The JSON body, read up to `maxBytes` whatever the client declares; the rest of a longer one is not read. */
function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve({ problem: 'TOO_LARGE' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = () => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      done();
      req.pause();
      resolve({ problem: 'TOO_LARGE' });
    };
    const onEnd = () => {
      done();
      try {
        resolve({ problem: null, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        resolve({ problem: 'INVALID_JSON' });
      }
    };
    const onGone = () => {
      done();
      resolve({ problem: 'GONE' });
    };
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}
