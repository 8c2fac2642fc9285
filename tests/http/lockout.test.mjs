// SPDX-License-Identifier: BSD-2-Clause
// lockout.test.mjs - the lockouts hold under attack (issue: flooding the
// store evicted them; anyone could lock anyone). Against csrf-demo with a
// deliberately small memory store:
//  - anonymous visitors create no server state, so a flood of them cannot
//    fill the store, and the step-up lockout still holds after it;
//  - wrong logins for bob from an anonymous client throttle that client's
//    logins (429 with Retry-After), never bob's own signed-in step-up with
//    the right password;
//  - a store full of security counters refuses new entries: logins
//    answer 503 "store full" (the store's log line says so) and the
//    counters hold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState } from '../e2e/demo.mjs';
import { request, form, loginSession, setCookie, pageToken } from './client.mjs';

let demo;
const URLENC = 'application/x-www-form-urlencoded';

before(async () => {
  demo = await startDemo({ args: ['--store', 'memory://?max=40'] });
});

after(async () => {
  if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo exits cleanly');
});

function transfer(s, password, to = 'alice') {
  return request(demo.victim, {
    method: 'POST',
    path: '/transfer',
    headers: { cookie: s.cookie, origin: demo.victim, 'content-type': URLENC },
    body: form({ [s.field]: s.token, to, amount: '1', password }),
  });
}

test('wrong logins for bob from elsewhere never lock bob out of his own step-up', async () => {
  const bob = await loginSession(demo.victim, 'bob', 'builder');
  // an anonymous attacker's login form, then many wrong passwords for bob
  const page = await request(demo.victim, { path: '/login' });
  const cookie = setCookie(page, 'csrf_secret');
  const tok = pageToken(page.body);
  for (let i = 0; i < 8; i++) {
    const r = await request(demo.victim, {
      method: 'POST',
      path: '/login',
      headers: { cookie, origin: demo.victim, 'content-type': URLENC },
      body: form({ [tok.field]: tok.token, user: 'bob', password: i === 7 ? 'builder' : `guess-${i}` }),
    });
    // five wrong passwords, then this client is locked out of bob's
    // account, the right password included
    if (i < 4) {
      assert.equal(r.status, 403, `guess ${i + 1} refused`);
      assert.match(r.body, /wrong user name or password/);
      assert.equal(r.headers['retry-after'], undefined);
    } else {
      assert.equal(r.status, 429, `attempt ${i + 1} throttled`);
      assert.match(r.body, /id="reason">locked out</);
      assert.equal(r.headers['retry-after'], '60', 'the shortest lock');
    }
  }
  const before = await getState(demo.victim);
  const r = await transfer(bob, 'builder');
  assert.equal(r.status, 303, 'bob, signed in, transfers with his right password');
  const after = await getState(demo.victim);
  assert.equal(after.balances.bob, before.balances.bob - 1, 'the coin moved');
  assert.equal(after.balances.alice, before.balances.alice + 1);
});

test('a flood of anonymous visits leaves the step-up lockout in place', async () => {
  const alice = await loginSession(demo.victim, 'alice', 'wonderland');
  for (let i = 0; i < 5; i++) assert.equal((await transfer(alice, `wrong-${i}`, 'bob')).status, 403);
  // far more anonymous visits than the store holds entries
  for (let i = 0; i < 200; i++) {
    const r = await request(demo.victim, { path: i % 2 ? '/login' : '/' });
    assert.equal(r.status, 200);
    assert.equal(setCookie(r), null, 'an anonymous visit gets no server session');
  }
  const before = await getState(demo.victim);
  const r = await transfer(alice, 'wonderland', 'bob');
  assert.equal(r.status, 403, 'still locked out, even with the right password');
  assert.match(r.body, /locked/);
  assert.deepEqual(await getState(demo.victim), before, 'nothing moved');
});

test('a store full of security counters: logins 503 "store full", the counters hold', async () => {
  const small = await startDemo({ args: ['--store', 'memory://?max=6'] });
  try {
    const page = await request(small.victim, { path: '/login' });
    const cookie = setCookie(page, 'csrf_secret');
    const tok = pageToken(page.body);
    const login = (user, password) => request(small.victim, {
      method: 'POST',
      path: '/login',
      headers: { cookie, origin: small.victim, 'content-type': URLENC },
      body: form({ [tok.field]: tok.token, user, password }),
    });
    // wrong logins for names that do not exist: each pair's counter is a
    // security counter, until the store has no room left for another
    let full = null;
    for (let i = 0; i < 20 && !full; i++) {
      const r = await login(`nobody${i}`, 'wrong');
      if (r.status === 503) full = r;
      else assert.equal(r.status, 403, `wrong login ${i + 1}`);
    }
    assert.ok(full, 'the store filled up with counters');
    assert.match(full.body, /id="reason">store full</);
    assert.equal(full.headers['retry-after'], '1');
    const before = await getState(small.victim);
    const r = await login('alice', 'wonderland');
    assert.equal(r.status, 503, 'a right password cannot be counted either: fail closed');
    assert.match(r.body, /id="reason">store full</);
    assert.equal(setCookie(r), null, 'no session');
    assert.deepEqual(await getState(small.victim), before);
    assert.match(small.log(), /^store: store full: /m, 'the store said so in the log');
    assert.match(small.log(), /^rejected POST \/login from 127\.0\.0\.1: store full$/m);
    // the first counter is still there: more wrong logins for nobody0
    // are counted on it (no new entry needed), not refused as full
    for (let i = 0; i < 3; i++) {
      const again = await login('nobody0', 'wrong');
      assert.equal(again.status, 403, `nobody0, wrong login ${i + 2}: counted`);
      assert.match(again.body, /wrong user name or password/);
    }
  } finally {
    assert.equal(await small.stop(), 0);
  }
});
