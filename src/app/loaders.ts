// Per-item reads of one request, batched: the turns of a page of elicitations, the messages of a page of turns and so
// on are each one store query for the whole list, not one per item (with PostgreSQL each query is a network round
// trip). DataLoader collects the keys asked for in one tick. No caching: a subscription keeps its context for every
// event, and each event must read the state it announces (records shared by many subscribers are read once, by the
// API's src/graphql/shared-reads.ts). A record reached through another is scoped to the owner of that one.
import DataLoader from 'dataloader';
import type {
  Agent,
  ApproverAnswer,
  ElicitationRecord,
  MessageRecord,
  ThreadRecord,
  TurnRecord,
} from '../domain/records.js';
import type { DecisionRecord } from '../domain/decision-records.js';
import type { Agents, Reads } from '../domain/store.js';

export interface Loaders {
  /** The agent: read once per id however many items of a list name it (agents are few, their items many). */
  agent(id: string): Promise<Agent | null>;
  /** The turn, if it belongs to `ownerId` (another owner's reads as absent, as Store.getTurn). */
  turn(id: string, ownerId: string): Promise<TurnRecord | null>;
  thread(id: string, ownerId: string): Promise<ThreadRecord | null>;
  turnMessages(turnId: string): Promise<MessageRecord[]>;
  turnElicitations(turnId: string): Promise<ElicitationRecord[]>;
  /** The approvers' answers to a request under a policy, in the order given. */
  approverAnswers(elicitationId: string): Promise<ApproverAnswer[]>;
  /** The signed ACCEPTED decision record of a request, if its accept was recorded with one. */
  receipt(elicitation: { id: string; turnId: string }): Promise<DecisionRecord | null>;
  threadMessages(threadId: string): Promise<MessageRecord[]>;
  threadTurns(threadId: string): Promise<TurnRecord[]>;
}

export function createLoaders(store: Pick<Agents, 'getAgent'> & Reads): Loaders {
  const byId = <T extends { id: string }>(load: (ids: readonly string[]) => Promise<T[]>) =>
    new DataLoader<string, T | null>(
      async (ids) => {
        const found = new Map((await load(ids)).map((record) => [record.id, record]));
        return ids.map((id) => found.get(id) ?? null);
      },
      { cache: false },
    );
  const byParent = <T>(load: (ids: readonly string[]) => Promise<T[]>, parentOf: (record: T) => string) =>
    new DataLoader<string, T[]>(
      async (ids) => {
        const groups = new Map<string, T[]>(ids.map((id) => [id, []]));
        for (const record of await load(ids)) groups.get(parentOf(record))?.push(record);
        return ids.map((id) => groups.get(id)!);
      },
      { cache: false },
    );
  // The store reads agents one at a time; the batch reads each id it holds once.
  const agents = byId(async (ids) => {
    const found = await Promise.all([...new Set(ids)].map((id) => store.getAgent(id)));
    return found.filter((agent): agent is Agent => agent !== null);
  });
  const turns = byId((ids) => store.loadTurns(ids));
  const threads = byId((ids) => store.loadThreads(ids));
  const turnMessages = byParent(
    (ids) => store.listMessagesOfTurns(ids),
    (m) => m.turnId,
  );
  const turnElicitations = byParent(
    (ids) => store.listElicitationsOfTurns(ids),
    (e) => e.turnId,
  );
  const approverAnswers = byParent(
    (ids) => store.listApproverAnswers(ids),
    (a) => a.elicitationId,
  );
  const acceptedDecisions = byParent(
    (ids) => store.listAcceptedDecisions(ids),
    (d) => d.turnId,
  );
  const threadMessages = byParent(
    (ids) => store.listMessagesOfThreads(ids),
    (m) => m.threadId,
  );
  const threadTurns = byParent(
    (ids) => store.listTurnsOfThreads(ids),
    (t) => t.threadId,
  );
  const owned = <T extends { ownerId: string }>(record: T | null, ownerId: string) =>
    record?.ownerId === ownerId ? record : null;
  return {
    agent: (id) => agents.load(id),
    turn: async (id, ownerId) => owned(await turns.load(id), ownerId),
    thread: async (id, ownerId) => owned(await threads.load(id), ownerId),
    turnMessages: (turnId) => turnMessages.load(turnId),
    turnElicitations: (turnId) => turnElicitations.load(turnId),
    approverAnswers: (elicitationId) => approverAnswers.load(elicitationId),
    receipt: async ({ id, turnId }) =>
      (await acceptedDecisions.load(turnId)).find((d) => d.elicitationId === id) ?? null,
    threadMessages: (threadId) => threadMessages.load(threadId),
    threadTurns: (threadId) => threadTurns.load(threadId),
  };
}
