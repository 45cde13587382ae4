// The package's TypeScript API as reports, one per entry point of `exports`: src/index.ts (`import … from 'toolgate'`)
// in api/toolgate.api.d.ts and src/client/index.ts (`toolgate/client`) in api/toolgate-client.api.d.ts. Each holds
// the declarations the compiler emits for the entry point, and every declaration of ours they reach, each under the
// file it comes from, with its doc comment; nothing unreachable. `npm run package-api:print` writes them; `npm run
// package-api:check` (in `npm test`) fails when a committed report differs, as schema:check does for the GraphQL
// schema: a change of the exported surface, breaking or not, is made on purpose and reviewed in that file's diff.
// The declarations are those the build ships: emitted by TypeScript 7's compiler, as `npm run build` emits them, and
// read with the compiler's JavaScript API (typescript 5.9: 7 has none yet).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
export const PACKAGE_API_FILE = join(ROOT, 'api', 'toolgate.api.d.ts');
export const PACKAGE_ENTRY = join(ROOT, 'src', 'index.ts');
/** Each entry point of package.json's `exports` that has types, and the report of its API. */
export const PACKAGE_API_REPORTS = [
  { subpath: 'toolgate', entry: PACKAGE_ENTRY, file: PACKAGE_API_FILE },
  {
    subpath: 'toolgate/client',
    entry: join(ROOT, 'src', 'client', 'index.ts'),
    file: join(ROOT, 'api', 'toolgate-client.api.d.ts'),
  },
];
/** Where the emitted declarations are read from: in memory, under a path inside the repository. */
const OUT = join(ROOT, '.scratch', 'package-api');
/** TypeScript 7's compiler, which `npm run build` runs. */
const TSC = join(ROOT, 'node_modules', 'typescript-native', 'bin', 'tsc');
const DECLARATIONS_ONLY = {
  noEmit: false,
  declaration: true,
  emitDeclarationOnly: true,
  sourceMap: false,
  declarationMap: false,
} as const;

/** The report of the declarations reachable from `entry` (a TypeScript module of this repository). */
export function packageApiReport(entry = PACKAGE_ENTRY): string {
  const declarations = emitDeclarations(entry);
  const program = ts.createProgram([declarationPath(entry)], compilerOptions(), memoryHost(declarations));
  const checker = program.getTypeChecker();
  const entryFile = program.getSourceFile(declarationPath(entry))!;

  // Top-level statements of our emitted files to print, and the external imports they use, by file.
  const statements = new Map<ts.SourceFile, Set<ts.Statement>>();
  const imports = new Map<ts.SourceFile, Set<ts.ImportDeclaration>>();
  const queue: ts.Statement[] = [];
  const include = (statement: ts.Statement) => {
    const file = statement.getSourceFile();
    const set = statements.get(file) ?? new Set();
    statements.set(file, set);
    if (set.has(statement)) return;
    set.add(statement);
    queue.push(statement);
  };
  const ours = (node: ts.Node) => declarations.has(node.getSourceFile().fileName);
  const reach = (symbol: ts.Symbol | undefined, from: ts.SourceFile) => {
    if (!symbol) return;
    for (const declaration of symbol.declarations ?? []) {
      // An import binding of a module outside the package: its import is printed, the module is not followed.
      const importDeclaration = importOf(declaration);
      if (importDeclaration && declaration.getSourceFile() === from && isExternal(importDeclaration)) {
        const set = imports.get(from) ?? new Set();
        set.add(importDeclaration);
        imports.set(from, set);
      }
    }
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    for (const declaration of target.declarations ?? []) {
      if (ours(declaration) && !ts.isSourceFile(declaration)) include(topLevel(declaration));
    }
  };

  for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(entryFile)!)) reach(symbol, entryFile);
  while (queue.length > 0) {
    const statement = queue.shift()!;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) reach(checker.getSymbolAtLocation(node), statement.getSourceFile());
      ts.forEachChild(node, visit);
    };
    visit(statement);
  }

  const sections = [...statements.keys()]
    .filter((file) => file !== entryFile)
    .sort((a, b) => a.fileName.localeCompare(b.fileName))
    .map((file) => {
      const used = [...(imports.get(file) ?? [])].map((node) => node.getText());
      const body = [...statements.get(file)!].sort((a, b) => a.pos - b.pos).map(printed);
      return `// ---- ${sourceName(file)} ----\n${[...new Set(used)].sort().join('\n')}${used.length ? '\n\n' : ''}${body.join('\n\n')}\n`;
    });
  return [
    `// The public TypeScript API of ${relative(ROOT, entry)}, as tsc declares it: generated by scripts/package-api.ts,`,
    '// do not edit. `npm run package-api:print` writes it; `npm run package-api:check` fails when it is stale.',
    '',
    `// ---- ${relative(ROOT, entry).replace(/\.ts$/, '.d.ts')} ----`,
    entryFile.getText().trim(),
    '',
    ...sections,
  ].join('\n');
}

function compilerOptions(): ts.CompilerOptions {
  const file = join(ROOT, 'tsconfig.json');
  const { config } = ts.readConfigFile(file, (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, file);
  return { ...options, ...DECLARATIONS_ONLY, rootDir: ROOT, outDir: OUT };
}

function declarationPath(source: string): string {
  return join(OUT, relative(ROOT, source)).replace(/\.ts$/, '.d.ts');
}

function emitDeclarations(entry: string): Map<string, string> {
  // In a folder of its own inside the repository (node_modules resolves from there), read into memory and removed: two
  // reports made at once do not meet. Without a type check of the bodies (`npm run typecheck` does that).
  mkdirSync(dirname(OUT), { recursive: true });
  const dir = mkdtempSync(`${OUT}-`);
  try {
    const project = join(dir, 'tsconfig.json');
    writeFileSync(
      project,
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: { ...DECLARATIONS_ONLY, rootDir: ROOT, outDir: join(dir, 'out'), noCheck: true },
        files: [entry],
        include: [],
      }),
    );
    try {
      execFileSync(process.execPath, [TSC, '-p', project], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      throw new Error(
        `tsc could not emit the declarations of ${relative(ROOT, entry)}:\n${(error as { stdout?: string }).stdout ?? error}`,
        { cause: error },
      );
    }
    const files = new Map<string, string>();
    const out = join(dir, 'out');
    for (const name of readdirSync(out, { recursive: true, encoding: 'utf8' }))
      if (name.endsWith('.d.ts')) files.set(join(OUT, name), readFileSync(join(out, name), 'utf8'));
    return files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A compiler host that reads the emitted declarations from memory and everything else (node_modules) from disk. */
function memoryHost(files: Map<string, string>): ts.CompilerHost {
  const host = ts.createCompilerHost(compilerOptions());
  const inMemory = (name: string) => files.get(resolve(name));
  return {
    ...host,
    fileExists: (name) => files.has(resolve(name)) || host.fileExists(name),
    readFile: (name) => inMemory(name) ?? host.readFile(name),
    directoryExists: (name) =>
      [...files.keys()].some((file) => file.startsWith(`${resolve(name)}/`)) || (host.directoryExists?.(name) ?? false),
    getSourceFile: (name, language, onError) => {
      const text = inMemory(name);
      return text === undefined
        ? host.getSourceFile(name, language, onError)
        : ts.createSourceFile(name, text, language, true);
    },
  };
}

/** The statement of the file that holds `node` (a variable's statement, not its declaration list). */
function topLevel(node: ts.Node): ts.Statement {
  let current = node;
  while (!ts.isSourceFile(current.parent)) current = current.parent;
  return current as ts.Statement;
}

function importOf(declaration: ts.Declaration): ts.ImportDeclaration | null {
  let current: ts.Node | undefined = declaration;
  while (current && !ts.isSourceFile(current)) {
    if (ts.isImportDeclaration(current)) return current;
    current = current.parent;
  }
  return null;
}

function isExternal(node: ts.ImportDeclaration): boolean {
  return !(node.moduleSpecifier as ts.StringLiteral).text.startsWith('.');
}

/** A statement with its doc comment, without the blank lines before it. */
function printed(statement: ts.Statement): string {
  return statement
    .getFullText()
    .replace(/^\s*\n/, '')
    .trimEnd();
}

/** The source a declaration file was emitted from, as the repository names it. */
function sourceName(file: ts.SourceFile): string {
  return relative(OUT, file.fileName).replace(/\.d\.ts$/, '.ts');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let stale = false;
  for (const { subpath, entry, file } of PACKAGE_API_REPORTS) {
    const report = packageApiReport(entry);
    const name = relative(process.cwd(), file);
    if (process.argv.includes('--check')) {
      let committed = '';
      try {
        committed = readFileSync(file, 'utf8');
      } catch {
        /* missing reads as stale */
      }
      if (committed !== report) {
        stale = true;
        console.error(
          `${name} is not the API ${relative(ROOT, entry)} exports: the TypeScript API of ${subpath} changed. If that ` +
            'is meant, run `npm run package-api:print` and commit the file; a removed or changed export breaks its users.',
        );
      } else console.log(`${name} is current`);
    } else {
      writeFileSync(file, report);
      console.log(`wrote ${name}`);
    }
  }
  if (stale) process.exit(1);
}
