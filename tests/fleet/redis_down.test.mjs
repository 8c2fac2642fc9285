// SPDX-License-Identifier: BSD-2-Clause
// redis_down.test.mjs - two csrf-demo instances on one Redis while Redis
// hangs (SIGSTOP), dies (SIGKILL) and comes back on the same port: unsafe
// requests fail closed with 503 and the reason "store unavailable" (page
// and log), pages and /api/state keep answering 200 (a signed-in user is
// shown signed out meanwhile), no request waits much past the store's
// timeout, and service resumes without restarting the demos. A demo
// started while Redis is down starts anyway and opens the store when
// Redis answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startDemo, getState, waitForLog, demoBinary } from '../e2e/demo.mjs';
import { form, loginSession, pageToken } from '../http/client.mjs';
import { redisBin, startRedis, startTwoDemos, timed, sleep, freePort, has, lacks } from './fleet.mjs';

const skip = redisBin ? false : 'redis-server is not installed';
const TIMEOUT_MS = 300;
const storeArgs = () => ['--store', `${redis.url(0)}?timeout_ms=${TIMEOUT_MS}`];
// What a request may take beyond the store's timeout: one more store call
// inside the backoff answers at once; the rest is the sanitized build.
const LIMIT_MS = TIMEOUT_MS + 1700;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-down-'));
const keys = path.join(dir, 'csrf.keys');
let redis;
let a;
let b;
let c; // started while Redis is down
let slowest = 0;

before(async () => {
  if (skip) return;
  redis = await startRedis();
  ({ a, b } = await startTwoDemos(dir, keys, storeArgs()));
});

after(async () => {
  if (a) await a.stop();
  if (b) await b.stop();
  if (c) await c.stop();
  if (redis) await redis.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function req(demo, opts) {
  const r = await timed(demo.victim, opts);
  slowest = Math.max(slowest, r.ms);
  assert.ok(r.ms <= LIMIT_MS, `${opts.method || 'GET'} ${opts.path} answered in ${r.ms} ms (limit ${LIMIT_MS})`);
  return r;
}

function vote(demo, s, token, story = '1') {
  return req(demo, {
    method: 'POST',
    path: '/vote',
    headers: { cookie: s.cookie, origin: demo.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [s.field]: token, story, type: 'y' }),
  });
}

function transfer(demo, s) {
  return req(demo, {
    method: 'POST',
    path: '/transfer',
    headers: { cookie: s.cookie, origin: demo.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [s.field]: s.token, to: 'bob', amount: '5', password: 'wonderland' }),
  });
}

// While the store is down: every unsafe request 503 "store unavailable"
// (page and log), nothing changes; every page 200.
async function assertDegraded(s, state, demos = [['A', a], ['B', b]]) {
  for (const [name, d] of demos) {
    for (const [what, send] of [['vote', () => vote(d, s, s.token)], ['transfer', () => transfer(d, s)]]) {
      const mark = d.mark();
      const r = await send();
      assert.equal(r.status, 503, `${name}: ${what} fails closed`);
      has(r.body, /<strong id="reason">store unavailable</, `${name}: ${what}: the page says why`);
      assert.ok(await waitForLog(d, mark, /^rejected POST \/\w+ from 127\.0\.0\.1: store unavailable$/m),
        `${name}: ${what}: the log says why`);
    }
    for (const p of ['/', '/login']) {
      const r = await req(d, { path: p, headers: { cookie: s.cookie } });
      assert.equal(r.status, 200, `${name}: GET ${p} is still served`);
      has(r.body, /id="store-notice"/, `${name}: GET ${p} says the store is unavailable`);
      lacks(r.body, /id="whoami">alice</, `${name}: shown signed out meanwhile`);
    }
    const st = await req(d, { path: '/api/state' });
    assert.equal(st.status, 200, `${name}: /api/state is still served`);
    assert.deepEqual(JSON.parse(st.body), state, `${name}: nothing changed`);
  }
}

// Polls until the session's vote goes through again (the store reconnects
// after its backoff, at most a second).
async function voteUntilAccepted(d, s, token) {
  const end = Date.now() + 5000;
  for (;;) {
    const r = await vote(d, s, token);
    if (r.status === 303 || Date.now() > end) return r;
    await sleep(100);
  }
}

test('a hung Redis: unsafe requests 503, pages served, the session survives', { skip }, async () => {
  const s = await loginSession(a.victim, 'alice', 'wonderland');
  assert.equal((await vote(b, s, s.token)).status, 303, 'the fleet works');
  const state = await getState(a.victim);
  redis.pause();
  try {
    await assertDegraded(s, state);
  } finally {
    redis.resume();
  }
  for (const d of [a, b]) assert.equal((await voteUntilAccepted(d, s, s.token)).status, 303,
    'the same session and token work again on both');
  assert.equal((await getState(b.victim)).votes['1'].y, state.votes['1'].y + 2);
});

// Requests on both instances, one after another per instance, until
// stop(): every answer is counted by status (0: no answer at all).
function load(s) {
  const seen = {};
  let running = true;
  const loop = async (d) => {
    for (let i = 0; running; i++) {
      const r = await (i % 2 ? vote(d, s, s.token, '3') : req(d, { path: '/', headers: { cookie: s.cookie } }))
        .catch(() => ({ status: 0 }));
      seen[r.status] = (seen[r.status] || 0) + 1;
    }
  };
  const loops = [loop(a), loop(b)];
  return async () => {
    running = false;
    await Promise.all(loops);
    return seen;
  };
}

test('Redis killed and restarted: fail closed, then resume without restarting the demos', { skip }, async () => {
  const s = await loginSession(b.victim, 'alice', 'wonderland');
  const pids = [a.child.pid, b.child.pid];
  const stop = load(s);
  await sleep(300);
  await redis.kill();
  await sleep(500);
  const seen = await stop();
  assert.deepEqual(Object.keys(seen).sort(), ['200', '303', '503'],
    `under load, Redis dying: pages 200, votes 303 then 503, nothing else (${JSON.stringify(seen)})`);
  const state = await getState(a.victim);
  await assertDegraded(s, state);
  c = await startDemo({ args: ['--key-file', keys, ...storeArgs(), '--db', path.join(dir, 'fleet.db')],
    portBase: Number(process.env.DEMO_PORT_BASE) ? Number(process.env.DEMO_PORT_BASE) + 20 : 0 });
  // The library opens a Redis store that does not answer yet (lazily):
  // C starts, serves pages and fails unsafe requests closed.
  await assertDegraded(s, state, [['C', c]]);
  await redis.restart();
  // The restarted Redis has no data (no persistence): the old session is
  // gone and the user signs in again, on either instance.
  let fresh = null;
  const end = Date.now() + 5000;
  while (!fresh && Date.now() < end) {
    fresh = await loginSession(a.victim, 'alice', 'wonderland').catch(() => null);
    if (!fresh) await sleep(100);
  }
  assert.ok(fresh, 'signing in works again');
  const home = await req(b, { path: '/', headers: { cookie: fresh.cookie } });
  has(home.body, /id="whoami">alice</);
  lacks(home.body, /id="store-notice"/);
  const r = await voteUntilAccepted(b, fresh, pageToken(home.body).token);
  assert.equal(r.status, 303, 'the same POST with a fresh token succeeds');
  assert.equal((await getState(a.victim)).votes['1'].y, state.votes['1'].y + 1);
  assert.ok(a.alive() && b.alive(), 'the demos kept running');
  assert.deepEqual([a.child.pid, b.child.pid], pids);
  // C opens its store by itself once Redis answers and serves the session.
  let page = null;
  while (Date.now() < end + 3000) {
    page = await req(c, { path: '/', headers: { cookie: fresh.cookie } });
    if (/id="whoami">alice</.test(page.body)) break;
    await sleep(100);
  }
  has(page.body, /id="whoami">alice</, 'C serves the session once Redis is back');
  assert.equal((await vote(c, fresh, pageToken(page.body).token)).status, 303, 'and accepts its POSTs');
});

test('a store URL that is wrong (not merely down) stops the start', { skip }, async () => {
  const port = await freePort();
  for (const url of ['redis://127.0.0.1:notaport/0', 'redis://127.0.0.1:6379/0?timeout_ms=x', 'mysql://x']) {
    const r = spawnSync(demoBinary(), ['--listen', `127.0.0.1:${port}`, '--attacker-listen',
      `127.0.0.1:${port + 1}`, '--db', path.join(dir, 'alone.db'), '--store', url],
    { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 1, url);
    has(r.stderr, /cannot open the store: configuration error/, url);
  }
});

test('no request waited past the store timeout', { skip }, (t) => {
  t.diagnostic(`slowest request: ${slowest} ms (store timeout ${TIMEOUT_MS} ms)`);
  assert.ok(slowest <= LIMIT_MS, `slowest ${slowest} ms`);
});
