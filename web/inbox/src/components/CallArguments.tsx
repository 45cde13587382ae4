// The arguments of a confirmation request, labelled by what became of them: before the answer, the model's, exactly as
// they will run; after an ACCEPT with edited arguments, those (what ran, marked edited) and then the model's, which
// they replaced; after a plain ACCEPT, the model's, which ran; otherwise the model's, which did not run.
import type { ElicitationStatus } from '../gql/graphql';

function formatArguments(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function CallArguments({
  modelArguments,
  status,
  editedArguments,
}: {
  modelArguments: unknown;
  /** As the card shows it: EXPIRED once the countdown ran out, whatever the server recorded yet. */
  status: ElicitationStatus | string;
  /** The answer's arguments: non-null only for an ACCEPT that edited them (the server drops an unchanged "edit"). */
  editedArguments: unknown;
}) {
  if (status === 'ACCEPTED' && editedArguments != null) {
    return (
      <section class="arguments arguments-edited" aria-label="Arguments that ran, edited">
        <h4>
          Arguments that ran <span class="badge badge-edited">edited</span>
        </h4>
        <pre tabIndex={0}>{formatArguments(editedArguments)}</pre>
        <h4>The model’s arguments, replaced by the edit</h4>
        <pre tabIndex={0}>{formatArguments(modelArguments)}</pre>
      </section>
    );
  }
  const heading =
    status === 'PENDING'
      ? 'Arguments, exactly as they will run'
      : status === 'ACCEPTED'
        ? 'Arguments that ran'
        : status === 'DECLINED' || status === 'CANCELLED' || status === 'EXPIRED'
          ? 'The model’s arguments (not run)'
          : 'The model’s arguments';
  return (
    <section class="arguments" aria-label={heading}>
      <h4>{heading}</h4>
      <pre tabIndex={0}>{formatArguments(modelArguments)}</pre>
    </section>
  );
}
