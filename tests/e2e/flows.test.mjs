// flows.test.mjs - what a legitimate user does on the protected victim, in
// headless Chromium: vote by clicking, two tabs that both submit, Back then
// resubmit, a transfer with the password (and one with a wrong password),
// logout and login again, the X-CSRF-Token header from script; and what
// every page must carry (CSP, the meta tags, the hidden field in each POST
// form, escaped titles, no inline script).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState } from './demo.mjs';
import { launchBrowser, login } from './lib.mjs';

let demo;
let browser;

before(async () => {
  demo = await startDemo();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (demo) await demo.stop();
});

async function freshUser(user, pw) {
  await browser.context.clearCookies();
  const page = await browser.context.newPage();
  await login(page, demo.victim, user, pw);
  return page;
}

async function clickAndWait(page, selector, url) {
  await Promise.all([page.waitForURL(url), page.click(selector)]);
}

test('voting by clicking counts the vote', async () => {
  const page = await freshUser('alice', 'wonderland');
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-1-y', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['1'].y, before.votes['1'].y + 1);
  assert.equal(await page.textContent('#score-1'), `+${after.votes['1'].y} / -${after.votes['1'].n}`);
  await page.close();
});

test('two tabs open, both submit', async () => {
  const a = await freshUser('alice', 'wonderland');
  const b = await browser.context.newPage();
  await b.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await clickAndWait(a, '#vote-2-y', `${demo.victim}/`);
  await clickAndWait(b, '#vote-2-n', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['2'].y, before.votes['2'].y + 1);
  assert.equal(after.votes['2'].n, before.votes['2'].n + 1);
  assert.equal(await b.locator('#reason').count(), 0, 'no rejection page');
  await a.close();
  await b.close();
});

test('Back, then resubmit', async () => {
  const page = await freshUser('bob', 'builder');
  await page.goto(`${demo.victim}/account`);
  await page.goto(`${demo.victim}/`);
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-3-y', `${demo.victim}/`);
  await page.goBack();
  await page.goBack();
  assert.equal(page.url(), `${demo.victim}/account`);
  await page.goForward();
  await clickAndWait(page, '#vote-3-y', `${demo.victim}/`);
  const after = await getState(demo.victim);
  assert.equal(after.votes['3'].y, before.votes['3'].y + 2);
  await page.close();
});

test('a transfer with the password moves money; a wrong password moves none', async () => {
  const page = await freshUser('alice', 'wonderland');
  await page.goto(`${demo.victim}/account`);
  const before = await getState(demo.victim);
  assert.equal(await page.textContent('#balance'), String(before.balances.alice));
  await page.selectOption('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '50');
  await page.fill('#transfer-password', 'wonderland');
  await clickAndWait(page, '#transfer-submit', `${demo.victim}/account`);
  let after = await getState(demo.victim);
  assert.equal(after.balances.alice, before.balances.alice - 50);
  assert.equal(after.balances.bob, before.balances.bob + 50);
  assert.equal(await page.textContent('#balance'), String(after.balances.alice));

  await page.selectOption('#transfer-to', 'mallory');
  await page.fill('#transfer-amount', '10');
  await page.fill('#transfer-password', 'not-her-password');
  const [resp] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${demo.victim}/transfer`),
    page.click('#transfer-submit'),
  ]);
  assert.equal(resp.status(), 403);
  await page.waitForSelector('#reason');
  assert.match(await page.textContent('main'), /password/i);
  const again = await getState(demo.victim);
  assert.deepEqual(again, after, 'nothing moved');
  await page.close();
});

test('logout, then login again with a new session', async () => {
  const page = await freshUser('alice', 'wonderland');
  const sid = async () => (await browser.context.cookies(demo.victim)).find((c) => c.name === 'demo_sid');
  const first = await sid();
  assert.ok(first && first.httpOnly && first.sameSite === 'Lax' && first.path === '/');
  await clickAndWait(page, '#logout', `${demo.victim}/`);
  assert.equal(await page.textContent('#whoami'), '');
  assert.equal(await page.locator('#login-user').count(), 1, 'the login form is back');
  assert.equal(await sid(), undefined, 'logged out: no session cookie, no server state for the visitor');
  const secret = (await browser.context.cookies(demo.victim)).find((c) => c.name === 'csrf_secret');
  assert.ok(secret && secret.httpOnly && secret.sameSite === 'Lax', 'the login form\'s token rests on the signed secret cookie');
  await page.fill('#login-user', 'alice');
  await page.fill('#login-password', 'wonderland');
  await clickAndWait(page, '#login-submit', `${demo.victim}/`);
  assert.equal(await page.textContent('#whoami'), 'alice');
  const second = await sid();
  assert.notEqual(second.value, first.value, 'login gives a new session id');
  const before = await getState(demo.victim);
  await clickAndWait(page, '#vote-1-n', `${demo.victim}/`);
  assert.equal((await getState(demo.victim)).votes['1'].n, before.votes['1'].n + 1);
  await page.close();
});

test('a script of the page may send the token in X-CSRF-Token', async () => {
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
      headers: { 'X-CSRF-Token': 'x'.repeat(144), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'story=2&type=y',
    });
    return r.status;
  });
  assert.equal(forged, 403);
  await page.close();
});

test('every page: CSP, meta tags, hidden field in each POST form, escaped text, no inline script', async () => {
  const page = await freshUser('alice', 'wonderland');
  for (const p of ['/', '/account', '/login']) {
    const resp = await page.goto(`${demo.victim}${p}`);
    assert.equal(resp.headers()['content-security-policy'], "default-src 'self'", `CSP on ${p}`);
    const param = await page.getAttribute('meta[name=csrf-param]', 'content');
    const token = await page.getAttribute('meta[name=csrf-token]', 'content');
    assert.match(param, /^csrf_[0-9a-f]{12}$/);
    assert.equal(token.length, 144);
    const forms = await page.$$eval('form[method=post]', (fs, name) =>
      fs.map((f) => !!f.querySelector(`input[type=hidden][name="${name}"]`)), param);
    assert.ok(forms.length > 0 && forms.every(Boolean), `every POST form of ${p} has the field`);
    assert.equal(await page.locator('script').count(), 0, `no script on ${p}`);
  }
  await page.goto(`${demo.victim}/`);
  assert.match(await page.textContent('#story-1'), /one <img> tag/);
  assert.equal(await page.locator('main img').count(), 0, 'the title stays text');
  await page.close();
});
