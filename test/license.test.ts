// The licence a user of the package is told about: the MIT text in LICENSE, the same "MIT" in package.json (what
// `npm pkg get license` and registries read) and in package-lock.json's root entry (what `npm ci` checks against).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (name: string) => readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');

describe('the licence', () => {
  it('LICENSE is the MIT licence of the toolgate contributors', () => {
    const text = read('LICENSE');
    expect(text.split('\n').slice(0, 3)).toEqual(['MIT License', '', 'Copyright (c) 2026 toolgate contributors']);
    expect(text).toContain('Permission is hereby granted, free of charge, to any person obtaining a copy');
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });

  it('package.json and the lock file say MIT', () => {
    expect(JSON.parse(read('package.json')).license).toBe('MIT');
    expect(JSON.parse(read('package-lock.json')).packages[''].license).toBe('MIT');
  });
});
