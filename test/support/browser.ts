// Headless Chromium for the inbox tests: Debian's /usr/bin/chromium (.ci/run installs it) driven by playwright-core,
// with a fresh profile per launch (playwright-core's temporary user-data-dir). A failing test leaves a screenshot of its page in .scratch/inbox-failures/.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser as PlaywrightBrowser, type Page } from 'playwright-core';
import { onTestFailed } from 'vitest';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, missingChromium } from './chromium.js';

export const FAILURE_DIR = resolve(import.meta.dirname, '../../.scratch/inbox-failures');

export interface Browser {
  /** A new tab in a context of its own (its own sessionStorage): one user's browser. */
  newPage(options?: { width?: number; height?: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const missing = missingChromium();
  if (missing) throw new Error(missing);
  // playwright-core gives each launch a fresh temporary user-data-dir (and removes it on close): no state from
  // an earlier run, nothing left behind.
  const browser: PlaywrightBrowser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
  return {
    async newPage(options = {}) {
      // A context per page: each "user" gets their own sessionStorage.
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
      });
      return context.newPage();
    },
    close: () => browser.close(),
  };
}

/** Screenshots of these pages into FAILURE_DIR when the current test fails. */
export function screenshotOnFailure(name: string, pages: () => Page[]): void {
  onTestFailed(async () => {
    mkdirSync(FAILURE_DIR, { recursive: true });
    const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    let i = 0;
    for (const page of pages()) {
      await page.screenshot({ path: join(FAILURE_DIR, `${slug}-${i++}.png`), fullPage: true }).catch(() => {});
    }
  });
}
