// The Unicode name of a character (`RIGHT-TO-LEFT OVERRIDE`), to tell a person which hidden character an escape
// stands for. unicode-name's tables are large (~1.6 MB of JavaScript, ~150 ms and ~11 MB to load), and only text
// holding a hidden character needs a name, so they are loaded on the first call rather than at start.

let loading: Promise<typeof import('unicode-name')> | null = null;

/** Its Unicode name, its alias where it has no name (controls: `ALERT`), or a label (`<surrogate-D800>`). */
export async function characterName(codePoint: number): Promise<string> {
  loading ??= import('unicode-name');
  const { unicodeName } = await loading;
  return unicodeName(codePoint) ?? `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}
