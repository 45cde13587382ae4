// The repository's Dockerfile and compose.yaml, read for test/package.test.ts, which runs the image's steps outside a
// container: what the runtime stage sets and runs, the install step, and the environment compose gives toolgate.
// Enough of each format for these two files, not a general parser.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  name: string | null;
  instructions: Instruction[];
}

export function readDockerfile(root: string): Stage[] {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Z]+)\s+(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, keyword, args] = match as unknown as [string, string, string];
    if (keyword === 'FROM') {
      const [from, , name] = args.split(/\s+/);
      stages.push({ from: from!, name: name ?? null, instructions: [] });
    } else stages.at(-1)!.instructions.push({ keyword, args });
  }
  return stages;
}

/** The arguments of a stage's instructions with this keyword, in order. */
export function argsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).map(({ args }) => args);
}

/** ENV KEY=value … (values without spaces or quotes, as in our Dockerfile). */
export function envOf(stage: Stage): Record<string, string> {
  return Object.fromEntries(
    argsOf(stage, 'ENV').flatMap((args) => args.split(/\s+/).map((pair) => pair.split('=', 2) as [string, string])),
  );
}

/** An exec-form command (`["node", "…"]`), after any options (HEALTHCHECK's --interval=… CMD [...]). */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  return JSON.parse(json) as string[];
}

/** `KEY: value` lines of compose.yaml's shared toolgate service (the `x-toolgate` block's `environment`). */
export function composeToolgateEnvironment(root: string): Record<string, string> {
  const text = readFileSync(join(root, 'compose.yaml'), 'utf8');
  const block = text.slice(text.indexOf('x-toolgate:'), text.indexOf('\nservices:'));
  const environment = block.slice(block.indexOf('environment:'), block.indexOf('depends_on:'));
  return Object.fromEntries([...environment.matchAll(/^\s+([A-Z_]+): (.+)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
}

/** The service names of compose.yaml, each with its `image:` when it has one. */
export function composeServices(root: string): Record<string, string | null> {
  const text = readFileSync(join(root, 'compose.yaml'), 'utf8');
  const services = text.slice(text.indexOf('\nservices:'), text.indexOf('\nvolumes:'));
  const result: Record<string, string | null> = {};
  for (const [, name, body] of services.matchAll(/^ {2}([a-z-]+):\n((?: {4}.*\n|\n)*)/gm))
    result[name!] = /^ {4}image: (\S+)/m.exec(body!)?.[1] ?? null;
  return result;
}
