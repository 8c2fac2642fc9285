// SPDX-License-Identifier: BSD-2-Clause
// nginx.test.mjs - two nginx instances with ngx_http_csrf_module and one
// csrf_key_file in front of one unprotected csrf-demo (the application
// that cannot be changed): a page fetched through nginx A carries the
// injected token and the secret cookie, the POST with them through nginx B
// is accepted and one without is rejected; after `csrf-key rotate` and
// `nginx -s reload` on both the old token still verifies, after `retire`
// and a reload it fails with unknown_key. Skipped without nginx or the
// built module.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState } from '../e2e/demo.mjs';
import { request, form } from '../http/client.mjs';
import { csrfKey, keyIds, Jar, formFields, startNginx, NGINX, has, lacks } from './fleet.mjs';

const MODULE = process.env.CSRF_NGX_MODULE || '';
const skip = !fs.existsSync(NGINX) ? `${NGINX} is not installed`
  : !MODULE || !fs.existsSync(MODULE) ? `the module is not built (${MODULE || 'CSRF_NGX_MODULE unset'})` : false;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-ngx-'));
const keys = path.join(dir, 'csrf.keys');
let app;
let na;
let nb;

function server(port, upstream) {
  return `server {
        listen 127.0.0.1:${port};
        csrf on;
        csrf_mode both;
        csrf_key_file ${keys};
        csrf_session_cookie demo_sid;
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            proxy_set_header Accept-Encoding "";
        }
    }`;
}

before(async () => {
  if (skip) return;
  csrfKey('new', keys);
  app = await startDemo({ unprotected: true });
  const upstream = new URL(app.victim).port;
  na = await startNginx(dir, 'a', (port) => server(port, upstream), MODULE);
  nb = await startNginx(dir, 'b', (port) => server(port, upstream), MODULE);
});

after(async () => {
  for (const n of [na, nb]) if (n) await n.stop();
  if (app) await app.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const jar = new Jar();

async function get(n, p) {
  return jar.take(await request(n.base, { path: p, headers: { cookie: jar.header() } }));
}

async function post(n, p, fields, j = jar) {
  return j.take(await request(n.base, {
    method: 'POST',
    path: p,
    headers: { cookie: j.header(), origin: n.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: form(fields),
  }));
}

// The csrf_result nginx logged for the last request to p.
async function lastResult(n, p) {
  const lines = (await n.accessLog()).split('\n').filter((l) => l.includes(` ${p} `));
  return lines.length ? lines[lines.length - 1].split(' ').slice(-2).join(' ') : null;
}

let voteFields;

test('a page through nginx A carries an injected token and the secret cookie', { skip }, async () => {
  const r = await get(na, '/');
  assert.equal(r.status, 200);
  assert.ok(jar.has('csrf_secret'), 'A sets the signed secret cookie');
  const login = formFields(r.body, '/login');
  assert.ok(login && Object.keys(login).some((k) => k.startsWith('csrf')), 'A injected the hidden field');
  has(r.body, /<meta name="csrf-token" content="[^"]+">/);
  const s = await post(nb, '/login', { ...login, user: 'alice', password: 'wonderland' });
  assert.equal(s.status, 303, 'the login form of A is accepted through B');
  assert.ok(jar.has('demo_sid'), 'the application\'s own session cookie passes through');
  assert.equal(await lastResult(nb, '/login'), '303 ok');
  const home = await get(na, '/');
  has(home.body, /id="whoami">alice</);
  voteFields = formFields(home.body, '/vote');
  assert.ok(voteFields, 'vote forms carry injected tokens for the new session');
});

async function vote(n, fields, expect, result, j = jar) {
  const before = await getState(app.victim);
  const r = await post(n, '/vote', { ...fields, type: 'y' }, j);
  assert.equal(r.status, expect, `POST /vote through ${n.name}`);
  assert.equal(await lastResult(n, '/vote'), `${expect} ${result}`, `${n.name} logs ${result}`);
  const counted = (await getState(app.victim)).votes[fields.story].y - before.votes[fields.story].y;
  assert.equal(counted, expect === 303 ? 1 : 0, expect === 303 ? 'the vote is counted' : 'nothing changed');
}

test('the token of A verifies on B; a POST without it is rejected', { skip }, async () => {
  await vote(nb, voteFields, 303, 'ok');
  const noToken = Object.fromEntries(Object.entries(voteFields).filter(([k]) => !k.startsWith('csrf')));
  await vote(nb, noToken, 403, 'token_missing');
  await vote(na, noToken, 403, 'token_missing');
});

test('rotate + nginx -s reload on both: the old token still verifies; retired, it fails', { skip }, async () => {
  const first = keyIds(keys).signing;
  csrfKey('rotate', keys);
  await na.reload();
  await nb.reload();
  await vote(nb, voteFields, 303, 'ok');
  await vote(na, voteFields, 303, 'ok');
  const fresh = formFields((await get(nb, '/')).body, '/vote');
  await vote(na, fresh, 303, 'ok');

  // Retiring the key also ends the secret cookies it signed: a user's
  // next page gets a new cookie and new tokens.
  csrfKey('retire', keys, String(first));
  await na.reload();
  await nb.reload();
  const before = jar.clone();
  await vote(na, voteFields, 403, 'unknown_key', before.clone());
  await vote(nb, voteFields, 403, 'unknown_key', before.clone());
  const again = formFields((await get(na, '/')).body, '/vote');
  assert.ok(jar.header() !== before.header(), 'A replaced the secret cookie of the retired key');
  await vote(nb, again, 303, 'ok');
  for (const n of [na, nb]) lacks(n.errorLog(), /exited on signal|core dumped/, `${n.name} workers`);
});
