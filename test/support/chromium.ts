// Debian's Chromium (.ci/run installs it), driven by playwright-core: where it is, the flags it runs with and what to
// say when it is missing. Shared by the inbox tests, scripts/inbox-screenshots.ts and scripts/test-preflight.ts (no
// vitest here).
import { accessSync, constants } from 'node:fs';

/**
 * Debian's headless build first (package chromium-headless-shell): the same Blink and V8 without the browser's
 * interface, which renders the same pages for much less CPU. The full browser (package chromium) otherwise.
 */
const INSTALLED = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export const CHROMIUM_PATH = process.env.TOOLGATE_CHROMIUM ?? INSTALLED.find(executable) ?? INSTALLED[0]!;
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
  if (executable(CHROMIUM_PATH)) return undefined;
  return `Chromium not found at ${CHROMIUM_PATH}: apt-get install chromium-headless-shell, or set TOOLGATE_CHROMIUM to a Chromium executable`;
}
