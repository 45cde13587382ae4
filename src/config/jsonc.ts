// Config files are JSON with comments (`//` to the end of the line, `/* … */`) and trailing commas, as editors
// read .jsonc: `toolgate init` writes a starter whose sections are explained, and partly commented out, in place.
// Comments and trailing commas become spaces, so that JSON.parse's positions still point into the file as written.

/** `text` as plain JSON; throws a SyntaxError for a comment that never ends. */
export function jsoncToJson(text: string): string {
  const out = text.split('');
  let inString = false;
  // Where the last comma outside strings is, while only whitespace and comments followed it.
  let pendingComma = -1;
  for (let i = 0; i < out.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      blank(out, i, end === -1 ? text.length : end);
      i = (end === -1 ? text.length : end) - 1;
      continue;
    }
    if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new SyntaxError(`a /* comment at position ${i} never ends`);
      blank(out, i, end + 2);
      i = end + 1;
      continue;
    }
    if (/\s/.test(char)) continue;
    if ((char === '}' || char === ']') && pendingComma !== -1) out[pendingComma] = ' ';
    pendingComma = char === ',' ? i : -1;
    if (char === '"') inString = true;
  }
  return out.join('');
}

/** Spaces over [start, end), line breaks kept. */
function blank(chars: string[], start: number, end: number): void {
  for (let i = start; i < end; i++) if (chars[i] !== '\n' && chars[i] !== '\r') chars[i] = ' ';
}
