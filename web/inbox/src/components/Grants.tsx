// Remembered approvals of the viewer: what runs without asking, where and until when; revoke any of them.
import { useMutation, useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { describeRequestError, describeUserError } from '../errors';
import { GrantsQuery, RevokeGrantMutation } from '../operations';
import { hrefOf, linkClick } from '../router';
import { formatTime } from '../time';
import { StatusBadge } from './Badges';
import { ToolWarnings, VisibleString } from './VisibleText';

export function Grants() {
  const [{ data, error }, refetch] = useQuery({ query: GrantsQuery });
  const [, revoke] = useMutation(RevokeGrantMutation);
  const [message, setMessage] = useState<string | null>(null);
  const grants = data?.approvalGrants.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="grants-heading">
      <h1 id="grants-heading">Remembered approvals</h1>
      <p class="hint">Calls these cover run without asking you. Revoke one and they ask again.</p>
      {error && (
        <p class="error" role="alert">
          {describeRequestError(error)}
        </p>
      )}
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      {data && grants.length === 0 && <p class="empty">No remembered approvals.</p>}
      <ul class="grants">
        {grants.map((grant) => (
          <li key={grant.id}>
            <p>
              <code class="tool-id">
                <VisibleString text={grant.toolId} />
              </code>{' '}
              <StatusBadge status={grant.state} />
            </p>
            <ToolWarnings toolId={grant.toolId} />
            <p>
              {grant.scope === 'AGENT' ? (
                <>In every thread with {grant.agent?.name ?? 'the agent'}</>
              ) : (
                <>
                  In thread{' '}
                  {grant.thread ? (
                    <a href={hrefOf({ view: 'thread', threadId: grant.thread.id })} onClick={linkClick}>
                      {grant.thread.id}
                    </a>
                  ) : (
                    'deleted'
                  )}
                </>
              )}
              , until {formatTime(grant.expiresAt)}; used {grant.uses.length} time{grant.uses.length === 1 ? '' : 's'}.
            </p>
            <button
              type="button"
              onClick={async () => {
                setMessage(null);
                const result = await revoke({ input: { grantId: grant.id } });
                if (result.error) setMessage(describeRequestError(result.error));
                else if (result.data?.revokeApprovalGrant.userErrors.length)
                  setMessage(result.data.revokeApprovalGrant.userErrors.map(describeUserError).join(' '));
                refetch({ requestPolicy: 'network-only' });
              }}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
