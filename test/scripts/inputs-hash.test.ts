// The inputs hash that lets the inbox's build and the docs check skip a build whose inputs have not changed: it must
// change with every file the build reads (content, name, a file added) and not with the build's own output.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inputsHash, recordedHash, recordHash, STAMP_FILE } from '../../scripts/inputs-hash.js';

let root: string;
const hash = () => inputsHash(['site', 'lock.json'], ['site/dist'], root);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-inputs-'));
  mkdirSync(join(root, 'site', 'pages'), { recursive: true });
  mkdirSync(join(root, 'site', 'dist'));
  writeFileSync(join(root, 'site', 'pages', 'a.md'), '# A\n');
  writeFileSync(join(root, 'site', 'dist', 'a.html'), '<h1>A</h1>\n');
  writeFileSync(join(root, 'lock.json'), '{}\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('inputsHash', () => {
  it('is the same for the same files, whatever the build wrote into its output', () => {
    const before = hash();
    writeFileSync(join(root, 'site', 'dist', 'a.html'), '<h1>changed</h1>\n');
    const stamp = join(root, 'site', 'dist', STAMP_FILE);
    expect(recordedHash(stamp)).toBeNull();
    recordHash(stamp, before);
    expect(recordedHash(stamp)).toBe(before);
    expect(hash()).toBe(before);
  });

  it('changes with a page edited, renamed or added, and with the lock file', () => {
    const seen = new Set([hash()]);
    writeFileSync(join(root, 'site', 'pages', 'a.md'), '# A, edited\n');
    seen.add(hash());
    renameSync(join(root, 'site', 'pages', 'a.md'), join(root, 'site', 'pages', 'b.md'));
    seen.add(hash());
    writeFileSync(join(root, 'site', 'pages', 'c.md'), '');
    seen.add(hash());
    writeFileSync(join(root, 'lock.json'), '{"lockfileVersion": 3}\n');
    seen.add(hash());
    expect(seen.size).toBe(5);
  });
});
