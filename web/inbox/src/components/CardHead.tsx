// The head of a request's card, the same on the requester's and on an approver's: which tool asks (the card's name
// for it, its id, its hints) and the question. Each string is shown with its hidden characters marked: an upstream
// MCP server chooses a tool's name and title, and the question is made from them; the name and title are warned of
// as arguments are.
import { AnnotationBadges } from './Badges';
import { ToolWarnings, VisibleString } from './VisibleText';

export function CardHead({
  ids,
  label,
  toolCall,
  message,
}: {
  ids: { title: string; question: string };
  label: string;
  toolCall: { toolId: string; annotations: Parameters<typeof AnnotationBadges>[0]['annotations'] };
  message: string;
}) {
  return (
    <>
      <header class="card-head">
        <h3 id={ids.title}>
          <VisibleString text={label} />
        </h3>
        <code class="tool-id">
          <VisibleString text={toolCall.toolId} />
        </code>
        <AnnotationBadges annotations={toolCall.annotations} />
      </header>
      <ToolWarnings title={label} toolId={toolCall.toolId} />
      <p id={ids.question} class="question">
        <VisibleString text={message} />
      </p>
    </>
  );
}
