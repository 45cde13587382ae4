// The viewer's threads, and a new conversation with an agent. A thread is named by its first message, which for a
// gateway's call holds the MCP client's own name for itself: shown with its hidden characters marked.
import { useQuery } from '@urql/preact';
import { describeRequestError } from '../errors';
import { ThreadsQuery } from '../operations';
import { hrefOf, linkClick } from '../router';
import { formatTime } from '../time';
import { StatusBadge } from './Badges';
import { Composer } from './Composer';
import { VisibleString } from './VisibleText';

export function ThreadList() {
  const [{ data, error }] = useQuery({ query: ThreadsQuery });
  const threads = data?.threads.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="threads-heading">
      <h1 id="threads-heading">Threads</h1>
      <Composer threadId={null} />
      {error && (
        <p class="error" role="alert">
          {describeRequestError(error)}
        </p>
      )}
      {data && threads.length === 0 && <p class="empty">No conversations yet.</p>}
      <ul class="threads">
        {threads.map((thread) => {
          const first = thread.messages.find((m) => m.role === 'USER');
          const last = thread.turns.at(-1);
          return (
            <li key={thread.id}>
              <a href={hrefOf({ view: 'thread', threadId: thread.id })} onClick={linkClick}>
                {first?.text != null ? <VisibleString text={first.text} /> : thread.id}
              </a>
              <span class="meta">
                {thread.agent.name} · {formatTime(thread.createdAt)} {last && <StatusBadge status={last.status} />}
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
