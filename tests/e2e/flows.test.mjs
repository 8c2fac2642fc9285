// SPDX-License-Identifier: BSD-2-Clause
// flows.test.mjs - what a legitimate user does on the protected victim, in
// the browser E2E_BROWSER names (ctest runs it as e2e.flows.chromium and
// e2e.flows.firefox): vote by clicking, two tabs that both submit, Back
// then resubmit, a transfer with the password (and one with a wrong
// password), logout and login again, the X-CSRF-Token header from script;
// and what every page must carry (CSP, the meta tags, the hidden field in
// each POST form, escaped titles, no inline script). In every origin mode
// (E2E_MODE; ctest e2e.flows.chromium, e2e.flows.named.firefox, ...): over
// https the cookies are __Host- and Secure, and every request went over
// HTTP/2; by name over plain HTTP no request carries Sec-Fetch-* and the
// page is no secure context, so Origin alone proves the votes and logins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState } from './demo.mjs';
import { MODE } from './browser.mjs';
import { BROWSER, launch, login, requestLines } from './lib.mjs';

const https = MODE === 'https';
const where = MODE === 'loopback' ? '' : ` ${MODE}`;
// the session cookie's name: __Host- over https (the demo's --origin)
const SID = https ? '__Host-demo_sid' : 'demo_sid';

let demo;
let browser;

before(async () => {
  demo = await startDemo({ args: ['--log-requests'] });
  browser = await launch(BROWSER, { ca: demo.tls && demo.tls.ca });
});

after(async () => {
  if (browser) await browser.close();
  if (demo) await demo.stop();
});

// Every request the demo saw so far: what the browser sent in this mode.
test(`${BROWSER}${where}: the page's secure context and what every request carried`, async () => {
  const page = await freshUser('alice', 'wonderland');
  await page.clickAndWait('#vote-1-n');
  assert.equal(await page.evaluate(() => window.isSecureContext), MODE !== 'named',
    `${demo.victim} is ${MODE === 'named' ? 'no' : 'a'} secure context`);
  await page.close();
  const seen = requestLines(demo.log());
  const posts = seen.filter((r) => r.method === 'POST');
  assert.ok(posts.length >= 2, 'the login and the vote were logged');
  for (const r of posts) assert.equal(r.origin, demo.victim, `${r.method} ${r.path}: Origin is the site's own`);
  if (MODE === 'named') {
    for (const r of seen) {
      assert.deepEqual([r['sec-fetch-site'], r['sec-fetch-mode']], ['-', '-'], `${r.method} ${r.path}: no Sec-Fetch-*`);
    }
  } else {
    for (const r of posts) assert.equal(r['sec-fetch-site'], 'same-origin', `${r.method} ${r.path}`);
  }
  if (demo.front) {
    const reqs = await demo.front.requests();
    assert.ok(reqs.length >= seen.length && reqs.every((r) => r.protocol === 'HTTP/2.0'),
      `every request over HTTP/2: ${[...new Set(reqs.map((r) => r.protocol))]}`);
  }
});

async function freshUser(user, pw) {
  await browser.clearCookies();
  const page = await browser.newPage();
  await login(page, demo.victim, user, pw);
  return page;
}

// Clicks selector, waits for the document the click leads to, and checks
// where it landed.
async function clickAndWait(page, selector, url) {
  const r = await page.clickAndWait(selector);
  assert.equal(page.url(), url, `${selector} leads to ${url}`);
  return r;
}

test(`${BROWSER}${where}: voting by clicking counts the vote`, async () => {
  const page = await freshUser('alice', 'wonderland');
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-1-y', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['1'].y, before.votes['1'].y + 1);
  assert.equal(await page.text('#score-1'), `+${after.votes['1'].y} / -${after.votes['1'].n}`);
  await page.close();
});

test(`${BROWSER}${where}: two tabs open, both submit`, async () => {
  const a = await freshUser('alice', 'wonderland');
  const b = await browser.newPage();
  await b.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await clickAndWait(a, '#vote-2-y', `${demo.victim}/`);
  await clickAndWait(b, '#vote-2-n', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['2'].y, before.votes['2'].y + 1);
  assert.equal(after.votes['2'].n, before.votes['2'].n + 1);
  assert.equal(await b.count('#reason'), 0, 'no rejection page');
  await a.close();
  await b.close();
});

// History after a vote (POST / answered 303 to /, the URL the page had):
// Chromium adds an entry for the new document, so Back shows / again and a
// second Back reaches /account; Firefox replaces the entry (same URL after
// a POST redirect), so the first Back already reaches /account.
test(`${BROWSER}${where}: Back, then resubmit`, async () => {
  const page = await freshUser('bob', 'builder');
  await page.goto(`${demo.victim}/account`);
  await page.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-3-y', `${demo.victim}/`);
  await page.back();
  if (BROWSER === 'chromium') {
    assert.equal(page.url(), `${demo.victim}/`, 'Chromium: Back after the vote shows the page before it');
    await page.back();
  }
  assert.equal(page.url(), `${demo.victim}/account`, 'Back reaches the account page');
  await page.forward();
  assert.equal(page.url(), `${demo.victim}/`);
  await clickAndWait(page, '#vote-3-y', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['3'].y, before.votes['3'].y + 2);
  await page.close();
});

test(`${BROWSER}${where}: a transfer with the password moves money; a wrong password moves none`, async () => {
  const page = await freshUser('alice', 'wonderland');
  await page.goto(`${demo.victim}/account`);
  const before = await getState(demo.victim);
  assert.equal(await page.text('#balance'), String(before.balances.alice));
  await page.select('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '50');
  await page.fill('#transfer-password', 'wonderland');
  await clickAndWait(page, '#transfer-submit', `${demo.victim}/account`);
  const after = await getState(demo.victim);
  assert.equal(after.balances.alice, before.balances.alice - 50);
  assert.equal(after.balances.bob, before.balances.bob + 50);
  assert.equal(await page.text('#balance'), String(after.balances.alice));

  await page.select('#transfer-to', 'mallory');
  await page.fill('#transfer-amount', '10');
  await page.fill('#transfer-password', 'not-her-password');
  const r = await clickAndWait(page, '#transfer-submit', `${demo.victim}/transfer`);
  assert.equal(r.status, 403);
  assert.equal(await page.count('#reason'), 1, 'the rejection page');
  assert.match(await page.text('main'), /password/i);
  const again = await getState(demo.victim);
  assert.deepEqual(again, after, 'nothing moved');
  await page.close();
});

test(`${BROWSER}${where}: logout, then login again with a new session`, async () => {
  const page = await freshUser('alice', 'wonderland');
  const sid = async () => (await browser.cookies(demo.victim)).find((c) => c.name === SID);
  const first = await sid();
  assert.ok(first && first.httpOnly && first.sameSite === 'Lax' && first.path === '/' && first.secure === https,
    `${SID}: HttpOnly, SameSite=Lax, Path=/, ${https ? '' : 'not '}Secure`);
  await clickAndWait(page, '#logout', `${demo.victim}/`);
  assert.equal(await page.text('#whoami'), '');
  assert.equal(await page.count('#login-user'), 1, 'the login form is back');
  assert.equal(await sid(), undefined, 'logged out: no session cookie, no server state for the visitor');
  const secret = (await browser.cookies(demo.victim)).find((c) => c.name === (https ? '__Host-csrf_secret' : 'csrf_secret'));
  assert.ok(secret && secret.httpOnly && secret.sameSite === 'Lax' && secret.secure === https,
    'the login form\'s token rests on the signed secret cookie');
  await page.fill('#login-user', 'alice');
  await page.fill('#login-password', 'wonderland');
  await clickAndWait(page, '#login-submit', `${demo.victim}/`);
  assert.equal(await page.text('#whoami'), 'alice');
  const second = await sid();
  assert.notEqual(second.value, first.value, 'login gives a new session id');
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-1-n', `${demo.victim}/`);
  assert.equal((await getState(demo.victim)).votes['1'].n, before.votes['1'].n + 1);
  await page.close();
});

test(`${BROWSER}${where}: a script of the page may send the token in X-CSRF-Token`, async () => {
  const page = await freshUser('alice', 'wonderland');
  const before = await getState(demo.victim);
  const status = await page.evaluate(async () => {
    const token = document.querySelector('meta[name=csrf-token]').content;
    const r = await fetch('/vote', {
      method: 'POST',
      headers: { 'X-CSRF-Token': token, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'story=2&type=y',
      redirect: 'manual',
    });
    return r.type === 'opaqueredirect' ? 303 : r.status;
  });
  assert.equal(status, 303);
  assert.equal((await getState(demo.victim)).votes['2'].y, before.votes['2'].y + 1);
  const forged = await page.evaluate(async () => {
    const r = await fetch('/vote', {
      method: 'POST',
      headers: { 'X-CSRF-Token': 'x'.repeat(102), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'story=2&type=y',
    });
    return r.status;
  });
  assert.equal(forged, 403);
  await page.close();
});

test(`${BROWSER}${where}: every page: CSP, meta tags, hidden field in each POST form, escaped text, no inline script`, async () => {
  const page = await freshUser('alice', 'wonderland');
  for (const p of ['/', '/account', '/login']) {
    const resp = await page.goto(`${demo.victim}${p}`);
    assert.equal(resp.headers['content-security-policy'], "default-src 'self'", `CSP on ${p}`);
    const param = await page.attr('meta[name=csrf-param]', 'content');
    const token = await page.attr('meta[name=csrf-token]', 'content');
    assert.match(param, /^csrf_[0-9a-f]{12}$/);
    assert.equal(token.length, 51); // version 4, the default: unmasked
    const forms = await page.evaluate((name) => [...document.querySelectorAll('form[method=post]')]
      .map((f) => !!f.querySelector(`input[type=hidden][name="${name}"]`)), param);
    assert.ok(forms.length > 0 && forms.every(Boolean), `every POST form of ${p} has the field`);
    assert.equal(await page.count('script'), 0, `no script on ${p}`);
  }
  await page.goto(`${demo.victim}/`);
  assert.match(await page.text('#story-1'), /one <img> tag/);
  assert.equal(await page.count('main img'), 0, 'the title stays text');
  await page.close();
});
