// SPDX-License-Identifier: BSD-2-Clause
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

// Another process holds the database's write lock for longer than the
// demo's busy timeout (5 s): every state change must fail closed, with
// nothing half done. A vote answers 500 and adds no row; a login either
// fails or records its session history row, never a signed-in session
// without its row (db_login_record's insert fails, and the login went on).
test('a write lock held elsewhere past the busy timeout: votes and logins fail closed', async () => {
  const { spawn, execFileSync } = await import('node:child_process');
  const path = await import('node:path');
  const db = path.join(demo.dir, 'demo.db');
  const count = (sql) => Number(execFileSync('sqlite3', [db, sql]).toString().trim());
  const alice = await loginSession(demo.victim, 'alice', 'wonderland');
  const votes0 = count('SELECT count(*) FROM votes');
  const sessions0 = count("SELECT count(*) FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = 'bob')");
  const locker = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'inherit'] });
  const gone = new Promise((r) => locker.once('exit', r));
  locker.stdin.write("BEGIN IMMEDIATE;\nSELECT 'locked';\n");
  await new Promise((r) => locker.stdout.once('data', r));
  let vote, login;
  try {
    [vote, login] = await Promise.all([
      post(alice, '/vote', { story: '1', type: 'y' }),
      loginSession(demo.victim, 'bob', 'builder').then(() => 303, () => 0),
    ]);
  } finally {
    locker.stdin.end('ROLLBACK;\n.quit\n');
    await gone;
  }
  assert.equal(vote.status, 500, 'the vote is refused as a database error');
  assert.equal(count('SELECT count(*) FROM votes'), votes0, 'and adds no row');
  const sessions1 = count("SELECT count(*) FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = 'bob')");
  assert.ok(login !== 303 || sessions1 === sessions0 + 1,
    `a login accepted during the lock has its history row (303, rows ${sessions0} -> ${sessions1})`);
});
