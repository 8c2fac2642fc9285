// SPDX-License-Identifier: BSD-2-Clause
// lib.mjs - the demo's side of the browser tests, on top of browser.mjs
// and parameterised by the victim's and the attacker's URLs, so the same
// attacks run against csrf-demo directly or through a proxy in front of it
// (nginx, a load balancer).
//
//   login(page, victim, user, pw)     logs in through the victim's form
//   whoami(page, victim)              the signed-in user as the page shows it
//   getState(victim)                  /api/state as JSON
//   ATTACKS                           the attacker site's pages and the state
//                                     change each one is after
//   runAttack(browser, urls, attack)  logs in as alice, opens the page, and
//                                     reports { before, after, user, changed,
//                                     unchanged, victimReason }; opts:
//                                     { user, password, screenshot,
//                                     beforeAttack() after the login }
//   requestLines(text)                the demo's --log-requests lines, parsed
export { getState } from './demo.mjs';
import { getState } from './demo.mjs';
export { BROWSER, BROWSERS, launch, step, STEP_MS } from './browser.mjs';

export async function login(page, victim, user, password) {
  await page.goto(`${victim}/login`);
  await page.fill('#login-user', user);
  await page.fill('#login-password', password);
  await page.clickAndWait('#login-submit');
  if (page.url() !== `${victim}/`) throw new Error(`login as ${user} landed on ${page.url()}`);
  const who = await page.text('#whoami');
  if (who !== user) throw new Error(`login as ${user} failed (page shows "${who}")`);
}

export async function whoami(page, victim) {
  await page.goto(`${victim}/`);
  return (await page.textOrNull('#whoami')) || '';
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
  const user = opts.user || 'alice';
  const pw = opts.password || 'wonderland';
  const home = await browser.newPage();
  await login(home, victim, user, pw);
  const before = await getState(victim);
  if (opts.beforeAttack) await opts.beforeAttack();
  const page = await browser.newPage();
  let victimReason = null;
  const url = `${attacker}${attack.path}`;
  if (attack.done === 'navigate') {
    await page.goto(url, { wait: false });
    await page.waitForUrl(`${url} submits its form to the victim`, (u) => u.startsWith(`${victim}/`));
    victimReason = await page.textOrNull('#reason');
  } else if (attack.done === 'selector') {
    await page.goto(url);
    await page.waitFor('body[data-done]');
  } else {
    await page.goto(url);
  }
  if (opts.screenshot) await page.screenshot(opts.screenshot);
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

// The lines csrf-demo --log-requests printed in text:
// [{ method, path, origin, referer, 'sec-fetch-site', 'sec-fetch-mode',
//    'content-type', cookie }], "-" standing for an absent header.
export function requestLines(text) {
  const out = [];
  for (const m of text.matchAll(/^request (\S+) (\S*) (.*)$/gm)) {
    const r = { method: m[1], path: m[2] };
    for (const kv of m[3].split(' ')) {
      const i = kv.indexOf('=');
      r[kv.slice(0, i)] = kv.slice(i + 1);
    }
    out.push(r);
  }
  return out;
}
