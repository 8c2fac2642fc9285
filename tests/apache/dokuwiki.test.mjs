// SPDX-License-Identifier: BSD-2-Clause
// dokuwiki.test.mjs - DokuWiki from Debian's archive behind Debian's
// apache2 with mod_php (prefork) and mod_csrf_protect configured as
// apache/README.md's "A complete configuration" says (dokuwiki_stack.mjs),
// in the browser E2E_BROWSER names (ctest: apache.dokuwiki.chromium and
// apache.dokuwiki.firefox), by name over plain HTTP (http://wiki.test:PORT:
// no secure context, no Sec-Fetch-*; the attacker on evil.test, another
// site).
//
// The user's session passes, nothing rejected: log in, open a page for
// editing, the editor's lock refresh and draft save (its POST to
// lib/exe/ajax.php), preview, save (the text on disk), the quick search
// (a POST to lib/exe/ajax.php), log out. Forged cross-site forms are
// refused by the module (403, the application never runs): a save of the
// page, the editor's lock-and-draft call, a logout, a login. Through the same
// apache2 and DokuWiki without the module, the forged lock-and-draft call
// works (DokuWiki checks no security token there: the page is locked in
// the victim's name and a draft written), so the attack is real; the
// forged save is stopped by DokuWiki's own security token (sectok) there,
// which the attacker cannot read, and with the module the 403 comes first.
// A forged login into the attacker's account (login CSRF: DokuWiki's login
// checks no sectok) is refused by the module and works without it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { launch, step, BROWSER, MODE } from '../e2e/browser.mjs';
import { startStack } from './dokuwiki_stack.mjs';

if (MODE !== 'named') throw new Error('dokuwiki.test.mjs runs by name only (E2E_MODE=named)');

const HOST = 'wiki.test';
let stack;
let browser;
let page;

// One line of the README's LogFormat:
//   %h %l %u %t "%r" %>s %b %{csrf_result}n
const LINE = /^\S+ \S+ \S+ \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3}) \S+ (\S+)$/;

// The requests the module judged, without query values (DokuWiki puts its
// sectok into the logout link; no token goes into the test's output).
function entries(log, from = 0) {
  return log.slice(from).split('\n').filter(Boolean).map((l) => {
    const m = LINE.exec(l);
    assert.ok(m, `an access log line in the README's format: ${l.replace(/\?.*? HTTP/, '?… HTTP')}`);
    const u = new URL(m[2], 'http://x');
    const keep = ['id', 'do', 'call'].filter((k) => u.searchParams.has(k)).map((k) => `${k}=${u.searchParams.get(k)}`);
    return { method: m[1], path: u.pathname, what: `${m[1]} ${u.pathname}${keep.length ? `?${keep.join('&')}` : ''}`,
      status: Number(m[3]), result: m[4] };
  });
}

// GET over loopback with the wiki's Host: the body as text.
function get(url) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: u.port, path: `${u.pathname}${u.search}`, headers: { host: u.host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

// The first request for DokuWiki's page, its style sheet and script
// builds and caches them (seconds on a loaded machine): done while the
// browser starts.
async function warm() {
  const html = await get(`${stack.url}/doku.php?id=start&do=login`);
  const refs = [...html.matchAll(/(?:href|src)="(\/lib\/exe\/(?:css|js)\.php[^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
  assert.ok(refs.length >= 2, 'the login page refers to DokuWiki\'s style sheet and script');
  await Promise.all(refs.map((r) => get(`${stack.url}${r}`)));
}

before(async () => {
  stack = await startStack({ host: HOST, attacker: 'evil.test' });
  [browser] = await Promise.all([launch(BROWSER, { mode: 'named', hosts: [HOST] }), warm()]);
  page = await browser.newPage();
});

after(async () => {
  if (browser) await browser.close();
  if (stack) {
    const log = stack.errorLog();
    const php = stack.phpErrors();
    await stack.stop();
    assert.doesNotMatch(log, /exit signal|Segmentation|core dumped/, 'no apache2 child crashed');
    assert.doesNotMatch(php, /PHP (Fatal|Parse) error/, 'DokuWiki ran without a fatal PHP error');
  }
});

// Polls fn (in the page) until it is true.
async function until(name, fn, ...args) {
  await step(name, async ({ signal }) => {
    while (!signal.aborted) {
      if (await page.p.evaluate(fn, ...args).catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, { page });
}

// Polls a condition of the test's side (a log, a file) until it is true.
async function untilHere(name, fn) {
  await step(name, async ({ signal }) => {
    while (!signal.aborted) {
      if (fn()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

async function login(origin) {
  await page.goto(`${origin}/doku.php?id=start&do=login`);
  await page.fill('#dw__login input[name=u]', stack.user);
  await page.fill('#dw__login input[name=p]', stack.password);
  await page.clickAndWait('#dw__login button[type=submit]');
  assert.equal(await page.count('li.logout a, a.action.logout'), 1, `logged in at ${origin}`);
}

const loggedIn = async () => (await page.count('li.logout a, a.action.logout')) === 1;

// An attacker's page on evil.test that submits a form to target as soon
// as it loads; the browser follows it to target (the module's 403 page or
// DokuWiki's answer). Returns the status the server logged for it.
async function forge(name, target, fields, log) {
  const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`).join('\n');
  const url = stack.writeAttack(`${name}.html`, `<!doctype html>
<html><body><h1>Win a prize</h1>
<form id="f" method="post" action="${target}">
${inputs}
</form>
<script>document.getElementById('f').submit();</script>
</body></html>
`);
  const path = new URL(target).pathname;
  const before = log().length;
  // from a blank tab: the page the user was on may already have the
  // target's address (a login form's), which would look like arrival
  await page.goto('about:blank');
  await page.goto(url, { wait: false });
  await page.waitForUrl(`the forged form of ${name} arrives at ${target}`, (u) => u.startsWith(target));
  let got;
  await untilHere(`the server logged the forged POST ${path}`, () => {
    got = log().slice(before).split('\n').find((l) => l.includes(`POST ${path} `) || l.includes(`POST ${path}?`));
    return got;
  });
  return got;
}

const NOTE = 'Notes written in the browser through the module.';
const FORGED = 'FORGED by evil.test';

test(`${BROWSER}: log in, edit (lock refresh, draft save, preview), save, quick search, log out: nothing rejected`, async (t) => {
  const from = stack.accessLog().length;
  const sent = [];
  page.p.on('request', (q) => {
    if (['GET', 'HEAD'].includes(q.method())) return;
    const h = q.headers();
    const u = new URL(q.url());
    sent.push({ what: `${q.method()} ${u.pathname}`, origin: h.origin, fetchSite: h['sec-fetch-site'] });
  });
  await login(stack.url);
  assert.equal(await page.evaluate(() => window.isSecureContext), false, 'by name over plain HTTP: no secure context');
  assert.ok(await page.count('#dw__login') === 0, 'the login form is gone');

  // a new page, opened for editing: DokuWiki locks it
  await page.goto(`${stack.url}/doku.php?id=notes&do=edit`);
  assert.equal(await page.count('form#dw__editform textarea#wiki__text'), 1, 'the editor');
  assert.ok(await page.count('form#dw__editform input[type=hidden][name^="csrf_"]') >= 1,
    'the module put its token into the editor\'s form');
  assert.equal(await page.count('meta[name="csrf-token"]'), 1, 'and its meta tag into the page');
  // DokuWiki refreshes the lock and saves a draft (POST lib/exe/ajax.php,
  // call=lock) on a key press at least 30 s after the last: the test
  // moves the editor's clock back instead of waiting
  await page.evaluate(() => {
    window.dw_locktimer.lasttime = new Date(0);
  });
  // the text, its first character typed as a key (Firefox types slowly
  // over WebDriver BiDi: the rest is put in place at once)
  await page.evaluate((rest) => {
    const ta = document.querySelector('#wiki__text');
    ta.value = rest;
    ta.focus();
    ta.setSelectionRange(0, 0);
  }, `===== Notes ======\n\n${NOTE}\n`);
  await page.p.type('#wiki__text', '=');
  await until('the editor\'s lock refresh saved a draft', () => /\S/.test(document.querySelector('#draft__status')?.textContent || ''));

  // preview (a POST of the editor's form), then save
  await page.clickAndWait('#edbtn__preview');
  assert.match(await page.text('div.preview'), new RegExp(NOTE), 'the preview shows the text');
  // the preview page scrolls itself to the preview (scroll__here: a 500 ms
  // jQuery animation, begun at times half a second after the load event on
  // a loaded machine); a click meanwhile lands where the save button was
  await until('the preview page has scrolled to the preview', () => window.scrollY > 0 && window.jQuery && jQuery(':animated').length === 0);
  await page.clickAndWait('#edbtn__save');
  assert.ok(page.url().startsWith(`${stack.url}/doku.php?id=notes`), `after the save: ${page.url()}`);
  assert.match(await page.text('#dokuwiki__content'), new RegExp(NOTE), 'the saved page shows the text');
  assert.equal(stack.page('notes'), `====== Notes ======\n\n${NOTE}\n`, 'DokuWiki stored the text as typed');

  // the quick search (POST lib/exe/ajax.php, call=qsearch) finds the page
  // once the indexer has run (the task runner the saved page calls)
  await untilHere('DokuWiki\'s task runner indexed the saved page', () =>
    entries(stack.accessLog(), from).some((e) => e.what === 'GET /lib/exe/taskrunner.php?id=notes' && e.status === 200));
  await page.fill('#qsearch__in', 'notes');
  await until('the quick search lists the page', () =>
    [...document.querySelectorAll('#qsearch__out a')].some((a) => /notes/.test(a.textContent)));

  // log out: DokuWiki's link (a GET with its sectok)
  await page.clickAndWait('li.logout a, a.action.logout');
  assert.equal(await loggedIn(), false, 'logged out');
  assert.ok(await page.count('li.login a, a.action.login') >= 1, 'the login link is back');

  const seen = entries(stack.accessLog(), from).filter((e) => e.result !== 'safe_method');
  const summary = new Map();
  for (const e of seen) {
    const k = `${e.what} -> ${e.status} ${e.result}`;
    summary.set(k, (summary.get(k) || 0) + 1);
  }
  for (const [k, n] of summary) t.diagnostic(`${n} x ${k}`);
  for (const q of sent) t.diagnostic(`sent: ${q.what}: Origin ${q.origin ?? '(none)'}, Sec-Fetch-Site ${q.fetchSite ?? '(none)'}`);
  assert.deepEqual(seen.filter((e) => e.status >= 400 || !['origin_verified', 'token_valid'].includes(e.result))
    .map((e) => `${e.what} ${e.status} ${e.result}`), [], 'every unsafe request of the session passed');
  // the login form (do=login in its body), the preview (200) and the save
  // (302) of the editor's form, the lock refresh and the quick search
  for (const w of ['POST /doku.php?id=start 302', 'POST /doku.php?id=notes&do=edit 200',
    'POST /doku.php?id=notes&do=edit 302'])
    assert.ok(seen.some((e) => `${e.what} ${e.status}` === w), `the session sent ${w}`);
  assert.ok(seen.filter((e) => e.what === 'POST /lib/exe/ajax.php').length >= 2, 'the lock refresh and the quick search');
  assert.doesNotMatch(stack.errorLog(), /csrf: (rejected|would reject)/, 'the module rejected nothing');
  // no fetch metadata by name over plain HTTP: the Origin decided
  for (const q of sent) assert.equal(q.fetchSite, undefined, `${q.what}: no Sec-Fetch-Site`);
});

test(`${BROWSER}: forged cross-site requests are refused by the module, the wiki unchanged`, async () => {
  await login(stack.url);
  const before = stack.page('notes');
  const doku = `${stack.url}/doku.php`;
  const ajax = `${stack.url}/lib/exe/ajax.php`;

  let line = await forge('save', doku, { id: 'notes', do: 'save', wikitext: FORGED, summary: 'x', prefix: '', suffix: '' },
    stack.accessLog);
  assert.match(line, /" 403 \d+ origin_mismatch$/, 'the forged save: 403 origin_mismatch');
  await until('the module\'s page, not DokuWiki\'s', () => /came from a page at another address/.test(document.body?.innerText || '') &&
    !document.querySelector('#dokuwiki__site'));
  assert.equal(stack.page('notes'), before, 'the page is unchanged');

  line = await forge('lock', ajax, { call: 'lock', id: 'start', prefix: '', wikitext: FORGED, suffix: '', date: '0' },
    stack.accessLog);
  assert.match(line, /" 403 \d+ origin_mismatch$/, 'the forged lock and draft: 403 origin_mismatch');
  assert.equal(fs.existsSync(stack.lockFile('start')), false, 'no lock in the user\'s name');

  line = await forge('logout', doku, { id: 'start', do: 'logout' }, stack.accessLog);
  assert.match(line, /" 403 \d+ origin_mismatch$/, 'the forged logout: 403 origin_mismatch');
  await page.goto(`${stack.url}/doku.php?id=start`);
  assert.equal(await loggedIn(), true, 'still logged in');

  // login CSRF: the attacker's form logs the user into the attacker's
  // account (DokuWiki's login checks no security token)
  line = await forge('login', `${stack.url}/doku.php?id=start`,
    { id: 'start', do: 'login', u: stack.attacker, p: stack.attackerPassword }, stack.accessLog);
  assert.match(line, /" 403 \d+ origin_mismatch$/, 'the forged login: 403 origin_mismatch');
  await page.goto(`${stack.url}/doku.php?id=start`);
  assert.match(await page.text('#dokuwiki__usertools'), /Alice/, 'still Alice');
  assert.doesNotMatch(await page.text('#dokuwiki__usertools'), /Mallory/);

  const log = stack.errorLog();
  for (const p of ['/doku.php', '/lib/exe/ajax.php'])
    assert.match(log, new RegExp(`csrf: rejected POST "${p.replace(/\./g, '\\.')}": origin_mismatch, client: 127\\.0\\.0\\.1`));
});

test(`${BROWSER}: without the module the forged lock-and-draft call works; the forged save meets DokuWiki's sectok`, async () => {
  // the control: the same wiki (same files, same sessions) through a
  // virtual host without the module; DokuWiki's login is per port
  // (securecookie), so the user logs in there too
  await login(stack.controlUrl);
  const before = stack.page('notes');
  const line = await forge('lock-control', `${stack.controlUrl}/lib/exe/ajax.php`,
    { call: 'lock', id: 'start', prefix: '', wikitext: FORGED, suffix: '', date: '0' }, stack.controlLog);
  assert.match(line, /^POST \/lib\/exe\/ajax\.php 200$/, 'DokuWiki answered the forged call');
  assert.equal(fs.readFileSync(stack.lockFile('start'), 'utf8'), stack.user, 'the page is locked in the user\'s name');
  await until('DokuWiki says it locked the page and saved the attacker\'s draft',
    () => /"lock":"1"/.test(document.body?.innerText || '') && /"draft":"[^"]+"/.test(document.body?.innerText || ''));

  const save = await forge('save-control', `${stack.controlUrl}/doku.php`,
    { id: 'notes', do: 'save', wikitext: FORGED, summary: 'x', prefix: '', suffix: '' }, stack.controlLog);
  assert.match(save, /^POST \/doku\.php 200$/, 'DokuWiki ran for the forged save');
  assert.equal(stack.page('notes'), before, 'and its sectok kept the page unchanged');
  await until('DokuWiki\'s own message', () => /Security Token did not match/.test(document.body?.innerText || ''));

  // login CSRF works there: logged out, the user meets the attacker's
  // page and is signed into the attacker's account
  await page.goto(`${stack.controlUrl}/doku.php?id=start`);
  await page.clickAndWait('li.logout a, a.action.logout');
  assert.equal(await loggedIn(), false, 'logged out of the control');
  const forgedLogin = await forge('login-control', `${stack.controlUrl}/doku.php?id=start`,
    { id: 'start', do: 'login', u: stack.attacker, p: stack.attackerPassword }, stack.controlLog);
  assert.match(forgedLogin, /^POST \/doku\.php 302$/, 'DokuWiki logged the forged login in');
  await page.goto(`${stack.controlUrl}/doku.php?id=start`);
  assert.match(await page.text('#dokuwiki__usertools'), /Mallory/, 'the user is now in the attacker\'s account');
});
