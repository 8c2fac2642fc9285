// SPDX-License-Identifier: BSD-2-Clause
// browser.test.mjs - csrf-demo --unprotected behind the real Debian nginx,
// in the browser E2E_BROWSER names (ctest: nginx.browser.chromium and
// nginx.browser.firefox). Through a server with `csrf on` (and
// `csrf_unsafe_get on` for /vote, since the unprotected demo votes on GET)
// every attack page of the demo fails and every legitimate flow works with
// the tokens the module injected into the unchanged app's forms. Through a
// server without the module the same app stays vulnerable.
//
// The demo's attacker pages point at the victim's own address; a second
// nginx server per victim serves them with sub_filter pointing them at the
// nginx in front (attacker and victim stay same-site, other origin).
// nginx logs what the browser sent with each request (the demo's
// --log-requests format; cookie presence only) and the test checks each
// forged request against what this browser is known to send.
//
// In the origin mode E2E_MODE names (ctest nginx.browser.chromium,
// nginx.browser.named.firefox, nginx.browser.https.chromium, ...):
//   loopback  the servers at http://127.0.0.1:PORT, the attacker another
//             port (same site)
//   named     http://victim.test:PORT, attackers http://evil.victim.test
//             (same site) and http://evil.test (another site) on the
//             attacker server's port: no Sec-Fetch-*, the module decides
//             on Origin and Referer
//   https     the same names over TLS and HTTP/2 (listen ... ssl http2,
//             the test CA of tests/e2e/tls.mjs): the module's __Host-
//             secret cookie, request bodies of HTTP/2 frames (one without
//             Content-Length: Chromium's request streams); every request
//             of the flow went over HTTP/2. The HTTPS Referer rule is not
//             reached from these browsers: they send Sec-Fetch-Site to
//             every https origin, and it decides first
//             (docs/browsers.md)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { freePort } from './net.mjs';
import { MODULE, startNginx as startNginxIn } from './ngx.mjs';
import { directFor, startDemo } from '../e2e/demo.mjs';
import { MODE } from '../e2e/browser.mjs';
import { makeCA } from '../e2e/tls.mjs';
import { ATTACKS, BROWSER, launch, login, requestLines, runAttack, getState } from '../e2e/lib.mjs';
import { expectedHeaders } from '../e2e/headers.mjs';

const where = MODE === 'loopback' ? '' : ` ${MODE}`;
const scheme = MODE === 'https' ? 'https' : 'http';
const KINDS = MODE === 'loopback' ? ['same-site'] : ['same-site', 'cross-site'];
let tls = null;

// The listen directive of a server in this mode.
function listen(port) {
  if (MODE !== 'https') return `listen 127.0.0.1:${port};`;
  return `listen 127.0.0.1:${port} ssl http2; ssl_certificate ${tls.cert}; ssl_certificate_key ${tls.key};`;
}

// The origin of a server on port under name in this mode.
function site(name, port) {
  return `${scheme}://${MODE === 'loopback' ? '127.0.0.1' : name}:${port}`;
}

function server(port, upstream, body) {
  return `
    server {
        ${listen(port)}
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            ${body}
        }
        location /vote {
            proxy_pass http://127.0.0.1:${upstream};
            ${body}
            ${body.includes('csrf on') ? 'csrf_unsafe_get on;' : ''}
        }
        # the streamed-body test: the token decides (mode both), and the
        # log says whether the request had a Content-Length
        location = /stream {
            proxy_pass http://127.0.0.1:${upstream};
            ${body}
            csrf_mode both;
            access_log {prefix}/stream.log stream;
        }
    }`;
}

function attackerServer(port, upstream, demoVictim, victim) {
  return `
    server {
        ${listen(port)}
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            sub_filter_types *;
            sub_filter_once off;
            sub_filter '${demoVictim}' '${victim}';
        }
    }`;
}

let demo;
let browser;
let ngx;
const sites = {};

async function startNginx(demoRef) {
  const [pv, pa, uv, ua] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dv = new URL(demoRef.victim).port;
  const da = new URL(demoRef.attacker).port;
  const n = await startNginxIn('csrf-ngx-browser', `
    log_format csrf '$request_method $request_uri $status $csrf_result';
    access_log {prefix}/access.log csrf;
    map $http_cookie $sent_cookie { "" no; default yes; }
    map $http_referer $referer_path { "~^(?<r>[^?#]*)" $r; }
    log_format sent 'request $request_method $uri port=$server_port origin=$http_origin referer=$referer_path '
                    'sec-fetch-site=$http_sec_fetch_site sec-fetch-mode=$http_sec_fetch_mode '
                    'content-type=$content_type cookie=$sent_cookie protocol=$server_protocol';
    access_log {prefix}/sent.log sent;
    log_format stream '$request_method $status $csrf_result $server_protocol $http_sec_fetch_site '
                      'length=$http_content_length';
    csrf_session_cookie demo_sid;
    ${server(pv, dv, 'csrf on;')}
    ${attackerServer(pa, da, demoRef.victim, site('victim.test', pv))}
    ${server(uv, dv, 'csrf off;')}
    ${attackerServer(ua, da, demoRef.victim, site('victim.test', uv))}
`, [pv, pa, uv, ua]);
  // One attacker server per victim, reached under the name of each kind.
  const attackers = (port) => ({ 'same-site': site('evil.victim.test', port), 'cross-site': site('evil.test', port) });
  sites.protected = { victim: site('victim.test', pv), attackers: attackers(pa) };
  sites.unprotected = { victim: site('victim.test', uv), attackers: attackers(ua) };
  for (const s of Object.values(sites)) {
    s.attacker = s.attackers['same-site'];
    directFor(s.victim, demoRef.victim);
  }
  // the logs once every request answered so far is written (ngx.mjs)
  return { ...n, accessLog: () => n.logged('access.log'), sentLog: () => n.logged('sent.log') };
}

before(async () => {
  assert.ok(MODULE && fs.existsSync(MODULE), 'CSRF_NGX_MODULE points at the built module');
  if (MODE === 'https') tls = makeCA(['victim.test', 'evil.victim.test', 'evil.test']);
  // the demo itself on loopback: nginx gives it its names
  demo = await startDemo({ unprotected: true, mode: 'loopback' });
  ngx = await startNginx(demo);
  browser = await launch(BROWSER, { ca: tls && tls.ca });
});

after(async () => {
  if (browser) await browser.close();
  if (ngx) {
    const log = ngx.errorLog();
    await ngx.stop();
    assert.doesNotMatch(log, /exited on signal|core dumped/, 'no nginx worker crashed');
  }
  if (demo) await demo.stop();
  if (tls) tls.remove();
});

// From another site only login CSRF (no session needed) gets through
// plain nginx: SameSite=Lax keeps alice's session cookie home (the demo's
// e2e.attacks_protected.named asserts the cookie stays home).
const CROSS_SITE_REAL = new Set(['login-csrf']);

for (const attack of ATTACKS) {
  // Through plain nginx over https the same cookies reach the unprotected
  // demo as by name (the protected runs assert each attack's Cookie
  // column), and it acts on them alone: the attacks are as real. Left out
  // there for make check's time.
  if (MODE !== 'https') {
  test(`${BROWSER}${where} without the module: ${attack.name} (${attack.what}) from the same site succeeds`, async () => {
    const r = await runAttack(browser, sites.unprotected, attack);
    assert.ok(r.changed, `the attack changed the victim's state through plain nginx (user now ${r.user})`);
  });
  }

  for (const kind of KINDS) {
  test(`${BROWSER}${where} with the module: ${attack.name} (${attack.what}) from the ${kind} attacker fails`, async () => {
    let mark = 0;
    const attacker = sites.protected.attackers[kind];
    const r = await runAttack(browser, { victim: sites.protected.victim, attacker }, attack,
      { beforeAttack: async () => { mark = (await ngx.sentLog()).length; } });
    assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
    assert.equal(r.changed, false);
    const [method, route] = attack.request.split(' ');
    const port = new URL(sites.protected.victim).port;
    const sent = requestLines((await ngx.sentLog()).slice(mark)).filter((q) => q.method === method && q.path === route
      && q.port === port);
    assert.equal(sent.length, 1, `the browser sent ${attack.request} once`);
    const { port: _, protocol, ...headers } = sent[0];
    assert.equal(protocol, MODE === 'https' ? 'HTTP/2.0' : 'HTTP/1.1');
    assert.deepEqual(headers, { ...headers, ...expectedHeaders(BROWSER, attack, attacker, { mode: MODE, kind }) },
      `the headers ${BROWSER} sends with ${attack.name}`);
  });
  }
}

test(`${BROWSER}${where} with the module: the rejections are logged with their reason`, async () => {
  const log = ngx.errorLog();
  assert.match(log, /csrf: rejected (GET|HEAD) "\/vote": \w+/);
  assert.match(log, /csrf: rejected POST "\/vote": \w+/);
  assert.match(log, /csrf: rejected POST "\/transfer": \w+/);
  assert.match(log, /csrf: rejected POST "\/login": \w+/);
});

test(`${BROWSER}${where} with the module: vote, transfer with password, two tabs, login all work`, async () => {
  const { victim } = sites.protected;
  const page = await browser.newPage();
  const mark = (await ngx.sentLog()).length;
  await login(page, victim, 'alice', 'wonderland');
  assert.equal(await page.evaluate(() => window.isSecureContext), MODE !== 'named', 'a secure context but by name');
  // the module's secret cookie: __Host- and Secure over https
  const secret = (await browser.cookies(victim)).filter((c) => /csrf_secret$/.test(c.name));
  assert.deepEqual(secret.map((c) => [c.name, c.secure, c.httpOnly, c.sameSite]),
    [[MODE === 'https' ? '__Host-csrf_secret' : 'csrf_secret', MODE === 'https', true, 'Lax']]);

  // the module injected its token into the unchanged app's forms
  const hidden = await page.count('form[action="/vote"] input[type=hidden][name^="csrf_"]');
  assert.ok(hidden > 0, 'vote forms carry the injected token');
  assert.equal(await page.count('meta[name="csrf-token"]'), 1, 'meta csrf-token injected');

  // vote
  // Each click waits for the document it leads to (a POST to / answers 303
  // to /, so waiting for the URL would not wait at all).
  const click = (p, sel) => p.clickAndWait(sel);
  let s0 = await getState(victim);
  await click(page, '#vote-1-y');
  assert.equal(page.url(), `${victim}/`);
  let s1 = await getState(victim);
  assert.equal(s1.votes['1'].y, s0.votes['1'].y + 1, 'the vote counted');

  // two tabs: both pages' tokens stay valid, in either order
  const tab2 = await browser.newPage();
  await tab2.goto(`${victim}/`);
  s0 = await getState(victim);
  await click(tab2, '#vote-2-n');
  await click(page, '#vote-2-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['2'].n, s0.votes['2'].n + 1, 'the vote of the second tab counted');
  assert.equal(s1.votes['2'].y, s0.votes['2'].y + 1, 'the vote of the first tab counted');
  await tab2.close();

  // transfer (with the password again when the app asks for it)
  await page.goto(`${victim}/account`);
  s0 = await getState(victim);
  await page.select('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '7');
  assert.equal(await page.count('#transfer-password'), 0, 'the unprotected app asks for no password');
  await click(page, '#transfer-submit');
  assert.equal(page.url(), `${victim}/account`, 'the transfer answers 303 to /account');
  s1 = await getState(victim);
  assert.equal(s1.balances.alice, s0.balances.alice - 7, 'alice paid');
  assert.equal(s1.balances.bob, s0.balances.bob + 7, 'bob was paid');

  // log out and in again: the new session's tokens work
  await click(page, '#logout');
  assert.equal(page.url(), `${victim}/`);
  await login(page, victim, 'alice', 'wonderland');
  s0 = await getState(victim);
  await click(page, '#vote-3-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['3'].y, s0.votes['3'].y + 1, 'a vote after a new login counted');
  await page.close();

  const port = new URL(victim).port;
  const flow = requestLines((await ngx.sentLog()).slice(mark)).filter((q) => q.port === port);
  for (const q of flow.filter((r) => r.method === 'POST')) {
    assert.equal(q.origin, victim, `${q.method} ${q.path}: the site's own Origin`);
    assert.equal(q['sec-fetch-site'], MODE === 'named' ? '-' : 'same-origin', `${q.method} ${q.path}: Sec-Fetch-Site`);
  }
  assert.deepEqual([...new Set(flow.map((q) => q.protocol))], [MODE === 'https' ? 'HTTP/2.0' : 'HTTP/1.1'],
    'the protocol of every request');
  const access = await ngx.accessLog();
  // the default mode, origin_or_token: the browser proves these same-origin
  // (Sec-Fetch-Site: same-origin, Origin), so no token is needed for them
  assert.match(access, /^POST \/vote 30\d origin_verified$/m);
  assert.match(access, /^POST \/login 30\d origin_verified$/m);
  assert.match(access, /^POST \/transfer \d+ origin_verified$/m);
});

// Over HTTP/2 a fetch whose body is a ReadableStream (duplex: 'half') goes
// out with no Content-Length: Chromium sends such request streams over
// HTTP/2 only. In mode both the module must read that body to find the
// token: with the page's token it passes (ok), without it 403
// token_missing. Firefox ESR 153 has no request streams (a feature test
// in the page says so); it sends the same body with a Content-Length.
test(`${BROWSER} https with the module: an HTTP/2 request body without Content-Length`, { skip: MODE !== 'https' }, async (t) => {
  const { victim } = sites.protected;
  const page = await browser.newPage();
  await login(page, victim, 'alice', 'wonderland');
  const mark = (await ngx.logged('stream.log')).length;
  const r = await page.evaluate(async () => {
    // request streams: the duplex option is read and the body is no text
    let duplex = false;
    const typed = new Request(location.href, { method: 'POST', body: new ReadableStream(),
      get duplex() { duplex = true; return 'half'; } }).headers.has('Content-Type');
    const streams = duplex && !typed;
    const param = document.querySelector('meta[name="csrf-param"]').content;
    const token = document.querySelector('meta[name="csrf-token"]').content;
    const send = async (text) => {
      const bytes = new TextEncoder().encode(text);
      const body = streams ? new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } }) : bytes;
      const res = await fetch('/stream', { method: 'POST', body, ...(streams ? { duplex: 'half' } : {}),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      return res.status;
    };
    return { streams, with: await send(`x=1&${param}=${encodeURIComponent(token)}`), without: await send('x=1') };
  });
  await page.close();
  const lines = (await ngx.logged('stream.log')).slice(mark).split('\n').filter(Boolean);
  t.diagnostic(`request streams: ${r.streams}; nginx: ${JSON.stringify(lines)}`);
  assert.equal(r.streams, BROWSER === 'chromium', 'Chromium streams request bodies, Firefox ESR does not');
  const length = r.streams ? /^length=-$/ : /^length=\d+$/;
  const [ok, missing] = lines.map((l) => l.split(' '));
  assert.deepEqual(ok.slice(0, 5), ['POST', ok[1], 'ok', 'HTTP/2.0', 'same-origin'], 'with the token: ok');
  assert.notEqual(r.with, 403, 'with the token: not refused');
  assert.deepEqual(missing.slice(0, 5), ['POST', '403', 'token_missing', 'HTTP/2.0', 'same-origin'], 'without: token_missing');
  assert.equal(r.without, 403);
  for (const l of [ok, missing]) assert.match(l[5], length, r.streams ? 'no Content-Length' : 'a Content-Length');
});
