// SPDX-License-Identifier: BSD-2-Clause
// stale.test.mjs - what a person is told when a page they kept open can no
// longer act, in the browser E2E_BROWSER names (ctest: e2e.stale.chromium
// and .firefox): a tab from before a logout and a new login, a login form
// whose cookies were cleared, a page signed with a key that was retired
// since. Each time the vote or login is refused, nothing changes, the demo
// logs the reason, and the page says in words what happened and that a
// reload helps. (A token that expired cannot happen in the demo: it sets no
// maximum age; the library's own tests, csrf-cgi's and nginx's cover it.)
// The demo runs with --retry-token: a script of a stale page that sends
// the page's token in X-CSRF-Token gets a fresh one with the 403 and
// retries once; the attacker's pages get none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startDemo, getState, waitForLog } from './demo.mjs';
import { shotFile } from './browser.mjs';
import { BROWSER, launch, login } from './lib.mjs';
import { csrfKey, keyIds } from '../fleet/fleet.mjs';

let demo;
let browser;
let keys;

before(async () => {
  const dir = fs.mkdtempSync(path.join(process.env.E2E_OUT || '/tmp', `stale-${BROWSER}-`));
  keys = path.join(dir, 'csrf.keys');
  csrfKey('new', keys);
  demo = await startDemo({ args: ['--key-file', keys, '--retry-token'] });
  browser = await launch(BROWSER);
});

after(async () => {
  if (browser) await browser.close();
  if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo exits cleanly');
  if (keys) fs.rmSync(path.dirname(keys), { recursive: true, force: true });
});

// Clicks the vote button of an open page and checks the refusal: the
// status, the reason the page names, words of its advice, the log line,
// and the vote count unchanged.
async function refusedVote(page, reason, advice, logged) {
  const before = await getState(demo.victim);
  const mark = demo.mark();
  const r = await page.clickAndWait('#vote-1-y');
  assert.equal(r.status, 403);
  assert.equal(await page.text('#reason'), reason, 'the reason in words');
  assert.match(await page.text('main'), advice, 'what the person can do');
  assert.ok(await waitForLog(demo, mark, new RegExp(`^rejected POST /vote from 127\\.0\\.0\\.1: ${logged}$`, 'm')));
  assert.deepEqual((await getState(demo.victim)).votes, before.votes, 'the vote was not counted');
}

// alice's tab old, loaded before she logged out and in again in tab other.
async function staleTab() {
  await browser.clearCookies();
  const old = await browser.newPage();
  await login(old, demo.victim, 'alice', 'wonderland');
  const other = await browser.newPage();
  await other.goto(`${demo.victim}/`);
  await other.clickAndWait('#logout');
  await login(other, demo.victim, 'alice', 'wonderland');
  return { old, other };
}

test(`${BROWSER}: a tab from before a logout and a new login says it is from an earlier session`, async () => {
  const { old, other } = await staleTab();
  await refusedVote(old, 'token from another session',
    /This page is from an earlier session \(you logged out or in since it was loaded\): reload it and try again\./,
    'token from another session');
  await old.screenshot(shotFile(`stale-${BROWSER}`));
  // Reloading, as the page says, makes the vote count.
  await old.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await old.clickAndWait('#vote-1-y');
  assert.equal((await getState(demo.victim)).votes['1'].y, before.votes['1'].y + 1, 'after a reload the vote counts');
  await old.close();
  await other.close();
});

test(`${BROWSER}: a login form whose cookies were cleared says the cookie is missing`, async () => {
  await browser.clearCookies();
  const page = await browser.newPage();
  await page.goto(`${demo.victim}/login`);
  await browser.clearCookies();
  await page.fill('#login-user', 'alice');
  await page.fill('#login-password', 'wonderland');
  const mark = demo.mark();
  const r = await page.clickAndWait('#login-submit');
  assert.equal(r.status, 403);
  assert.equal(await page.text('#reason'), 'secret cookie missing');
  assert.match(await page.text('main'),
    /Your browser did not send this site's security cookie \(cookies cleared or blocked\?\): reload the page and try again\./);
  assert.ok(await waitForLog(demo, mark, /^rejected POST \/login from 127\.0\.0\.1: secret cookie missing$/m));
  assert.equal((await browser.cookies(demo.victim)).filter((c) => c.name === 'demo_sid').length, 0, 'not signed in');
  await page.close();
});

test(`${BROWSER}: a page signed with a key retired since says so`, async () => {
  await browser.clearCookies();
  const page = await browser.newPage();
  await login(page, demo.victim, 'alice', 'wonderland');
  const old = keyIds(keys).signing;
  csrfKey('rotate', keys);
  csrfKey('retire', keys, String(old));
  assert.ok(!keyIds(keys).verifying.includes(old), 'the old key is gone from the file');
  const mark = demo.mark();
  demo.child.kill('SIGHUP');
  assert.ok(await waitForLog(demo, mark, /^reloaded key file /m), 'the demo reloaded its key file');
  await refusedVote(page, 'unknown key', /This page was signed with a key the site no longer uses: reload it and try again\./,
    'unknown key');
  await page.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await page.clickAndWait('#vote-1-y');
  assert.equal((await getState(demo.victim)).votes['1'].y, before.votes['1'].y + 1, 'after a reload the vote counts');
  await page.close();
});

// What a script of the page does: the vote with the page's token in the
// X-CSRF-Token header, and on a 403 that carries a fresh token one retry.
function scriptedVote() {
  const send = (token) => fetch('/vote', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': token },
    body: 'story=1&type=y',
  });
  return (async () => {
    const first = await send(document.querySelector('meta[name="csrf-token"]').content);
    const fresh = first.headers.get('X-CSRF-Token');
    const out = { first: first.status, fresh: Boolean(fresh) };
    if (first.status === 403 && fresh) out.retry = (await send(fresh)).status;
    return out;
  })();
}

test(`${BROWSER}: a script of a stale tab retries once with the fresh token of the 403 (--retry-token)`, async () => {
  const { old, other } = await staleTab();
  const before = await getState(demo.victim);
  const mark = demo.mark();
  const r = await old.evaluate(scriptedVote);
  // the 303 of the vote is followed by fetch: the home page, 200
  assert.deepEqual(r, { first: 403, fresh: true, retry: 200 }, 'refused, a fresh token, the retry counts');
  assert.equal((await getState(demo.victim)).votes['1'].y, before.votes['1'].y + 1, 'counted once');
  assert.match(demo.logSince(mark), /^rejected POST \/vote from 127\.0\.0\.1: token from another session$/m);
  await old.close();
  await other.close();
});

// The same stale token sent as the attacker's page would send it (its
// Origin, Sec-Fetch-Site: same-site) or with no evidence at all: refused,
// and no token offered. Sent from node with the browser's cookies, as
// puppeteer's Firefox reports no response headers of a navigation.
function post(url, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, token: 'x-csrf-token' in res.headers }));
    });
    req.on('error', reject);
    req.end('story=1&type=y');
  });
}

test(`${BROWSER}: a stale token sent cross-origin or without evidence gets no fresh token (--retry-token)`, async () => {
  await browser.clearCookies();
  const old = await browser.newPage();
  await login(old, demo.victim, 'alice', 'wonderland');
  const stale = await old.attr('meta[name="csrf-token"]', 'content');
  await old.clickAndWait('#logout');
  await login(old, demo.victim, 'alice', 'wonderland');
  const cookie = (await browser.cookies(demo.victim)).map((c) => `${c.name}=${c.value}`).join('; ');
  const base = { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, 'X-CSRF-Token': stale };
  const before = await getState(demo.victim);
  for (const [what, h, status] of [
    ['same-site, the attacker\'s Origin', { 'Sec-Fetch-Site': 'same-site', Origin: demo.attacker }, 403],
    ['cross-site', { 'Sec-Fetch-Site': 'cross-site', Origin: 'http://evil.example' }, 403],
    ['no evidence', {}, 403],
    ['the site\'s own Origin', { Origin: demo.victim }, 403],
  ]) {
    const r = await post(`${demo.victim}/vote`, { ...base, ...h });
    const offered = what === 'the site\'s own Origin';
    assert.deepEqual(r, { status, token: offered }, `${what}: ${offered ? 'a fresh token' : 'no token'}`);
  }
  assert.deepEqual((await getState(demo.victim)).votes, before.votes, 'nothing counted');
  await old.close();
});
