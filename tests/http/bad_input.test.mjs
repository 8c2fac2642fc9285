// SPDX-License-Identifier: BSD-2-Clause
// bad_input.test.mjs - HTTP-level bad input against the protected
// csrf-demo: forged, missing and misplaced tokens, hostile origins,
// oversized headers and bodies, malformed multipart, invalid UTF-8, bad
// transfers and the password lockout. Each row must answer its 4xx, the
// demo must keep serving, and /api/state must not change. A positive
// control first proves the same requests succeed when they are right, so
// the rejections are not an accident of a broken client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState, waitForLog } from '../e2e/demo.mjs';
import { request, raw, form, loginSession } from './client.mjs';

let demo;
let alice;
let bob;

before(async () => {
  demo = await startDemo();
  alice = await loginSession(demo.victim, 'alice', 'wonderland');
  bob = await loginSession(demo.victim, 'bob', 'builder');
});

after(async () => {
  if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo exits cleanly on SIGTERM');
});

const URLENC = 'application/x-www-form-urlencoded';

// A well-formed POST of alice's, which the rows below spoil one way each.
function post(path, fields, { token = true, headers = {}, s = null } = {}) {
  const who = s || alice;
  const f = token ? { [who.field]: who.token, ...fields } : fields;
  return {
    method: 'POST',
    path,
    headers: { cookie: who.cookie, origin: demo.victim, 'content-type': URLENC, ...headers },
    body: form(f),
  };
}

test('positive control: right token, right origin: the vote and the transfer go through', async () => {
  const before = await getState(demo.victim);
  let r = await request(demo.victim, post('/vote', { story: '1', type: 'y' }));
  assert.equal(r.status, 303);
  r = await request(demo.victim, {
    ...post('/vote', { story: '1', type: 'y' }, { token: false }),
    headers: { ...post('/vote', {}).headers, 'x-csrf-token': alice.token },
  });
  assert.equal(r.status, 303, 'the token in X-CSRF-Token works too');
  r = await request(demo.victim, post('/vote', { story: '1', type: 'y' }, { headers: { origin: 'null' } }));
  assert.equal(r.status, 303, 'Origin: null (a no-referrer page) with the token: the token decides');
  r = await request(demo.victim, post('/transfer', { to: 'bob', amount: '1', password: 'wonderland' }));
  assert.equal(r.status, 303);
  const after = await getState(demo.victim);
  assert.equal(after.votes['1'].y, before.votes['1'].y + 3);
  assert.equal(after.balances.alice, before.balances.alice - 1);
  assert.equal(after.balances.bob, before.balances.bob + 1);
});

function spoilToken(t) {
  const i = 70;
  return t.slice(0, i) + (t[i] === 'A' ? 'B' : 'A') + t.slice(i + 1);
}

const big = (n) => 'a'.repeat(n);

// { name, req: () => request options | { raw: bytes }, status: code or [lo, hi], log: regexp for the reason }
const rows = [
  { name: 'no token', req: () => post('/vote', { story: '1', type: 'y' }, { token: false }), status: 403, log: /token/i },
  {
    name: 'wrong token',
    req: () => ({ ...post('/vote', { story: '1', type: 'y' }, { token: false }),
      body: form({ [alice.field]: spoilToken(alice.token), story: '1', type: 'y' }) }),
    status: 403,
    log: /token|invalid/i,
  },
  {
    name: 'a token of another session',
    req: () => ({ ...post('/vote', { story: '1', type: 'y' }, { token: false }),
      body: form({ [alice.field]: bob.token, [bob.field]: bob.token, story: '1', type: 'y' }) }),
    status: 403,
  },
  {
    name: 'another session\'s token in the header',
    req: () => post('/vote', { story: '1', type: 'y' }, { token: false, headers: { 'x-csrf-token': bob.token } }),
    status: 403,
  },
  {
    name: 'token in the query string only',
    req: () => ({ ...post('/vote', { story: '1', type: 'y' }, { token: false }),
      path: `/vote?${form({ [alice.field]: alice.token })}` }),
    status: 403,
    log: /token/i,
  },
  { name: 'truncated token', req: () => post('/vote', { story: '1', type: 'y' }, { token: false,
    headers: { 'x-csrf-token': alice.token.slice(0, alice.token.length - 2) } }), status: 403 },
  // Origin: null (a no-referrer page) is no evidence: without a token it is refused for the token
  { name: 'Origin: null without a token',
    req: () => post('/vote', { story: '1', type: 'y' }, { token: false, headers: { origin: 'null' } }),
    status: 403, log: /token missing/i },
  { name: 'Origin of the attacker', req: () => post('/vote', { story: '1', type: 'y' },
    { headers: { origin: demo.attacker } }), status: 403, log: /origin/i },
  { name: 'Origin that does not parse', req: () => post('/vote', { story: '1', type: 'y' },
    { headers: { origin: 'http://[::1' } }), status: 403 },
  { name: 'Sec-Fetch-Site: same-site', req: () => post('/vote', { story: '1', type: 'y' },
    { headers: { 'sec-fetch-site': 'same-site', origin: demo.attacker } }), status: 403, log: /site/i },
  { name: 'Sec-Fetch-Site: cross-site', req: () => post('/vote', { story: '1', type: 'y' },
    { headers: { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' } }), status: 403 },
  { name: 'no session cookie', req: () => ({ ...post('/vote', { story: '1', type: 'y' }),
    headers: { origin: demo.victim, 'content-type': URLENC } }), status: 403 },
  { name: 'a method override does not skip the check', req: () => post('/vote', { story: '1', type: 'y' },
    { token: false, headers: { 'x-http-method-override': 'GET' } }), status: 403 },
  { name: 'GET /vote never changes state', req: () => ({ path: '/vote?type=y&story=1',
    headers: { cookie: alice.cookie } }), status: 405, log: /GET/ },
  { name: 'PUT /vote', req: () => ({ ...post('/vote', { story: '1', type: 'y' }), method: 'PUT' }),
    status: [403, 405] },
  { name: 'text/plain body with a token-like line', req: () => ({ ...post('/vote', { story: '1', type: 'y' }),
    headers: { cookie: alice.cookie, origin: demo.victim, 'content-type': 'text/plain' } }), status: 403 },
  {
    name: 'body over 64 KiB (Content-Length)',
    req: () => ({ raw: `POST /vote HTTP/1.1\r\nHost: x\r\nCookie: ${alice.cookie}\r\nContent-Type: ${URLENC}\r\n`
      + `Content-Length: 100000\r\n\r\n${big(100000)}` }),
    status: 413,
  },
  {
    name: 'body over 64 KiB (chunked)',
    req: () => ({ raw: `POST /vote HTTP/1.1\r\nHost: x\r\nCookie: ${alice.cookie}\r\nContent-Type: ${URLENC}\r\n`
      + `Transfer-Encoding: chunked\r\n\r\n${[0, 1, 2, 3].map(() => `8000\r\n${big(0x8000)}\r\n`).join('')}0\r\n\r\n` }),
    status: 413,
  },
  { name: 'a header over the server\'s limit', req: () => ({ raw: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${big(40000)}\r\n\r\n` }),
    status: [400, 431] },
  { name: 'a Cookie header over the limit', req: () => ({ raw: `GET / HTTP/1.1\r\nHost: x\r\nCookie: a=${big(70000)}\r\n\r\n` }),
    status: [400, 431] },
  { name: 'a Content-Length that is not a number', req: () => ({ raw: 'POST /vote HTTP/1.1\r\nHost: x\r\n'
    + 'Content-Length: abc\r\n\r\n' }), status: 400 },
  { name: 'both Content-Length and chunked', req: () => ({ raw: 'POST /vote HTTP/1.1\r\nHost: x\r\n'
    + 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n' }), status: 400 },
  { name: 'a broken chunk', req: () => ({ raw: 'POST /vote HTTP/1.1\r\nHost: x\r\n'
    + 'Transfer-Encoding: chunked\r\n\r\nzz\r\n' }), status: 400 },
  { name: 'an unknown method', req: () => ({ raw: `BREW /vote HTTP/1.1\r\nHost: x\r\nCookie: ${alice.cookie}\r\n\r\n` }),
    status: [403, 405] },
  { name: 'a header without a colon', req: () => ({ raw: 'GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n' }),
    status: [400, 499] },
  {
    name: 'malformed multipart, token in the header',
    req: () => ({ ...post('/vote', {}, { token: false, headers: { 'x-csrf-token': alice.token,
      'content-type': 'multipart/form-data; boundary=zz' } }),
      body: '--zz\r\nContent-Disposition: form-data; name="story"\r\n\r\n1' }),
    status: [400, 403],
  },
  {
    name: 'malformed multipart, no token',
    req: () => ({ ...post('/vote', {}, { token: false, headers: { 'content-type': 'multipart/form-data; boundary=zz' } }),
      body: '--zz\r\nContent-Disposition: form-data; name="type"\r\n\r\ny\r\n--zz' }),
    status: [400, 403],
  },
  {
    name: 'multipart without a boundary',
    req: () => ({ ...post('/vote', {}, { token: false, headers: { 'x-csrf-token': alice.token,
      'content-type': 'multipart/form-data' } }), body: '--zz\r\n\r\n' }),
    status: [400, 403],
  },
  { name: 'invalid UTF-8 (percent-encoded) in a field', req: () => ({ ...post('/vote', { story: '1' }),
    body: `${form({ [alice.field]: alice.token, story: '1' })}&type=%FF` }), status: 400 },
  { name: 'invalid UTF-8 (raw bytes) in a field', req: () => ({ ...post('/vote', { story: '1' }),
    body: Buffer.concat([Buffer.from(`${form({ [alice.field]: alice.token, story: '1' })}&type=`), Buffer.from([0xc3, 0x28])]) }),
    status: 400 },
  { name: 'overlong UTF-8 in the user name', req: () => ({ ...post('/login', {}),
    body: `${form({ [alice.field]: alice.token, password: 'x' })}&user=%C0%AF` }), status: 400 },
  { name: 'a bad percent escape', req: () => ({ ...post('/vote', {}),
    body: `${form({ [alice.field]: alice.token, type: 'y' })}&story=%G1` }), status: 400 },
  { name: 'a NUL in a field', req: () => ({ ...post('/vote', {}),
    body: `${form({ [alice.field]: alice.token, type: 'y' })}&story=1%00` }), status: 400 },
  { name: 'vote without a story', req: () => post('/vote', { type: 'y' }), status: 400 },
  { name: 'vote for a story that does not exist', req: () => post('/vote', { story: '99', type: 'y' }), status: 404 },
  { name: 'vote of an unknown type', req: () => post('/vote', { story: '1', type: 'maybe' }), status: 400 },
  { name: 'transfer of a negative amount', req: () => post('/transfer', { to: 'bob', amount: '-5', password: 'wonderland' }), status: 400 },
  { name: 'transfer of 1e3', req: () => post('/transfer', { to: 'bob', amount: '1e3', password: 'wonderland' }), status: 400 },
  { name: 'transfer above the balance', req: () => post('/transfer', { to: 'bob', amount: '100000', password: 'wonderland' }), status: 400 },
  { name: 'transfer of zero', req: () => post('/transfer', { to: 'bob', amount: '0', password: 'wonderland' }), status: 400 },
  { name: 'transfer to oneself', req: () => post('/transfer', { to: 'alice', amount: '5', password: 'wonderland' }), status: 400 },
  { name: 'transfer to nobody', req: () => post('/transfer', { to: 'nobody', amount: '5', password: 'wonderland' }), status: 400 },
  { name: 'transfer without the password', req: () => post('/transfer', { to: 'bob', amount: '5' }), status: 403 },
  { name: 'transfer with a wrong password', req: () => post('/transfer', { to: 'bob', amount: '5', password: 'guess' }),
    status: 403, log: /password|re-?auth/i },
  { name: 'a form field over the demo\'s limit', req: () => post('/vote', { story: big(5000), type: 'y' }), status: 400 },
];

function inRange(status, want) {
  return Array.isArray(want) ? status >= want[0] && status <= want[1] : status === want;
}

for (const row of rows) {
  test(`bad input: ${row.name}`, async () => {
    const before = await getState(demo.victim);
    const mark = demo.mark();
    const spec = row.req();
    const res = spec.raw ? await raw(demo.victim, spec.raw) : await request(demo.victim, spec);
    assert.ok(inRange(res.status, row.status), `${row.name}: answered ${res.status}, want ${row.status}`);
    if (row.log) {
      const line = await waitForLog(demo, mark, new RegExp(`^rejected [A-Z]+ /\\S* from 127\\.0\\.0\\.1: .*`, 'm'));
      assert.ok(line, 'the demo logged the rejection');
      assert.match(line.split('\n').find((l) => l.startsWith('rejected')), row.log);
    }
    assert.ok(demo.alive(), 'the demo is still running');
    assert.deepEqual(await getState(demo.victim), before, '/api/state unchanged, and the demo still answers');
  });
}

test('five wrong passwords lock the account, even for the right one', async () => {
  const before = await getState(demo.victim);
  for (let i = 0; i < 5; i++) {
    const r = await request(demo.victim, post('/transfer', { to: 'alice', amount: '5', password: `wrong-${i}` }, { s: bob }));
    assert.equal(r.status, 403, `failure ${i + 1}`);
  }
  const r = await request(demo.victim, post('/transfer', { to: 'alice', amount: '5', password: 'builder' }, { s: bob }));
  assert.equal(r.status, 403, 'locked out with the right password too');
  assert.match(r.body, /locked/i);
  assert.match(r.body, /15 minutes/);
  assert.deepEqual(await getState(demo.victim), before, 'nothing moved');
});

test('the log never carries a token or a cookie value', () => {
  const log = demo.log();
  for (const secret of [alice.token, bob.token, alice.cookie.split('=')[1], bob.cookie.split('=')[1]]) {
    assert.ok(!log.includes(secret), 'no secret in the demo output');
  }
});
