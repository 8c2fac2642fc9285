// SPDX-License-Identifier: BSD-2-Clause
// attacks.test.mjs - the attack pages of issue 13 (attack_pages.json)
// served by an upstream through the real Debian nginx and the module, in
// the browser E2E_BROWSER names (ctest: nginx.attacks.browser.chromium and
// .firefox). For each page the browser's own DOM is asked: every injected
// field's form owner (input.form) must have an action, resolved against
// document.baseURI, on the page's origin; the page's own form keeps its
// token exactly where attack_pages.json says the browser gives it to that
// form. The same check on a tag-only injector's output (the field right
// after the real form's start tag) finds the leak on each page in both
// browsers, so it is not vacuous. An ordinary page, and a GET form whose button posts, still post
// their token: the upstream receives the field and nginx lets the POST
// through under `csrf_mode both` (a token is required).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { freePort } from './net.mjs';
import { MODULE, startNginx } from './ngx.mjs';
import { BROWSER, launch } from '../e2e/browser.mjs';

const EVIL = 'http://evil.example/steal';
const EVIL_BASE = 'http://evil.example/';
const PAGES = JSON.parse(fs.readFileSync(new URL('./attack_pages.json', import.meta.url), 'utf8')).pages;

let upstream;
let ngx;
let browser;
let origin;
const posted = []; // field names of each POST the upstream received (never values)

function bodyOf(p) {
  return Buffer.from(p.body.replaceAll('{EVIL}', EVIL).replaceAll('{EVIL_BASE}', EVIL_BASE), 'latin1');
}

// The control: a naive injector's output (a field right after the real
// form's start tag, as tags alone suggest), served past the module.
function naive(body) {
  const s = body.toString('latin1');
  const head = s.indexOf('<head>') + '<head>'.length;
  const real = s.indexOf('id=real>') + 'id=real>'.length;
  return Buffer.from(`${s.slice(0, head)}<meta name="csrf-param" content="naive">${s.slice(head, real)}` +
    `<input type="hidden" name="naive" value="x">${s.slice(real)}`, 'latin1');
}
const LEAK_WITHOUT_MODULE = ['svg-style-breakout', 'math-style-breakout', 'svg-form-nesting', 'template-close',
  'svg-cdata', 'iso-2022-jp-comment', 'hidden-base', 'base-elsewhere'];

async function startUpstream() {
  const port = await freePort();
  const server = http.createServer((req, res) => {
    const name = req.url.split('?')[0].split('/').pop();
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        posted.push([...new URLSearchParams(body).keys()]);
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!DOCTYPE html><title>posted</title><p id=posted>posted</p>');
      });
      return;
    }
    const p = PAGES.find((x) => x.name === name);
    if (!p) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('no such page');
      return;
    }
    res.writeHead(200, { 'Content-Type': p.content_type || 'text/html' });
    res.end(req.url.startsWith('/control/') ? naive(bodyOf(p)) : bodyOf(p));
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { port, close: () => new Promise((r) => server.close(r)) };
}

async function startNginxFor(up) {
  const port = await freePort();
  const n = await startNginx('csrf-ngx-attacks', `
    access_log off;
    server {
        listen 127.0.0.1:${port};
        csrf on;
        csrf_mode both;
        location / { proxy_pass http://127.0.0.1:${up.port}; }
        location /control/ { csrf off; proxy_pass http://127.0.0.1:${up.port}; }
    }
`, [port]);
  return { ...n, origin: `http://127.0.0.1:${port}` };
}

// Runs in the page: where the browser put each injected field.
function owners() {
  const meta = document.querySelector('meta[name="csrf-param"]');
  const field = meta && meta.getAttribute('content');
  const result = { field: !!field, fields: 0, elsewhere: [], real: 0 };
  if (!field) return result;
  for (const input of document.querySelectorAll('input')) {
    if (input.getAttribute('name') !== field || input.getAttribute('type') !== 'hidden') continue;
    result.fields += 1;
    const form = input.form;
    if (!form) continue;
    const action = form.getAttribute('action');
    const target = action === null || action.trim() === '' ? document.URL : new URL(action, document.baseURI).href;
    if (new URL(target).origin !== window.location.origin) result.elsewhere.push(target);
    else if (form.id === 'real') result.real += 1;
  }
  return result;
}

before(async () => {
  assert.ok(MODULE, 'CSRF_NGX_MODULE names the built module');
  upstream = await startUpstream();
  ngx = await startNginxFor(upstream);
  origin = ngx.origin;
  browser = await launch(BROWSER);
});

after(async () => {
  if (browser) await browser.close();
  if (ngx) await ngx.stop();
  if (upstream) await upstream.close();
});

test(`${BROWSER}: no injected field is owned by a form that posts elsewhere`, async () => {
  const page = await browser.newPage();
  try {
    for (const p of PAGES) {
      const r = await page.goto(`${origin}/attack/${p.name}`);
      assert.equal(r.status, 200, p.name);
      const o = await page.evaluate(owners);
      assert.deepEqual(o.elsewhere, [], `${p.name}: a token in a form posting to another origin`);
      if (p.untouched) {
        assert.equal(o.field, false, `${p.name}: a page the injector cannot read got tokens`);
        continue;
      }
      assert.equal(o.field, true, `${p.name}: no meta tags`);
      assert.equal(o.real, p.real ? 1 : 0, `${p.name}: the page's own form ${p.real ? 'lost' : 'got'} its token`);
      assert.equal(o.fields, o.real, `${p.name}: a field outside the page's own form`);
    }
  } finally {
    await page.close();
  }
});

test(`${BROWSER}: the check sees the leak a tag-only injector makes on the same pages`, async () => {
  const page = await browser.newPage();
  try {
    for (const name of LEAK_WITHOUT_MODULE) {
      await page.goto(`${origin}/control/${name}`);
      const o = await page.evaluate(owners);
      assert.equal(o.fields, 1, name);
      assert.equal(o.elsewhere.length, 1, `${name}: the naive field is not owned by a form posting elsewhere`);
    }
  } finally {
    await page.close();
  }
});

// noscript is parsed as markup when scripting is off: the attacker's form
// inside it is then open when the real form starts. DevTools evaluation
// still runs with the page's scripts disabled. Firefox ESR's WebDriver
// BiDi has no command to turn scripting off in a page
// (emulation.setScriptingEnabled is unknown to it): Chromium only.
const NO_SCRIPTING = BROWSER === 'chromium' ? false : 'Firefox ESR cannot turn scripting off over BiDi';
test(`${BROWSER}: scripting off, noscript markup owns no token`, { skip: NO_SCRIPTING }, async () => {
  const page = await browser.newPage();
  try {
    await page.p.setJavaScriptEnabled(false);
    await page.goto(`${origin}/control/noscript`);
    const control = await page.evaluate(owners);
    assert.equal(control.elsewhere.length, 1, 'scripting is not off: the naive field is not owned by the form in noscript');
    await page.goto(`${origin}/attack/noscript`);
    const o = await page.evaluate(owners);
    assert.equal(o.field, true);
    assert.deepEqual(o.elsewhere, []);
    assert.equal(o.fields, 0);
  } finally {
    await page.close();
  }
});

test(`${BROWSER}: ordinary pages still post their token`, async () => {
  const page = await browser.newPage();
  try {
    for (const name of ['ordinary', 'plain-attacker-form', 'formmethod-post-button']) {
      await page.goto(`${origin}/attack/${name}`);
      const field = await page.attr('meta[name="csrf-param"]', 'content');
      const before = posted.length;
      const r = await page.clickAndWait('#go');
      assert.equal(r.status, 200, `${name}: the POST with the injected token was not let through`);
      assert.equal(await page.text('#posted'), 'posted');
      assert.equal(posted.length, before + 1, `${name}: the upstream got no POST`);
      assert.ok(posted.at(-1).includes(field), `${name}: the token field did not reach the upstream`);
    }
  } finally {
    await page.close();
  }
  assert.doesNotMatch(ngx.errorLog(), /rejected POST/, 'nginx rejected a POST with its token');
});
