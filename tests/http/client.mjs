// SPDX-License-Identifier: BSD-2-Clause
// client.mjs - small HTTP clients for the bad-input tests: a plain request
// (node:http, one connection per request, every header under our control)
// and a raw socket that sends exactly the given bytes, for what a normal
// client refuses to send. Plus helpers to log in and read the page token.
import http from 'node:http';
import net from 'node:net';

export function request(base, { method = 'GET', path = '/', headers = {}, body = null } = {}) {
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, method, path: u.pathname + u.search, headers, agent: false },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      });
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    if (body !== null) req.write(body);
    req.end();
  });
}

// Sends bytes as they are and resolves to { status, text } once the server
// answers and closes (or after ms). Write errors after an early answer
// (the server refusing a body it will not read) are expected.
export function raw(base, bytes, ms = 5000) {
  const u = new URL(base);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    const chunks = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text });
    };
    const timer = setTimeout(finish, ms);
    sock.on('data', (c) => {
      chunks.push(c);
      // One answer is all we wait for: stop once its head and declared body are in.
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const cl = /\r\ncontent-length: *(\d+)/i.exec(text);
      if (head >= 0 && cl && text.length >= head + 4 + Number(cl[1])) finish();
    });
    sock.on('end', finish);
    sock.on('close', finish);
    sock.on('error', () => {});
    sock.write(bytes, () => {});
  });
}

// The "name=value" pair a response sets for cookie name (the demo's
// session by default; "csrf_secret" is libcsrf's signed secret of an
// anonymous visitor), or null.
export function setCookie(res, name = 'demo_sid') {
  const sc = res.headers['set-cookie'] || [];
  for (const c of sc) {
    if (c.startsWith(`${name}=`)) return c.split(';', 1)[0];
  }
  return null;
}

export function pageToken(html) {
  const p = /<meta name="csrf-param" content="([^"]+)">/.exec(html);
  const t = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
  return p && t ? { field: p[1], token: t[1] } : null;
}

export function form(fields) {
  return new URLSearchParams(fields).toString();
}

// A logged-in session over plain HTTP: the login form's token (bound to
// the signed secret cookie an anonymous visitor gets; no server state),
// the login, then the token of the new session.
export async function loginSession(victim, user, password) {
  let r = await request(victim, { path: '/login' });
  let cookie = setCookie(r, 'csrf_secret');
  const pre = pageToken(r.body);
  if (!cookie || !pre) throw new Error('no login token on /login');
  r = await request(victim, {
    method: 'POST',
    path: '/login',
    headers: { cookie, origin: victim, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ [pre.field]: pre.token, user, password }),
  });
  if (r.status !== 303) throw new Error(`login as ${user} answered ${r.status}`);
  cookie = setCookie(r);
  r = await request(victim, { path: '/', headers: { cookie } });
  const tok = pageToken(r.body);
  if (!tok || !r.body.includes(`id="whoami">${user}<`)) throw new Error(`not signed in as ${user}`);
  return { cookie, ...tok };
}
