// `toolgate mcp`: an MCP server on stdio for local clients that forwards every JSON-RPC message, unchanged, to a
// running toolgate's /mcp and back. Nothing is interpreted on the way: elicitation/create, progress and
// cancellations pass as they are; the bridge only tells the HTTP side the protocol version the session agreed on,
// and when the server no longer knows the session (toolgate restarted), starts a new one by itself, so that the
// client, which cannot tell, needs no restart.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { firstLine, socketFailure } from '../config/connection-errors.js';

/** Where `npm start` serves toolgate's MCP endpoint (HOST and PORT's defaults). */
export const DEFAULT_MCP_URL = 'http://127.0.0.1:4000/mcp';

export interface BridgeOptions {
  /** TOOLGATE_URL: the /mcp endpoint. */
  url: URL;
  /** TOOLGATE_TOKEN: sent as the bearer token (none in local mode). */
  token?: string;
  /** A line for stderr. */
  log: (line: string) => void;
}

/** Runs until stdin ends (0) or the server cannot be used (1, after one line saying why). */
export function runStdioBridge(options: BridgeOptions): Promise<number> {
  const { url, log } = options;
  const local = new StdioServerTransport();
  return new Promise((exit) => {
    /** The client's initialize, sent again under an id of the bridge's own when a new session must start. */
    let initialize: JSONRPCRequest | undefined;
    /** Answers to the bridge's own requests, which the client never sees. */
    const ownRequests = new Map<RequestId, (answer: JSONRPCMessage) => void>();
    let ownRequestCount = 0;
    /** Errors a send handles itself; the transport reports them to onerror too. */
    const handled = new WeakSet<object>();
    let ending = false;

    const openRemote = (): StreamableHTTPClientTransport => {
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: options.token ? { headers: { authorization: `Bearer ${options.token}` } } : undefined,
      });
      transport.onmessage = (message: JSONRPCMessage) => {
        if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
          const answered = message.id === undefined ? undefined : ownRequests.get(message.id);
          if (answered) return answered(message);
          if (initialize && isJSONRPCResultResponse(message) && message.id === initialize.id) {
            agreeOnVersion(transport, message);
          }
        }
        local.send(message).catch((error: unknown) => log(`toolgate mcp: ${firstLine(error)}`));
      };
      transport.onerror = (error) => {
        // After the send's own catch has run: only what no send handles is logged here (the GET stream's failures).
        setImmediate(() => {
          if (!handled.has(error) && !ending && transport === remote) log(`toolgate mcp: ${firstLine(error)}`);
        });
      };
      return transport;
    };
    let remote = openRemote();
    const replaceRemote = (transport: StreamableHTTPClientTransport) => {
      const old = remote;
      remote = transport;
      void old.close().catch(() => {});
    };

    /**
     * A new session in place of one the server no longer knows (it restarted, or ended the session when it was
     * idle): the client's initialize again, then notifications/initialized, on a new transport; the client, which
     * keeps its own session state, never sees them.
     */
    const renewSession = async (client: JSONRPCRequest): Promise<void> => {
      const transport = openRemote();
      await transport.start();
      const id = `toolgate-mcp-initialize-${++ownRequestCount}`;
      const answer = new Promise<JSONRPCMessage>((answered) => ownRequests.set(id, answered));
      try {
        await transport.send({ ...client, id });
        const response = await answer;
        if (!isJSONRPCResultResponse(response)) {
          throw new Error(`a new session was refused: ${JSON.stringify((response as { error?: unknown }).error)}`);
        }
        agreeOnVersion(transport, response);
      } catch (error) {
        void transport.close().catch(() => {});
        throw error;
      } finally {
        ownRequests.delete(id);
      }
      replaceRemote(transport);
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      log(
        'toolgate mcp: toolgate no longer knew the session (it restarted, or the session was idle); started a new one',
      );
    };
    let renewing: Promise<void> | undefined;

    /** Sends to the server; a message the server refused for an unknown session goes again in a new session. */
    const forward = async (message: JSONRPCMessage): Promise<void> => {
      const used = remote;
      try {
        await used.send(message);
      } catch (error) {
        if (!initialize || !sessionGone(error) || isInitialize(message)) throw error;
        if (typeof error === 'object' && error !== null) handled.add(error);
        if (remote === used) {
          const client = initialize;
          renewing ??= renewSession(client).finally(() => (renewing = undefined));
        }
        await renewing;
        await remote.send(message);
      }
    };

    const end = (code: number, line?: string) => {
      if (ending) return;
      ending = true;
      if (line) log(line);
      const terminated = code === 0 ? remote.terminateSession() : Promise.resolve();
      void terminated
        .catch(() => {})
        .finally(() => Promise.allSettled([remote.close(), local.close()]))
        .then(() => exit(code));
    };

    local.onmessage = (message: JSONRPCMessage) => {
      if (isInitialize(message)) {
        initialize = message;
        // A client that initializes again starts a new session: the old session's id would be sent with it.
        if (remote.sessionId !== undefined) {
          // The old session ends (when the server still knows it) before its transport closes.
          const old = remote;
          remote = openRemote();
          void remote.start();
          void old
            .terminateSession()
            .catch(() => {})
            .finally(() => old.close().catch(() => {}));
        }
      }
      forward(message).catch((error: unknown) => {
        if (typeof error === 'object' && error !== null) handled.add(error);
        const fatal = fatalProblem(error, url);
        if (fatal) return end(1, fatal);
        // The client would wait forever for a request the server never got: it gets the reason instead.
        if (isJSONRPCRequest(message)) {
          void local.send({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: ErrorCode.InternalError, message: `toolgate: ${firstLine(error)}` },
          });
        } else log(`toolgate mcp: ${firstLine(error)}`);
      });
    };
    local.onerror = (error) => log(`toolgate mcp: ${firstLine(error)}`);
    // The client closed our stdin: it is done with the session.
    process.stdin.once('end', () => end(0));

    void remote.start().then(() => local.start());
  });
}

function isInitialize(message: JSONRPCMessage): message is JSONRPCRequest {
  return isJSONRPCRequest(message) && message.method === 'initialize';
}

/** The HTTP side sends the protocol version the session agreed on with each request after initialize. */
function agreeOnVersion(transport: StreamableHTTPClientTransport, initialized: JSONRPCResultResponse): void {
  const version = initialized.result.protocolVersion;
  if (typeof version === 'string') transport.setProtocolVersion(version);
}

/** The server answered 404 to a request with a session id: it does not know the session (any more). */
function sessionGone(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** Why the bridge cannot go on: the server cannot be reached, or refuses the token; null for a failed message. */
function fatalProblem(error: unknown, url: URL): string | null {
  if (error instanceof StreamableHTTPError && error.code === 401) {
    return `toolgate mcp: ${url.href} refused the credentials (401); set TOOLGATE_TOKEN to a token of the server's config`;
  }
  // fetch fails with a TypeError whose cause is the socket's error.
  if (error instanceof TypeError) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    return `toolgate mcp: cannot reach toolgate at ${url.href} (${socketFailure(cause) ?? firstLine(cause)})`;
  }
  return null;
}
