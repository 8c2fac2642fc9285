// SPDX-License-Identifier: BSD-2-Clause
// balancer.test.mjs - the deployment itself (fleet.mjs startBalancedFleet:
// a plain nginx load balancer, round robin, in front of two protected
// csrf-demo instances sharing Redis, the key file and the database), over
// plain HTTP. Consecutive requests land on alternate instances, so every
// step of a user's visit (login page, login, pages, votes) is served by
// whichever instance gets it. balancer_browser.test.mjs walks the same
// deployment in Chromium and Firefox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getState, waitForLog } from '../e2e/demo.mjs';
import { request, form, setCookie, pageToken } from '../http/client.mjs';
import { formFields, has, startBalancedFleet, balancerSkip as skip } from './fleet.mjs';

let fleet;
let a;
let b;
let lb;

before(async () => {
  fleet = await startBalancedFleet();
  if (fleet) ({ a, b, lb } = fleet);
});

after(async () => {
  if (fleet) await fleet.stop();
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
