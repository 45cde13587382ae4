// The links of README.md and docs/: every relative link leads to a file that exists, and every `#anchor` to a
// heading of its page, as GitHub and the docs site make anchors (scripts/docs/slug.ts). The site's build fails on a
// missing page of docs/ by itself; this also covers links to repository files and anchors, which it does not check.
// And the pointers in words, outside links: `toolgate --help`, the starter config, the config's JSON Schema, the
// image's files and the docs name `README.md#anchor`, `docs/page.md#anchor` or `README "Heading"`; each must exist.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { githubSlug } from '../../scripts/docs/slug.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.') || name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return filesUnder(path, extension);
    return name.endsWith(extension) ? [path] : [];
  });
}

const pages = [join(root, 'README.md'), ...filesUnder(join(root, 'docs'), '.md')];

/** The page's text outside fenced code blocks, where links and headings are. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** The page's headings as they read: link targets, code marks and bold marks left out. */
function headingsOf(file: string): string[] {
  return prose(readFileSync(file, 'utf8')).flatMap((line) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) return [];
    return [
      heading[1]!
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/`/g, '')
        .replace(/\*\*/g, ''),
    ];
  });
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const text of headingsOf(file)) {
    const slug = githubSlug(text);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Link targets in the page's prose, code spans left out. */
function linksOf(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8'))
    .join('\n')
    .replace(/``[^`]*``|`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('docs links', () => {
  it('finds the pages', () => {
    expect(pages.length).toBeGreaterThan(20);
  });

  for (const page of pages) {
    it(`${relative(root, page)}: relative links lead to files and headings that exist`, () => {
      const broken: string[] = [];
      for (const link of linksOf(page)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('/')) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : resolve(dirname(page), decodeURI(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) {
          broken.push(`${link}: no heading with this anchor in ${relative(root, target)}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  it('name no internal issue numbers', () => {
    const found = pages.flatMap((page) =>
      readFileSync(page, 'utf8')
        .split('\n')
        .filter((line) => /\bissues?\s+#?\d+|(^|\s)#\d+\b/i.test(line))
        .map((line) => `${relative(root, page)}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });
});

/** Where the docs are named in words: what a user reads outside the docs, the sources, and the docs themselves. */
const pointing = [
  ...filesUnder(join(root, 'src'), '.ts'),
  ...readdirSync(join(root, 'examples')).map((name) => join(root, 'examples', name)),
  join(root, 'Dockerfile'),
  join(root, 'compose.yaml'),
  ...pages,
];

/** The headings of a page and the bold leads of its paragraphs and list items (`**Tool names.**`). */
function sectionsOf(file: string): string[] {
  const leads = prose(readFileSync(file, 'utf8')).flatMap((line) => {
    const lead = /^\s*(?:- )?\*\*([^*]+?)\.?\*\*/.exec(line);
    return lead ? [lead[1]!] : [];
  });
  return [...headingsOf(file), ...leads];
}

/**
 * `README.md`, `README.md#anchor`, `README "Heading"`, `docs/page.md#anchor`, `docs/page.md "Heading"` (a comma
 * or a parenthesis allowed before the heading, which may be the start of a longer one or a paragraph's bold lead, and
 * may wrap onto a comment's next line): each that is wrong, with why.
 */
function brokenPointers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const broken: string[] = [];
  const pointer = /\b(README(?:\.md)?|docs\/[\w./-]+?\.md)(?:#([\w-]+)|,? \(?"([^"]{1,80})")?/g;
  for (const [whole, name, anchor, heading] of text.matchAll(pointer)) {
    const target = join(root, name === 'README' ? 'README.md' : name!);
    if (!existsSync(target)) broken.push(`${whole}: no such file`);
    else if (anchor !== undefined && !anchorsOf(target).has(anchor))
      broken.push(`${whole}: no heading with this anchor in ${relative(root, target)}`);
    else if (
      heading !== undefined &&
      !sectionsOf(target).some((h) => h.startsWith(heading.replace(/\s*\n[\s#/]*/g, ' ')))
    )
      broken.push(`${whole}: no such heading in ${relative(root, target)}`);
  }
  return broken;
}

describe('pointers to the docs in words', () => {
  it('finds the help text, the starter config and the image files among the files it reads', () => {
    for (const file of ['src/cli/help.ts', 'src/cli/starter-config.ts', 'Dockerfile', 'compose.yaml'])
      expect(pointing).toContain(join(root, file));
  });

  it('name README sections and docs pages that exist', () => {
    const broken = pointing.flatMap((file) => brokenPointers(file).map((why) => `${relative(root, file)}: ${why}`));
    expect(broken).toEqual([]);
  });
});
