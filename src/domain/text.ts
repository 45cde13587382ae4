// Text every store can hold as given. PostgreSQL's text and jsonb refuse NUL characters and unpaired UTF-16 surrogates
// (they are not Unicode text); SQLite takes both. The API refuses them in what a user sends, so that the same request
// is stored the same on every backend; a store that cannot hold them replaces them in what models and tools produce.

// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** False for a string holding a NUL character or an unpaired surrogate. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** The string with each NUL character and unpaired surrogate replaced by U+FFFD (what UTF-8 encoders do). */
export function toStorableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE_ALL, '\uFFFD');
}

/**
 * A JSON value with every string in it (keys too) made storable. The same value when nothing needs it, and then
 * nothing is copied: most values are storable already (the loop made them so), and a store checks them again.
 */
export function toStorableJson<T>(value: T): T {
  if (typeof value === 'string') return toStorableText(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const storable = toStorableJson(item);
      if (copy) copy.push(storable);
      else if (storable !== item) copy = [...value.slice(0, i), storable];
    }
    return (copy ?? value) as T;
  }
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    let copy: [string, unknown][] | null = null;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const item = object[key];
      const storableKey = toStorableText(key);
      const storable = toStorableJson(item);
      if (copy) copy.push([storableKey, storable]);
      else if (storableKey !== key || storable !== item)
        copy = [...keys.slice(0, i).map((k): [string, unknown] => [k, object[k]]), [storableKey, storable]];
    }
    // Entries, not assignment: a key such as __proto__ stays a key.
    return (copy ? Object.fromEntries(copy) : value) as T;
  }
  return value;
}

/** What the API says about text it refuses (see isStorableText). */
export const UNSTORABLE_TEXT_MESSAGE = 'contains a NUL character or an unpaired UTF-16 surrogate, which is not text';
