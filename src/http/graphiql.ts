// GraphiQL without a CDN: @graphql-yoga/render-graphiql inlines Yoga's GraphiQL (scripts, styles, editor workers)
// into the page, so the browser fetches nothing but the page and the API. The bundle is ~9 MB of JavaScript:
// it is imported on the first GraphiQL request, not at start (most servers never serve the page), and each
// distinct page is rendered and encoded to UTF-8 once (the options are the same for every request).
import type { GraphiQLOptions } from 'graphql-yoga';

const pages = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();

/** Yoga's `renderGraphiQL`: the self-contained page for these options. */
export function renderBundledGraphiQL(options: GraphiQLOptions): Promise<Uint8Array<ArrayBuffer>> {
  const key = JSON.stringify(options);
  let page = pages.get(key);
  if (!page) {
    // TextEncoder returns a view of a fresh ArrayBuffer (its declared type says ArrayBufferLike).
    page = import('@graphql-yoga/render-graphiql').then(
      ({ renderGraphiQL }) => new TextEncoder().encode(renderGraphiQL(options)) as Uint8Array<ArrayBuffer>,
    );
    // A failed import is not remembered: the next request tries again.
    page.catch(() => pages.delete(key));
    pages.set(key, page);
  }
  return page;
}
