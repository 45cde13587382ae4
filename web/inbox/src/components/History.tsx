// The audit list: every request of the viewer, newest first, 25 at a time: what the user asked for, who answered
// what and when, and for an edited ACCEPT both the arguments that ran and the model's.
import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import type { ElicitationStatus } from '../gql/graphql';
import { describeRequestError } from '../errors';
import { HistoryQuery } from '../operations';
import { hrefOf, linkClick } from '../router';
import { formatTime } from '../time';
import { StatusBadge } from './Badges';
import { CallArguments } from './CallArguments';
import { requestText, toolLabel } from './ElicitationCard';
import { ToolWarnings, VisibleString } from './VisibleText';

const STATUSES: ElicitationStatus[] = ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'];

export function History() {
  const [status, setStatus] = useState<ElicitationStatus | ''>('');
  return (
    <section aria-labelledby="history-heading">
      <h1 id="history-heading">History</h1>
      <label class="filter">
        Show{' '}
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as ElicitationStatus | '')}>
          <option value="">every request</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.toLowerCase()} only
            </option>
          ))}
        </select>
      </label>
      <HistoryPage key={status} after={null} status={status || null} />
    </section>
  );
}

function HistoryPage({ after, status }: { after: string | null; status: ElicitationStatus | null }) {
  const [more, setMore] = useState(false);
  const [{ data, error, fetching }] = useQuery({
    query: HistoryQuery,
    variables: { after, status: status ? [status] : null },
  });
  if (error)
    return (
      <p class="error" role="alert">
        {describeRequestError(error)}
      </p>
    );
  if (!data) return <p aria-busy={fetching}>Loading…</p>;
  const { edges, pageInfo, totalCount } = data.elicitations;
  return (
    <>
      {after === null && (
        <p class="hint">
          {totalCount} request{totalCount === 1 ? '' : 's'}, newest first.
        </p>
      )}
      <ol class="history">
        {edges.map(({ node }) => (
          <li key={node.id} data-elicitation-id={node.id}>
            <p>
              <strong>
                <VisibleString text={toolLabel(node)} />
              </strong>{' '}
              <code class="tool-id">
                <VisibleString text={node.toolCall.toolId} />
              </code>{' '}
              <StatusBadge status={node.status} />
            </p>
            <ToolWarnings title={toolLabel(node)} toolId={node.toolCall.toolId} />
            <dl class="facts">
              <RequestFact text={requestText(node)} />
              <div>
                <dt>Asked</dt>
                <dd>{formatTime(node.createdAt)}</dd>
              </div>
              <div>
                <dt>Agent</dt>
                <dd>{node.turn.thread.agent.name}</dd>
              </div>
              <div>
                <dt>Thread</dt>
                <dd>
                  <a href={hrefOf({ view: 'thread', threadId: node.turn.thread.id })} onClick={linkClick}>
                    {node.turn.thread.id}
                  </a>
                </dd>
              </div>
              <div>
                <dt>Answered</dt>
                <dd>
                  {node.resolvedBy
                    ? `${node.response?.action ?? node.status}${node.response?.arguments != null ? ', edited,' : ''} by ${node.resolvedBy}, ${formatTime(node.resolvedAt)}`
                    : node.resolution
                      ? `${node.resolution.toLowerCase().replace('_', ' ')}${node.resolvedAt ? `, ${formatTime(node.resolvedAt)}` : ''}`
                      : 'not yet'}
                </dd>
              </div>
            </dl>
            <details>
              <summary>Arguments and answer</summary>
              <CallArguments
                modelArguments={node.toolCall.arguments}
                modelDisplay={node.toolCall.argumentsDisplay}
                status={node.status}
                editedArguments={node.response?.arguments}
                editedDisplay={
                  node.response && 'argumentsDisplay' in node.response ? node.response.argumentsDisplay : null
                }
              />
              {node.response?.content != null && (
                <>
                  <p>Instructions:</p>
                  <pre>{JSON.stringify(node.response.content, null, 2)}</pre>
                </>
              )}
              {node.response?.remember && (
                <p>
                  Remembered ({node.response.remember.scope.toLowerCase()}, {node.response.remember.ttlSeconds} s).
                </p>
              )}
            </details>
          </li>
        ))}
      </ol>
      {pageInfo.hasNextPage &&
        (more ? (
          <HistoryPage after={pageInfo.endCursor ?? null} status={status} />
        ) : (
          <button type="button" onClick={() => setMore(true)}>
            Show more
          </button>
        ))}
    </>
  );
}

/** The message that started the request's turn, its hidden characters marked; nothing without one. */
function RequestFact({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <div>
      <dt>Request</dt>
      <dd class="request">
        <VisibleString text={text} />
      </dd>
    </div>
  );
}
