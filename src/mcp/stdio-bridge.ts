// `toolgate mcp`: an MCP server on stdio for local clients that forwards every JSON-RPC message, unchanged, to a
// running toolgate's /mcp and back. Nothing is interpreted on the way: elicitation/create, progress and
// cancellations pass as they are; the bridge only tells the HTTP side the protocol version the session agreed on.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ErrorCode,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
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
  const remote = new StreamableHTTPClientTransport(url, {
    requestInit: options.token ? { headers: { authorization: `Bearer ${options.token}` } } : undefined,
  });
  return new Promise((exit) => {
    let initializeId: RequestId | undefined;
    /** Errors a send handles itself; the transport reports them to onerror too. */
    const handled = new WeakSet<object>();
    let ending = false;
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
      if (isJSONRPCRequest(message) && message.method === 'initialize') initializeId = message.id;
      remote.send(message).catch((error: unknown) => {
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
    remote.onmessage = (message: JSONRPCMessage) => {
      if (initializeId !== undefined && isJSONRPCResultResponse(message) && message.id === initializeId) {
        const version = message.result.protocolVersion;
        if (typeof version === 'string') remote.setProtocolVersion(version);
      }
      local.send(message).catch((error: unknown) => log(`toolgate mcp: ${firstLine(error)}`));
    };
    remote.onerror = (error) => {
      // After the send's own catch has run: only what no send handles is logged here (the GET stream's failures).
      setImmediate(() => {
        if (!handled.has(error) && !ending) log(`toolgate mcp: ${firstLine(error)}`);
      });
    };
    local.onerror = (error) => log(`toolgate mcp: ${firstLine(error)}`);
    // The client closed our stdin: it is done with the session.
    process.stdin.once('end', () => end(0));

    void remote.start().then(() => local.start());
  });
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
