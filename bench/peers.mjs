// SPDX-License-Identifier: BSD-2-Clause
// peers.mjs - per-operation cost of the Node.js CSRF token libraries people
// pick: pillarjs `csrf` (behind csurf), `@fastify/csrf` with and without its
// HMAC userInfo binding, and `csrf-csrf` (double submit, HMAC over the
// session id). Same protocol as micro.c: one JSON line per (impl, op), the
// median of ROUNDS interleaved rounds of ITERS operations.
// Usage: node peers.mjs PEERS_DIR [ROUNDS ITERS]
import { createRequire } from 'node:module';
import path from 'node:path';

const peers = path.resolve(process.argv[2] || 'peers');
const rounds = Number(process.argv[3] || 7);
const iters = Number(process.argv[4] || 20000);
const require = createRequire(path.join(peers, 'package.json'));

const Tokens = require('csrf');
const FastifyTokens = require('@fastify/csrf');
const { doubleCsrf } = require('csrf-csrf');

const sid = 'session-0123456789';
const rows = [];
function add(impl, op, fn) { rows.push({ impl, op, fn, samples: [] }); }
function must(ok) { if (!ok) throw new Error('verification failed'); }

{
  const t = new Tokens();
  const secret = t.secretSync();
  const token = t.create(secret);
  add('csrf (pillarjs) 3.1.0', 'issue', () => t.create(secret));
  add('csrf (pillarjs) 3.1.0', 'verify', () => must(t.verify(secret, token)));
}
{
  const t = new FastifyTokens();
  const secret = t.secretSync();
  const token = t.create(secret);
  add('@fastify/csrf 8.1.1', 'issue', () => t.create(secret));
  add('@fastify/csrf 8.1.1', 'verify', () => must(t.verify(secret, token)));
}
{
  const t = new FastifyTokens({ userInfo: true, hmacKey: 'k'.repeat(32) });
  const secret = t.secretSync();
  const token = t.create(secret, sid);
  add('@fastify/csrf 8.1.1 userInfo', 'issue', () => t.create(secret, sid));
  add('@fastify/csrf 8.1.1 userInfo', 'verify', () => must(t.verify(secret, token, sid)));
}
{
  const { generateCsrfToken, validateRequest } = doubleCsrf({
    getSecret: () => 'server-secret-0123456789abcdef0123',
    getSessionIdentifier: () => sid,
  });
  const res = { cookie() {} };
  const fresh = { cookies: {}, headers: {}, method: 'GET' };
  const token = generateCsrfToken(fresh, res);
  const post = {
    cookies: { '__Host-psifi.x-csrf-token': token },
    headers: { 'x-csrf-token': token },
    method: 'POST',
  };
  add('csrf-csrf 4.0.3', 'issue', () => generateCsrfToken(fresh, res, { overwrite: true }));
  add('csrf-csrf 4.0.3', 'verify', () => must(validateRequest(post)));
}

for (const r of rows) for (let k = 0; k < iters / 10; k++) r.fn();
for (let round = 0; round < rounds; round++) {
  for (const r of rows) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < iters; k++) r.fn();
    r.samples.push(Number(process.hrtime.bigint() - t0) / iters);
  }
}
for (const r of rows) {
  r.samples.sort((a, b) => a - b);
  console.log(JSON.stringify({ impl: r.impl, op: r.op, ns: Math.round(r.samples[r.samples.length >> 1] * 10) / 10 }));
}
