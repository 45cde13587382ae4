// The MCP sessions of this instance (src/http/mcp-route.ts): found by id, counted per user, and ended once idle. A
// client that goes away without DELETE would otherwise keep its Server and transport for as long as the process
// runs. A session is idle while none of its requests has an open response: a tools/call that waits for a person
// keeps its response stream open, and so does a client's GET stream, so neither is idle.
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface McpSessionsOptions {
  /** Milliseconds without a request and without an open response, after which a session is ended. */
  idleMs: number;
  /** Sessions one user may hold open at once, those being opened included. */
  maxPerUser: number;
  onError: (error: unknown) => void;
}

export interface McpSession {
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  readonly viewerId: string;
  /** The path it was opened on: its id is not valid on another gateway's. */
  readonly path: string;
}

interface Entry {
  /** Requests whose responses are still open. */
  openResponses: number;
  idleTimer: NodeJS.Timeout | null;
}

export class McpSessions {
  readonly #options: McpSessionsOptions;
  readonly #entries = new Map<McpSession, Entry>();
  readonly #byId = new Map<string, McpSession>();
  readonly #perUser = new Map<string, number>();

  constructor(options: McpSessionsOptions) {
    this.#options = options;
  }

  /** Whether the user may open one more session. */
  hasRoomFor(viewerId: string): boolean {
    return (this.#perUser.get(viewerId) ?? 0) < this.#options.maxPerUser;
  }

  /** Counts a session being opened: it holds its user's slot from now on, until remove(). */
  add(session: McpSession): void {
    this.#entries.set(session, { openResponses: 0, idleTimer: null });
    this.#perUser.set(session.viewerId, (this.#perUser.get(session.viewerId) ?? 0) + 1);
  }

  /** Its transport gave it an id: requests carrying that id find it. */
  named(session: McpSession, id: string): void {
    if (this.#entries.has(session)) this.#byId.set(id, session);
  }

  get(id: string): McpSession | undefined {
    return this.#byId.get(id);
  }

  /**
   * A request of the session: the session is not idle until `res` closes. A session whose only request closed
   * before it had an id (an initialize its transport refused) is ended then.
   */
  busyUntilClosed(session: McpSession, res: ServerResponse): void {
    const entry = this.#entries.get(session);
    if (!entry) return;
    entry.openResponses += 1;
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = null;
    res.once('close', () => {
      entry.openResponses -= 1;
      if (entry.openResponses > 0 || !this.#entries.has(session)) return;
      if (session.transport.sessionId === undefined) return this.#end(session);
      entry.idleTimer = setTimeout(() => this.#end(session), this.#options.idleMs);
      // An idle session never keeps the process alive.
      entry.idleTimer.unref();
    });
  }

  /** Forgets the session and frees its user's slot: called once its server closed (DELETE, idle, shutdown). */
  remove(session: McpSession): void {
    const entry = this.#entries.get(session);
    if (!entry) return;
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    this.#entries.delete(session);
    if (session.transport.sessionId !== undefined) this.#byId.delete(session.transport.sessionId);
    const count = (this.#perUser.get(session.viewerId) ?? 1) - 1;
    if (count > 0) this.#perUser.set(session.viewerId, count);
    else this.#perUser.delete(session.viewerId);
  }

  /** Ends every session. */
  async closeAll(): Promise<void> {
    const sessions = [...this.#entries.keys()];
    await Promise.all(sessions.map((session) => session.server.close()));
    // Their servers' onclose removed them; this covers one whose transport had not started.
    for (const session of sessions) this.remove(session);
  }

  #end(session: McpSession): void {
    session.server.close().catch(this.#options.onError);
  }
}
