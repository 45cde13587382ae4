// Untrusted text (tool arguments, model and tool text) as the API's DisplayText gives it: each hidden character's
// escape marked and named, so that nothing invisible or reordered passes for plain text; the warnings shown where
// arguments hold hidden characters or look-alike letters; and text the model is still streaming, which has no
// DisplayText yet, made visible by the same rule as the server's (src/domain/visible-text.ts, shared).
import type { ComponentChildren } from 'preact';
import { visibleText } from '../../../../src/domain/visible-text';
import './visible-text.css';

/** The API's DisplayText, or the same computed here for streamed text (which has no `name`s: titles say the code). */
export interface Displayed {
  text: string;
  hiddenCharacters: { codePoint: number; offset: number; escape: string; name?: string }[];
  mixedScriptWords: { word: string; scripts: string[] }[];
}

const codeOf = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
const describe = (c: { codePoint: number; name?: string }) =>
  c.name ? `${codeOf(c.codePoint)} ${c.name}` : codeOf(c.codePoint);

/** The text, each escape standing for a hidden character marked, with the character's code point and name. */
export function VisibleText({ display }: { display: Displayed }) {
  const parts: ComponentChildren[] = [];
  let at = 0;
  display.hiddenCharacters.forEach((c, i) => {
    if (c.offset > at) parts.push(display.text.slice(at, c.offset));
    parts.push(
      <mark key={i} class="hidden-char" title={`Hidden character ${describe(c)}`}>
        {c.escape}
      </mark>,
    );
    at = c.offset + c.escape.length;
  });
  parts.push(display.text.slice(at));
  return <>{parts}</>;
}

/**
 * A string the API gives without a DisplayText (text the model is generating now; a tool's id, name or title, and the
 * question made from them, which an upstream MCP server chooses), made visible by the same rule here.
 */
export function VisibleString({ text }: { text: string }) {
  return <VisibleText display={visibleText(text)} />;
}

/** What a person must know before trusting the text: hidden characters, and words mixing look-alike alphabets. */
export function DisplayWarnings({ display, where }: { display: Displayed; where: string }) {
  const distinct = [...new Map(display.hiddenCharacters.map((c) => [c.codePoint, c])).values()];
  const words = display.mixedScriptWords;
  return (
    <>
      {distinct.length > 0 && (
        <p class="text-warning" role="note">
          <strong>Hidden characters in {where}:</strong> {distinct.map(describe).join(', ')}. They do not show on
          screen, or change how the text around them is displayed; each is shown as a marked <code>\u</code> escape.
        </p>
      )}
      {words.length > 0 && (
        <p class="text-warning" role="note">
          <strong>Look-alike letters in {where}:</strong>{' '}
          {words.map((w) => `“${w.word}” mixes ${w.scripts.join(' and ')} letters`).join('; ')}. A word spelt so can
          imitate another.
        </p>
      )}
    </>
  );
}

/**
 * The warnings for a tool as the page names it: its title (or name) and its id, which an upstream MCP server chooses.
 * A look-alike letter in them is as much a sign of spoofing as in the arguments.
 */
export function ToolWarnings({ title, toolId }: { title?: string; toolId: string }) {
  const shown = title === undefined ? toolId : `${title}\n${toolId}`;
  return (
    <DisplayWarnings
      display={visibleText(shown)}
      where={title === undefined ? "the tool's name" : "the tool's title or name"}
    />
  );
}
