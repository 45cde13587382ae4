// What the tool's trusted annotations say about it, as words (never colour alone).
import type { ElicitationCardFragment } from '../gql/graphql';

type Annotations = ElicitationCardFragment['toolCall']['annotations'];

export function AnnotationBadges({ annotations }: { annotations: Annotations }) {
  const badges: { kind: string; text: string; title: string }[] = [];
  if (annotations.readOnlyHint === true)
    badges.push({ kind: 'read-only', text: 'read-only', title: 'The tool says it does not change anything.' });
  if (annotations.destructiveHint === true)
    badges.push({ kind: 'destructive', text: 'destructive', title: 'The tool says it may delete or overwrite data.' });
  if (annotations.readOnlyHint === false && annotations.destructiveHint === false)
    badges.push({ kind: 'writes', text: 'changes data', title: 'The tool changes data but says it deletes nothing.' });
  const unannotated =
    annotations.readOnlyHint == null &&
    annotations.destructiveHint == null &&
    annotations.idempotentHint == null &&
    annotations.openWorldHint == null;
  if (unannotated)
    badges.push({
      kind: 'unannotated',
      text: 'unannotated',
      title: 'The tool says nothing about what it does: treat it as possibly destructive.',
    });
  if (annotations.openWorldHint === true)
    badges.push({ kind: 'open-world', text: 'open world', title: 'The tool reaches systems outside this server.' });
  if (badges.length === 0) return null;
  return (
    <ul class="badges" aria-label="Tool annotations">
      {badges.map((badge) => (
        <li key={badge.kind} class={`badge badge-${badge.kind}`} title={badge.title}>
          {badge.text}
        </li>
      ))}
    </ul>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}
