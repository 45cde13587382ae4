// A stand-in for Slack on 127.0.0.1 (Slack itself is outside this machine, like the model). Its Web API half
// (`<url>/api/<method>`) checks every call against Slack's documented request shape (POST, `Authorization: Bearer
// xoxb-…`, a form or JSON body with the method's required fields, Block Kit's limits) and answers as Slack does:
// `{ok: true, …}`, `{ok: false, error}`, or HTTP 429 with Retry-After, as scripted. A call that breaks a documented
// rule is answered `{ok: false, error: "invalid_arguments"}` and listed in `problems`, which a test asserts empty. Its
// other half makes interaction requests as Slack sends them: form-encoded `payload=` JSON, signed with the app's
// signing secret (`v0` HMAC-SHA256), built from the buttons of the messages the server really posted.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SlackCall {
  method: string;
  params: Record<string, any>;
  /** What the stand-in answered: a status, and the body's ok/error. */
  answered: { status: number; ok: boolean; error?: string };
  at: number;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: any[];
  metadata: { event_type: string; event_payload: Record<string, unknown> } | null;
  /** Every version, the first as posted. */
  history: { text: string; blocks: any[] }[];
}

export type ScriptedFailure =
  | { status: 429; retryAfter: number }
  | { error: string }
  /** Never answers (the caller's timeout ends it); `thenPost`: chat.postMessage takes effect first. */
  | { hang: true; thenPost?: boolean }
  | { status: 500 };

/** A Slack user for users.info: their email (for mapByEmail). */
export interface StandInUser {
  email?: string;
  isBot?: boolean;
}

const METHODS: Record<string, { required: string[]; oneOf?: string[] }> = {
  'chat.postMessage': { required: ['channel'], oneOf: ['text', 'blocks', 'attachments'] },
  'chat.update': { required: ['channel', 'ts'], oneOf: ['text', 'blocks', 'attachments'] },
  'chat.postEphemeral': { required: ['channel', 'user'], oneOf: ['text', 'blocks', 'attachments'] },
  'views.open': { required: ['trigger_id', 'view'] },
  'users.info': { required: ['user'] },
  'users.lookupByEmail': { required: ['email'] },
  'conversations.history': { required: ['channel'] },
};

export class SlackStandIn {
  readonly token = `xoxb-${randomBytes(6).toString('hex')}-${randomBytes(6).toString('hex')}`;
  readonly signingSecret = randomBytes(16).toString('hex');
  readonly calls: SlackCall[] = [];
  /** Calls that broke a documented rule: a test asserts this stays empty. */
  readonly problems: string[] = [];
  readonly messages: StoredMessage[] = [];
  readonly ephemerals: { channel: string; user: string; text: string }[] = [];
  readonly views: { triggerId: string; view: any }[] = [];
  users: Record<string, StandInUser> = {};
  readonly #script = new Map<string, ScriptedFailure[]>();
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #sequence = 0;
  url = '';

  constructor() {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** The config's `slack` fields that point a server at this stand-in: its bot token, signing secret and API URL. */
  get connection(): { botToken: string; signingSecret: string; apiUrl: string } {
    return { botToken: this.token, signingSecret: this.signingSecret, apiUrl: this.url };
  }

  static async start(): Promise<SlackStandIn> {
    const standIn = new SlackStandIn();
    await new Promise<void>((resolve) => standIn.#server.listen(0, '127.0.0.1', resolve));
    standIn.url = `http://127.0.0.1:${(standIn.#server.address() as AddressInfo).port}/api/`;
    return standIn;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next calls of `method` fail as given, one each, in order. */
  failNext(method: string, ...failures: ScriptedFailure[]): void {
    this.#script.set(method, [...(this.#script.get(method) ?? []), ...failures]);
  }

  /** The successful calls of a method. */
  ok(method: string): SlackCall[] {
    return this.calls.filter((call) => call.method === method && call.answered.ok);
  }

  /** The cards (posted messages) of a request, by the metadata each one carries. */
  cardsOf(elicitationId: string): StoredMessage[] {
    return this.messages.filter((m) => m.metadata?.event_payload.elicitation_id === elicitationId);
  }

  async waitFor<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== null && value !== undefined && value !== false) return value;
      if (Date.now() > deadline) {
        throw new Error(
          `timed out waiting for ${what}; calls: ${JSON.stringify(this.calls.map((c) => [c.method, c.answered]))}`,
        );
      }
      await sleep(20);
    }
  }

  // ---- interactions, as Slack sends them ---------------------------------------------------------------------------

  /**
   * A click on the card's button `actionId` by `user`: the block_actions payload Slack would send. The button of the
   * latest version that had it: someone may click a card whose update has not reached their screen yet.
   */
  buttonPayload(card: StoredMessage, user: string, actionId: string): Record<string, unknown> {
    const shown = [...card.history].reverse().find((version) => hasButton(version.blocks, actionId));
    const button = (shown?.blocks ?? [])
      .filter((block) => block.type === 'actions')
      .flatMap((block) => block.elements.map((element: any) => ({ ...element, block_id: block.block_id })))
      .find((element: any) => element.action_id === actionId);
    if (!button) throw new Error(`the card offers no button ${actionId}`);
    return {
      type: 'block_actions',
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: 'T0STANDIN' },
      api_app_id: 'A0STANDIN',
      token: 'deprecated-verification-token',
      container: { type: 'message', message_ts: card.ts, channel_id: card.channel, is_ephemeral: false },
      trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
      team: { id: 'T0STANDIN', domain: 'standin' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: card.channel, name: 'reviews' },
      message: { type: 'message', ts: card.ts, text: card.text, blocks: card.blocks },
      state: { values: {} },
      response_url: `https://hooks.slack.com/actions/T0STANDIN/${randomBytes(4).toString('hex')}`,
      actions: [
        {
          action_id: button.action_id,
          block_id: button.block_id,
          text: button.text,
          value: button.value,
          ...(button.style && { style: button.style }),
          type: 'button',
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    };
  }

  /** The submission of the decline modal the server opened (views.open), with `instructions` typed in. */
  submissionPayload(view: any, user: string, instructions: string | null): Record<string, unknown> {
    const input = view.blocks.find((block: any) => block.type === 'input');
    return {
      type: 'view_submission',
      team: { id: 'T0STANDIN', domain: 'standin' },
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: 'T0STANDIN' },
      api_app_id: 'A0STANDIN',
      token: 'deprecated-verification-token',
      trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
      view: {
        id: 'V0STANDIN',
        team_id: 'T0STANDIN',
        type: 'modal',
        callback_id: view.callback_id,
        private_metadata: view.private_metadata,
        blocks: view.blocks,
        state: {
          values: {
            [input.block_id]: { [input.element.action_id]: { type: 'plain_text_input', value: instructions } },
          },
        },
        hash: randomBytes(6).toString('hex'),
      },
      response_urls: [],
    };
  }

  /** The request Slack would send for `payload`: form-encoded, signed now (or at `timestamp`), as the app's secret. */
  signedRequest(
    payload: Record<string, unknown>,
    options: { timestamp?: number; secret?: string } = {},
  ): { body: string; headers: Record<string, string> } {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', options.secret ?? this.signingSecret)
      .update(`v0:${timestamp}:${body}`)
      .digest('hex')}`;
    return {
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
    };
  }

  // ---- the Web API -------------------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const answer = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      this.calls.push({
        method,
        params,
        answered: { status, ok: body.ok === true, ...(typeof body.error === 'string' && { error: body.error }) },
        at: Date.now(),
      });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    let params: Record<string, any> = {};
    const problem = (text: string) => {
      this.problems.push(`${method}: ${text}`);
      answer(200, { ok: false, error: 'invalid_arguments', response_metadata: { messages: [text] } });
    };
    if (req.method !== 'POST') return problem(`${req.method} instead of POST`);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (type === 'application/x-www-form-urlencoded') params = Object.fromEntries(new URLSearchParams(raw));
    else if (type === 'application/json') params = JSON.parse(raw || '{}');
    else return problem(`content-type ${type}`);
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      if (!/^Bearer xox[bp]-/.test(req.headers.authorization ?? '')) return problem('no Bearer xoxb- token');
      return answer(200, { ok: false, error: 'invalid_auth' });
    }
    const spec = METHODS[method];
    if (!spec) return answer(200, { ok: false, error: 'unknown_method' });
    for (const field of spec.required)
      if (params[field] === undefined || params[field] === '') return problem(`${field} missing`);
    if (spec.oneOf && !spec.oneOf.some((field) => params[field] !== undefined)) {
      return problem(`one of ${spec.oneOf.join(', ')} needed`);
    }
    // Form bodies carry objects as JSON strings (as the SDK and Slack's docs do).
    const json = (field: string) => (typeof params[field] === 'string' ? JSON.parse(params[field]) : params[field]);
    let blocks: any[] | undefined;
    let view: any;
    let metadata: any;
    try {
      blocks = params.blocks === undefined ? undefined : json('blocks');
      view = params.view === undefined ? undefined : json('view');
      metadata = params.metadata === undefined ? undefined : json('metadata');
    } catch {
      return problem('a JSON field does not parse');
    }
    const blockProblem =
      (blocks && blocksProblem(blocks)) ?? (view && viewProblem(view)) ?? (metadata && metadataProblem(metadata));
    if (blockProblem) return problem(blockProblem);
    if (typeof params.text === 'string' && params.text.length > 40_000) return problem('text over 40000 characters');

    const failure = this.#script.get(method)?.shift();
    if (failure) {
      if ('status' in failure && failure.status === 429) {
        return answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(failure.retryAfter) });
      }
      if ('status' in failure) return answer(failure.status, { ok: false, error: 'internal_error' });
      if ('error' in failure) return answer(200, { ok: false, error: failure.error });
      if (failure.thenPost && method === 'chat.postMessage') this.#post(params, blocks, metadata);
      this.calls.push({ method, params, answered: { status: 0, ok: failure.thenPost === true }, at: Date.now() });
      return; // hangs: the caller's timeout (or its death) ends it
    }

    switch (method) {
      case 'chat.postMessage': {
        const message = this.#post(params, blocks, metadata);
        return answer(200, {
          ok: true,
          channel: message.channel,
          ts: message.ts,
          message: { text: message.text, blocks },
        });
      }
      case 'chat.update': {
        const message = this.messages.find((m) => m.channel === params.channel && m.ts === params.ts);
        if (!message) return answer(200, { ok: false, error: 'message_not_found' });
        message.text = params.text ?? message.text;
        message.blocks = blocks ?? message.blocks;
        message.history.push({ text: message.text, blocks: message.blocks });
        return answer(200, { ok: true, channel: message.channel, ts: message.ts, text: message.text });
      }
      case 'chat.postEphemeral':
        this.ephemerals.push({ channel: params.channel, user: params.user, text: params.text ?? '' });
        return answer(200, { ok: true, message_ts: this.#nextTs() });
      case 'views.open':
        this.views.push({ triggerId: params.trigger_id, view });
        return answer(200, { ok: true, view: { id: 'V0STANDIN', ...view } });
      case 'users.info': {
        const user = this.users[params.user];
        if (!user) return answer(200, { ok: false, error: 'user_not_found' });
        return answer(200, {
          ok: true,
          user: { id: params.user, deleted: false, is_bot: user.isBot ?? false, profile: { email: user.email } },
        });
      }
      case 'users.lookupByEmail': {
        const found = Object.entries(this.users).find(([, user]) => user.email === params.email);
        if (!found) return answer(200, { ok: false, error: 'users_not_found' });
        return answer(200, { ok: true, user: { id: found[0], profile: { email: params.email } } });
      }
      case 'conversations.history': {
        const oldest = params.oldest === undefined ? 0 : Number(params.oldest);
        const limit = params.limit === undefined ? 100 : Number(params.limit);
        if (!Number.isFinite(oldest) || !(limit >= 1 && limit <= 999)) return problem('oldest or limit out of range');
        const all = String(params.include_all_metadata) === 'true';
        const messages = this.messages
          .filter((m) => m.channel === params.channel && Number(m.ts) > oldest)
          .reverse()
          .slice(0, limit)
          .map((m) => ({
            type: 'message',
            ts: m.ts,
            text: m.text,
            ...(all && m.metadata && { metadata: m.metadata }),
          }));
        return answer(200, { ok: true, messages, has_more: false, response_metadata: { next_cursor: '' } });
      }
    }
  }

  #post(params: Record<string, any>, blocks: any[] | undefined, metadata: any): StoredMessage {
    const message: StoredMessage = {
      channel: params.channel,
      ts: this.#nextTs(),
      text: params.text ?? '',
      blocks: blocks ?? [],
      metadata: metadata ?? null,
      history: [{ text: params.text ?? '', blocks: blocks ?? [] }],
    };
    this.messages.push(message);
    return message;
  }

  /** Slack's message ts: Unix seconds, then a unique six-digit part. */
  #nextTs(): string {
    this.#sequence += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(this.#sequence).padStart(6, '0')}`;
  }
}

function hasButton(blocks: any[], actionId: string): boolean {
  return blocks.some((b) => b.type === 'actions' && b.elements.some((e: any) => e.action_id === actionId));
}

// ---- Block Kit's documented limits ----------------------------------------------------------------------------------

const BLOCK_TYPES = new Set(['section', 'header', 'context', 'actions', 'rich_text', 'divider', 'input', 'image']);

function textProblem(text: any, max: number, where: string, plainOnly = false): string | null {
  if (!text || typeof text.text !== 'string') return `${where}: a text object needed`;
  if (plainOnly ? text.type !== 'plain_text' : !['plain_text', 'mrkdwn'].includes(text.type)) {
    return `${where}: text type ${text.type}`;
  }
  if (text.text.length === 0 || text.text.length > max)
    return `${where}: text of ${text.text.length} characters (1 to ${max})`;
  return null;
}

export function blocksProblem(blocks: unknown, max = 50): string | null {
  if (!Array.isArray(blocks)) return 'blocks is not an array';
  if (blocks.length > max) return `${blocks.length} blocks (at most ${max})`;
  for (const [i, block] of blocks.entries()) {
    const where = `blocks[${i}]`;
    if (!BLOCK_TYPES.has(block?.type)) return `${where}: unknown block type ${block?.type}`;
    if (block.block_id !== undefined && (typeof block.block_id !== 'string' || block.block_id.length > 255)) {
      return `${where}: block_id`;
    }
    switch (block.type) {
      case 'header': {
        const found = textProblem(block.text, 150, where, true);
        if (found) return found;
        break;
      }
      case 'section': {
        const found = textProblem(block.text, 3000, where);
        if (found) return found;
        break;
      }
      case 'context':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10) {
          return `${where}: 1 to 10 context elements`;
        }
        for (const element of block.elements) {
          const found = textProblem(element, 3000, `${where}.elements`);
          if (found) return found;
        }
        break;
      case 'actions':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 25) {
          return `${where}: 1 to 25 action elements`;
        }
        for (const element of block.elements) {
          if (element.type !== 'button') return `${where}: element type ${element.type}`;
          const found = textProblem(element.text, 75, `${where}.button`, true);
          if (found) return found;
          if (typeof element.action_id !== 'string' || element.action_id.length > 255) return `${where}: action_id`;
          if (element.value !== undefined && String(element.value).length > 2000) return `${where}: value over 2000`;
          if (element.url !== undefined && String(element.url).length > 3000) return `${where}: url over 3000`;
          if (element.style !== undefined && !['primary', 'danger'].includes(element.style)) return `${where}: style`;
        }
        break;
      case 'rich_text':
        if (!Array.isArray(block.elements)) return `${where}: rich_text elements`;
        break;
      case 'input':
        if (!block.element || typeof block.element.action_id !== 'string') return `${where}: input element`;
        if (textProblem(block.label, 2000, `${where}.label`, true)) return `${where}: label`;
        break;
    }
  }
  return null;
}

function viewProblem(view: any): string | null {
  if (view?.type !== 'modal') return `view type ${view?.type}`;
  const title = textProblem(view.title, 24, 'view.title', true);
  if (title) return title;
  if (view.submit && textProblem(view.submit, 24, 'view.submit', true)) return 'view.submit';
  if (view.private_metadata !== undefined && String(view.private_metadata).length > 3000) return 'private_metadata';
  return blocksProblem(view.blocks, 100);
}

function metadataProblem(metadata: any): string | null {
  if (typeof metadata?.event_type !== 'string' || !/^[a-zA-Z0-9_]+$/.test(metadata.event_type)) {
    return 'metadata.event_type';
  }
  if (typeof metadata.event_payload !== 'object' || metadata.event_payload === null) return 'metadata.event_payload';
  return null;
}
