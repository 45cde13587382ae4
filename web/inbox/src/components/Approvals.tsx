// Who answered a request under an approvers policy (docs/approvers.md), and how far its quorum is: "Approvals: 1 of 2:
// bob". Shown on the approver's card and on the requester's; a request without a policy has none of this. An
// approver's id may come from an identity provider's claim: shown with its hidden characters visible.
import { Fragment } from 'preact';
import { formatTime } from '../time';
import { VisibleString } from './VisibleText';

export interface AnswerShown {
  approver: string;
  action: string;
  counts: boolean;
  answeredAt: string;
}

/** The ACCEPTs that count towards the quorum now (an edit since outdates earlier ones). */
export function countingAccepts(answers: readonly AnswerShown[]): AnswerShown[] {
  return answers.filter((answer) => answer.action === 'ACCEPT' && answer.counts);
}

const DONE: Record<string, string> = { ACCEPT: 'accepted', DECLINE: 'declined', CANCEL: 'cancelled' };

export function Approvals({
  approval,
  answers,
}: {
  approval: { required: number } | null | undefined;
  answers: readonly AnswerShown[];
}) {
  if (!approval) return null;
  const accepted = countingAccepts(answers);
  return (
    <section class="approvals" aria-label="Approvals">
      <p class="quorum">
        Approvals:{' '}
        <strong data-testid="quorum">
          {accepted.length} of {approval.required}
        </strong>
        {accepted.length > 0 && ': '}
        {accepted.map((answer, i) => (
          <Fragment key={answer.approver}>
            {i > 0 && ', '}
            <VisibleString text={answer.approver} />
          </Fragment>
        ))}
      </p>
      {answers.length > 0 && (
        <ul class="answers">
          {answers.map((answer) => (
            <li key={answer.approver}>
              <strong>
                <VisibleString text={answer.approver} />
              </strong>{' '}
              {DONE[answer.action] ?? answer.action.toLowerCase()}
              {!answer.counts &&
                answer.action === 'ACCEPT' &&
                ' (no longer counts: the arguments were edited since)'}{' '}
              <time dateTime={answer.answeredAt}>{formatTime(answer.answeredAt)}</time>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
