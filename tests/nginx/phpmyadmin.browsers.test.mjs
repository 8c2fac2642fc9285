// SPDX-License-Identifier: BSD-2-Clause
// phpmyadmin.browsers.test.mjs - the form POSTs of a phpMyAdmin session in
// Chromium and Firefox ESR (tests/e2e/browser.mjs, puppeteer-core: CDP and
// WebDriver BiDi), by name over plain HTTP (http://pma.test:PORT), behind
// the README's server block with csrf_referrer_same_origin on:
// phpmyadmin.test.mjs runs the whole session with its AJAX features on
// Playwright, which drives no Debian Firefox; this file runs the steps the
// referrer policy decides in both browsers: the login form, the
// navigation panel's script POSTs, the Settings form (fetched as JSON by
// phpMyAdmin's page loader: no injected token) and the logout (a form its
// script builds: no token). With phpMyAdmin's no-referrer policy they
// would say Origin: null and, but for the login, get 403 token_missing;
// raised to same-origin, the browser sends the site's Origin and no
// Sec-Fetch-Site (no secure context), and every unsafe request passes as
// origin_verified.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, step, BROWSER, MODE } from '../e2e/browser.mjs';
import { startStack, DB_USER } from './pma_stack.mjs';

if (MODE !== 'named') throw new Error('phpmyadmin.browsers.test.mjs runs by name only (E2E_MODE=named)');

let stack;
let browser;

// One line of the README's log format:
//   $remote_addr "$request" $status csrf=$csrf_result
const LINE = /^\S+ "(\S+) (\S+) [^"]*" (\d{3}) csrf=(\S+)$/;

// A request without its query's values (phpMyAdmin puts its token in
// URLs; no token goes into the test's output).
function what(method, uri) {
  const u = new URL(uri, 'http://x');
  const route = u.searchParams.get('route');
  return `${method} ${u.pathname}${route ? `?route=${route}` : ''}`;
}

function entries(from) {
  return stack.nginxAccessLog().slice(from).split('\n').filter(Boolean).map((l) => {
    const m = LINE.exec(l);
    assert.ok(m, 'an access log line in the README\'s format');
    return { what: what(m[1], m[2]), status: Number(m[3]), result: m[4] };
  });
}

before(async () => {
  stack = await startStack({ host: 'pma.test' });
  browser = await launch(BROWSER, { mode: 'named' });
});

after(async () => {
  if (browser) await browser.close();
  if (stack) {
    const log = stack.nginxErrorLog();
    const ended = await stack.stop();
    assert.doesNotMatch(log, /exited on signal|core dumped/, 'no nginx worker crashed');
    assert.deepEqual(ended, [], 'every server of the stack stopped cleanly');
  }
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

// The session: the login form, the navigation panel, the Settings form,
// the logout.
async function session(page) {
  const res = await page.goto(`${stack.url}/`);
  assert.equal(res.headers['referrer-policy'], 'same-origin', 'the Referrer-Policy header was raised');
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('meta[name="referrer"]')].map((m) => m.content)),
    ['no-referrer', 'same-origin'], 'phpMyAdmin\'s no-referrer meta, then the raise');
  assert.equal(await page.evaluate(() => window.isSecureContext), false, 'by name over plain HTTP: no secure context');

  // the login form
  await page.fill('#input_username', DB_USER);
  await page.fill('#input_password', stack.password);
  await page.clickAndWait('#input_go');
  // the navigation panel: expanding the database is a POST of its script
  await clickUntil(page, '#pma_navigation_tree a.hover_show_full', 'shop', '#server-breadcrumb a[data-raw-text="shop"]');

  // the Settings form, loaded through phpMyAdmin's AJAX page loader
  await clickUntil(page, '#pma_navigation_header a[title="Home"]', null, 'a', 'More settings');
  await clickUntil(page, 'a', 'More settings', 'a[href$="route=/preferences/features"]');
  await clickUntil(page, 'a[href$="route=/preferences/features"]', null, 'form.config-form #DisableShortcutKeys');
  assert.equal(await page.evaluate(() => document.querySelector('form.config-form #DisableShortcutKeys').checked), false);
  await page.p.evaluate(() => document.querySelector('form.config-form #DisableShortcutKeys').click());
  await page.clickAndWait('#General input[name=submit_save]');
  await until(page, 'the preference saved', () => /saved=1/.test(location.href) &&
    document.querySelector('form.config-form #DisableShortcutKeys')?.checked === true);

  // the logout: its script builds a form and submits it; then the login
  // form (polled with evaluate, which reaches whatever document is
  // current: a waitForSelector begun as the document changed missed it
  // in Firefox, and a click while the page loader was busy went unheard)
  await clickUntil(page, '#pma_navigation_header a.logout', null, '#input_username');
}

test(`${BROWSER} by name: phpMyAdmin's form POSTs carry the site's Origin and pass`, async (t) => {
  const from = stack.nginxAccessLog().length;
  const page = await browser.newPage();
  // what the browser sent with each unsafe request: the Origin and
  // whether Sec-Fetch-Site came (no cookie or token values)
  const sent = [];
  page.p.on('request', (q) => {
    if (['GET', 'HEAD'].includes(q.method())) return;
    const h = q.headers();
    sent.push({ what: what(q.method(), q.url()), origin: h.origin, fetchSite: h['sec-fetch-site'] });
  });

  try {
    await session(page);
  } catch (e) {
    // a step that waited in vain: what the module said, and the statuses
    // so far (no query values, no token)
    const why = stack.nginxErrorLog().split('\n').filter((l) => /csrf: rejected/.test(l)).map((l) => l.replace(/^.*csrf: /, ''));
    const got = entries(from).map((x) => `${x.what} ${x.status} ${x.result}`);
    e.message += `\nthe module: ${JSON.stringify(why)}; nginx: ${JSON.stringify(got)}`;
    throw e;
  }
  await page.close();

  const seen = entries(from).filter((e) => e.result !== 'safe_method');
  const summary = new Map();
  for (const e of seen) summary.set(`${e.what} -> ${e.status} ${e.result}`, (summary.get(`${e.what} -> ${e.status} ${e.result}`) || 0) + 1);
  for (const [k, n] of summary) t.diagnostic(`${n} x ${k}`);
  for (const q of sent) t.diagnostic(`sent: ${q.what}: Origin ${q.origin ?? '(none)'}, Sec-Fetch-Site ${q.fetchSite ?? '(none)'}`);

  assert.deepEqual(seen.filter((e) => e.result !== 'origin_verified').map((e) => `${e.what} ${e.status} ${e.result}`), [],
    'every unsafe request passed on its Origin');
  for (const w of ['POST /index.php?route=/', 'POST /index.php?route=/navigation',
    'POST /index.php?route=/preferences/features', 'POST /index.php?route=/logout'])
    assert.ok(seen.some((e) => e.what === w), `the session sent ${w}`);
  assert.doesNotMatch(stack.nginxErrorLog(), /csrf: (rejected|would reject)/, 'the module rejected nothing');
  // as the browser reported its requests: the site's Origin, never null,
  // and no Sec-Fetch-Site
  for (const w of ['POST /index.php?route=/', 'POST /index.php?route=/preferences/features',
    'POST /index.php?route=/logout']) {
    const q = sent.find((s) => s.what === w);
    assert.ok(q, `the browser reported ${w}`);
    assert.equal(q.origin, stack.url, `${w}: Origin`);
    assert.equal(q.fetchSite, undefined, `${w}: no Sec-Fetch-Site`);
  }
});
