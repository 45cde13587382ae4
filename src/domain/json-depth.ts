// How deep a JSON value nests. Checked before anything recursive (storing, comparing, showing a value) walks input
// that may nest without bound, so it is a loop with its own stack: no depth overflows it.

/**
 * Whether a JSON value nests objects and arrays more than `maxDepth` levels deep (the value itself is the first, as
 * in Jackson's and serde_json's limits). Stops at the first level too deep.
 */
export function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: { value: object; depth: number }[] = [];
  if (value !== null && typeof value === 'object') stack.push({ value, depth: 1 });
  for (let next = stack.pop(); next; next = stack.pop()) {
    if (next.depth > maxDepth) return true;
    for (const item of Object.values(next.value) as unknown[]) {
      if (item !== null && typeof item === 'object') stack.push({ value: item, depth: next.depth + 1 });
    }
  }
  return false;
}
