// The arguments of a confirmation request, labelled by what became of them: before the answer, the model's, exactly as
// they will run; after an ACCEPT with edited arguments, those (what ran, marked edited) and then the model's, which
// they replaced; after a plain ACCEPT, the model's, which ran; otherwise the model's, which did not run.
// A gateway's call has no model: its arguments are the MCP client's, and named so.
// Each set is shown through its display form (hidden characters as marked escapes): the API's where the query
// selected it, else the same rule computed here (an answer seen live carries the raw arguments only).
import { visibleJson } from '../../../../src/domain/visible-text';
import type { ElicitationStatus } from '../gql/graphql';
import { type Displayed, DisplayWarnings, VisibleText } from './VisibleText';

function Shown({ value, display, where }: { value: unknown; display: Displayed | null | undefined; where: string }) {
  const shown = display ?? visibleJson(value);
  return (
    <>
      <DisplayWarnings display={shown} where={where} />
      <pre tabIndex={0}>
        <VisibleText display={shown} />
      </pre>
    </>
  );
}

export function CallArguments({
  modelArguments,
  modelDisplay,
  status,
  editedArguments,
  editedDisplay,
  from = 'model',
}: {
  modelArguments: unknown;
  modelDisplay?: Displayed | null;
  /** As the card shows it: EXPIRED once the countdown ran out, whatever the server recorded yet. */
  status: ElicitationStatus | string;
  /** The answer's arguments: non-null only for an ACCEPT that edited them (the server drops an unchanged "edit"). */
  editedArguments: unknown;
  editedDisplay?: Displayed | null;
  /** Who chose the arguments: an agent's model, or the MCP client of a gateway's call. */
  from?: 'model' | 'client';
}) {
  const theirs = from === 'client' ? 'The client’s arguments' : 'The model’s arguments';
  if (status === 'ACCEPTED' && editedArguments != null) {
    return (
      <section class="arguments arguments-edited" aria-label="Arguments that ran, edited">
        <h4>
          Arguments that ran <span class="badge badge-edited">edited</span>
        </h4>
        <Shown value={editedArguments} display={editedDisplay} where="the edited arguments" />
        <h4>{theirs}, replaced by the edit</h4>
        <Shown value={modelArguments} display={modelDisplay} where={theirs.replace('The', 'the')} />
      </section>
    );
  }
  const heading =
    status === 'PENDING'
      ? 'Arguments, exactly as they will run'
      : status === 'ACCEPTED'
        ? 'Arguments that ran'
        : status === 'DECLINED' || status === 'CANCELLED' || status === 'EXPIRED'
          ? `${theirs} (not run)`
          : theirs;
  return (
    <section class="arguments" aria-label={heading}>
      <h4>{heading}</h4>
      <Shown value={modelArguments} display={modelDisplay} where="these arguments" />
    </section>
  );
}
