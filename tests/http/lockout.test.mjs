// lockout.test.mjs - the lockouts hold under attack (issue: flooding the
// store evicted them; anyone could lock anyone). Against csrf-demo with a
// deliberately small memory store:
//  - anonymous visitors create no server state, so a flood of them cannot
//    fill the store, and the step-up lockout still holds after it;
//  - wrong logins for bob from an anonymous client throttle that client's
//    logins, never bob's own signed-in step-up with the right password.
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
  let locked = 0;
  for (let i = 0; i < 8; i++) {
    const r = await request(demo.victim, {
      method: 'POST',
      path: '/login',
      headers: { cookie, origin: demo.victim, 'content-type': URLENC },
      body: form({ [tok.field]: tok.token, user: 'bob', password: `guess-${i}` }),
    });
    assert.equal(r.status, 403, `guess ${i + 1} refused`);
    if (/locked out/.test(r.body)) locked++;
  }
  assert.ok(locked > 0, 'the guessing client is throttled');
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
