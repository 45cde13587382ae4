// The docs site (VitePress): `npm run docs:build` writes it to docs/.vitepress/dist, `npm run docs:dev` serves it.
// Pages are the Markdown files of docs/ as they read on GitHub; docs/reference/ is generated (scripts/docs-reference.ts).
import { dirname, posix } from 'node:path';
import { defineConfig, type MarkdownOptions } from 'vitepress';
import { githubSlug } from '../../scripts/docs/slug.js';

/**
 * Links to repository files outside docs/ (`../src/agent/loop.ts`, `../schema.graphql`) work on GitHub, but the site
 * has no such pages: there the link text stays, without the link.
 */
function unlinkFilesOutsideDocs(md: Parameters<NonNullable<MarkdownOptions['config']>>[0]): void {
  md.core.ruler.push('toolgate_unlink_outside_docs', (state) => {
    const page: string = state.env.relativePath ?? '';
    for (const block of state.tokens) {
      if (!block.children) continue;
      const kept = [];
      let dropClose = 0;
      for (const token of block.children) {
        if (token.type === 'link_open') {
          const href = token.attrGet('href') ?? '';
          const relative = !/^[a-z][a-z0-9+.-]*:|^#|^\//i.test(href);
          if (relative && posix.normalize(posix.join(dirname(page), href.replace(/[?#].*$/, ''))).startsWith('../')) {
            dropClose += 1;
            continue;
          }
          kept.push(token);
          continue;
        }
        if (token.type === 'link_close' && dropClose > 0) {
          dropClose -= 1;
          continue;
        }
        kept.push(token);
      }
      block.children = kept;
    }
  });
}

export default defineConfig({
  title: 'toolgate',
  description: 'A GraphQL server that runs AI agents and asks a human before their tools run.',
  // Links into docs/ that lead nowhere fail the build (VitePress's default; kept on purpose).
  ignoreDeadLinks: false,
  markdown: {
    anchor: { slugify: githubSlug },
    headers: { slugify: githubSlug },
    config: unlinkFilesOutsideDocs,
  },
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Guides', link: '/approvals' },
      { text: 'Operations', link: '/config' },
      { text: 'Reference', link: '/reference/config' },
    ],
    sidebar: [
      {
        text: 'Getting started',
        items: [{ text: 'Run it, and the demo', link: '/getting-started' }],
      },
      {
        text: 'Concepts',
        items: [
          { text: 'The design', link: '/design' },
          { text: 'The API', link: '/api' },
          { text: 'Security', link: '/security' },
        ],
      },
      {
        text: 'Guides',
        items: [
          { text: 'Edits and remembered approvals', link: '/approvals' },
          { text: 'Argument rules', link: '/argument-rules' },
          { text: 'Approvers', link: '/approvers' },
          { text: 'Identity: sign-in through your provider', link: '/identity' },
          { text: 'Models and MCP tools', link: '/models-and-tools' },
          { text: 'The MCP gateway', link: '/mcp-gateway' },
          { text: 'MCP revisions', link: '/mcp-revisions' },
          { text: 'Webhooks', link: '/webhooks' },
          { text: 'Slack approval cards', link: '/slack' },
          { text: 'Decision records and receipts', link: '/receipts' },
          { text: 'Live: subscriptions', link: '/live' },
          { text: 'The approval inbox', link: '/inbox' },
          { text: 'Your own frontend: toolgate/client', link: '/client' },
          { text: 'Embedding', link: '/embedding' },
        ],
      },
      {
        text: 'Operations',
        items: [
          { text: 'Configuration', link: '/config' },
          { text: 'Durability', link: '/durability' },
          { text: 'Several instances', link: '/multi-instance' },
          { text: 'Logs, metrics, health', link: '/observability' },
          { text: 'Upgrades', link: '/upgrades' },
          { text: 'The npm package', link: '/package' },
          { text: 'The container image', link: '/container' },
        ],
      },
      {
        text: 'Contributing',
        items: [
          { text: 'Layout, tests, docs', link: '/contributing' },
          { text: 'Architecture', link: '/architecture' },
          { text: 'Libraries, and why', link: '/libraries' },
          { text: 'The core test suite', link: '/testing' },
          { text: 'Benchmarks', link: '/bench' },
        ],
      },
      {
        text: 'Reference (generated)',
        items: [
          { text: 'Config file', link: '/reference/config' },
          { text: 'Metrics', link: '/reference/metrics' },
          { text: 'GraphQL API', link: '/reference/graphql' },
        ],
      },
    ],
  },
});
