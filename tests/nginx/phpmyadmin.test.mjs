// SPDX-License-Identifier: BSD-2-Clause
// phpmyadmin.test.mjs - an unchanged PHP application behind the module as
// nginx/README.md configures it: phpMyAdmin from Debian's archive, php-fpm
// and MariaDB started by pma_stack.mjs, driven in headless Chromium.
//
// 1. A logged-in session through phpMyAdmin's AJAX features (login,
//    navigation panel, open a table, inline edit, SQL tab, a preference,
//    logout) meets no 403: the module's default mode, origin_or_token,
//    takes the browser's own same-origin evidence for its scripts' POSTs.
// 2. Forged requests fail and change nothing: a page on another loopback
//    origin that submits a form to phpMyAdmin's SQL endpoint, and a request
//    with the session's cookies but no Origin, no Sec-Fetch-Site and no
//    token. Both carry phpMyAdmin's own token (as if it had leaked: the
//    application puts it into URLs), so without the module they would run;
//    the same form through a server without the module shows that it does.
//    The same evidence-less request with the injected token passes.
//
// E2E_MODE=named (ctest nginx.phpmyadmin.named): phpMyAdmin reached as
// http://pma.test:PORT, the way a LAN or an intranet reaches it; the
// attacker's page on http://evil.pma.test:PORT (the same site). No
// Sec-Fetch-* comes (the page is no secure context). phpMyAdmin's
// Referrer-Policy: no-referrer (header and meta) would make the browser
// send Origin: null with its form POSTs, and the Settings form (fetched
// as JSON, never injected) and the logout (a form its script builds)
// would carry no token either: 403 token_missing. The README's block
// turns csrf_referrer_same_origin on, which raises the policy to
// same-origin, so every form POST of the session carries the site's own
// Origin and passes on it (origin_verified); the forged form is refused
// on its Origin (origin_mismatch).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import { launchBrowser } from '../e2e/playwright.mjs';
import { freePort } from './net.mjs';
import { startStack, DB_USER, DB_NAME } from './pma_stack.mjs';

const named = process.env.E2E_MODE === 'named';
if (!['loopback', 'named', undefined].includes(process.env.E2E_MODE)) throw new Error('loopback or named');
// the answer the forged form gets: Sec-Fetch-Site on loopback, Origin by name
const FORGED = named ? 'origin_mismatch' : 'same_site';

// node resolves the test's names as the browser does (named mode)
function lookup(host, opts, cb) {
  if (!host.endsWith('.test')) return dns.lookup(host, opts, cb);
  if (opts && opts.all) return cb(null, [{ address: '127.0.0.1', family: 4 }]);
  return cb(null, '127.0.0.1', 4);
}

let stack;
let browser;
let attacker;
const attackPages = new Map();

// One line of the README's log format:
//   $remote_addr "$request" $status csrf=$csrf_result
const LINE = /^\S+ "(\S+) (\S+) [^"]*" (\d{3}) csrf=(\S+)$/;

// The access log's entries after `from` (a length of the log read earlier).
function entries(log, from = 0) {
  return log
    .slice(from)
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = LINE.exec(l);
      assert.ok(m, `an access log line in the README's format: ${l.replace(/token=[^& "]*/g, 'token=…')}`);
      return { method: m[1], uri: m[2], status: Number(m[3]), result: m[4] };
    });
}

// What a request was, without its query's values (phpMyAdmin puts its
// token in URLs; no token goes into the test's output).
function what(e) {
  const u = new URL(e.uri, 'http://x');
  const route = u.searchParams.get('route');
  return `${e.method} ${u.pathname}${route ? `?route=${route}` : ''}`;
}

function rows() {
  return stack.query(`SELECT id, name FROM ${DB_NAME}.items ORDER BY id`).map(([id, name]) => `${id}:${name}`);
}

// A request no browser would send: no Origin, no Sec-Fetch-*, no Referer.
function bareRequest(url, { cookie, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      lookup,
      method: 'POST',
      headers: {
        Cookie: cookie,
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': Buffer.byteLength(body),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function cookieHeader(url) {
  return (await browser.context.cookies(url)).map((c) => `${c.name}=${c.value}`).join('; ');
}

async function login(page) {
  const res = await page.goto(`${stack.url}/`);
  // phpMyAdmin's no-referrer policy, raised by csrf_referrer_same_origin
  // (the README's block): the header says same-origin, and a meta saying
  // same-origin follows the application's own no-referrer meta
  assert.equal(res.headers()['referrer-policy'], 'same-origin', 'the Referrer-Policy header was raised');
  const metas = await page.evaluate(() =>
    [...document.querySelectorAll('meta[name="referrer"]')].map((m) => m.content));
  assert.deepEqual(metas, ['no-referrer', 'same-origin'], 'phpMyAdmin\'s no-referrer meta, then the raise');
  if (named)
    assert.equal(await page.evaluate(() => window.isSecureContext), false, 'by name over plain HTTP: no secure context');
  await page.fill('#input_username', DB_USER);
  await page.fill('#input_password', stack.password);
  await Promise.all([page.waitForURL(/route=%2F|route=\/|index\.php$/), page.click('#input_go')]);
  await page.waitForSelector('#pma_navigation_tree a.hover_show_full:text-is("shop")');
}

before(async () => {
  stack = await startStack({ host: named ? 'pma.test' : '127.0.0.1' });
  browser = await launchBrowser({ named });
  const port = await freePort();
  attacker = http.createServer((req, res) => {
    const html = attackPages.get(req.url);
    res.writeHead(html ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html || 'not found');
  });
  await new Promise((r) => attacker.listen(port, '127.0.0.1', r));
  attacker.url = `http://${named ? 'evil.pma.test' : '127.0.0.1'}:${port}`;
});

after(async () => {
  if (browser) await browser.close();
  if (attacker) await new Promise((r) => attacker.close(r));
  if (stack) {
    const log = stack.nginxErrorLog();
    const ended = await stack.stop();
    assert.doesNotMatch(log, /exited on signal|core dumped/, 'no nginx worker crashed');
    assert.deepEqual(ended, [], 'every server of the stack stopped cleanly');
  }
});

// phpMyAdmin's page loader (its ajax.js) silently drops a link clicked
// while one of its requests, or the scripts of the page it last loaded,
// are still on their way (AJAX.active): the click went nowhere now and then
// under load. A person clicks once the page has settled; so does the test,
// before each click the loader handles. The navigation tree loads its
// nodes by requests of its own (jQuery's, not the loader's): a click on
// the tree while they run can land on a node they are replacing (a CI run
// failed so, waiting for the table after clicking it in the tree), so a
// settled page also has no jQuery request in flight. Nor a jQuery
// animation (jQuery.timers): the loader scrolls the page to the top after
// every click, the tree slides a node open and scrolls itself to it, and
// Playwright's click is the pointer at the point where the element was a
// moment before. Under load the page moved in between: the Settings
// checkbox's click hit its wrapper's edge 14 px above the box's centre
// ("Clicking the checkbox did not change its state", 3 animations
// running); the tree's table was clicked with 3 running too, the tree's
// "New" (another page: no breadcrumb of the table, the wait that timed
// out) 23 px above it. So the clicks wait for a settled page.
async function settled(page) {
  await page.waitForFunction(() => window.AJAX && !window.AJAX.active && document.readyState === 'complete' &&
    (!window.jQuery || (window.jQuery.active === 0 && window.jQuery.timers.length === 0)));
}

// The session: every step waits for what the user would see.
let step = '';
async function session(page) {
  step = 'login';
  await login(page);

  step = 'navigation panel';
  // navigation panel: expand the database (a POST of the panel's script),
  // then open the table from it
  await settled(page);
  await page.click('#pma_navigation_tree a.hover_show_full:text-is("shop")');
  await page.waitForSelector('#server-breadcrumb a[data-raw-text="shop"]');
  await settled(page);
  await page.click('#pma_navigation_tree a.hover_show_full:text-is("items")');
  await page.waitForSelector('#server-breadcrumb a[data-raw-text="items"]');
  await page.waitForSelector('td.data.grid_edit:has-text("pear")');

  // inline edit of a cell: double-click, type, Enter (an AJAX POST); the
  // grid's script adds its (hidden) editor when it is ready for clicks
  step = 'inline edit';
  await page.waitForSelector('.cEdit', { state: 'attached' });
  await settled(page);
  await page.dblclick('td.data.grid_edit:has-text("pear")');
  const box = page.locator('.cEdit textarea.edit_box');
  await box.fill('quince');
  const saved = page.waitForResponse((r) => r.url().includes('route=/table/replace'));
  await box.press('Enter');
  assert.equal((await saved).status(), 200, 'the inline edit was answered');
  await page.waitForSelector('td.data.grid_edit:has-text("quince")');
  assert.deepEqual(rows(), ['1:apple', '2:quince'], 'the inline edit reached the database');

  step = 'SQL tab';
  // SQL tab: a query through the editor (an AJAX POST to the import route)
  await settled(page);
  await page.click('#topmenu a:has-text("SQL")');
  await page.waitForSelector('#sqlqueryform .CodeMirror');
  await page.evaluate(() =>
    document.querySelector('#sqlqueryform .CodeMirror').CodeMirror.setValue("INSERT INTO items VALUES (3, 'plum')"));
  await settled(page);
  await page.click('#button_submit_query');
  await page.waitForSelector('.alert-success:has-text("1 row inserted")');
  assert.deepEqual(rows(), ['1:apple', '2:quince', '3:plum'], 'the SQL tab query ran');

  step = 'preference';
  // a preference: the Settings form (a full-page POST). phpMyAdmin loads
  // this form through its AJAX page loader (JSON, never injected), so it
  // has no token: by name it passes only on the Origin the raised
  // referrer policy lets the browser send
  await settled(page);
  await page.click('#pma_navigation_header a[title="Home"]');
  await page.waitForSelector('a:has-text("More settings")');
  await settled(page);
  await page.click('a:has-text("More settings")');
  await page.waitForSelector('a[href$="route=/preferences/features"]');
  await settled(page);
  await page.click('a[href$="route=/preferences/features"]');
  await page.waitForSelector('form.config-form #DisableShortcutKeys');
  assert.equal(await page.isChecked('form.config-form #DisableShortcutKeys'), false);
  await settled(page);
  await page.check('form.config-form #DisableShortcutKeys');
  await Promise.all([page.waitForURL(/saved=1/), page.click('#General input[name=submit_save]')]);
  await page.waitForSelector('.alert:has-text("Configuration has been saved")');
  assert.equal(await page.isChecked('form.config-form #DisableShortcutKeys'), true, 'the preference was kept');

  step = 'logout';
  // logout (its script builds a form and POSTs it, so no injected field:
  // by name the same as the Settings form), then the session is gone
  await settled(page);
  await page.click('#pma_navigation_header a.logout');
  await page.waitForSelector('#input_username');
  await page.goto(`${stack.url}/index.php?route=/preferences/features`);
  await page.waitForSelector('#input_username');
}

test(`${named ? 'by name: ' : ''}a logged-in phpMyAdmin session with its AJAX features meets no 403`, async (t) => {
  const from = (await stack.nginxAccessLog()).length;
  const page = await browser.context.newPage();
  const refused = [];
  page.on('response', (r) => {
    if (r.status() === 403) refused.push(what({ method: r.request().method(), uri: r.url() }));
  });
  // what the browser sent with each unsafe request (names of headers and
  // the Origin only: no cookie or token values)
  const sent = [];
  page.on('request', (q) => {
    if (q.method() === 'GET' || q.method() === 'HEAD') return;
    sent.push(q.allHeaders().then((h) => ({
      what: what({ method: q.method(), uri: q.url() }),
      navigation: q.isNavigationRequest(),
      origin: h.origin,
      fetchSite: h['sec-fetch-site'],
    })));
  });

  try {
    await session(page);
  } catch (e) {
    // a step that waited in vain: say which requests were refused
    const why = stack.nginxErrorLog().split('\n').filter((l) => /csrf: rejected/.test(l)).map((l) => l.replace(/^.*csrf: /, ''));
    e.message += `\nstep: ${step}; 403 answers so far: ${JSON.stringify(refused)}; the module: ${JSON.stringify(why)}`;
    throw e;
  }
  await page.close();

  const seen = entries(await stack.nginxAccessLog(), from);
  const unsafe = seen.filter((e) => e.result !== 'safe_method');
  const summary = new Map();
  for (const e of unsafe) {
    const k = `${what(e)} -> ${e.status} ${e.result}`;
    summary.set(k, (summary.get(k) || 0) + 1);
  }
  for (const [k, n] of summary) t.diagnostic(`${n} x ${k}`);

  assert.deepEqual(refused, [], 'the browser got no 403');
  assert.deepEqual(seen.filter((e) => e.status === 403).map(what), [], 'nginx answered no 403');
  assert.doesNotMatch(stack.nginxErrorLog(), /csrf: (rejected|would reject)/, 'the module rejected nothing');
  const routes = ['/', '/navigation', '/table/replace', '/import', '/preferences/features', '/logout'];
  for (const route of routes) {
    assert.ok(unsafe.some((e) => new URL(e.uri, 'http://x').searchParams.get('route') === route),
      `the session POSTed to route=${route}`);
  }
  // Every unsafe request of the session was proved same-origin by the
  // browser itself: none of them needed a token. On loopback by
  // Sec-Fetch-Site; by name by the Origin, also on the form POSTs (the
  // login, the Settings form, the logout), which the page's no-referrer
  // policy would have made say null.
  assert.deepEqual(unsafe.filter((e) => e.result !== 'origin_verified').map((e) => `${what(e)} ${e.result}`), [],
    'every unsafe request passed on origin evidence');
  const requests = await Promise.all(sent);
  const forms = requests.filter((q) => q.navigation);
  for (const [w, ok] of [['POST /index.php?route=/', 'the login form'],
    ['POST /index.php?route=/preferences/features', 'the Settings form'],
    ['POST /index.php?route=/logout', 'the logout']])
    assert.ok(forms.some((q) => q.what === w), `${ok} was a form POST (${w})`);
  for (const q of forms) t.diagnostic(`${q.what}: Origin ${q.origin}, Sec-Fetch-Site ${q.fetchSite ?? '(none)'}`);
  if (named) {
    assert.deepEqual(requests.filter((q) => q.fetchSite !== undefined).map((q) => q.what), [],
      'by name over plain HTTP the browser sends no Sec-Fetch-Site');
    assert.deepEqual(requests.filter((q) => q.origin !== stack.url).map((q) => `${q.what} Origin ${q.origin}`), [],
      'every unsafe request carried the site\'s own Origin (the raised referrer policy: never null)');
  } else {
    assert.deepEqual(requests.filter((q) => q.fetchSite !== 'same-origin').map((q) => q.what), [],
      'on loopback every unsafe request says Sec-Fetch-Site: same-origin');
  }
});

test(`${named ? 'by name: ' : ''}forged requests are rejected by the module and change nothing`, async (t) => {
  await browser.context.clearCookies();
  const page = await browser.context.newPage();
  await login(page);
  // phpMyAdmin's own token (the attacker is assumed to have it) and the
  // module's token of this page (only the test's evidence-less control
  // request below uses it)
  const pmaToken = await page.evaluate(() => window.CommonParams.get('token'));
  const param = await page.getAttribute('meta[name="csrf-param"]', 'content');
  const token = await page.getAttribute('meta[name="csrf-token"]', 'content');
  assert.ok(pmaToken && param && token, 'the page has phpMyAdmin\'s token and the module\'s meta tags');
  const sql = (id) => `INSERT INTO items VALUES (${id}, 'forged')`;
  const fields = (id) =>
    new URLSearchParams({ db: DB_NAME, table: 'items', server: '1', token: pmaToken, sql_query: sql(id) });

  const forgePage = (target, id) => `<!doctype html><body>
<form id="f" method="POST" action="${target}/index.php?route=/import&forged=form${id}">
${[...fields(id)].map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/"/g, '&quot;')}">`).join('\n')}
</form><script>document.getElementById('f').submit();</script></body>`;
  const forge = async (target, id) => {
    attackPages.set(`/forge${id}`, forgePage(target, id));
    const tab = await browser.context.newPage();
    const answer = tab.waitForResponse((r) => r.url().includes(`forged=form${id}`));
    await tab.goto(`${attacker.url}/forge${id}`);
    const r = await answer;
    await tab.close();
    return r.status();
  };

  const before = rows();
  const from = (await stack.nginxAccessLog()).length;
  const fpmFrom = stack.fpmAccessLog().length;

  // 1. the auto-submitting form on another loopback origin (same site:
  //    phpMyAdmin's SameSite=Strict cookies go along)
  assert.equal(await forge(stack.url, 66), 403, 'the forged form POST got 403');
  // 2. the session's cookies, no evidence, no token
  const cookie = await cookieHeader(stack.url);
  const bare = await bareRequest(`${stack.url}/index.php?route=/import&forged=bare67`, {
    cookie,
    body: fields(67).toString(),
  });
  assert.equal(bare.status, 403, 'the evidence-less POST without a token got 403');
  assert.deepEqual(rows(), before, 'the forged requests changed nothing');

  const seen = entries(await stack.nginxAccessLog(), from);
  const form = seen.filter((e) => e.uri.includes('forged=form66'));
  const noToken = seen.filter((e) => e.uri.includes('forged=bare67'));
  assert.deepEqual(form.map((e) => [e.status, e.result]), [[403, FORGED]],
    `the form: rejected as ${FORGED} (${named ? 'its Origin' : 'Sec-Fetch-Site'})`);
  assert.deepEqual(noToken.map((e) => [e.status, e.result]), [[403, 'token_missing']],
    'no evidence, no token: token_missing');
  assert.doesNotMatch(stack.fpmAccessLog().slice(fpmFrom), /forged=/, 'no forged request reached php-fpm');
  const errors = stack.nginxErrorLog();
  assert.match(errors, new RegExp(`csrf: rejected POST "/index\\.php": ${FORGED}`));
  assert.match(errors, /csrf: rejected POST "\/index\.php": token_missing/);
  assert.ok(!errors.includes(pmaToken) && !errors.includes(token), 'the error log has no token');
  assert.doesNotMatch(errors, /forged=/, 'the module logs no query string');

  // Controls. The same evidence-less request with the module's token from
  // the page passes and runs ...
  const withToken = await bareRequest(`${stack.url}/index.php?route=/import&forged=token68`, {
    cookie,
    body: `${fields(68)}&${param}=${encodeURIComponent(token)}`,
  });
  const tokenEntry = entries(await stack.nginxAccessLog(), from).filter((e) => e.uri.includes('forged=token68'));
  assert.deepEqual(tokenEntry.map((e) => e.result), ['ok'], 'no evidence, a valid token: ok');
  assert.equal(withToken.status, 200);
  assert.deepEqual(rows(), [...before, '68:forged'], 'the token-carrying request ran');
  // ... and the forged form runs through a server without the module.
  assert.equal(await forge(stack.controlUrl, 69), 200, 'without the module the forged form is answered');
  assert.deepEqual(rows(), [...before, '68:forged', '69:forged'], 'without the module the forged form runs');
  t.diagnostic(`forged form: 403 ${FORGED}; no evidence and no token: 403 token_missing; with the token: ok`);
  await page.close();
});
