// lib.mjs - the browser side of the CSRF end-to-end tests, parameterised by
// the victim's and the attacker's URLs so the same attacks can run against
// csrf-demo directly or through a proxy in front of it (nginx).
//
//   launchBrowser()                   headless Debian Chromium, fresh profile
//   step(name, fn, {page})            fn within STEP_MS, or an error naming the
//                                     step, the page's URL and the requests
//                                     still in flight
//   navigate(page, name, action)      action (a click) and the load of the
//                                     document it leads to, as one step
//   closePage(page)                   page.close() as a step
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
  const inflight = new Map();
  context.on('request', (r) => inflight.set(r, Date.now()));
  context.on('requestfinished', (r) => inflight.delete(r));
  context.on('requestfailed', (r) => inflight.delete(r));
  tracked.set(context, inflight);
  return {
    context,
    async close() {
      await step('close the browser', () => context.close());
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Requests of each context that have not finished, for step's message.
const tracked = new WeakMap();

// One step of a test gets this long (E2E_STEP_MS); every wait of the
// browser tests is a step, so a hang names itself instead of running into
// ctest's timeout. The slowest step is a login or transfer (Argon2id in an
// ASan build on a loaded 2-core machine: about 2 s).
export const STEP_MS = Number(process.env.E2E_STEP_MS) || 20000;

function pending(page) {
  const m = page && tracked.get(page.context());
  if (!m || m.size === 0) return 'none';
  const now = Date.now();
  return [...m].map(([r, t]) => `${r.method()} ${r.url()} (${now - t} ms)`).join(', ');
}

export async function step(name, fn, { page, ms = STEP_MS } = {}) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const where = page ? `; the page is at ${page.url()}; requests in flight: ${pending(page)}` : '';
      reject(new Error(`step "${name}" did not finish within ${ms} ms${where}`));
    }, ms);
  });
  try {
    return await Promise.race([fn(), late]);
  } finally {
    clearTimeout(timer);
  }
}

// A click that submits a form (POST, 303, GET) or follows a link, then the
// load of the new document. Waiting for a URL is not enough: a form on /
// that answers 303 to / matches before it has even been sent, and a page
// closed while its navigation commits can hang page.close() for good
// (Chromium acknowledges Target.closeTarget and drops it).
export async function navigate(page, name, action) {
  const loaded = page.waitForEvent('load', { timeout: 0 });
  loaded.catch(() => {});
  await step(name, async () => {
    await action();
    await loaded;
  }, { page });
}

export async function closePage(page) {
  await step(`close ${page.url()}`, () => page.close(), { page });
}

export async function login(page, victim, user, password) {
  await step(`open ${victim}/login`, () => page.goto(`${victim}/login`), { page });
  await page.fill('#login-user', user);
  await page.fill('#login-password', password);
  await navigate(page, `log in as ${user}`, () => page.click('#login-submit'));
  if (page.url() !== `${victim}/`) throw new Error(`login as ${user} landed on ${page.url()}`);
  const who = await page.textContent('#whoami');
  if (who !== user) throw new Error(`login as ${user} failed (page shows "${who}")`);
}

export async function whoami(page, victim) {
  await step(`open ${victim}/`, () => page.goto(`${victim}/`), { page });
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
    await step(`${url} submits its form to the victim`, () => Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${victim}/`), { waitUntil: 'load', timeout: 0 }),
      page.goto(url, { waitUntil: 'commit', timeout: 0 }),
    ]), { page });
    victimReason = await page.locator('#reason').textContent({ timeout: 1000 }).catch(() => null);
  } else if (attack.done === 'selector') {
    await step(`${url} runs its script`, async () => {
      await page.goto(url, { timeout: 0 });
      await page.waitForSelector('body[data-done]', { timeout: 0 });
    }, { page });
  } else {
    await step(`open ${url}`, () => page.goto(url, { waitUntil: 'load', timeout: 0 }), { page });
  }
  if (opts.screenshot) await page.screenshot({ path: opts.screenshot });
  await closePage(page);
  const who = await whoami(home, victim);
  await closePage(home);
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
