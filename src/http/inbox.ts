// The approval inbox's built files (web/inbox, built by `npm run inbox:build`, which `npm start` runs when the build
// is missing or stale) at /inbox, and a small page at `/` that links to it. Answered on the node:http server before
// Yoga: static files need none of the GraphQL plugins. Client routes (/inbox/history, /inbox/threads/…) get
// index.html; a path that leaves the build directory is refused; a missing build is a 503 that says how to build.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { packageRoot } from '../package-root.js';

export const INBOX_PATH = '/inbox';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Scripts and styles from this origin only; the API on this origin (HTTP and WebSocket: CSP 3 'self' covers
 * ws: and wss: of the same host); no framing (an answer button must not be clickjacked).
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** web/inbox/dist of this package (src/package-root.ts): the same from src/, from dist/src/ and when installed. */
export function defaultInboxBuildDir(): string {
  return join(packageRoot(), 'web', 'inbox', 'dist');
}

export interface InboxSite {
  /** Whether this request is the inbox's (or `/`) rather than the API's. */
  handles(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export function createInboxSite(buildDir: string = defaultInboxBuildDir()): InboxSite {
  const root = resolve(buildDir);
  return {
    handles(req) {
      const path = pathOf(req);
      return path === '/' || path === INBOX_PATH || path.startsWith(`${INBOX_PATH}/`);
    },
    async serve(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return send(req, res, 405, 'text/plain; charset=utf-8', 'Method not allowed\n', { allow: 'GET, HEAD' });
      }
      const path = pathOf(req);
      if (path === '/')
        return send(req, res, 200, CONTENT_TYPES['.html']!, LANDING_PAGE, { 'cache-control': 'no-cache' });

      let relative: string;
      try {
        relative = decodeURIComponent(path.slice(INBOX_PATH.length)).replace(/^\/+/, '');
      } catch {
        return send(req, res, 400, 'text/plain; charset=utf-8', 'Bad path\n');
      }
      // No way out of the build directory: no "..", no backslashes, no NUL; checked again after resolving.
      if (relative.split('/').includes('..') || relative.includes('\\') || relative.includes('\0')) {
        return send(req, res, 404, 'text/plain; charset=utf-8', 'Not found\n');
      }
      const index = join(root, 'index.html');
      if (!existsSync(index))
        return send(req, res, 503, CONTENT_TYPES['.html']!, NOT_BUILT_PAGE, { 'retry-after': '10' });

      // A path with an extension is a file of the build; anything else is a client route of the app.
      if (relative === '' || extname(relative) === '') {
        return send(req, res, 200, CONTENT_TYPES['.html']!, await readFile(index), { 'cache-control': 'no-cache' });
      }
      const file = resolve(root, relative);
      if (!file.startsWith(root + sep)) return send(req, res, 404, 'text/plain; charset=utf-8', 'Not found\n');
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) return send(req, res, 404, 'text/plain; charset=utf-8', 'Not found\n');
      const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
      // Vite names assets by their content hash: a new build has new names, so these never need revalidating.
      const cache = relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      return send(req, res, 200, type, await readFile(file), { 'cache-control': cache });
    },
  };
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'content-length': String(bytes.length),
    ...headers,
  });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5">
${body}
</body></html>
`;

const LANDING_PAGE = page(
  'toolgate',
  `<h1>toolgate</h1>
<p>AI agents that ask a person before their tools run.</p>
<ul>
<li><a href="/inbox">The approval inbox</a>: answer what your agents ask, live.</li>
<li><a href="/graphql">The GraphQL API</a> (GraphiQL in a browser, where the server allows it).</li>
</ul>`,
);

const NOT_BUILT_PAGE = page(
  'toolgate inbox: not built',
  `<h1>The inbox is not built</h1>
<p>This server has no built inbox to serve. Build it with <code>npm run inbox:build</code> (<code>npm start</code> does
this by itself when the build is missing or stale), then reload this page.</p>
<p>The GraphQL API at <a href="/graphql">/graphql</a> works without it.</p>`,
);
