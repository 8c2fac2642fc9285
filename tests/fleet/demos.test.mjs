// SPDX-License-Identifier: BSD-2-Clause
// demos.test.mjs - two csrf-demo instances as a fleet: one redis-server
// (started here on a free loopback port, no persistence), one key file
// made by csrf-key, one SQLite database file (WAL). A form rendered by one
// instance is accepted by the other; forgeries are rejected by both with
// their reason logged; wrong passwords spread over both lock the account
// on both; a key rotation (csrf-key rotate + SIGHUP) logs nobody out and a
// retired key's tokens fail with "unknown key" everywhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState, waitForLog } from '../e2e/demo.mjs';
import { request, form, loginSession, pageToken, setCookie } from '../http/client.mjs';
import { redisBin, startRedis, csrfKey, keyIds, formFields, has, lacks } from './fleet.mjs';

const skip = redisBin ? false : 'redis-server is not installed';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-'));
const keys = path.join(dir, 'csrf.keys');
const db = path.join(dir, 'fleet.db');
let redis;
let a;
let b;

before(async () => {
  if (skip) return;
  redis = await startRedis();
  csrfKey('new', keys);
  const args = ['--key-file', keys, '--store', redis.url(0), '--db', db];
  a = await startDemo({ args });
  b = await startDemo({ args });
});

after(async () => {
  if (a) await a.stop();
  if (b) await b.stop();
  if (redis) await redis.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

const urlenc = 'application/x-www-form-urlencoded';

function post(demo, route, cookie, fields, headers = {}) {
  return request(demo.victim, {
    method: 'POST',
    path: route,
    headers: { cookie, origin: demo.victim, 'content-type': urlenc, ...headers },
    body: form(fields),
  });
}

function reasonOf(res) {
  const m = /<strong id="reason">([^<]*)</.exec(res.body);
  return m ? m[1] : null;
}

// A request that one instance must reject: 403, the reason on the page and
// in that instance's log, and no state change.
async function assertRejected(demo, what, send, reason) {
  const before = await getState(demo.victim);
  const mark = demo.mark();
  const res = await send();
  assert.equal(res.status, 403, `${what}: status`);
  assert.equal(reasonOf(res), reason, `${what}: the page names the reason`);
  const re = new RegExp(`^rejected POST /\\w+ from 127\\.0\\.0\\.1: ${reason}$`, 'm');
  assert.ok(await waitForLog(demo, mark, re), `${what}: the log says "${reason}"`);
  assert.deepEqual(await getState(demo.victim), before, `${what}: nothing changed`);
}

async function freshToken(demo, s) {
  const r = await request(demo.victim, { path: '/', headers: { cookie: s.cookie } });
  assert.equal(r.status, 200);
  return pageToken(r.body).token;
}

test('a login form of A submitted to B signs in on both', { skip }, async () => {
  const page = await request(a.victim, { path: '/login' });
  const pre = setCookie(page, 'csrf_secret');
  const fields = formFields(page.body, '/login');
  assert.ok(pre && fields && Object.keys(fields).length === 1, 'A renders a login form with one hidden token');
  const r = await post(b, '/login', pre, { ...fields, user: 'alice', password: 'wonderland' });
  assert.equal(r.status, 303, 'B accepts the login token of A');
  const cookie = setCookie(r);
  assert.ok(cookie && cookie !== pre, 'the login rotates the session id');
  for (const d of [a, b]) {
    const home = await request(d.victim, { path: '/', headers: { cookie } });
    has(home.body, /id="whoami">alice</, `${d === a ? 'A' : 'B'} serves the new session`);
  }
  const old = await request(a.victim, { path: '/', headers: { cookie: pre } });
  lacks(old.body, /id="whoami">alice</, 'the anonymous visitor is signed in on neither');
});

test('a vote form rendered by A and submitted to B is accepted and counted once', { skip }, async () => {
  const s = await loginSession(a.victim, 'alice', 'wonderland');
  const page = await request(a.victim, { path: '/', headers: { cookie: s.cookie } });
  const fields = formFields(page.body, '/vote');
  assert.ok(fields && fields[s.field] && fields.story, 'A renders vote forms with the token');
  const before = await getState(a.victim);
  const r = await post(b, '/vote', s.cookie, { ...fields, type: 'y' });
  assert.equal(r.status, 303, 'B accepts the form of A');
  const story = fields.story;
  for (const d of [a, b]) {
    const after = await getState(d.victim);
    assert.equal(after.votes[story].y, before.votes[story].y + 1, 'one vote, seen by both');
    assert.equal(after.votes[story].n, before.votes[story].n);
  }
});

test('forged requests are rejected by both, each logging the reason', { skip }, async () => {
  const alice = await loginSession(a.victim, 'alice', 'wonderland');
  const mallory = await loginSession(b.victim, 'mallory', 'mallory-pw');
  const vote = { story: '1', type: 'y' };
  for (const [name, d] of [['A', a], ['B', b]]) {
    const rows = [
      ['no token', () => post(d, '/vote', alice.cookie, vote), 'token missing'],
      ['Origin of the attacker',
        () => post(d, '/vote', alice.cookie, { [alice.field]: alice.token, ...vote }, { origin: d.attacker }),
        'origin mismatch'],
      ['a browser\'s cross-origin form',
        () => post(d, '/vote', alice.cookie, { [alice.field]: alice.token, ...vote },
          { origin: d.attacker, 'sec-fetch-site': 'same-site' }),
        'same-site request from another origin'],
      ['a token of another session (in the header)',
        () => post(d, '/vote', alice.cookie, vote, { 'x-csrf-token': mallory.token }), 'token from another session'],
      ['a token of another session (in alice\'s field)',
        () => post(d, '/vote', alice.cookie, { [alice.field]: mallory.token, ...vote }), 'token from another session'],
      // without a session cookie the visitor is anonymous: the secret would
      // come from the library's signed cookie, which is not there either
      ['no session (the field name is the session\'s)',
        () => post(d, '/vote', '', { [alice.field]: alice.token, ...vote }), 'secret cookie missing'],
      ['no session, token in the header', () => post(d, '/vote', '', vote, { 'x-csrf-token': alice.token }),
        'secret cookie missing'],
      ['a transfer without a token',
        () => post(d, '/transfer', alice.cookie, { to: 'mallory', amount: '100', password: 'wonderland' }),
        'token missing'],
    ];
    for (const [what, send, reason] of rows) await assertRejected(d, `${name}: ${what}`, send, reason);
  }
});

test('five wrong passwords spread over A and B lock the account on both', { skip }, async () => {
  const bob = await loginSession(a.victim, 'bob', 'builder');
  const transfer = (d, password) => post(d, '/transfer', bob.cookie,
    { [bob.field]: bob.token, to: 'alice', amount: '1', password });
  const before = await getState(a.victim);
  const order = [a, b, a, b, a];
  for (let i = 0; i < order.length; i++) {
    const r = await transfer(order[i], 'not-the-password');
    assert.equal(r.status, 403, `wrong password ${i + 1}`);
    assert.equal(reasonOf(r), i < 4 ? 're-authentication failed' : 'locked out', `wrong password ${i + 1}`);
  }
  for (const [name, d] of [['A', a], ['B', b]]) {
    const mark = d.mark();
    const r = await transfer(d, 'builder');
    assert.equal(r.status, 403, `${name}: the right password is refused`);
    assert.equal(reasonOf(r), 'locked out', `${name}: locked`);
    has(r.body, /locked for 15 minutes/, `${name}: the page says the account is locked`);
    assert.ok(await waitForLog(d, mark, /^rejected POST \/transfer from 127\.0\.0\.1: locked out$/m));
  }
  assert.deepEqual(await getState(b.victim), before, 'no money moved');
});

async function reloadBoth() {
  for (const d of [a, b]) {
    const mark = d.mark();
    d.child.kill('SIGHUP');
    assert.ok(await waitForLog(d, mark, /^reloaded key file /m), 'the instance reloaded the key file');
  }
}

test('rotation across the fleet: old tokens verify until their key is retired', { skip }, async () => {
  const s = await loginSession(a.victim, 'alice', 'wonderland');
  const vote = (d, token) => post(d, '/vote', s.cookie, { [s.field]: token, story: '3', type: 'n' });
  const old = s.token;
  const first = keyIds(keys).signing;
  assert.ok(first, 'csrf-key list shows the signing key');

  csrfKey('rotate', keys);
  const ids = keyIds(keys);
  assert.notEqual(ids.signing, first, 'a new key signs');
  assert.deepEqual(ids.verifying, [first], 'the old key still verifies');
  await reloadBoth();
  for (const d of [a, b]) assert.equal((await vote(d, old)).status, 303, 'a token issued before the rotation');
  const mid = await freshToken(b, s);
  for (const d of [a, b]) assert.equal((await vote(d, mid)).status, 303, 'a token of the new key');

  csrfKey('retire', keys, String(first));
  assert.deepEqual(keyIds(keys).verifying, []);
  await reloadBoth();
  for (const d of [a, b]) {
    await assertRejected(d, 'a token of the retired key', () => vote(d, old), 'unknown key');
    assert.equal((await vote(d, mid)).status, 303, 'the new key\'s tokens keep working');
    assert.equal((await vote(d, await freshToken(d, s))).status, 303, 'fresh tokens work');
  }
});

async function reload(d) {
  const mark = d.mark();
  d.child.kill('SIGHUP');
  assert.ok(await waitForLog(d, mark, /^reloaded key file /m), 'the instance reloaded the key file');
}

test('stage, reload, rotate: an instance not yet reloaded accepts the other\'s new tokens', { skip }, async () => {
  const s = await loginSession(a.victim, 'alice', 'wonderland');
  const vote = (d, token) => post(d, '/vote', s.cookie, { [s.field]: token, story: '1', type: 'y' });
  const before = keyIds(keys).signing;
  csrfKey('stage', keys);
  const staged = keyIds(keys).staged;
  assert.equal(staged.length, 1, 'one staged key');
  assert.equal(keyIds(keys).signing, before, 'a staged key does not sign yet');
  await reloadBoth();

  csrfKey('rotate', keys);
  assert.equal(keyIds(keys).signing, staged[0], 'the staged key signs');
  await reload(a); // B has not reloaded since the rotation
  const fromA = await freshToken(a, s);
  assert.equal((await vote(b, fromA)).status, 303, 'B verifies a token of the key A now signs with');
  assert.equal((await vote(a, await freshToken(b, s))).status, 303, 'and A verifies B\'s, of the old key');
  await reload(b);
});

test('no log line carries key material, a token or a session id', { skip }, () => {
  const file = fs.readFileSync(keys, 'utf8');
  const material = [...file.matchAll(/[0-9a-f]{64}/g)].map((m) => m[0]);
  assert.ok(material.length > 0);
  for (const d of [a, b]) {
    const log = d.log();
    for (const k of material) assert.ok(!log.includes(k), 'no key in the log');
    lacks(log, /demo_sid=|[A-Za-z0-9_-]{50,}/, 'no cookie or token in the log'); // a token is 51
  }
});
