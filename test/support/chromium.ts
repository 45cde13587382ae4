// Debian's Chromium (.ci/run installs it), driven by playwright-core: where it is and the flags it runs with. Shared by
// the inbox tests and scripts/inbox-screenshots.ts (no vitest here).
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
