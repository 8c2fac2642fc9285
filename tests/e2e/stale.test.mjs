// stale.test.mjs - what a person is told when a page they kept open can no
// longer act, in the browser E2E_BROWSER names (ctest: e2e.stale.chromium
// and .firefox): a tab from before a logout and a new login, a login form
// whose cookies were cleared, a page signed with a key that was retired
// since. Each time the vote or login is refused, nothing changes, the demo
// logs the reason, and the page says in words what happened and that a
// reload helps. (A token that expired cannot happen in the demo: it sets no
// maximum age; the library's own tests, csrf-cgi's and nginx's cover it.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
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
  demo = await startDemo({ args: ['--key-file', keys] });
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

test(`${BROWSER}: a tab from before a logout and a new login says it is from an earlier session`, async () => {
  await browser.clearCookies();
  const old = await browser.newPage();
  await login(old, demo.victim, 'alice', 'wonderland');
  const other = await browser.newPage();
  await other.goto(`${demo.victim}/`);
  await other.clickAndWait('#logout');
  await login(other, demo.victim, 'alice', 'wonderland');
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
