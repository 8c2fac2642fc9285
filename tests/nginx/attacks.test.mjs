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
// browsers, so it is not vacuous. An ordinary page still posts its token:
// the upstream receives the field and nginx lets the POST through under
// `csrf_mode both` (a token is required). A form that can leave by GET (a
// GET form with a formmethod=post button, a POST form with a
// formmethod=get button) has no token: its GET submission puts its fields
// into the URL but not the token (a tag-only injector's does), and its
// POST button passes on the browser's origin evidence in the default mode
// and is refused with token_missing under `csrf_mode both`. The outside
// review's pages (review-*): the end-tag control (the field written where
// the real form ends, as 71f1786 did) is owned by the attacker's form in
// both browsers; the module's field, right after the start tag, is the
// real form's.
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
let evidenceOrigin; // a server in the default mode, origin_or_token
const posted = []; // field names of each POST the upstream received (never values)
const gotten = []; // field names in the query of each GET of /echo

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
// The other control: the field written at the real form's end tag, the
// way 71f1786 wrote it ("</form" completed as "</form-csrf-field>", the
// field, "</form" again).
function atEndTag(body) {
  const s = body.toString('latin1');
  const head = s.indexOf('<head>') + '<head>'.length;
  const end = s.indexOf('</form', s.indexOf('id=real>')) + '</form'.length;
  return Buffer.from(`${s.slice(0, head)}<meta name="csrf-param" content="naive">${s.slice(head, end)}` +
    `-csrf-field><input type="hidden" name="naive" value="x"></form${s.slice(end)}`, 'latin1');
}
// (review-div-form*: the div variant as the review described it; with these
// bodies the end-tag field stays the real form's in both browsers, so it is
// no control; the module's field is checked on them with the other pages)
const LEAK_AT_END_TAG = ['review-open-button-a'];
const LEAK_WITHOUT_MODULE = ['svg-style-breakout', 'math-style-breakout', 'svg-form-nesting', 'template-close',
  'svg-cdata', 'iso-2022-jp-comment', 'hidden-base', 'base-elsewhere', 'review-table-a', 'review-table-b'];

async function startUpstream() {
  const port = await freePort();
  const server = http.createServer((req, res) => {
    const name = req.url.split('?')[0].split('/').pop();
    if (req.method === 'GET' && name === 'echo') {
      gotten.push([...new URL(req.url, 'http://x').searchParams.keys()]);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><title>got</title><p id=got>got</p>');
      return;
    }
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
    if (req.url.startsWith('/control/')) res.end(naive(bodyOf(p)));
    else if (req.url.startsWith('/endtag/')) res.end(atEndTag(bodyOf(p)));
    else res.end(bodyOf(p));
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { port, close: () => new Promise((r) => server.close(r)) };
}

async function startNginxFor(up) {
  const port = await freePort();
  const port2 = await freePort();
  const n = await startNginx('csrf-ngx-attacks', `
    access_log off;
    server {
        listen 127.0.0.1:${port};
        csrf on;
        csrf_mode both;
        location / { proxy_pass http://127.0.0.1:${up.port}; }
        location /control/ { csrf off; proxy_pass http://127.0.0.1:${up.port}; }
        location /endtag/ { csrf off; proxy_pass http://127.0.0.1:${up.port}; }
    }
    server {
        listen 127.0.0.1:${port2};
        csrf on;
        location / { proxy_pass http://127.0.0.1:${up.port}; }
    }
`, [port, port2]);
  return { ...n, origin: `http://127.0.0.1:${port}`, evidenceOrigin: `http://127.0.0.1:${port2}` };
}

// Runs in the page: where the browser put each injected field.
function owners() {
  const meta = document.querySelector('meta[name="csrf-param"]');
  const field = meta && meta.getAttribute('content');
  const result = { field: !!field, fields: 0, elsewhere: [], real: 0, away: [] };
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
    if (form.method !== 'post') result.away.push(`${form.id || 'a form'} is ${form.method}`);
    // every submit button the browser gives the form (form="" ones too)
    for (const b of form.elements) {
      if (!(b.type === 'submit' || b.type === 'image') || !('formMethod' in b)) continue;
      if (b.hasAttribute('formmethod') && b.formMethod !== 'post' && b.formMethod !== 'dialog')
        result.away.push(`${b.id || 'a button'} sends by ${b.formMethod}`);
      if (b.hasAttribute('formaction') && new URL(b.formAction).origin !== window.location.origin)
        result.away.push(`${b.id || 'a button'} sends to ${b.formAction}`);
    }
  }
  return result;
}

before(async () => {
  assert.ok(MODULE, 'CSRF_NGX_MODULE names the built module');
  upstream = await startUpstream();
  ngx = await startNginxFor(upstream);
  origin = ngx.origin;
  evidenceOrigin = ngx.evidenceOrigin;
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
      // the one case a stream cannot undo (logged): a form="" button after the form
      assert.deepEqual(o.away.length > 0, !!p.late_owner,
        `${p.name}: a form with the token can be sent by GET or elsewhere: ${o.away.join(', ')}`);
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

test(`${BROWSER}: a field at the form's end tag goes to the attacker's form on the review's pages`, async () => {
  const page = await browser.newPage();
  try {
    for (const name of LEAK_AT_END_TAG) {
      await page.goto(`${origin}/endtag/${name}`);
      const o = await page.evaluate(owners);
      assert.equal(o.fields, 1, name);
      assert.equal(o.elsewhere.length, 1, `${name}: the end-tag field is not owned by the attacker's form`);
      // the module's field on the same page: the real form's
      await page.goto(`${origin}/attack/${name}`);
      const m = await page.evaluate(owners);
      assert.deepEqual([m.fields, m.real, m.elsewhere.length], [1, 1, 0], `${name}: the module's field`);
    }
  } finally {
    await page.close();
  }
});

// Runs in the page: the form owner (input.form) of the token field, of
// the page's own text field and of its submit button, by form id.
function tableOwners() {
  const meta = document.querySelector('meta[name="csrf-param"]');
  const field = meta && meta.getAttribute('content');
  const ownerOf = (el) => (el ? (el.form ? el.form.id || 'a form' : null) : 'absent');
  const token = [...document.querySelectorAll('input[type=hidden]')]
    .filter((i) => i.getAttribute('name') === field || i.getAttribute('name') === 'naive');
  return { token: token.map(ownerOf), amount: ownerOf(document.querySelector('input[name=amount]')),
    go: ownerOf(document.querySelector('#go')) };
}

// The outside review of the held form (issue 24): the real form's start
// tag inside a table but outside a cell is inserted and popped at once;
// the adoption agency for a later <a> (or </b>) moves its fields and its
// button, and the browser gives them to the nearest form among their new
// ancestors: the attacker's GET form. The control (the field right after
// the start tag, where the injector put it before) goes there too; the
// module's output has no field. In a cell, or around the table, every
// control stays the real form's, the token too.
test(`${BROWSER}: a form a table holds outside a cell gets no token; in a cell or around it, it does`, async () => {
  const page = await browser.newPage();
  try {
    for (const name of ['review-table-a', 'review-table-b']) {
      await page.goto(`${origin}/control/${name}`);
      assert.deepEqual(await page.evaluate(tableOwners), { token: ['evil'], amount: 'evil', go: 'evil' },
        `${name}: the control's field, q and the button are not the attacker's`);
      await page.goto(`${origin}/attack/${name}`);
      assert.deepEqual(await page.evaluate(tableOwners), { token: [], amount: 'evil', go: 'evil' },
        `${name}: the module put a token on the page`);
    }
    await page.goto(`${origin}/attack/table-row-form`);
    assert.deepEqual(await page.evaluate(tableOwners), { token: [], amount: 'real', go: 'real' }, 'table-row-form');
    for (const name of ['table-cell-form', 'table-around-form']) {
      await page.goto(`${origin}/attack/${name}`);
      assert.deepEqual(await page.evaluate(tableOwners), { token: ['real'], amount: 'real', go: 'real' }, name);
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
    for (const name of ['ordinary', 'plain-attacker-form', 'table-cell-form', 'table-around-form']) {
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

// Last: it makes nginx log rejected POSTs, which the test above rules out.
test(`${BROWSER}: a form that can leave by GET puts no token into the URL; its POST button works on evidence`,
  async () => {
    const page = await browser.newPage();
    try {
      for (const [name, getButton] of [['formmethod-post-button', '#search'], ['formmethod-get-button', '#preview']]) {
        // the GET submission: the fields go into the URL, the token does not
        await page.goto(`${origin}/attack/${name}`);
        const field = await page.attr('meta[name="csrf-param"]', 'content');
        assert.ok(field, `${name}: no meta tags`);
        let before = gotten.length;
        let r = await page.clickAndWait(getButton);
        assert.equal(r.status, 200, `${name}: the GET submission`);
        const query = new URL(page.url()).searchParams;
        assert.equal(query.get('amount'), '1', `${name}: the form's fields did not go into the URL`);
        assert.equal(query.has(field), false, `${name}: the token went into the URL`);
        assert.equal(gotten.length, before + 1, `${name}: the upstream got no GET`);
        assert.deepEqual(gotten.at(-1), ['amount'], `${name}: the upstream's query`);

        // the control: a tag-only injector's field rides along in the URL
        await page.goto(`${origin}/control/${name}`);
        await page.clickAndWait(getButton);
        assert.equal(new URL(page.url()).searchParams.get('naive'), 'x', `${name}: the control leaks nothing`);

        // the POST button: no token, so the default mode lets it through on
        // the browser's Sec-Fetch-Site / Origin ...
        await page.goto(`${evidenceOrigin}/attack/${name}`);
        before = posted.length;
        r = await page.clickAndWait('#go');
        assert.equal(r.status, 200, `${name}: the POST button was refused in origin_or_token`);
        assert.equal(await page.text('#posted'), 'posted');
        assert.equal(posted.length, before + 1, `${name}: the upstream got no POST`);
        assert.deepEqual(posted.at(-1), ['amount'], `${name}: the POST carried a token field`);

        // ... and `csrf_mode both`, which demands a token, refuses it clearly
        await page.goto(`${origin}/attack/${name}`);
        before = posted.length;
        r = await page.clickAndWait('#go');
        assert.equal(r.status, 403, `${name}: a POST without a token passed csrf_mode both`);
        assert.equal(posted.length, before, `${name}: the refused POST reached the upstream`);
      }
      // a form a table holds outside a cell: no token; its POST passes on
      // the browser's evidence, and csrf_mode both refuses it clearly
      await page.goto(`${evidenceOrigin}/attack/table-row-form`);
      let before = posted.length;
      let r = await page.clickAndWait('#go');
      assert.equal(r.status, 200, 'table-row-form: the POST was refused in origin_or_token');
      assert.deepEqual(posted.slice(before), [['amount']], 'table-row-form: the upstream got no POST, or a token');
      await page.goto(`${origin}/attack/table-row-form`);
      before = posted.length;
      r = await page.clickAndWait('#go');
      assert.equal(r.status, 403, 'table-row-form: a POST without a token passed csrf_mode both');
      assert.equal(posted.length, before, 'table-row-form: the refused POST reached the upstream');
      assert.match(ngx.errorLog(), /rejected POST "\/echo": token_missing/);
    } finally {
      await page.close();
    }
  });
