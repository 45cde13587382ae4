// `npm run examples:js` writes the JavaScript form of each embedding example (examples/embed-*.ts ->
// examples/embed-*.mjs): the same program with its types stripped by TypeScript, comments and blank lines kept, for a
// project without TypeScript (`node examples/embed-http.mjs`). test/examples.test.ts fails when one is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import prettier from 'prettier';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
export const EMBEDDING_EXAMPLES = ['embed-http', 'embed-tools'];

// TypeScript's printer drops blank lines: each is a comment line while it transpiles.
const BLANK = '//__blank_line__';

/** The committed JavaScript form of `examples/<name>.ts`, as `npm run examples:js` writes it. */
export async function javascriptExample(name: string): Promise<string> {
  const source = readFileSync(join(ROOT, 'examples', `${name}.ts`), 'utf8');
  const marked = source.replace(/^[ \t]*$/gm, BLANK);
  const { outputText } = ts.transpileModule(marked, {
    compilerOptions: { target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.ESNext, removeComments: false },
  });
  const header =
    `// Generated from examples/${name}.ts by \`npm run examples:js\` (scripts/examples-js.ts): the same program in ` +
    `plain\n// JavaScript. Run it with \`node examples/${name}.mjs\` in a project that installed toolgate, or in a ` +
    'checkout after\n// `npm run build`. Edit the .ts file, not this one.\n';
  const text = header + outputText.replace(new RegExp(`^[ \\t]*${BLANK}$`, 'gm'), '');
  const file = join(ROOT, 'examples', `${name}.mjs`);
  return prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const name of EMBEDDING_EXAMPLES) {
    writeFileSync(join(ROOT, 'examples', `${name}.mjs`), await javascriptExample(name));
    console.log(`wrote examples/${name}.mjs`);
  }
}
