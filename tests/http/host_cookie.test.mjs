// SPDX-License-Identifier: BSD-2-Clause
// host_cookie.test.mjs - the demo's session cookie when its public origin
// is HTTPS (--origin https://..., TLS ending in front of the demo):
// "__Host-demo_sid" with Secure, Path=/ and no Domain, so a cookie planted
// from another port or a sibling host (cookie tossing) cannot take its
// place; over plain HTTP it stays "demo_sid" without Secure. And --origin
// values that are not an http(s) origin stop the start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startDemo, demoBinary } from '../e2e/demo.mjs';
import { request, form, pageToken, setCookie, loginSession } from './client.mjs';

const ORIGIN = 'https://victim.example';
const URLENC = 'application/x-www-form-urlencoded';
let tls;
let plain;

before(async () => {
  tls = await startDemo({ args: ['--origin', ORIGIN] });
  plain = await startDemo({ portBase: Number(process.env.DEMO_PORT_BASE) ? Number(process.env.DEMO_PORT_BASE) + 10 : 0 });
});

after(async () => {
  if (tls) assert.equal(await tls.stop(), 0);
  if (plain) assert.equal(await plain.stop(), 0);
});

// The whole Set-Cookie line for cookie name, or null.
function cookieLine(res, name) {
  return (res.headers['set-cookie'] || []).find((c) => c.startsWith(`${name}=`)) || null;
}

// The attributes of a Set-Cookie line, lower-cased names: { path: '/', secure: true, ... }.
function attrs(line) {
  const out = {};
  for (const part of line.split(';').slice(1)) {
    const [k, ...v] = part.trim().split('=');
    out[k.toLowerCase()] = v.length ? v.join('=') : true;
  }
  return out;
}

test('over HTTPS the session cookie is __Host-demo_sid: Secure, Path=/, no Domain', async () => {
  let r = await request(tls.victim, { path: '/login' });
  const secret = setCookie(r, '__Host-csrf_secret');
  assert.ok(secret, 'the anonymous secret cookie is __Host- as well (the library)');
  const pre = pageToken(r.body);
  r = await request(tls.victim, {
    method: 'POST',
    path: '/login',
    headers: { cookie: secret, origin: ORIGIN, 'content-type': URLENC },
    body: form({ [pre.field]: pre.token, user: 'alice', password: 'wonderland' }),
  });
  assert.equal(r.status, 303, 'signed in');
  assert.equal(cookieLine(r, 'demo_sid'), null, 'no unprefixed session cookie');
  const line = cookieLine(r, '__Host-demo_sid');
  assert.ok(line, 'the session cookie is __Host-');
  const a = attrs(line);
  assert.equal(a.path, '/');
  assert.equal(a.secure, true);
  assert.equal(a.httponly, true);
  assert.equal(a.samesite, 'Lax');
  assert.equal(a.domain, undefined, 'no Domain');
  const sid = setCookie(r, '__Host-demo_sid');
  const home = await request(tls.victim, { path: '/', headers: { cookie: sid } });
  assert.match(home.body, /id="whoami">alice</, 'the __Host- cookie names the session');

  // cookie tossing: the same id in a cookie without the prefix (what a
  // page on another port could set over plain HTTP) is no session
  const value = sid.slice(sid.indexOf('=') + 1);
  const tossed = await request(tls.victim, { path: '/', headers: { cookie: `demo_sid=${value}` } });
  assert.doesNotMatch(tossed.body, /id="whoami">alice</, 'an unprefixed cookie is not read');
  assert.match(tossed.body, /id="login-submit"/);

  // logging out expires the __Host- cookie, with the same attributes
  const tok = pageToken(home.body);
  r = await request(tls.victim, {
    method: 'POST',
    path: '/logout',
    headers: { cookie: sid, origin: ORIGIN, 'content-type': URLENC },
    body: form({ [tok.field]: tok.token }),
  });
  assert.equal(r.status, 303);
  const gone = attrs(cookieLine(r, '__Host-demo_sid'));
  assert.equal(gone['max-age'], '0');
  assert.equal(gone.secure, true);
  assert.equal(gone.path, '/');
});

test('over plain HTTP the session cookie stays demo_sid, without Secure', async () => {
  let r = await request(plain.victim, { path: '/login' });
  const secret = setCookie(r, 'csrf_secret');
  const pre = pageToken(r.body);
  r = await request(plain.victim, {
    method: 'POST',
    path: '/login',
    headers: { cookie: secret, origin: plain.victim, 'content-type': URLENC },
    body: form({ [pre.field]: pre.token, user: 'bob', password: 'builder' }),
  });
  assert.equal(r.status, 303);
  assert.equal(cookieLine(r, '__Host-demo_sid'), null);
  const a = attrs(cookieLine(r, 'demo_sid'));
  assert.equal(a.secure, undefined, 'a Secure cookie would never come back over HTTP');
  assert.equal(a.path, '/');
  assert.equal(a.domain, undefined);
  // a __Host- cookie is not the session over HTTP either
  const s = await loginSession(plain.victim, 'bob', 'builder');
  const value = s.cookie.slice(s.cookie.indexOf('=') + 1);
  const other = await request(plain.victim, { path: '/', headers: { cookie: `__Host-demo_sid=${value}` } });
  assert.doesNotMatch(other.body, /id="whoami">bob</);
});

test('an --origin that is not an http(s) origin stops the start', () => {
  for (const origin of ['ftp://victim.example', 'https://', 'https://victim.example/path', 'HTTPS//x', '']) {
    const r = spawnSync(demoBinary(), ['--listen', '127.0.0.1:1', '--attacker-listen', '127.0.0.1:2',
      '--db', '/nonexistent/never-created.db', '--origin', origin], { encoding: 'utf8', timeout: 10000 });
    assert.ok(r.status === 1 || r.status === 2, `${JSON.stringify(origin)}: exit ${r.status}`);
    assert.match(r.stderr, /origin/i, `${JSON.stringify(origin)}: says why`);
  }
});
