// Debian's Chromium (.ci/run installs it), driven by playwright-core: where it is, the flags it runs with and what to
// say when it is missing. Shared by the inbox tests, scripts/inbox-screenshots.ts and scripts/test-preflight.ts (no
// vitest here).
import { accessSync, constants } from 'node:fs';

export const CHROMIUM_PATH = process.env.TOOLGATE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Undefined when Chromium is there; otherwise one line naming the fix. */
export function missingChromium(): string | undefined {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `Chromium not found at ${CHROMIUM_PATH}: apt-get install chromium, or set TOOLGATE_CHROMIUM to a Chromium executable`;
  }
}
