// A load generator of our own, for part 8: N workers, each with one request in flight at a time, each over its own
// keep-alive HTTP/1.1 connection to each server. autocannon (bench/lib/load.ts) chains a connection's requests to
// one URL; part 8 needs a round trip that starts on one server and is answered on another, so its load (on all of
// its servers alike, and for its `{ __typename }`) is this.
//
// Raw sockets rather than node:http: node:http's client costs about as much CPU per request as the server's
// `{ __typename }` (~0.15 ms), which on a small machine takes that CPU from the server under test. This one writes
// each request in one write and reads the response by its Content-Length (what toolgate's responses carry; a chunked
// response is an error here), like autocannon does.
import net from 'node:net';

export interface HttpResponse {
  status: number;
  body: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection; one request at a time. Reconnects on the next request after the server closed it. */
class HttpConnection {
  readonly #host: string;
  readonly #port: number;
  readonly #hostHeader: string;
  readonly #path: string;
  readonly #timeoutMs: number;
  #socket: net.Socket | null = null;
  #chunks: Buffer[] = [];
  #length = 0;
  #pending: { resolve(response: HttpResponse): void; reject(error: Error): void } | null = null;

  constructor(url: URL, timeoutMs: number) {
    this.#host = url.hostname;
    this.#port = Number(url.port || 80);
    this.#hostHeader = url.host;
    this.#path = url.pathname;
    this.#timeoutMs = timeoutMs;
  }

  post(body: string, path = this.#path): Promise<HttpResponse> {
    if (this.#pending) return Promise.reject(new Error('one request at a time per connection'));
    const socket = this.#socket ?? this.#connect();
    return new Promise<HttpResponse>((resolve, reject) => {
      this.#pending = { resolve, reject };
      socket.setTimeout(this.#timeoutMs);
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${this.#hostHeader}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  #connect(): net.Socket {
    const socket = net.connect({ host: this.#host, port: this.#port, noDelay: true });
    this.#socket = socket;
    this.#chunks = [];
    this.#length = 0;
    socket.on('data', (chunk: Buffer) => {
      this.#chunks.push(chunk);
      this.#length += chunk.length;
      this.#parse();
    });
    socket.on('timeout', () => {
      if (this.#pending) socket.destroy(new Error(`no answer within ${this.#timeoutMs} ms`));
    });
    // A socket closed by close() goes after its replacement may have a request in flight: only the current one fails it.
    const gone = (error?: Error) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#fail(error ?? new Error('the server closed the connection'));
    };
    socket.on('error', gone);
    socket.on('close', () => gone());
    return socket;
  }

  /** Resolves the pending request once its whole response is in. */
  #parse(): void {
    const data = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#length);
    const headerEnd = data.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = data.toString('latin1', 0, headerEnd);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      this.#socket?.destroy();
      return this.#fail(new Error(`a response without Content-Length: ${head.split('\r\n')[0]}`));
    }
    const end = headerEnd + HEADER_END.length + Number(length[1]);
    if (data.length < end) {
      this.#chunks = [data];
      return;
    }
    this.#chunks = data.length > end ? [data.subarray(end)] : [];
    this.#length = data.length - end;
    const pending = this.#pending;
    this.#pending = null;
    this.#socket?.setTimeout(0);
    if (/\r\nconnection:\s*close/i.test(head)) this.close();
    pending?.resolve({
      status: Number(head.slice(9, 12)),
      body: data.toString('utf8', headerEnd + HEADER_END.length, end),
    });
  }

  #fail(error: Error): void {
    const pending = this.#pending;
    this.#pending = null;
    pending?.reject(error);
  }
}

export interface HttpClient {
  url: string;
  /** POSTs a JSON body on worker `worker`'s connection (to `path`, default the URL's); rejects on a socket error or timeout. */
  post(worker: number, body: string, path?: string): Promise<HttpResponse>;
  /** Closes every connection (the next request opens a new one). */
  close(): void;
}

/** One keep-alive connection per worker to `url`. */
export function httpClient(url: string, workers: number, timeoutMs = 10_000): HttpClient {
  const target = new URL(url);
  const connections = Array.from({ length: workers }, () => new HttpConnection(target, timeoutMs));
  return {
    url,
    post: (worker, body, path) => connections[worker]!.post(body, path),
    close: () => connections.forEach((c) => c.close()),
  };
}

/**
 * Runs `workers` loops for `seconds`: each calls `iteration(worker, k)` again as soon as the previous one settled
 * (an iteration handles its own failures). Returns the elapsed seconds, until the last iteration settled.
 */
export async function runWorkers(
  workers: number,
  seconds: number,
  iteration: (worker: number, k: number) => Promise<void>,
): Promise<number> {
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let k = 0; performance.now() < end; k++) await iteration(worker, k);
    }),
  );
  return (performance.now() - started) / 1000;
}
