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
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { freePort } from './net.mjs';
import { MODULE, startNginx as startNginxIn } from './ngx.mjs';
import { startDemo } from '../e2e/demo.mjs';
import { ATTACKS, BROWSER, launch, login, requestLines, runAttack, getState } from '../e2e/lib.mjs';
import { expectedHeaders } from '../e2e/headers.mjs';

function server(port, upstream, body) {
  return `
    server {
        listen 127.0.0.1:${port};
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            ${body}
        }
        location /vote {
            proxy_pass http://127.0.0.1:${upstream};
            ${body}
            ${body.includes('csrf on') ? 'csrf_unsafe_get on;' : ''}
        }
    }`;
}

function attackerServer(port, upstream, demoVictim, victim) {
  return `
    server {
        listen 127.0.0.1:${port};
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
                    'content-type=$content_type cookie=$sent_cookie';
    access_log {prefix}/sent.log sent;
    csrf_session_cookie demo_sid;
    ${server(pv, dv, 'csrf on;')}
    ${attackerServer(pa, da, demoRef.victim, `http://127.0.0.1:${pv}`)}
    ${server(uv, dv, 'csrf off;')}
    ${attackerServer(ua, da, demoRef.victim, `http://127.0.0.1:${uv}`)}
`, [pv, pa, uv, ua]);
  sites.protected = { victim: `http://127.0.0.1:${pv}`, attacker: `http://127.0.0.1:${pa}` };
  sites.unprotected = { victim: `http://127.0.0.1:${uv}`, attacker: `http://127.0.0.1:${ua}` };
  return { ...n, accessLog: () => n.log('access.log'), sentLog: () => n.log('sent.log') };
}

before(async () => {
  assert.ok(MODULE && fs.existsSync(MODULE), 'CSRF_NGX_MODULE points at the built module');
  demo = await startDemo({ unprotected: true });
  ngx = await startNginx(demo);
  browser = await launch(BROWSER);
});

after(async () => {
  if (browser) await browser.close();
  if (ngx) {
    const log = ngx.errorLog();
    await ngx.stop();
    assert.doesNotMatch(log, /exited on signal|core dumped/, 'no nginx worker crashed');
  }
  if (demo) await demo.stop();
});

for (const attack of ATTACKS) {
  test(`${BROWSER} without the module: ${attack.name} (${attack.what}) succeeds`, async () => {
    const r = await runAttack(browser, sites.unprotected, attack);
    assert.ok(r.changed, `the attack changed the victim's state through plain nginx (user now ${r.user})`);
  });

  test(`${BROWSER} with the module: ${attack.name} (${attack.what}) fails`, async () => {
    let mark = 0;
    const r = await runAttack(browser, sites.protected, attack, { beforeAttack: () => { mark = ngx.sentLog().length; } });
    assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
    assert.equal(r.changed, false);
    // nginx writes its log line when the request ends, before the answer
    // reaches the browser: the line is there.
    const [method, route] = attack.request.split(' ');
    const port = new URL(sites.protected.victim).port;
    const sent = requestLines(ngx.sentLog().slice(mark)).filter((q) => q.method === method && q.path === route
      && q.port === port);
    assert.equal(sent.length, 1, `the browser sent ${attack.request} once`);
    const { port: _, ...headers } = sent[0];
    assert.deepEqual(headers, { ...headers, ...expectedHeaders(BROWSER, attack, sites.protected.attacker) },
      `the headers ${BROWSER} sends with ${attack.name}`);
  });
}

test(`${BROWSER} with the module: the rejections are logged with their reason`, async () => {
  const log = ngx.errorLog();
  assert.match(log, /csrf: rejected (GET|HEAD) "\/vote": \w+/);
  assert.match(log, /csrf: rejected POST "\/vote": \w+/);
  assert.match(log, /csrf: rejected POST "\/transfer": \w+/);
  assert.match(log, /csrf: rejected POST "\/login": \w+/);
});

test(`${BROWSER} with the module: vote, transfer with password, two tabs, login all work`, async () => {
  const { victim } = sites.protected;
  const page = await browser.newPage();
  await login(page, victim, 'alice', 'wonderland');

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

  const access = ngx.accessLog();
  // the default mode, origin_or_token: the browser proves these same-origin
  // (Sec-Fetch-Site: same-origin, Origin), so no token is needed for them
  assert.match(access, /^POST \/vote 30\d origin_verified$/m);
  assert.match(access, /^POST \/login 30\d origin_verified$/m);
  assert.match(access, /^POST \/transfer \d+ origin_verified$/m);
});
