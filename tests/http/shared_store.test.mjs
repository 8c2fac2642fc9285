// SPDX-License-Identifier: BSD-2-Clause
// shared_store.test.mjs - two csrf-demo instances with one Redis store, one
// key file and one database serve the same logged-in user: a session made
// on one is accepted on the other, a logout on one ends it on both. The
// test starts its own redis-server on a free loopback port; skipped when
// redis-server is not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState } from '../e2e/demo.mjs';
import { freePort } from '../nginx/net.mjs';
import { request, form, loginSession, pageToken } from './client.mjs';

const redisBin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => fs.existsSync(p));
const skip = redisBin ? false : 'redis-server is not installed';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-demo-shared-'));
let redis;
let a;
let b;

async function startRedis() {
  for (let i = 0; i < 10; i++) {
    // (not a random port of 30000-49999: most of them are in the kernel's
    // ephemeral range, which any outgoing connection may take meanwhile)
    const port = await freePort();
    const child = spawn(redisBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const ready = await new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), 5000);
      child.stdout.on('data', (d) => {
        out += d;
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(t);
          resolve(true);
        }
      });
      child.on('exit', () => {
        clearTimeout(t);
        resolve(false);
      });
    });
    if (ready) return { child, port };
    child.kill('SIGKILL');
  }
  throw new Error('redis-server did not start');
}

before(async () => {
  if (skip) return;
  redis = await startRedis();
  const keys = path.join(dir, 'keys');
  fs.writeFileSync(keys, `key 1 ${Math.floor(Date.now() / 1000)} ${crypto.randomBytes(32).toString('hex')} sign\n`,
    { mode: 0o600 });
  const args = ['--key-file', keys, '--store', `redis://127.0.0.1:${redis.port}/0`];
  a = await startDemo({ args: [...args, '--db', path.join(dir, 'shared.db')] });
  b = await startDemo({ args: [...args, '--db', path.join(dir, 'shared.db')] });
});

after(async () => {
  if (a) await a.stop();
  if (b) await b.stop();
  if (redis) {
    const gone = new Promise((r) => redis.child.once('exit', r));
    redis.child.kill('SIGTERM');
    await gone;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

function vote(demo, s, token, story) {
  return request(demo.victim, {
    method: 'POST',
    path: '/vote',
    headers: { cookie: s.cookie, origin: demo.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [s.field]: token, story, type: 'y' }),
  });
}

test('a session made on one instance is served by the other', { skip }, async () => {
  const s = await loginSession(a.victim, 'alice', 'wonderland');
  const page = await request(b.victim, { path: '/', headers: { cookie: s.cookie } });
  assert.match(page.body, /id="whoami">alice</, 'instance B knows the session');
  const before = await getState(b.victim);
  assert.equal((await vote(b, s, s.token, '2')).status, 303, 'a token of A verifies on B');
  assert.equal((await vote(a, s, pageToken(page.body).token, '2')).status, 303, 'and one of B on A');
  const after = await getState(a.victim);
  assert.equal(after.votes['2'].y, before.votes['2'].y + 2, 'both votes in the one database');
});

test('a logout on one instance ends the session on both', { skip }, async () => {
  const s = await loginSession(a.victim, 'bob', 'builder');
  const r = await request(b.victim, {
    method: 'POST',
    path: '/logout',
    headers: { cookie: s.cookie, origin: b.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [s.field]: s.token }),
  });
  assert.equal(r.status, 303);
  const page = await request(a.victim, { path: '/', headers: { cookie: s.cookie } });
  assert.doesNotMatch(page.body, /id="whoami">bob</);
  const before = await getState(a.victim);
  assert.equal((await vote(a, s, s.token, '3')).status, 403, 'the old session\'s token is dead on A');
  assert.deepEqual(await getState(a.victim), before);
});
