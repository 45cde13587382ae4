// OAuth 2.0 Protected Resource Metadata (RFC 9728), so that an MCP client signs in by itself (MCP's authorization
// spec): a 401 from /mcp names the metadata of the URL the client asked for; the metadata names that URL as the
// resource and the identity provider(s) of `auth.oidc` as its authorization servers. The client then registers with
// the provider, signs its user in, and asks for a token for that resource (RFC 8707). Served only with `auth.oidc`.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceOptions {
  /**
   * The server's public URL, e.g. https://toolgate.example.com; read per request (it may be known only once
   * listening); undefined when nothing tells it (a wildcard address without server.publicUrl).
   */
  publicUrl: () => string | undefined;
  /** The issuers of `auth.oidc`: where a client gets its tokens. */
  authorizationServers: readonly string[];
  /** The scopes a client asks for (scopes_supported, and the challenge's scope). */
  scopes: readonly string[];
  /** Whether a path of this server (e.g. /mcp/ops) is a resource clients sign in for; '' is the server itself. */
  describes: (path: string) => Promise<boolean>;
}

export interface ProtectedResource {
  /** A request for a metadata document: the well-known path, or below it. */
  handles(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * The `WWW-Authenticate` value of a 401 at `path`: Bearer, the metadata of that path and the scopes; with `refused`
   * (a token was presented and refused), error="invalid_token" and its reason.
   */
  challenge(path: string, refused?: string): string;
}

/** The metadata document of one resource (RFC 9728 section 2). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

export function createProtectedResource(options: ProtectedResourceOptions): ProtectedResource {
  const base = () => options.publicUrl()?.replace(/\/+$/, '');
  const metadataUrl = (server: string, path: string) => {
    const url = new URL(server);
    // RFC 9728 section 3.1: the well-known prefix goes between the host and the resource's path.
    return `${url.origin}${PROTECTED_RESOURCE_METADATA_PATH}${url.pathname.replace(/\/+$/, '')}${path}`;
  };

  return {
    handles: (req) => {
      const path = pathOf(req);
      return path === PROTECTED_RESOURCE_METADATA_PATH || path.startsWith(`${PROTECTED_RESOURCE_METADATA_PATH}/`);
    },
    async serve(req, res) {
      if (req.method === 'OPTIONS') {
        // A browser's preflight: MCP clients send MCP-Protocol-Version with their discovery requests.
        res.writeHead(204, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, HEAD',
          'access-control-allow-headers': 'mcp-protocol-version',
          'access-control-max-age': '3600',
        });
        return void res.end();
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD, OPTIONS', 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('Method not allowed\n');
      }
      const server = base();
      if (server === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('Not found: the server does not know its public URL (set server.publicUrl)\n');
      }
      const path = resourcePathOf(pathOf(req), new URL(server).pathname);
      if (path === null || !(await options.describes(path))) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('Not found\n');
      }
      // RFC 9728 section 3.3: the resource is the URL whose path the well-known prefix was put before, exactly.
      const metadata: ProtectedResourceMetadata = {
        resource: `${server}${path}`,
        authorization_servers: [...options.authorizationServers],
        scopes_supported: [...options.scopes],
        bearer_methods_supported: ['header'],
        resource_name: path === '' ? 'toolgate' : `toolgate MCP gateway ${path}`,
      };
      const body = JSON.stringify(metadata);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        // Public data: a client in a browser (an MCP inspector) may read it from another origin.
        'access-control-allow-origin': '*',
        'cache-control': 'max-age=300',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    challenge(path, refused) {
      const server = base();
      const params = server === undefined ? [] : [`resource_metadata="${metadataUrl(server, path)}"`];
      if (options.scopes.length > 0) params.push(`scope="${options.scopes.join(' ')}"`);
      if (refused !== undefined) params.push('error="invalid_token"', `error_description="${quotable(refused)}"`);
      return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
    },
  };
}

/** Text that may stand between the quotes of an auth-param (RFC 6750 section 3): printable ASCII but `"` and `\`. */
function quotable(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/**
 * The path of the resource a metadata request asks about, below the server: behind a proxy that serves toolgate under
 * a path (server.publicUrl https://example.com/toolgate), the well-known URL of /mcp is
 * /.well-known/oauth-protected-resource/toolgate/mcp, which the proxy passes on as it is. null: not below the server.
 */
function resourcePathOf(requested: string, serverPath: string): string | null {
  const path = requested.slice(PROTECTED_RESOURCE_METADATA_PATH.length).replace(/\/+$/, '');
  const prefix = serverPath.replace(/\/+$/, '');
  if (prefix === '') return path;
  if (path === prefix) return '';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : null;
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const end = url.indexOf('?');
  return end === -1 ? url : url.slice(0, end);
}
