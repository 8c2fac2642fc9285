// concurrency.test.mjs - csrf-demo serves requests on a pool of threads
// that share one SQLite connection: concurrent votes and transfers are
// each applied exactly once (a transaction holds the connection from
// BEGIN to COMMIT, so no thread's statement lands in another's), and
// concurrent transfers never overdraw an account.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState } from '../e2e/demo.mjs';
import { request, form, loginSession } from './client.mjs';

const URLENC = 'application/x-www-form-urlencoded';
let demo;

before(async () => {
  demo = await startDemo();
});

after(async () => {
  if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo exits cleanly');
});

function post(s, route, fields) {
  return request(demo.victim, {
    method: 'POST',
    path: route,
    headers: { cookie: s.cookie, origin: demo.victim, 'content-type': URLENC },
    body: form({ [s.field]: s.token, ...fields }),
  });
}

test('concurrent votes from two users: each counted once', async () => {
  const alice = await loginSession(demo.victim, 'alice', 'wonderland');
  const bob = await loginSession(demo.victim, 'bob', 'builder');
  const before = await getState(demo.victim);
  const sends = [];
  for (let i = 0; i < 40; i++) {
    sends.push(post(i % 2 ? alice : bob, '/vote', { story: String(1 + (i % 3)), type: i % 4 < 2 ? 'y' : 'n' }));
  }
  const res = await Promise.all(sends);
  assert.deepEqual(res.map((r) => r.status), Array(40).fill(303));
  const after = await getState(demo.victim);
  let added = 0;
  for (const id of Object.keys(after.votes)) {
    added += after.votes[id].y + after.votes[id].n - before.votes[id].y - before.votes[id].n;
  }
  assert.equal(added, 40, 'forty votes, forty rows');
});

test('concurrent transfers: each applied once, never past the balance', async () => {
  const bob = await loginSession(demo.victim, 'bob', 'builder');
  const before = await getState(demo.victim);
  // four at once (fewer than the five step-up attempts libcsrf lets run
  // side by side before it refuses the rest), of which only three fit
  const amount = Math.floor(before.balances.bob / 4) + 1;
  const res = await Promise.all(Array.from({ length: 4 },
    () => post(bob, '/transfer', { to: 'alice', amount: String(amount), password: 'builder' })));
  const ok = res.filter((r) => r.status === 303).length;
  assert.equal(ok, 3, `three transfers fit the balance (${res.map((r) => r.status)})`);
  assert.ok(res.every((r) => r.status === 303 || r.status === 400), 'the others are refused as bad amounts');
  const after = await getState(demo.victim);
  assert.equal(after.balances.bob, before.balances.bob - 3 * amount);
  assert.equal(after.balances.alice, before.balances.alice + 3 * amount);
});
