// SPDX-License-Identifier: BSD-2-Clause
// keyfile.test.mjs - csrf-demo --key-file: tokens come from the file's
// signing key, SIGHUP reloads it (a rotation logs nobody out, a retired key
// stops verifying), and a broken file keeps the old ring.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState, waitForLog } from '../e2e/demo.mjs';
import { request, form, loginSession, pageToken } from './client.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-demo-keys-'));
const file = path.join(dir, 'keys');
const k1 = crypto.randomBytes(32).toString('hex');
const k2 = crypto.randomBytes(32).toString('hex');
const now = Math.floor(Date.now() / 1000);

function writeKeys(lines) {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, `${lines.join('\n')}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

let demo;
let alice;

before(async () => {
  writeKeys([`key 1 ${now} ${k1} sign`]);
  demo = await startDemo({ args: ['--key-file', file] });
  alice = await loginSession(demo.victim, 'alice', 'wonderland');
});

after(async () => {
  if (demo) await demo.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function vote(token) {
  return request(demo.victim, {
    method: 'POST',
    path: '/vote',
    headers: { cookie: alice.cookie, origin: demo.victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [alice.field]: token, story: '1', type: 'y' }),
  });
}

async function reload(re) {
  const mark = demo.mark();
  demo.child.kill('SIGHUP');
  assert.ok(await waitForLog(demo, mark, re), `the demo answered SIGHUP with ${re}`);
}

async function freshToken() {
  const r = await request(demo.victim, { path: '/', headers: { cookie: alice.cookie } });
  return pageToken(r.body).token;
}

test('a token of the file\'s key verifies', async () => {
  assert.equal((await vote(alice.token)).status, 303);
});

test('rotation: the old key still verifies after SIGHUP', async () => {
  writeKeys([`key 1 ${now} ${k1}`, `key 2 ${now} ${k2} sign`]);
  await reload(/^reloaded key file/m);
  assert.equal((await vote(alice.token)).status, 303, 'token of key 1');
  assert.equal((await vote(await freshToken())).status, 303, 'token of key 2');
});

test('a broken key file keeps the old ring', async () => {
  fs.writeFileSync(file, 'key nonsense\n', { mode: 0o600 });
  await reload(/^key file reload failed, old keys kept/m);
  assert.equal((await vote(alice.token)).status, 303);
  assert.ok(demo.alive());
});

test('retiring the old key: its tokens stop verifying, new ones work', async () => {
  writeKeys([`key 2 ${now} ${k2} sign`]);
  await reload(/^reloaded key file/m);
  const before = await getState(demo.victim);
  const mark = demo.mark();
  assert.equal((await vote(alice.token)).status, 403);
  assert.ok(await waitForLog(demo, mark, /^rejected POST \/vote from 127\.0\.0\.1: \S/m));
  assert.deepEqual(await getState(demo.victim), before);
  assert.equal((await vote(await freshToken())).status, 303);
});

test('the log carries no key material', () => {
  const log = demo.log();
  assert.ok(!log.includes(k1) && !log.includes(k2));
});
