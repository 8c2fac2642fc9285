// SPDX-License-Identifier: BSD-2-Clause
// balancer_browser.test.mjs - a person's visit to the balanced fleet
// (fleet.mjs startBalancedFleet: nginx round robin in front of two demos
// sharing Redis, the key file and the database), in the browser
// E2E_BROWSER names (ctest: fleet.balancer_browser.chromium and .firefox).
// Login, votes, a transfer with the password, logout and login again: each
// request goes to whichever instance nginx picks, and every step works
// because sessions, tokens and re-authentication are shared. Then the
// attacker's page forges a vote through the balancer and is rejected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getState } from '../e2e/demo.mjs';
import { BROWSER, launch, login, requestLines, runAttack, ATTACKS } from '../e2e/lib.mjs';
import { expectedHeaders } from '../e2e/headers.mjs';
import { startBalancedFleet, balancerSkip as skip } from './fleet.mjs';

let fleet;
let browser;

before(async () => {
  if (skip) return;
  fleet = await startBalancedFleet(['--log-requests']);
  browser = await launch(BROWSER);
});

after(async () => {
  if (browser) await browser.close();
  if (fleet) await fleet.stop();
});

// The requests each instance served since its mark, as --log-requests
// printed them.
const served = (d, mark) => requestLines(d.logSince(mark));

test(`${BROWSER}: a visit through the balancer works whichever instance answers`, { skip }, async () => {
  const { a, b, lb } = fleet;
  const site = lb.base;
  const marks = [a.mark(), b.mark()];
  const page = await browser.newPage();
  await login(page, site, 'alice', 'wonderland');
  const before = await getState(a.victim);
  for (let i = 0; i < 4; i++) {
    await page.clickAndWait('#vote-2-y');
    assert.equal(page.url(), `${site}/`);
    assert.equal(await page.text('#whoami'), 'alice', `signed in after vote ${i + 1}`);
  }
  assert.equal((await getState(b.victim)).votes['2'].y, before.votes['2'].y + 4, 'four votes, one database');

  await page.goto(`${site}/account`);
  await page.select('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '5');
  await page.fill('#transfer-password', 'wonderland');
  const t = await page.clickAndWait('#transfer-submit');
  assert.equal(t.status, 200);
  assert.equal(page.url(), `${site}/account`);
  const moved = await getState(a.victim);
  assert.equal(moved.balances.alice, before.balances.alice - 5, 'alice paid');
  assert.equal(moved.balances.bob, before.balances.bob + 5, 'bob was paid');

  await page.clickAndWait('#logout');
  assert.equal(await page.text('#whoami'), '');
  await login(page, site, 'alice', 'wonderland');
  await page.clickAndWait('#vote-3-y');
  assert.equal((await getState(a.victim)).votes['3'].y, before.votes['3'].y + 1, 'a vote after a new login');
  await page.close();

  // nginx alternates requests between the two upstreams, so both served
  // parts of this signed-in visit.
  const [sa, sb] = [served(a, marks[0]), served(b, marks[1])];
  assert.ok(sa.some((q) => q.cookie === 'yes'), 'instance A served the visit');
  assert.ok(sb.some((q) => q.cookie === 'yes'), 'instance B served the visit');
  assert.equal(sa.length + sb.length >= 20, true, `the visit made ${sa.length + sb.length} requests`);
});

test(`${BROWSER}: a forged vote through the balancer is rejected`, { skip }, async () => {
  const { a, b, lb } = fleet;
  // Instance A's attacker site targets the balancer (the victim's origin).
  const attack = ATTACKS.find((x) => x.name === 'form-vote');
  let marks;
  const r = await runAttack(browser, { victim: lb.base, attacker: a.attacker }, attack,
    { beforeAttack: () => { marks = [a.mark(), b.mark()]; } });
  assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
  assert.ok(r.victimReason, 'the victim page names the reason');
  const sent = [...served(a, marks[0]), ...served(b, marks[1])].filter((q) => q.method === 'POST');
  assert.equal(sent.length, 1, 'one forged POST reached an instance');
  assert.deepEqual(sent[0], { ...sent[0], ...expectedHeaders(BROWSER, attack, a.attacker) },
    `the headers ${BROWSER} sends with ${attack.name}`);
  const rejected = /^rejected POST \/vote from 127\.0\.0\.1: \S/m;
  assert.ok(rejected.test(a.logSince(marks[0])) || rejected.test(b.logSince(marks[1])), 'an instance logged it');
});
