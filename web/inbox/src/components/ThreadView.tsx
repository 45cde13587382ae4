// One conversation: its messages, the running turn live (status, streamed text), its pauses inline as cards, and a
// box to send the next message. A gateway's thread is one MCP client's call: the client's words, no box (a gateway
// takes calls from its clients, not messages).
import { useQuery } from '@urql/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ThreadQuery as ThreadData } from '../gql/graphql';
import { describeRequestError } from '../errors';
import { useLiveTurn } from '../live-turn';
import { ThreadQuery } from '../operations';
import { StatusBadge } from './Badges';
import { Composer } from './Composer';
import { ElicitationCard } from './ElicitationCard';
import { DisplayWarnings, ToolWarnings, VisibleString, VisibleText } from './VisibleText';

type Message = NonNullable<ThreadData['thread']>['messages'][number];

export function ThreadView({ threadId }: { threadId: string }) {
  const [{ data, error }, refetch] = useQuery({ query: ThreadQuery, variables: { id: threadId } });
  const [following, setFollowing] = useState<string | null>(null);
  const thread = data?.thread;
  const lastTurn = thread?.turns.at(-1);
  // Always the latest turn: its last event (COMPLETED) must arrive even after a reload showed it finished.
  const followedTurnId = following ?? lastTurn?.id ?? null;
  const subscribed = useLiveTurn(followedTurnId);
  const live = subscribed.turn?.id === followedTurnId ? subscribed : { turn: null, streamed: null };

  // Each change of the followed turn (status, a message, an answer) reloads the conversation it belongs to.
  const change = live.turn
    ? `${live.turn.status}:${live.turn.messages.length}:${live.turn.elicitations.map((e) => e.status).join()}`
    : '';
  useEffect(() => {
    if (change) refetch({ requestPolicy: 'network-only' });
  }, [change]);

  if (error)
    return (
      <p class="error" role="alert">
        {describeRequestError(error)}
      </p>
    );
  if (!data) return <p>Loading…</p>;
  if (!thread)
    return (
      <p class="error" role="alert">
        This thread does not exist, or it is not yours.
      </p>
    );

  const turnStatus = lastTurn?.id === live.turn?.id ? (live.turn?.status ?? lastTurn?.status) : lastTurn?.status;
  const pauses = lastTurn?.status === 'PAUSED' ? lastTurn.pendingElicitations : [];
  const gateway = thread.agent.isGateway;
  return (
    <section aria-labelledby="thread-heading" class="thread">
      <h1 id="thread-heading">
        {gateway ? 'A client’s call through' : 'Conversation with'} {thread.agent.name}
      </h1>
      <p class="hint">
        Thread <code>{thread.id}</code>
      </p>
      <ol class="messages" aria-label="Messages">
        {thread.messages
          .filter((m) => m.role !== 'SYSTEM')
          .map((m) => (
            <MessageItem key={m.id} message={m} gateway={gateway} />
          ))}
        {live.streamed && live.turn?.status === 'RUNNING' && (
          <li class="message message-assistant streaming" aria-busy="true">
            <span class="who">Agent</span>
            <p>
              <VisibleString text={live.streamed.text} />
            </p>
          </li>
        )}
      </ol>
      {turnStatus && (
        <p role="status" aria-live="polite" class="turn-status">
          {gateway ? 'Call' : 'Turn'}: <StatusBadge status={turnStatus} />
          {lastTurn?.status === 'FAILED' && lastTurn.error && <span class="error"> {lastTurn.error}</span>}
        </p>
      )}
      {pauses.length > 0 && (
        <div class="cards inline-cards" aria-label="Waiting for your answer">
          {pauses.map((elicitation) => (
            <ElicitationCard key={elicitation.id} elicitation={elicitation} showThreadLink={false} />
          ))}
        </div>
      )}
      {!gateway && (
        <Composer
          threadId={thread.id}
          agentId={thread.agent.id}
          agentName={thread.agent.name}
          onStarted={setFollowing}
        />
      )}
    </section>
  );
}

function MessageItem({ message, gateway }: { message: Message; gateway: boolean }) {
  if (message.role === 'USER')
    return (
      <li class="message message-user">
        <span class="who">{gateway ? 'Client' : 'You'}</span>
        <p>{message.textDisplay && <VisibleText display={message.textDisplay} />}</p>
      </li>
    );
  if (message.role === 'TOOL')
    return (
      <li class="message message-tool">
        <span class="who">Tool result</span>
        <p>{message.textDisplay && <VisibleText display={message.textDisplay} />}</p>
      </li>
    );
  return (
    <li class="message message-assistant">
      <span class="who">{gateway ? 'Client' : 'Agent'}</span>
      {message.textDisplay && (
        <p>
          <VisibleText display={message.textDisplay} />
        </p>
      )}
      {message.toolCalls.map((call) => (
        <div key={call.id} class="tool-call">
          {gateway ? 'Calls' : 'Asks to run'}{' '}
          <code>
            <VisibleString text={call.toolId} />
          </code>
          <ToolWarnings toolId={call.toolId} />
          <DisplayWarnings display={call.argumentsDisplay} where="these arguments" />
          <pre>
            <VisibleText display={call.argumentsDisplay} />
          </pre>
        </div>
      ))}
    </li>
  );
}
