// SPDX-License-Identifier: BSD-2-Clause
// playwright.mjs - headless Debian Chromium through playwright-core, for
// the one test written on Playwright's page API (nginx.phpmyadmin: its
// text selectors and locators). The cross-browser tests use browser.mjs.
// Never downloads a browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

// A persistent context in a fresh --user-data-dir (removed on close), so no
// profile, cookie or cache survives between runs. named: the names of
// *.test resolve to 127.0.0.1 (browser.mjs's named mode).
export async function launchBrowser({ named = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-e2e-profile-'));
  const args = named ? [...CHROMIUM_ARGS, '--host-resolver-rules=MAP *.test 127.0.0.1', '--disable-features=HttpsUpgrades']
    : CHROMIUM_ARGS;
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args,
    viewport: { width: 1000, height: 700 },
  });
  context.setDefaultTimeout(15000);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
