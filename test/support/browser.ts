// Headless Chromium for the inbox tests: Debian's (test/support/chromium.ts says which), driven by playwright-core.
// One browser per test process, shared by the files it runs one after the other (a launch cost more CPU than some
// files' tests); each page gets a context of its own, which shares no cookies or storage with any other, as a fresh
// profile would. A failing test leaves a screenshot of its page in .scratch/inbox-failures/.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser as PlaywrightBrowser, type BrowserContext, type Page } from 'playwright-core';
import { onTestFailed } from 'vitest';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, missingChromium } from './chromium.js';

export const FAILURE_DIR = resolve(import.meta.dirname, '../../.scratch/inbox-failures');

export interface Browser {
  /** A new tab in a context of its own (its own cookies and sessionStorage): one user's browser. */
  newPage(options?: { width?: number; height?: number }): Promise<Page>;
  close(): Promise<void>;
}

/** This process's Chromium, launched by the first file that asks (playwright-core gives it a temporary profile). */
let shared: Promise<PlaywrightBrowser> | undefined;

async function sharedChromium(): Promise<PlaywrightBrowser> {
  const running = await shared?.catch(() => undefined);
  if (running?.isConnected()) return running;
  shared = chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
  return shared;
}

/** A browser for one test file: its pages' contexts are closed by `close()`; Chromium stays for the next file. */
export async function openBrowser(): Promise<Browser> {
  const missing = missingChromium();
  if (missing) throw new Error(missing);
  const browser = await sharedChromium();
  const contexts = new Set<BrowserContext>();
  return {
    async newPage(options = {}) {
      // A context per page: each "user" gets their own cookies and sessionStorage.
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
      });
      contexts.add(context);
      return context.newPage();
    },
    close: async () => {
      await Promise.all([...contexts].map((context) => context.close().catch(() => {})));
      contexts.clear();
    },
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
