// SPDX-License-Identifier: BSD-2-Clause
// attacks.test.mjs - every page of the attacker site against csrf-demo, in
// the browser E2E_BROWSER names and the origin mode E2E_MODE names (ctest:
// e2e.attacks_protected.chromium, e2e.attacks_protected.named.firefox,
// ...). Each mode's attackers in turn (demo.mjs: the same-site one, and in
// the named and https modes a cross-site one too). DEMO_MODE=unprotected:
// each attack from the same site must change the victim's state (the
// attacks are real); from another site SameSite=Lax keeps the session
// cookie home and only login CSRF, which needs no session, gets through
// (CROSS_SITE_REAL). Otherwise (protected): the state stays the same, alice
// stays signed in, and the demo logs the rejection with its reason. Either
// way the demo logs what the browser sent with each forged request
// (--log-requests), the test checks it against what this browser is known
// to send in this mode (headers.mjs), and writes the table to
// E2E_OUT/headers-BROWSER-DEMO_MODE[-MODE].md; the screenshots (loopback
// only) go where shotFile says (CSRF_SCREENSHOTS=docs/img regenerates the
// README's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startDemo, waitForLog } from './demo.mjs';
import { MODE, shotFile } from './browser.mjs';
import { ATTACKS, BROWSER, getState, launch, login, requestLines, runAttack } from './lib.mjs';
import { expectedHeaders, headerTable } from './headers.mjs';

const unprotected = process.env.DEMO_MODE === 'unprotected';
const mode = unprotected ? 'unprotected' : 'protected';
const where = MODE === 'loopback' ? '' : ` ${MODE}`;

// The attacks that change the unprotected victim's state from another
// site: login CSRF, which needs no session (the answer's Set-Cookie to a
// top-level navigation is kept). The others need alice's session cookie,
// which SameSite=Lax keeps from every cross-site request they make.
const CROSS_SITE_REAL = new Set(['login-csrf']);
const out = process.env.E2E_OUT || path.join(path.dirname(new URL(import.meta.url).pathname), 'out');
let demo;
let browser;
const seen = [];

before(async () => {
  fs.mkdirSync(out, { recursive: true });
  demo = await startDemo({ unprotected, args: ['--log-requests'] });
  browser = await launch(BROWSER, { ca: demo.tls && demo.tls.ca });
});

after(async () => {
  if (browser) await browser.close();
  if (demo) {
    const code = await demo.stop();
    assert.equal(code, 0, 'csrf-demo exits cleanly on SIGTERM');
  }
});

test(`${BROWSER}${where} ${mode}: ${MODE === 'named' ? 'no' : 'a'} secure context, and what the site's own pages send`, async () => {
  const page = await browser.newPage();
  await page.goto(`${demo.victim}/login`);
  assert.equal(page.url(), `${demo.victim}/login`, 'no upgrade or redirect on the way');
  // loopback is potentially trustworthy, a host name over plain HTTP not
  assert.equal(await page.evaluate(() => window.isSecureContext), MODE !== 'named');
  // a login and a vote of alice's: both pass, on the site's own Origin
  // (and Sec-Fetch-Site: same-origin but by name, where none comes)
  const mark = demo.mark();
  await login(page, demo.victim, 'alice', 'wonderland');
  const before = await getState(demo.victim);
  await page.clickAndWait('#vote-1-y');
  assert.equal((await getState(demo.victim)).votes['1'].y, before.votes['1'].y + 1, 'the vote counted');
  await page.close();
  // (the test's own reads of /api/state are no browser's)
  const own = requestLines(demo.logSince(mark)).filter((r) => r.path !== '/api/state');
  assert.deepEqual(own.filter((r) => r.method === 'POST').map((r) => r.path), ['/login', '/vote'], 'the login and the vote');
  for (const r of own) {
    if (r.method === 'POST') assert.equal(r.origin, demo.victim, `${r.method} ${r.path}: the site's own Origin`);
    assert.equal(r['sec-fetch-site'], MODE === 'named' ? '-' : r['sec-fetch-site'] === 'none' ? 'none' : 'same-origin',
      `${r.method} ${r.path}: Sec-Fetch-Site`);
  }
  if (demo.front) {
    const h2 = (await demo.front.requests()).filter((r) => r.path === '/login');
    assert.ok(h2.length > 0 && h2.every((r) => r.protocol === 'HTTP/2.0'), `over HTTP/2: ${JSON.stringify(h2)}`);
  }
});

// demo.mjs: the loopback mode has a same-site attacker only
const KINDS = MODE === 'loopback' ? ['same-site'] : ['same-site', 'cross-site'];

for (const kind of KINDS) {
  for (const attack of ATTACKS) {
  test(`${BROWSER}${where} ${mode}: ${attack.name} (${attack.what}) from the ${kind} attacker`, async () => {
    const attacker = demo.attackers.find((a) => a.kind === kind).origin;
    let mark = demo.mark();
    const r = await runAttack(browser, { victim: demo.victim, attacker }, attack,
      { beforeAttack: () => { mark = demo.mark(); } });
    const [method, route] = attack.request.split(' ');
    const sent = requestLines(demo.logSince(mark)).filter((q) => q.method === method && q.path === route);
    assert.equal(sent.length, 1, `the browser sent ${attack.request} once`);
    seen.push({ attack: attack.name, kind, attacker, ...sent[0] });
    assert.deepEqual(sent[0], { ...sent[0], ...expectedHeaders(BROWSER, attack, attacker, { mode: MODE, kind }) },
      `the headers ${BROWSER} sends with ${attack.name}`);
    if (unprotected) {
      if (kind === 'same-site' || CROSS_SITE_REAL.has(attack.name))
        assert.ok(r.changed, `the attack changed the victim's state (user now ${r.user})`);
      else assert.ok(r.unchanged, `SameSite=Lax kept the session home: nothing changed (user now ${r.user})`);
      return;
    }
    assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
    // a forged POST is refused on Sec-Fetch-Site where it comes, else on
    // its Origin (the demo logs the library's words for the reason)
    const why = attack.request.startsWith('POST')
      ? { named: 'origin mismatch', 'same-site': 'same-site request from another origin',
        'cross-site': 'cross-site request' }[MODE === 'named' ? 'named' : kind]
      : '\\S';
    const re = new RegExp(`^rejected ${attack.request} from 127\\.0\\.0\\.1: ${why}`, 'm');
    const logged = await waitForLog(demo, mark, re);
    assert.ok(logged, `the demo logged "rejected ${attack.request} ...: <reason>"`);
    if (attack.done === 'navigate') assert.ok(r.victimReason, 'the victim page names the reason');
  });
  }
}

test(`${BROWSER}${where} ${mode}: the headers table and screenshots of the victim and the attacker`, async () => {
  assert.equal(seen.length, ATTACKS.length * demo.attackers.length, 'every attack was recorded');
  const suffix = MODE === 'loopback' ? '' : `-${MODE}`;
  fs.writeFileSync(path.join(out, `headers-${BROWSER}-${mode}${suffix}.md`), headerTable(BROWSER, seen, demo.attacker));
  if (MODE !== 'loopback') return;
  const shot = (name) => shotFile(`${name}-${BROWSER}`);
  const page = await browser.newPage();
  await login(page, demo.victim, 'alice', 'wonderland');
  await page.screenshot(shot(`victim-${mode}`));
  await page.goto(`${demo.attacker}/`);
  await page.screenshot(shot('attacker'));
  if (!unprotected) {
    await page.goto(`${demo.attacker}/form-vote`, { wait: false });
    await page.waitForUrl('the attacker page /form-vote submits its form', (u) => u.startsWith(`${demo.victim}/`));
    assert.ok(await page.text('#reason'));
    await page.screenshot(shot('rejected'));
  }
  await page.close();
  const made = unprotected ? ['victim-unprotected', 'attacker'] : ['victim-protected', 'attacker', 'rejected'];
  for (const f of made) assert.ok(fs.statSync(shot(f)).size > 1000, `${path.basename(shot(f))} not empty`);
});
