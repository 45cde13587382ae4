// The largest HTTP request body, whatever the client declares: a body without Content-Length (chunked) is
// counted while it is read, and reading stops at the limit. GraphQL bodies are small JSON, so holding one in
// memory up to the limit is what Yoga's JSON parser does anyway.
import { createGraphQLError, type Plugin } from 'graphql-yoga';

export function tooLargeError(maxBytes: number) {
  return createGraphQLError(`The request body is larger than ${maxBytes} bytes.`, {
    extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413, headers: { connection: 'close' } } },
  });
}

/** Reads a body stream up to `maxBytes`; null when it is longer (the rest is not read). */
export async function readWithin(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

/** A Yoga plugin: 413 PAYLOAD_TOO_LARGE for a request body over `maxBytes`, declared or not. */
export function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.body === null || request.method === 'GET' || request.method === 'HEAD') return;
      const declared = request.headers.get('content-length');
      if (declared !== null) {
        if (Number(declared) > maxBytes) throw tooLargeError(maxBytes);
        // Node's HTTP parser delivers exactly the declared length (and refuses Content-Length with chunked), so a
        // declared body within the limit needs no counting; re-reading it into a new Request cost more than the query.
        return;
      }
      const parse = requestParser;
      setRequestParser(async (incoming) => {
        const bytes = incoming.body ? await readWithin(incoming.body, maxBytes) : new Uint8Array(0);
        if (bytes === null) throw tooLargeError(maxBytes);
        return parse(
          new fetchAPI.Request(incoming.url, { method: incoming.method, headers: incoming.headers, body: bytes }),
        );
      });
    },
  };
}
