// POST /slack/interactions: Slack's interactivity requests (docs/slack.md). Nothing is read from a request before its
// signature holds: `X-Slack-Signature` over the raw body with the app's signing secret, a timestamp within five
// minutes, compared in constant time; a signature seen before (kept for the window, in the database, so every
// instance refuses it) is a replay and refused. Then the form's `payload` JSON is handed to the Slack notifier's
// interaction handling, which answers through answerElicitation.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SLACK_SIGNATURE_WINDOW_SECONDS, verifySlackSignature } from '../notifiers/slack/signature.js';
import { handleSlackInteraction, type SlackInteractionDeps } from '../notifiers/slack/interactions.js';
import { SLACK_NOTIFIER } from '../notifiers/slack/slack-notifier.js';
import type { NotifierCards } from '../domain/notifier-cards.js';

export const SLACK_INTERACTIONS_PATH = '/slack/interactions';

/** Slack's interaction payloads are small; a view submission with long instructions stays well under this. */
const MAX_BODY_BYTES = 256 * 1024;

export interface SlackInteractionsOptions extends SlackInteractionDeps {
  cards: Pick<NotifierCards, 'firstSight'>;
  clock: () => Date;
  /** The store's flush: Slack is answered once what the answer wrote is on disk, as a mutation's response is. */
  flush: () => Promise<void>;
}

export function createSlackInteractions(options: SlackInteractionsOptions) {
  return {
    handles(req: IncomingMessage): boolean {
      return (req.url ?? '').split('?')[0] === SLACK_INTERACTIONS_PATH;
    },
    async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
      try {
        await serve(options, req, res);
      } catch (error) {
        options.onError(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end();
      }
    },
  };
}

async function serve(options: SlackInteractionsOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const refuse = (status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${text}\n`);
  };
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return refuse(405, 'POST only');
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (!body) return refuse(413, 'request body too large');
  const now = options.clock();
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const check = verifySlackSignature(
    options.settings.signingSecret,
    { timestamp: header('x-slack-request-timestamp'), signature: header('x-slack-signature') },
    body,
    now.getTime(),
  );
  if (!check.ok) {
    options.logger?.warn({ reason: check.reason }, 'slack interaction refused: signature');
    return refuse(401, check.reason === 'STALE' ? 'stale timestamp' : 'invalid signature');
  }
  // Refused for as long as the timestamp is accepted; older ones are refused as stale anyway.
  const forgetBefore = new Date(now.getTime() - 2 * SLACK_SIGNATURE_WINDOW_SECONDS * 1000).toISOString();
  if (!(await options.cards.firstSight(SLACK_NOTIFIER, check.signature, now.toISOString(), forgetBefore))) {
    options.logger?.warn({ reason: 'REPLAY' }, 'slack interaction refused: replay');
    return refuse(409, 'replayed request');
  }
  const form = new URLSearchParams(body.toString('utf8'));
  let payload: unknown;
  try {
    payload = JSON.parse(form.get('payload') ?? '');
  } catch {
    return refuse(400, 'expected a form with a JSON payload');
  }
  if (typeof payload !== 'object' || payload === null) return refuse(400, 'expected a form with a JSON payload');
  const reply = await handleSlackInteraction(options, payload);
  // A cleared decline modal tells the reviewer their answer was taken: a power cut may not take it back.
  await options.flush();
  if (reply.body) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(reply.body));
  } else {
    res.writeHead(200);
    res.end();
  }
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > maxBytes) {
      req.destroy();
      return null;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
