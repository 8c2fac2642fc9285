// SPDX-License-Identifier: BSD-2-Clause
// exchange.test.mjs - the protected csrf-demo answers through the
// library's response exchange (csrf_response_*), as csrf-cgi and the nginx
// module do, so the library decides what its pages carry: the tokens (the
// meta pair, a hidden field in every form that posts), the secret cookie,
// Vary: Cookie, the cache rule, and that a HEAD answer, a redirect and a
// page that is not HTML get neither token nor cookie. The site's own
// headers (its CSP, no-store) go out as the library judged them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo } from '../e2e/demo.mjs';
import { request, pageToken, setCookie, loginSession } from './client.mjs';

let demo;
let alice;

before(async () => {
  demo = await startDemo();
  alice = await loginSession(demo.victim, 'alice', 'wonderland');
});

after(async () => {
  if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo exits cleanly');
});

const varyCookie = (r) => (r.headers.vary || '').split(',').some((v) => v.trim().toLowerCase() === 'cookie');

// Every <form method="post"> of the page holds the hidden field once.
function everyFormHasField(html, field) {
  const forms = html.match(/<form\b[^>]*method="post"[^>]*>[\s\S]*?<\/form>/g) || [];
  assert.ok(forms.length > 0, 'the page has forms that post');
  for (const f of forms) {
    const n = f.split(`<input type="hidden" name="${field}" value="`).length - 1;
    assert.equal(n, 1, `one hidden field in ${f.slice(0, 60)}...`);
  }
}

test('an anonymous page: tokens, the secret cookie, Vary: Cookie, the site\'s own headers kept', async () => {
  const r = await request(demo.victim, { path: '/login' });
  assert.equal(r.status, 200);
  const tok = pageToken(r.body);
  assert.ok(tok, 'the csrf-param and csrf-token meta');
  assert.ok(r.body.includes(`<head><meta name="csrf-param"`), 'the meta right after <head>');
  everyFormHasField(r.body, tok.field);
  assert.ok(setCookie(r, 'csrf_secret'), 'the secret cookie of an anonymous visitor');
  assert.ok(varyCookie(r), 'Vary: Cookie');
  assert.equal(r.headers['cache-control'], 'no-store', 'a private Cache-Control stays as the site wrote it');
  assert.equal(r.headers['content-security-policy'], "default-src 'self'", 'no form-action policy by default');
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), 'the length of the page sent');
});

test('a signed-in page and an error page get tokens of the session', async () => {
  for (const [path, status] of [['/', 200], ['/account', 200], ['/no-such-page', 404]]) {
    const r = await request(demo.victim, { path, headers: { cookie: alice.cookie } });
    assert.equal(r.status, status, path);
    const tok = pageToken(r.body);
    assert.ok(tok, `tokens on ${path}`);
    assert.ok(tok.field === alice.field, `the session's field name on ${path}`);
    everyFormHasField(r.body, tok.field);
    assert.ok(varyCookie(r), `Vary: Cookie on ${path}`);
    assert.equal(setCookie(r, 'csrf_secret') !== null, false, `no secret cookie for a session on ${path}`);
  }
});

test('HEAD, a redirect and what is not HTML: no token, no cookie, no Vary', async () => {
  const head = await request(demo.victim, { method: 'HEAD', path: '/login' });
  assert.equal(head.status, 200);
  assert.equal(setCookie(head, 'csrf_secret') !== null, false, 'a HEAD answer has no body, so no token and no cookie');
  for (const path of ['/api/state', '/style.css']) {
    const r = await request(demo.victim, { path });
    assert.equal(r.status, 200, path);
    assert.equal(setCookie(r, 'csrf_secret') !== null, false, `no secret cookie on ${path}`);
    assert.ok(!varyCookie(r), `no Vary on ${path}`);
    assert.ok(!r.body.includes('csrf-token'), `no token in ${path}`);
  }
  const out = await request(demo.victim, {
    method: 'POST',
    path: '/logout',
    headers: { cookie: alice.cookie, origin: demo.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: `${encodeURIComponent(alice.field)}=${encodeURIComponent(alice.token)}`,
  });
  assert.equal(out.status, 303, 'logged out');
  assert.equal(setCookie(out, 'csrf_secret') !== null, false, 'the redirect carries no secret cookie');
  assert.ok(!out.body.includes('csrf-token'), 'nor a token');
});
