// SPDX-License-Identifier: BSD-2-Clause
// behind.mjs - the browser suite of csrf-demo --unprotected behind a server
// with the module (tests/nginx/browser.test.mjs, tests/apache/
// browser.test.mjs), in the browser E2E_BROWSER and the origin mode
// E2E_MODE names. The demo runs on loopback; the server in front gives it
// its names: a protected victim, the same app through the server without
// the module (unprotected), and the demo's attacker pages pointed at each
// victim (the attackers, one per kind: same-site, cross-site).
//
//   suite({ names, start, crash, what })  registers before() and after():
//       the test CA for names in the https mode, the demo, the server
//       (start(demo, tls) answers { protected, unprotected, errorLog(),
//       stop() }, each of protected and unprotected { victim, attackers }),
//       the browser; after them, no line of the server's error log matches
//       crash. Answers the state the tests read: { browser, server, demo }.
//   attackTests(s, opts)  every attack of the demo fails with the module;
//       without it (opts.control) it succeeds, so the pages really attack
//   flowTest(browser, victim)  the legitimate flows work with the tokens
//       the module put into the unchanged app's forms
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { directFor, startDemo } from './demo.mjs';
import { MODE } from './browser.mjs';
import { ATTACKS, BROWSER, launch, login, runAttack, getState } from './lib.mjs';
import { makeCA } from './tls.mjs';

export const HTTPS = MODE === 'https';
// the mode in test names: none for loopback
export const where = MODE === 'loopback' ? '' : ` ${MODE}`;

export function suite({ names, start, crash, what }) {
  const s = {};
  let tls = null;
  before(async () => {
    if (HTTPS) tls = makeCA(names);
    s.demo = await startDemo({ unprotected: true, mode: 'loopback' });
    s.server = await start(s.demo, tls);
    for (const site of [s.server.protected, s.server.unprotected]) {
      site.attacker = site.attackers['same-site'];
      directFor(site.victim, s.demo.victim);
    }
    s.browser = await launch(BROWSER, { ca: tls && tls.ca });
  });
  after(async () => {
    if (s.browser) await s.browser.close();
    if (s.server) {
      const log = s.server.errorLog();
      await s.server.stop();
      assert.doesNotMatch(log, crash, `no ${what} crashed`);
    }
    if (s.demo) await s.demo.stop();
    if (tls) tls.remove();
  });
  return s;
}

// title: the browser and the server, as test names say them. opts:
//   control     whether to run the attacks without the module too (from
//               the same site)
//   kinds       the attackers' kinds the attacks come from (same-site)
//   beforeAttack(), check(attack, attacker, kind, r, mark)  the server's
//               own look at each attack with the module: mark is what
//               beforeAttack() answered once alice had logged in
export function attackTests(s, title, { control, kinds = ['same-site'], beforeAttack, check }) {
  for (const attack of ATTACKS) {
    if (control)
    test(`${title} without the module: ${attack.name} (${attack.what}) from the same site succeeds`, async () => {
      const r = await runAttack(s.browser, s.server.unprotected, attack);
      assert.ok(r.changed, `the attack changed the victim's state without the module (user now ${r.user})`);
    });
    for (const kind of kinds) {
    test(`${title} with the module: ${attack.name} (${attack.what}) from the ${kind} attacker fails`, async () => {
      let mark;
      const attacker = s.server.protected.attackers[kind];
      const r = await runAttack(s.browser, { victim: s.server.protected.victim, attacker }, attack,
        { beforeAttack: beforeAttack && (async () => { mark = await beforeAttack(); }) });
      assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
      assert.equal(r.changed, false);
      if (check) await check(attack, attacker, kind, r, mark);
    });
    }
  }
}

// Logs in, votes, votes from two tabs, transfers, logs out and in and
// votes again, on victim through the module.
export async function flowTest(browser, victim) {
  const page = await browser.newPage();
  await login(page, victim, 'alice', 'wonderland');
  assert.equal(await page.evaluate(() => window.isSecureContext), MODE !== 'named', 'a secure context but by name');
  // the module's secret cookie: __Host- and Secure over https
  const secret = (await browser.cookies(victim)).filter((c) => /csrf_secret$/.test(c.name));
  assert.deepEqual(secret.map((c) => [c.name, c.secure, c.httpOnly, c.sameSite]),
    [[HTTPS ? '__Host-csrf_secret' : 'csrf_secret', HTTPS, true, 'Lax']]);

  // the module injected its token into the unchanged app's forms
  const hidden = await page.count('form[action="/vote"] input[type=hidden][name^="csrf_"]');
  assert.ok(hidden > 0, 'vote forms carry the injected token');
  assert.equal(await page.count('meta[name="csrf-token"]'), 1, 'meta csrf-token injected');

  // vote
  // Each click waits for the document it leads to (a POST to / answers 303
  // to /, so waiting for the URL would not wait at all).
  const click = (p, sel) => p.clickAndWait(sel);
  let s0 = await getState(victim);
  await click(page, '#vote-1-y');
  assert.equal(page.url(), `${victim}/`);
  let s1 = await getState(victim);
  assert.equal(s1.votes['1'].y, s0.votes['1'].y + 1, 'the vote counted');

  // two tabs: both pages' tokens stay valid, in either order
  const tab2 = await browser.newPage();
  await tab2.goto(`${victim}/`);
  s0 = await getState(victim);
  await click(tab2, '#vote-2-n');
  await click(page, '#vote-2-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['2'].n, s0.votes['2'].n + 1, 'the vote of the second tab counted');
  assert.equal(s1.votes['2'].y, s0.votes['2'].y + 1, 'the vote of the first tab counted');
  await tab2.close();

  // transfer (the unprotected app asks for no password again)
  await page.goto(`${victim}/account`);
  s0 = await getState(victim);
  await page.select('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '7');
  assert.equal(await page.count('#transfer-password'), 0, 'the unprotected app asks for no password');
  await click(page, '#transfer-submit');
  assert.equal(page.url(), `${victim}/account`, 'the transfer answers 303 to /account');
  s1 = await getState(victim);
  assert.equal(s1.balances.alice, s0.balances.alice - 7, 'alice paid');
  assert.equal(s1.balances.bob, s0.balances.bob + 7, 'bob was paid');

  // log out and in again: the new session's tokens work
  await click(page, '#logout');
  assert.equal(page.url(), `${victim}/`);
  await login(page, victim, 'alice', 'wonderland');
  s0 = await getState(victim);
  await click(page, '#vote-3-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['3'].y, s0.votes['3'].y + 1, 'a vote after a new login counted');
  await page.close();
}
