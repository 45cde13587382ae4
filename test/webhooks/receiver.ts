// A real webhook receiver for the tests: an HTTP server on 127.0.0.1 that checks every request's signature with the
// `standardwebhooks` library, as a user's receiver would, records it, and answers as told: 2xx, an error status, a
// request that hangs, or a socket closed without a response.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

export type ReceiverMode = 'ok' | 'fail' | 'hang' | 'close';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  eventType: string;
  /** The parsed body, as `Webhook.verify` returned it. */
  payload: { type: string; timestamp: string; data: Record<string, any> };
  contentType: string | undefined;
  /** When it arrived here (ms since the epoch). */
  at: number;
  /** What this receiver answered: a status, or 'hang' / 'close'. */
  answered: number | 'hang' | 'close';
}

/** A new Standard Webhooks secret, as the spec's libraries generate them. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export class WebhookReceiver {
  readonly secret = newWebhookSecret();
  /** Every request whose signature verified, in arrival order (answered or not). */
  readonly received: ReceivedWebhook[] = [];
  /** Requests that failed verification: must stay empty. */
  readonly rejected: string[] = [];
  mode: ReceiverMode = 'ok';
  /** Answer this status instead of 204 while `mode` is 'fail'. */
  failStatus = 500;
  /** When > 0: fail this many more requests (then 'ok'), whatever `mode` says. */
  failNext = 0;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #hanging = new Set<ServerResponse>();
  url = '';

  constructor() {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.#server.address() as AddressInfo).port}/hooks`;
    return receiver;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : (value ?? ''),
      ]),
    );
    let payload: ReceivedWebhook['payload'];
    try {
      payload = new Webhook(this.secret).verify(body, headers) as ReceivedWebhook['payload'];
    } catch (error) {
      this.rejected.push(`${headers['webhook-id']}: ${(error as Error).message}`);
      res.writeHead(400).end();
      return;
    }
    const mode: ReceiverMode = this.failNext > 0 ? (this.failNext--, 'fail') : this.mode;
    const answered = mode === 'ok' ? 204 : mode === 'fail' ? this.failStatus : mode;
    this.received.push({
      id: headers['webhook-id']!,
      timestamp: headers['webhook-timestamp']!,
      eventType: payload.type,
      payload,
      contentType: headers['content-type'],
      at: Date.now(),
      answered,
    });
    if (mode === 'hang') {
      this.#hanging.add(res);
      res.on('close', () => this.#hanging.delete(res));
      return;
    }
    if (mode === 'close') {
      req.socket.destroy();
      return;
    }
    res.writeHead(answered as number).end();
  }

  /** The requests answered 2xx, i.e. delivered. */
  delivered(): ReceivedWebhook[] {
    return this.received.filter((r) => typeof r.answered === 'number' && r.answered < 300);
  }

  /** How many requests (of any outcome) came with each webhook-id. */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    return counts;
  }

  /** Requests still hanging. */
  get hanging(): number {
    return this.#hanging.size;
  }

  /** Waits until `probe` holds (polling), or fails naming `what`. */
  async waitFor<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== null && value !== undefined && value !== false) return value;
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; received: ${JSON.stringify(this.received.map((r) => [r.eventType, r.answered]))}`,
        );
      await sleep(20);
    }
  }

  /** Stops listening; hanging requests and open sockets are cut. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * Reads the outbox with `read` until `recorded` holds for what it returns, and returns that (or, after `timeoutMs`,
 * the last read, for the test's assertion to fail on). The receiver has a delivery before the deliverer has committed
 * its outcome (that write goes out with the next group commit), so a check of the outbox right after a request
 * arrived waits for the commit first.
 */
export async function onceRecorded<T>(read: () => Promise<T>, recorded: (value: T) => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (recorded(value) || Date.now() > deadline) return value;
    await sleep(20);
  }
}
