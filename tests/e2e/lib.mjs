// lib.mjs - the browser side of the CSRF end-to-end tests, parameterised by
// the victim's and the attacker's URLs so the same attacks can run against
// csrf-demo directly or through a proxy in front of it (nginx).
//
//   launchBrowser()                   headless Debian Chromium, fresh profile
//   login(page, victim, user, pw)     logs in through the victim's form
//   whoami(page, victim)              the signed-in user as the page shows it
//   getState(victim)                  /api/state as JSON
//   ATTACKS                           the attacker site's pages and the state
//                                     change each one is after
//   runAttack(browser, urls, attack)  logs in as alice, opens the page, and
//                                     reports { before, after, user, changed,
//                                     unchanged, victimReason }
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export { getState } from './demo.mjs';
import { getState } from './demo.mjs';

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
// profile, cookie or cache survives between runs. Never downloads a browser.
export async function launchBrowser() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-e2e-profile-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
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

export async function login(page, victim, user, password) {
  await page.goto(`${victim}/login`);
  await page.fill('#login-user', user);
  await page.fill('#login-password', password);
  await Promise.all([page.waitForURL(`${victim}/`), page.click('#login-submit')]);
  const who = await page.textContent('#whoami');
  if (who !== user) throw new Error(`login as ${user} failed (page shows "${who}")`);
}

export async function whoami(page, victim) {
  await page.goto(`${victim}/`);
  return (await page.textContent('#whoami')) || '';
}

const votes = (s, story, t) => s.votes[String(story)][t];

// done: how the test knows the page has finished its attempt.
//   'load'      the attacker page's load event (images included)
//   'navigate'  the page submitted a form: wait for the victim's answer
//   'selector'  the page marks <body data-done> when its script is done
export const ATTACKS = [
  {
    name: 'img-vote',
    path: '/img-vote',
    what: '<img> GET /vote',
    done: 'load',
    request: 'GET /vote',
    changed: (b, a) => votes(a, 1, 'y') === votes(b, 1, 'y') + 1,
  },
  {
    name: 'form-vote',
    path: '/form-vote',
    what: 'self-submitting POST /vote',
    done: 'navigate',
    request: 'POST /vote',
    changed: (b, a) => votes(a, 2, 'y') === votes(b, 2, 'y') + 1,
  },
  {
    name: 'transfer',
    path: '/transfer',
    what: 'self-submitting POST /transfer to mallory',
    done: 'navigate',
    request: 'POST /transfer',
    changed: (b, a) =>
      a.balances.mallory === b.balances.mallory + 100 && a.balances.alice === b.balances.alice - 100,
  },
  {
    name: 'text-plain',
    path: '/text-plain',
    what: 'text/plain form POST /vote',
    done: 'navigate',
    request: 'POST /vote',
    changed: (b, a) => votes(a, 3, 'n') === votes(b, 3, 'n') + 1,
  },
  {
    name: 'login-csrf',
    path: '/login-csrf',
    what: 'login CSRF into mallory',
    done: 'navigate',
    request: 'POST /login',
    changed: (b, a, user) => user === 'mallory',
  },
  {
    name: 'fetch-token',
    path: '/fetch-token',
    what: 'fetch to read the token, then POST /vote',
    done: 'selector',
    request: 'POST /vote',
    changed: (b, a) => votes(a, 1, 'n') === votes(b, 1, 'n') + 1,
  },
];

function sameState(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Logs in as alice (a new session each time), opens the attack page in a
// fresh tab, waits for it to finish, and compares /api/state and the
// signed-in user with what they were before.
export async function runAttack(browser, { victim, attacker }, attack, opts = {}) {
  const ctx = browser.context || browser;
  const user = opts.user || 'alice';
  const pw = opts.password || 'wonderland';
  const home = await ctx.newPage();
  await login(home, victim, user, pw);
  const before = await getState(victim);
  const page = await ctx.newPage();
  let victimReason = null;
  const url = `${attacker}${attack.path}`;
  if (attack.done === 'navigate') {
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${victim}/`), { waitUntil: 'load' }),
      page.goto(url, { waitUntil: 'commit' }),
    ]);
    victimReason = await page.locator('#reason').textContent({ timeout: 1000 }).catch(() => null);
  } else if (attack.done === 'selector') {
    await page.goto(url);
    await page.waitForSelector('body[data-done]');
  } else {
    await page.goto(url, { waitUntil: 'load' });
  }
  if (opts.screenshot) await page.screenshot({ path: opts.screenshot });
  await page.close();
  const who = await whoami(home, victim);
  await home.close();
  const after = await getState(victim);
  return {
    before,
    after,
    user: who,
    victimReason,
    changed: attack.changed(before, after, who),
    unchanged: sameState(before, after) && who === user,
  };
}
