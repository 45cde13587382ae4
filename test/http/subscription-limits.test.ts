// How many subscriptions a client may hold open (server.maxSubscriptionsPerSocket, maxSubscriptionsPerUser): one more
// gets TOO_MANY_SUBSCRIPTIONS, those open go on, and a subscription that ends frees its slot. Real graphql-ws clients
// over real sockets, and SSE with fetch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';
import {
  connectWs,
  observedPubSub,
  subscribeFetch,
  subscribeWs,
  testUsersAuthenticator,
  type Received,
} from '../support/live.js';
import { memoryLog } from '../support/log.js';

const ELICITATION_REQUESTED = 'subscription { elicitationRequested { id toolCall { arguments } } }';
const TURN_UPDATED = 'subscription Updated($turnId: ID!) { turnUpdated(turnId: $turnId) { id status } }';
const PER_SOCKET = 'This connection has 3 subscriptions open, the most it may have; end one before starting another.';
const PER_USER =
  'You have 5 subscriptions open on this server, the most a user may have; end one before starting another.';

const bearer = (user: string) => ({ authorization: `Bearer ${user}` });

describe('subscription limits: 3 per socket, 5 per user', () => {
  let h: Harness;
  const pubsub = observedPubSub();
  const log = memoryLog('info');
  beforeAll(async () => {
    h = await startHarness({
      config: { ...demoConfig, server: { maxSubscriptionsPerSocket: 3, maxSubscriptionsPerUser: 5 } },
      authenticator: testUsersAuthenticator,
      pubsub,
      logger: log.logger,
    });
  });
  afterAll(async () => {
    await h.close();
  });

  /** `count` elicitationRequested subscriptions of `user` on `client`, once the server listens for all of them. */
  async function open(client: ReturnType<typeof connectWs>, user: string, count: number) {
    const listening = pubsub.listening('elicitations', user, count);
    const opened = Array.from({ length: count }, () => subscribeWs(client, ELICITATION_REQUESTED));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const got = JSON.stringify(opened.map((received) => received.events));
        reject(new Error(`${count} subscriptions of ${user} did not all start; they got ${got}`));
      }, 5_000);
    });
    await Promise.race([listening, timeout]).finally(() => clearTimeout(timer));
    return opened;
  }

  /** The one error the refused subscription got; it ended with it. */
  async function refusal(received: Received): Promise<unknown[]> {
    const result = await received.waitFor((e) => e.errors !== undefined, 'the refusal');
    await received.done;
    expect(received.events).toHaveLength(1);
    return result.errors!;
  }

  /** Starts a turn that pauses; resolves with its elicitation's id. */
  async function pause(user: string, ids: number): Promise<string> {
    const started = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: `delete entities ${ids}` } }, bearer(user)),
    ).startTurn;
    return started.turn.pendingElicitations[0].id;
  }

  it('one more on a socket gets TOO_MANY_SUBSCRIPTIONS; the open ones go on; one that ends frees its slot', async () => {
    const client = connectWs(h.url, bearer('alice').authorization);
    try {
      const opened = await open(client, 'alice', 3);
      expect(await refusal(subscribeWs(client, ELICITATION_REQUESTED))).toEqual([
        { message: PER_SOCKET, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } },
      ]);
      // The connection stays, and so do its subscriptions: each gets the next request.
      const requested = await pause('alice', 1);
      for (const received of opened) await received.waitFor((e) => e.data?.elicitationRequested.id === requested);

      opened[0]!.stop();
      const [again] = await open(client, 'alice', 1);
      const next = await pause('alice', 2);
      await again!.waitFor((e) => e.data?.elicitationRequested.id === next, 'the request on the freed slot');
    } finally {
      await client.dispose();
    }
  });

  it('one more for a user, on any socket or over SSE, gets TOO_MANY_SUBSCRIPTIONS; other users are not affected; a closed socket frees its slots', async () => {
    const first = connectWs(h.url, bearer('erin').authorization);
    const second = connectWs(h.url, bearer('erin').authorization);
    const other = connectWs(h.url, bearer('frank').authorization);
    try {
      const opened = [...(await open(first, 'erin', 3)), ...(await open(second, 'erin', 2))];
      const refused = { message: PER_USER, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } };
      expect(await refusal(subscribeWs(second, ELICITATION_REQUESTED))).toEqual([refused]);
      const overSse = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, bearer('erin'));
      expect(overSse.status).toBe(200);
      expect(await refusal(overSse)).toEqual([refused]);
      // Another user's count is their own.
      await open(other, 'frank', 3);
      const requested = await pause('erin', 3);
      for (const received of opened) await received.waitFor((e) => e.data?.elicitationRequested.id === requested);

      // A closed socket frees its slots: a stream over SSE now starts (its headers come once it listens).
      await first.dispose();
      await log.waitFor('websocket closed', { viewerId: 'erin' });
      const listening = pubsub.listening('elicitations', 'erin', 1);
      const streamed = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, bearer('erin'));
      await listening;
      const next = await pause('erin', 4);
      await streamed.waitFor((e) => e.data?.elicitationRequested.id === next, 'the request over SSE');
      expect(streamed.events.filter((e) => e.errors)).toEqual([]);

      // So does a stream the client closes: with the user at the limit again, the next one waits for that slot.
      const third = connectWs(h.url, bearer('erin').authorization);
      try {
        await open(third, 'erin', 2);
        expect(await refusal(subscribeWs(third, ELICITATION_REQUESTED))).toEqual([refused]);
        streamed.stop();
        // The server lets go of the stream when it notices the client left: try until a new one is taken.
        const deadline = Date.now() + 5_000;
        let accepted = false;
        while (!accepted && Date.now() < deadline) {
          const listening = pubsub.listening('elicitations', 'erin', 1).then(() => true);
          const attempt = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, bearer('erin'));
          accepted = await Promise.race([listening, attempt.done.then(() => false)]);
          if (!accepted) expect(attempt.events).toEqual([{ errors: [refused] }]);
          attempt.stop();
        }
        expect(accepted).toBe(true);
      } finally {
        await third.dispose();
      }
    } finally {
      await Promise.all([first.dispose(), second.dispose(), other.dispose()]);
    }
  });

  it('a subscription its resolver refuses (NOT_FOUND) holds no slot', async () => {
    const client = connectWs(h.url, bearer('gina').authorization);
    try {
      for (let i = 0; i < 6; i++) {
        const [error] = await refusal(subscribeWs(client, TURN_UPDATED, { turnId: 'trn_unknown' }));
        expect(error).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
      }
      await open(client, 'gina', 3);
    } finally {
      await client.dispose();
    }
  });
});
