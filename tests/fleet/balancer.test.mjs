// balancer.test.mjs - the deployment itself: a plain nginx load balancer
// (round robin, no CSRF module) in front of two protected csrf-demo
// instances that share one Redis, one key file and one database and are
// both given the balancer's origin (--origin). Consecutive requests land on
// alternate instances, so every step of a user's visit (login page, login,
// pages, votes) is served by whichever instance gets it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState, waitForLog } from '../e2e/demo.mjs';
import { request, form, setCookie, pageToken } from '../http/client.mjs';
import { redisBin, startRedis, csrfKey, freePort, formFields, startNginx, NGINX, has } from './fleet.mjs';

const skip = !redisBin ? 'redis-server is not installed' : !fs.existsSync(NGINX) ? `${NGINX} is not installed` : false;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-lb-'));
const keys = path.join(dir, 'csrf.keys');
let redis;
let a;
let b;
let lb;

before(async () => {
  if (skip) return;
  redis = await startRedis();
  csrfKey('new', keys);
  // The balancer's port is chosen first: it is the origin of the site.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ['--key-file', keys, '--store', redis.url(0), '--db', path.join(dir, 'fleet.db'), '--origin', origin];
  const base = Number(process.env.DEMO_PORT_BASE) || 0;
  a = await startDemo({ args, portBase: base });
  b = await startDemo({ args, portBase: base && base + 10 });
  const up = (d) => `server 127.0.0.1:${new URL(d.victim).port};`;
  lb = await startNginx(dir, 'lb', (p) => `upstream fleet { ${up(a)} ${up(b)} }
    server {
        listen 127.0.0.1:${p};
        location / {
            proxy_pass http://fleet;
            proxy_set_header Host $http_host;
        }
    }`, null, { port });
  assert.equal(lb.base, origin);
});

after(async () => {
  if (lb) await lb.stop();
  if (a) await a.stop();
  if (b) await b.stop();
  if (redis) await redis.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

function post(route, cookie, fields) {
  return request(lb.base, {
    method: 'POST',
    path: route,
    headers: { cookie, origin: lb.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: form(fields),
  });
}

test('requests through the balancer reach both instances', { skip }, async () => {
  // Two forgeries in a row: one rejection logged by each instance.
  const marks = [a.mark(), b.mark()];
  for (let i = 0; i < 2; i++) assert.equal((await post('/vote', '', { story: '1', type: 'y' })).status, 403);
  // no cookie at all: an anonymous visitor without the signed secret
  const re = /^rejected POST \/vote from 127\.0\.0\.1: secret cookie missing$/m;
  assert.ok(await waitForLog(a, marks[0], re), 'A rejected one');
  assert.ok(await waitForLog(b, marks[1], re), 'B rejected the other');
});

test('a visit through the balancer: login and votes, whichever instance answers', { skip }, async () => {
  const page = await request(lb.base, { path: '/login' });
  const pre = setCookie(page, 'csrf_secret');
  const r = await post('/login', pre, { ...formFields(page.body, '/login'), user: 'alice', password: 'wonderland' });
  assert.equal(r.status, 303, 'the login form is accepted by the next instance');
  const cookie = setCookie(r);
  const before = await getState(a.victim);
  for (let i = 0; i < 4; i++) {
    const home = await request(lb.base, { path: '/', headers: { cookie } });
    has(home.body, /id="whoami">alice</, `page ${i + 1}: signed in`);
    const tok = pageToken(home.body);
    const v = await post('/vote', cookie, { [tok.field]: tok.token, story: '2', type: 'y' });
    assert.equal(v.status, 303, `vote ${i + 1}`);
  }
  assert.equal((await getState(b.victim)).votes['2'].y, before.votes['2'].y + 4, 'four votes, one database');
  const forged = await request(lb.base, {
    method: 'POST',
    path: '/vote',
    headers: { cookie, origin: a.attacker, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ story: '2', type: 'y' }),
  });
  assert.equal(forged.status, 403, 'the attacker\'s origin is still rejected');
});
