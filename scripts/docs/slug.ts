// Heading anchors as GitHub makes them, so that a link such as `live.md#streamed-text-turnevents` works on GitHub and
// on the docs site alike: lower case, punctuation dropped, each space a hyphen. Used by the site's config and by the
// docs link test.
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}
