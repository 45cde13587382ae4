// GraphiQL without a CDN: @graphql-yoga/render-graphiql inlines Yoga's GraphiQL (scripts, styles, editor workers)
// into the page, so the browser fetches nothing but the page and the API. The bundle is ~9 MB of JavaScript:
// it is imported on the first GraphiQL request, not at start (most servers never serve the page), and each
// distinct page is rendered and encoded to UTF-8 once (the options are the same for every request).
//
// Its Content-Security-Policy allows exactly what the page is made of: its one inline script by hash, the editor
// workers it starts from blob: URLs, inline styles (the editor injects its own), data: fonts and images, and the API on
// this origin. No other script runs in it, and no other site may frame it.
import { createHash } from 'node:crypto';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

interface RenderedPage {
  body: Uint8Array<ArrayBuffer>;
  /** The CSP source of the page's inline script: 'sha256-<base64>'. */
  scriptSource: string;
}

const pages = new Map<string, Promise<RenderedPage>>();

function renderPage(options: GraphiQLOptions): Promise<RenderedPage> {
  const key = JSON.stringify(options);
  let page = pages.get(key);
  if (!page) {
    page = import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
      const html = renderGraphiQL(options);
      return {
        // TextEncoder returns a view of a fresh ArrayBuffer (its declared type says ArrayBufferLike).
        body: new TextEncoder().encode(html) as Uint8Array<ArrayBuffer>,
        scriptSource: inlineScriptSource(html),
      };
    });
    // A failed import is not remembered: the next request tries again.
    page.catch(() => pages.delete(key));
    pages.set(key, page);
  }
  return page;
}

/** The hash source of the page's inline script, as the browser computes it over the text between the tags. */
function inlineScriptSource(html: string): string {
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)];
  if (scripts.length !== 1) throw new Error(`GraphiQL page: expected one inline script, found ${scripts.length}`);
  return `'sha256-${createHash('sha256').update(scripts[0]![1]!, 'utf8').digest('base64')}'`;
}

function graphiqlPolicy(scriptSources: Iterable<string>): string {
  return [
    "default-src 'none'",
    `script-src ${[...scriptSources].join(' ')}`,
    'worker-src blob:',
    "style-src 'unsafe-inline'",
    'font-src data:',
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export interface BundledGraphiQL {
  /** Yoga's `renderGraphiQL`: the self-contained page for these options. */
  render(options: GraphiQLOptions): Promise<Uint8Array<ArrayBuffer>>;
  /** Sets the page's Content-Security-Policy on the response that carries it (Yoga sends it as text/html). */
  plugin: Plugin;
}

/** GraphiQL for one server: the pages it rendered, and their policy on its responses. */
export function bundledGraphiQL(): BundledGraphiQL {
  // Normally one: the options are the same for every request of a server.
  const scriptSources = new Set<string>();
  return {
    async render(options) {
      const page = await renderPage(options);
      scriptSources.add(page.scriptSource);
      return page.body;
    },
    plugin: {
      onResponse({ response }) {
        // GraphiQL is the only HTML that Yoga answers (its landing page is off).
        if (scriptSources.size === 0 || !response.headers.get('content-type')?.startsWith('text/html')) return;
        response.headers.set('content-security-policy', graphiqlPolicy(scriptSources));
      },
    },
  };
}
