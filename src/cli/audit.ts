// `toolgate audit export` and `toolgate audit verify`: the decision records as JSON Lines for an auditor or a SIEM,
// and their check without the server (docs/receipts.md). Exit codes: 0 verified, 1 a bad record, 2 bad input.
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfigFile } from '../config/load.js';
import { verifyRecords, type DecisionRecord, type PublicJwk } from '../domain/decision-records.js';
import { openStorage, storageTarget } from '../storage.js';

const USAGE = `usage: toolgate audit export [--from <ISO time>] [--to <ISO time>]
       toolgate audit verify <file.jsonl> --keys <jwks.json>
`;

/** The value after `--name`, or null without the flag; one missing is bad input. */
function flag(args: string[], name: string): string | null {
  const at = args.indexOf(name);
  if (at === -1) return null;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) throw new ConfigError(`${name}: expected a value`);
  args.splice(at, 2);
  return value;
}

function isoTime(name: string, value: string | null): string | null {
  if (value === null) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new ConfigError(`${name}: "${value}" is not a time (ISO-8601)`);
  return new Date(time).toISOString();
}

/** Writes the records of the database that `toolgate` would open (TOOLGATE_DB, TOOLGATE_CONFIG) to stdout. */
async function exportRecords(args: string[]): Promise<number> {
  const from = isoTime('--from', flag(args, '--from'));
  const to = isoTime('--to', flag(args, '--to'));
  if (args.length) throw new ConfigError(`audit export: unexpected "${args[0]}"\n${USAGE}`);
  const loaded = process.env.TOOLGATE_CONFIG ? loadConfigFile(process.env.TOOLGATE_CONFIG) : null;
  const selection = { config: loaded?.config.database, configFile: loaded?.file ?? null, env: process.env };
  const { target, where } = storageTarget(selection);
  const storage = await openStorage(target, where, selection);
  try {
    const records = await storage.decisionRecords(from, to);
    process.stdout.write(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  } finally {
    await storage.close();
  }
  return 0;
}

function readJson(file: string, what: string, text: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError(`${file}${line ? `:${line}` : ''}: not JSON (${what})`);
  }
}

function verifyFile(args: string[]): number {
  const keysFile = flag(args, '--keys');
  if (keysFile === null || args.length !== 1)
    throw new ConfigError(`audit verify: a file and --keys are needed\n${USAGE}`);
  const file = args[0]!;
  const jwks = readJson(keysFile, 'a JWKS', readFileSync(keysFile, 'utf8')) as { keys?: PublicJwk[] };
  if (!Array.isArray(jwks.keys)) throw new ConfigError(`${keysFile}: expected a JWKS ({"keys": [...]})`);
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((text, index) => ({ text, line: index + 1 }))
    .filter(({ text }) => text.trim() !== '');
  const records = lines.map(({ text, line }) => readJson(file, 'a decision record', text, line) as DecisionRecord);
  // A range (from --from) starts wherever it starts; the whole chain starts at its first record.
  const failure = verifyRecords(records, jwks.keys, {
    startsChain: records[0]?.seq === 1,
    lines: lines.map(({ line }) => line),
  });
  if (failure) {
    console.error(`${file}:${failure.line}: record ${failure.seq ?? '?'}: ${failure.problem}`);
    return 1;
  }
  const first = records[0]?.seq ?? 1;
  const range = first === 1 ? '' : ` (a range from record ${first}: the records before it are not checked)`;
  process.stdout.write(`${file}: ${records.length} records verify${range}\n`);
  return 0;
}

export async function audit(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === 'export') return await exportRecords(rest);
    if (sub === 'verify') return verifyFile(rest);
    process.stderr.write(USAGE);
    return 2;
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof Error && 'code' in error && error.code === 'ENOENT'))
      throw error;
    console.error(error.message);
    return 2;
  }
}
