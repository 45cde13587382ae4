// The links of README.md and docs/: every relative link leads to a file that exists, and every `#anchor` to a
// heading of its page, as GitHub and the docs site make anchors (scripts/docs/slug.ts). The site's build fails on a
// missing page of docs/ by itself; this also covers links to repository files and anchors, which it does not check.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { githubSlug } from '../../scripts/docs/slug.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.') || name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const pages = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

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

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/`/g, '')
      .replace(/\*\*/g, '');
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
