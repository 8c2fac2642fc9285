// SPDX-License-Identifier: BSD-2-Clause
// phpmyadmin.browsers.test.mjs - a phpMyAdmin session in Chromium and
// Firefox ESR (tests/e2e/browser.mjs, puppeteer-core: CDP and WebDriver
// BiDi) behind the README's server block with csrf_referrer_same_origin
// on, in two origin modes (E2E_MODE):
//
//   named   http://pma.test:PORT (ctest nginx.phpmyadmin.session.named.*):
//           no secure context, no Sec-Fetch-Site; every form POST passes
//           on the site's Origin
//   https   https://pma.test:PORT (ctest nginx.phpmyadmin.session.https.*):
//           the README's `listen 80;` becomes `listen ... ssl http2` with
//           the certificate of the test CA (tests/e2e/tls.mjs), which the
//           browser's profile trusts; a secure context, every request
//           HTTP/2, Sec-Fetch-Site same-origin. phpMyAdmin names its
//           session cookie phpMyAdmin_https there, and the README's
//           `csrf_session_cookie phpMyAdmin phpMyAdmin_https` binds the
//           module's tokens to it: the page's token with another
//           phpMyAdmin_https value is 403 token_session.
//
// phpmyadmin.test.mjs runs the whole session with its AJAX features on
// Playwright, which drives no Debian Firefox; this file runs the steps the
// referrer policy decides in both browsers: the login form, the
// navigation panel's script POSTs, the Settings form (fetched as JSON by
// phpMyAdmin's page loader: no injected token) and the logout (a form its
// script builds: no token). With phpMyAdmin's no-referrer policy they
// would say Origin: null and, but for the login, get 403 token_missing by
// name; raised to same-origin, the browser sends the site's Origin, and
// every unsafe request passes as origin_verified. Then a forged form from
// another site (http(s)://evil.test:PORT, a server of the same nginx) is
// refused: on its Origin by name (origin_mismatch), on Sec-Fetch-Site over
// https (cross_site).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { launch, step, BROWSER, MODE } from '../e2e/browser.mjs';
import { makeCA } from '../e2e/tls.mjs';
import { startStack, DB_USER, DB_NAME } from './pma_stack.mjs';

if (!['named', 'https'].includes(MODE)) throw new Error('phpmyadmin.browsers.test.mjs runs by name or over https (E2E_MODE)');
const HTTPS = MODE === 'https';
const TITLE = HTTPS ? 'over https (HTTP/2)' : 'by name';
// what the module answers the forged cross-site form
const FORGED = HTTPS ? 'cross_site' : 'origin_mismatch';

let stack;
let browser;
let tls = null;

// One line of the README's log format:
//   $remote_addr "$request" $status csrf=$csrf_result
const LINE = /^\S+ "(\S+) (\S+) ([^"]*)" (\d{3}) csrf=(\S+)$/;

// A request without its query's values (phpMyAdmin puts its token in
// URLs; no token goes into the test's output).
function what(method, uri) {
  const u = new URL(uri, 'http://x');
  const route = u.searchParams.get('route');
  return `${method} ${u.pathname}${route ? `?route=${route}` : ''}`;
}

async function entries(from) {
  return (await stack.nginxAccessLog()).slice(from).split('\n').filter(Boolean).map((l) => {
    const m = LINE.exec(l);
    assert.ok(m, 'an access log line in the README\'s format');
    return { what: what(m[1], m[2]), uri: m[2], protocol: m[3], status: Number(m[4]), result: m[5] };
  });
}

before(async () => {
  if (HTTPS) tls = makeCA(['pma.test', 'evil.test']);
  // the stack (MariaDB's first start takes seconds) while the browser starts
  // (both settled, so that after() stops whichever did start)
  const [s, b] = await Promise.allSettled([startStack({ host: 'pma.test', tls, attacker: 'evil.test' }),
    launch(BROWSER, { mode: MODE, ca: tls && tls.ca })]);
  stack = s.value;
  browser = b.value;
  for (const r of [s, b]) if (r.status === 'rejected') throw r.reason;
});

after(async () => {
  if (browser) await browser.close();
  if (stack) {
    const log = stack.nginxErrorLog();
    const ended = await stack.stop();
    assert.doesNotMatch(log, /exited on signal|core dumped/, 'no nginx worker crashed');
    assert.deepEqual(ended, [], 'every server of the stack stopped cleanly');
  }
  if (tls) tls.remove();
});

// Waits until fn (run in the page) is true.
async function until(page, name, fn, ...args) {
  await step(name, async ({ signal }) => {
    while (!signal.aborted) {
      if (await page.p.evaluate(fn, ...args).catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, { page });
}

// Clicks the first element matching sel whose text is text (phpMyAdmin's
// links carry no ids; null: any text), in the page, until an element
// matching doneSel (with the text doneText, unless null) is there:
// phpMyAdmin's page loader ignores a click while one of its requests is
// still running, and a person would click again (after two seconds, not
// while a click of this document may still be leading somewhere).
async function clickUntil(page, sel, text, doneSel, doneText = null) {
  await page.p.bringToFront();
  await until(page, `click ${sel} "${text ?? ''}" on ${page.url()} until ${doneSel} is there`, (s, t, ds, dt) => {
    const find = (q, w) => [...document.querySelectorAll(q)].find((x) => w === null || x.textContent.trim() === w);
    if (find(ds, dt)) return true;
    const e = find(s, t);
    if (e && !window.AJAX?.active && !(Date.now() - (window.e2eClickedAt || 0) < 2000)) {
      window.e2eClickedAt = Date.now();
      e.click();
    }
    return false;
  }, sel, text, doneSel, doneText);
}

// What the logged-in page holds, for the later tests and never printed:
// phpMyAdmin's token (the forger is assumed to have it: the module is
// what stops the forgery), the module's field name and token, the
// cookies.
const held = {};

async function login(page) {
  await page.fill('#input_username', DB_USER);
  await page.fill('#input_password', stack.password);
  await page.clickAndWait('#input_go');
  await until(page, 'the logged-in page with phpMyAdmin\'s token', () => !!window.CommonParams?.get('token'));
  held.pmaToken = await page.evaluate(() => window.CommonParams.get('token'));
  held.param = await page.attr('meta[name="csrf-param"]', 'content');
  held.token = await page.attr('meta[name="csrf-token"]', 'content');
  held.cookies = await browser.cookies(stack.url);
}

// The session: the login form, the navigation panel, the Settings form,
// the logout.
async function session(page) {
  const res = await page.goto(`${stack.url}/`);
  assert.equal(res.headers['referrer-policy'], 'same-origin', 'the Referrer-Policy header was raised');
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('meta[name="referrer"]')].map((m) => m.content)),
    ['no-referrer', 'same-origin'], 'phpMyAdmin\'s no-referrer meta, then the raise');
  assert.equal(await page.evaluate(() => window.isSecureContext), HTTPS,
    HTTPS ? 'over https with the test CA: a secure context' : 'by name over plain HTTP: no secure context');

  // the login form
  await login(page);
  // the navigation panel: expanding the database is a POST of its script
  await clickUntil(page, '#pma_navigation_tree a.hover_show_full', 'shop', '#server-breadcrumb a[data-raw-text="shop"]');

  // the Settings form, loaded through phpMyAdmin's AJAX page loader
  await clickUntil(page, '#pma_navigation_header a[title="Home"]', null, 'a', 'More settings');
  await clickUntil(page, 'a', 'More settings', 'a[href$="route=/preferences/features"]');
  await clickUntil(page, 'a[href$="route=/preferences/features"]', null, 'form.config-form #DisableShortcutKeys');
  // the page loader done with the form and its scripts, as a person waits
  // for the page to settle before saving: a click meanwhile went nowhere
  // in Firefox under load (no POST; the button moved under the pointer as
  // the form's images and scripts arrived)
  await until(page, 'phpMyAdmin\'s page loader idle', () => !window.AJAX?.active && document.readyState === 'complete' &&
    [...document.images].every((i) => i.complete));
  assert.equal(await page.evaluate(() => document.querySelector('form.config-form #DisableShortcutKeys').checked), false);
  await page.p.evaluate(() => document.querySelector('form.config-form #DisableShortcutKeys').click());
  // The button is pressed as the page's own script would (a DOM click: the
  // same form submission, its submitter included, the same request): a
  // pointer click went nowhere in Firefox now and then even on a settled
  // page (no POST reached nginx), where phpMyAdmin's notices come and go
  // above the form.
  const saved = page.p.waitForNavigation({ waitUntil: 'load', timeout: 20000 });
  await page.p.evaluate(() => document.querySelector('#General input[name=submit_save]').click());
  await saved;
  await until(page, 'the preference saved', () => /saved=1/.test(location.href) &&
    document.querySelector('form.config-form #DisableShortcutKeys')?.checked === true);

  // the logout: its script builds a form and submits it; then the login
  // form (polled with evaluate, which reaches whatever document is
  // current: a waitForSelector begun as the document changed missed it
  // in Firefox, and a click while the page loader was busy went unheard)
  await clickUntil(page, '#pma_navigation_header a.logout', null, '#input_username');
}

test(`${BROWSER} ${TITLE}: phpMyAdmin's form POSTs carry the site's Origin and pass`, async (t) => {
  const from = (await stack.nginxAccessLog()).length;
  const sentFrom = (await stack.sentLog()).length;
  const page = await browser.newPage();
  // what the browser reported of each unsafe request: the Origin (no
  // cookie or token values)
  const sent = [];
  page.p.on('request', (q) => {
    if (['GET', 'HEAD'].includes(q.method())) return;
    const h = q.headers();
    sent.push({ what: what(q.method(), q.url()), origin: h.origin });
  });

  try {
    await session(page);
  } catch (e) {
    // a step that waited in vain: what the module said, and the statuses
    // so far (no query values, no token)
    const why = stack.nginxErrorLog().split('\n').filter((l) => /csrf: rejected/.test(l)).map((l) => l.replace(/^.*csrf: /, ''));
    const got = (await entries(from)).map((x) => `${x.what} ${x.status} ${x.result}`);
    e.message += `\nthe module: ${JSON.stringify(why)}; nginx: ${JSON.stringify(got)}`;
    throw e;
  }
  await page.close();

  const seen = (await entries(from)).filter((e) => e.result !== 'safe_method');
  const summary = new Map();
  for (const e of seen) summary.set(`${e.what} -> ${e.status} ${e.result}`, (summary.get(`${e.what} -> ${e.status} ${e.result}`) || 0) + 1);
  for (const [k, n] of summary) t.diagnostic(`${n} x ${k}`);

  assert.deepEqual(seen.filter((e) => e.result !== 'origin_verified').map((e) => `${e.what} ${e.status} ${e.result}`), [],
    'every unsafe request passed on its Origin (or Sec-Fetch-Site)');
  for (const w of ['POST /index.php?route=/', 'POST /index.php?route=/navigation',
    'POST /index.php?route=/preferences/features', 'POST /index.php?route=/logout'])
    assert.ok(seen.some((e) => e.what === w), `the session sent ${w}`);
  assert.doesNotMatch(stack.nginxErrorLog(), /csrf: (rejected|would reject)/, 'the module rejected nothing');
  // as the browser reported its requests: the site's Origin, never null
  for (const w of ['POST /index.php?route=/', 'POST /index.php?route=/preferences/features',
    'POST /index.php?route=/logout']) {
    const q = sent.find((s) => s.what === w);
    assert.ok(q, `the browser reported ${w}`);
    assert.equal(q.origin, stack.url, `${w}: Origin`);
  }
  // as nginx received them (the browser's own report leaves out the
  // Sec-Fetch-* Chromium's network stack adds): every unsafe request with
  // the site's Origin, Sec-Fetch-Site same-origin over https, none by name
  const got = (await stack.sentLog()).slice(sentFrom).split('\n').filter(Boolean).map((l) => l.split(' '))
    .filter(([m]) => m === 'POST').map(([, p, route, origin, site]) => [`POST ${p}?route=${route}`, origin, site]);
  assert.ok(got.length >= 4, 'nginx logged the session\'s POSTs');
  assert.deepEqual(got.filter(([, origin, site]) => origin !== `"${stack.url}"` || site !== (HTTPS ? '"same-origin"' : '"-"')), [],
    `every POST: Origin ${stack.url}, Sec-Fetch-Site ${HTTPS ? 'same-origin' : '(none)'}`);
  // every request of the session in nginx's log: HTTP/2 over https
  assert.deepEqual([...new Set((await entries(from)).map((e) => e.protocol))], [HTTPS ? 'HTTP/2.0' : 'HTTP/1.1'], 'the protocol');
  // after the login: phpMyAdmin's session cookie under the scheme's name,
  // the module's secret cookie (names and flags only)
  const names = held.cookies.map((c) => [c.name, !!c.secure]).sort();
  t.diagnostic(`cookies after the login: ${names.map(([n, sec]) => `${n}${sec ? ' (Secure)' : ''}`).join(', ')}`);
  const pma = HTTPS ? 'phpMyAdmin_https' : 'phpMyAdmin';
  assert.ok(names.some(([n, sec]) => n === pma && sec === HTTPS), `phpMyAdmin's session cookie: ${pma}`);
  assert.ok(!names.some(([n]) => n === (HTTPS ? 'phpMyAdmin' : 'phpMyAdmin_https')), 'not the other scheme\'s');
  const secret = HTTPS ? '__Host-csrf_secret' : 'csrf_secret';
  assert.ok(names.some(([n, sec]) => n === secret && sec === HTTPS), `the module's secret cookie: ${secret}`);
  // the module saw the session cookie it binds to: no warning
  assert.doesNotMatch(stack.nginxErrorLog(), /csrf_session_cookie/, 'no warning of an unseen session cookie');
});

function rows() {
  return stack.query(`SELECT id, name FROM ${DB_NAME}.items ORDER BY id`).map(([id, name]) => `${id}:${name}`);
}

// phpMyAdmin's import of an INSERT, as its SQL tab sends it.
const fields = (id) => new URLSearchParams({ db: DB_NAME, table: 'items', server: '1', token: held.pmaToken,
  sql_query: `INSERT INTO items VALUES (${id}, 'forged')` });

// The access log's entries of the request marked forged=MARK (every
// request answered so far is in the log: pma_stack's barrier).
const marked = async (from, mark) => (await entries(from)).filter((e) => e.uri.includes(`forged=${mark}`));

test(`${BROWSER} ${TITLE}: a forged form from another site is refused and changes nothing`, async (t) => {
  // signed in afresh (the session test logged out, or failed signed in)
  await browser.clearCookies();
  const page = await browser.newPage();
  await page.goto(`${stack.url}/`);
  await login(page);
  const before = rows();
  const from = (await stack.nginxAccessLog()).length;
  const fpmFrom = stack.fpmAccessLog().length;
  const target = `${stack.url}/index.php?route=/import&forged=cross1`;
  fs.writeFileSync(path.join(stack.attackDir, 'forge.html'), `<!doctype html><body>
<form id="f" method="POST" action="${target}">
${[...fields(101)].map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/"/g, '&quot;')}">`).join('\n')}
</form><script>document.getElementById('f').submit();</script></body>`, { mode: 0o644 });
  const tab = await browser.newPage();
  await tab.goto(`${stack.attackerUrl}/forge.html`, { wait: false });
  await step('the forged form\'s request in nginx\'s log', async ({ signal }) => {
    while (!signal.aborted && !(await marked(from, 'cross1')).length) await new Promise((r) => setTimeout(r, 100));
  });
  await tab.waitForUrl('the forged form\'s answer', (u) => u.startsWith(stack.url));
  await tab.close();
  assert.deepEqual((await marked(from, 'cross1')).map((e) => [e.status, e.result]), [[403, FORGED]],
    `refused as ${FORGED} (${HTTPS ? 'Sec-Fetch-Site' : 'its Origin'})`);
  assert.deepEqual(rows(), before, 'the forged form changed nothing');
  assert.doesNotMatch(stack.fpmAccessLog().slice(fpmFrom), /forged=/, 'it never reached php-fpm');
  assert.match(stack.nginxErrorLog(), new RegExp(`csrf: rejected POST "/index\\.php": ${FORGED}`));
  t.diagnostic(`forged cross-site form: 403 ${FORGED}`);
  await page.close();
});

// node resolves the test's names as the browsers do
function lookup(host, opts, cb) {
  if (!host.endsWith('.test')) return dns.lookup(host, opts, cb);
  if (opts && opts.all) return cb(null, [{ address: '127.0.0.1', family: 4 }]);
  return cb(null, '127.0.0.1', 4);
}

// A request no browser would send (no Origin, no Sec-Fetch-*, no
// Referer: the token decides), over https with the test CA; its status.
function bareRequest(url, cookies, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      ca: fs.readFileSync(tls.ca),
      lookup,
      method: 'POST',
      headers: {
        Cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '),
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': Buffer.byteLength(body),
      },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test(`${BROWSER} over https: the module's tokens are bound to phpMyAdmin_https`, { skip: !HTTPS }, async (t) => {
  // held: the previous test's login, its page's token and cookies
  assert.ok(held.param && held.token, 'the page had the module\'s meta tags');
  const before = rows();
  const from = (await stack.nginxAccessLog()).length;
  const body = (id) => `${fields(id)}&${held.param}=${encodeURIComponent(held.token)}`;
  // the same token and secret cookie, another session's phpMyAdmin_https
  const other = held.cookies.map((c) => (c.name === 'phpMyAdmin_https' ? { name: c.name, value: `${c.value}0` } : c));
  assert.equal(await bareRequest(`${stack.url}/index.php?route=/import&forged=bound102`, other, body(102)), 403,
    'the token with another phpMyAdmin_https: 403');
  assert.deepEqual((await marked(from, 'bound102')).map((e) => e.result), ['token_session'], 'token_session');
  // the control: the browser's own cookies with the token pass and run
  assert.equal(await bareRequest(`${stack.url}/index.php?route=/import&forged=bound103`, held.cookies, body(103)), 200);
  assert.deepEqual((await marked(from, 'bound103')).map((e) => e.result), ['ok'], 'no evidence, the bound token: ok');
  assert.deepEqual(rows(), [...before, '103:forged'], 'only the request with its own session ran');
  t.diagnostic('the token with another phpMyAdmin_https: 403 token_session; with its own: ok');
});
