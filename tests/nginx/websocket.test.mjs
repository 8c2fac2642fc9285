// SPDX-License-Identifier: BSD-2-Clause
// websocket.test.mjs - Cross-Site WebSocket Hijacking in headless Chromium
// through the real nginx and the module (ctest: nginx.websocket.browser).
// By name over plain HTTP (tests/e2e/browser.mjs's named mode): the victim
// at victim.test sets a SameSite=Lax session cookie; a page of its sibling
// subdomain evil.victim.test is same-site, so Chromium sends that cookie
// with its handshake to ws://victim.test. Without the rule (a `csrf off`
// location, the control) the attacker's page opens the socket, the
// upstream sees the victim's cookie, and the page reads the echo. Through
// the module the same handshake is refused 403 (websocket_origin) before
// the upstream, and so is a cross-site page's (evil.test); the victim's
// own page connects. The upstream is a small WebSocket echo in this file;
// it records whether a cookie came, never its value.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { freePort } from './net.mjs';
import { MODULE, startNginx } from './ngx.mjs';
import { BROWSER, launch } from '../e2e/browser.mjs';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'; // RFC 6455 1.3
const seen = []; // { path, origin, cookie: whether the session cookie came }
let upstream;
let ngx;
let port;
let browser;

function startEcho() {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('no handshake');
  });
  server.on('upgrade', (req, sock) => {
    seen.push({ path: req.url, origin: req.headers.origin, cookie: /(^|;\s*)sid=/.test(req.headers.cookie || '') });
    const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + GUID).digest('base64');
    sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`);
    let buf = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2) {
        const op = buf[0] & 0x0f;
        const n = buf[1] & 0x7f;
        if (n > 125 || !(buf[1] & 0x80)) return sock.destroy(); // short, masked client frames only
        if (buf.length < 6 + n) return;
        const mask = buf.subarray(2, 6);
        const payload = Buffer.from(buf.subarray(6, 6 + n).map((b, i) => b ^ mask[i % 4]));
        buf = buf.subarray(6 + n);
        if (op === 8) return sock.end();
        if (op === 1) sock.write(Buffer.concat([Buffer.from([0x81, payload.length]), payload]));
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// Runs in the page: opens a WebSocket to url, sends "ping", answers
// "echo:<reply>", "error" (the handshake was refused) or "timeout".
function openSocket(url) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const t = setTimeout(() => resolve('timeout'), 5000);
    ws.onopen = () => ws.send('ping');
    ws.onmessage = (e) => {
      clearTimeout(t);
      ws.close();
      resolve(`echo:${e.data}`);
    };
    ws.onerror = () => {
      clearTimeout(t);
      resolve('error');
    };
  });
}

before(async () => {
  assert.ok(MODULE, 'CSRF_NGX_MODULE names the built module');
  upstream = await startEcho();
  port = await freePort();
  const up = `http://127.0.0.1:${upstream.address().port}`;
  const proxy = `proxy_pass ${up}; proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; ` +
    'proxy_set_header Connection upgrade;';
  ngx = await startNginx('csrf-ws', `
    log_format csrf '$request_method $uri $status $csrf_result';
    access_log {prefix}/access.log csrf;
    default_type text/html;
    server {
        listen 127.0.0.1:${port};
        server_name victim.test;
        csrf on;
        location = /login {
            add_header Set-Cookie "sid=victim-session; Path=/; SameSite=Lax; HttpOnly";
            return 200 "<!DOCTYPE html><title>victim</title><p>signed in</p>";
        }
        location /ws { ${proxy} }
        location /open/ { csrf off; ${proxy} }
    }
    server {
        listen 127.0.0.1:${port};
        server_name evil.test evil.victim.test;
        location / { return 200 "<!DOCTYPE html><title>attacker</title>"; }
    }
`, [port]);
  browser = await launch(BROWSER, { mode: 'named' });
});

after(async () => {
  if (browser) await browser.close();
  if (ngx) await ngx.stop();
  if (upstream) await new Promise((r) => upstream.close(r));
});

test(`${BROWSER}: a page of another origin cannot open the victim's WebSocket`, async () => {
  const victim = `http://victim.test:${port}`;
  const page = await browser.newPage();
  try {
    await page.goto(`${victim}/login`);
    assert.equal(await page.evaluate(openSocket, `ws://victim.test:${port}/ws/chat`), 'echo:ping',
      "the victim's own page connects");
    assert.deepEqual(seen.pop(), { path: '/ws/chat', origin: victim, cookie: true });

    // the control: where the module does not judge, the same-site page
    // hijacks the socket with the victim's cookie
    await page.goto(`http://evil.victim.test:${port}/`);
    assert.equal(await page.evaluate(openSocket, `ws://victim.test:${port}/open/chat`), 'echo:ping',
      'the hijack works without the rule (csrf off)');
    assert.deepEqual(seen.pop(), { path: '/open/chat', origin: `http://evil.victim.test:${port}`, cookie: true });

    // through the module: refused before the upstream
    assert.equal(await page.evaluate(openSocket, `ws://victim.test:${port}/ws/chat`), 'error',
      'a same-site page opened the socket');
    await page.goto(`http://evil.test:${port}/`);
    assert.equal(await page.evaluate(openSocket, `ws://victim.test:${port}/ws/chat`), 'error',
      'a cross-site page opened the socket');
    assert.deepEqual(seen, [], 'a refused handshake reached the upstream');
    const refused = (await ngx.logged('access.log')).split('\n').filter((l) => l.startsWith('GET /ws/chat 403 '));
    assert.deepEqual(refused, ['GET /ws/chat 403 websocket_origin', 'GET /ws/chat 403 websocket_origin']);
  } finally {
    await page.close();
  }
});
