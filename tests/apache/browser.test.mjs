// SPDX-License-Identifier: BSD-2-Clause
// browser.test.mjs - csrf-demo --unprotected behind Debian's apache2 with
// mod_csrf_protect, in the browser E2E_BROWSER names (ctest:
// apache.browser.chromium and apache.browser.firefox): every attack page of
// the demo fails, and the legitimate flows (log in, vote, two tabs,
// transfer, log out and in) work with the tokens the module put into the
// unchanged app's forms; through Apache without the module the same
// attacks succeed (the pages really attack). A second virtual host serves the demo's attacker
// pages with mod_substitute pointing them at the Apache in front (same
// site, other origin: another port).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitConnect } from '../nginx/net.mjs';
import { directFor, startDemo } from '../e2e/demo.mjs';
import { ATTACKS, BROWSER, launch, login, runAttack, getState } from '../e2e/lib.mjs';
import { MODE } from '../e2e/browser.mjs';
import { makeCA } from '../e2e/tls.mjs';

const APACHE = process.env.CSRF_APACHE || '/usr/sbin/apache2';
const MODULE = process.env.CSRF_APACHE_MODULE;
const MODS = '/usr/lib/apache2/modules';

// In the https mode (E2E_MODE=https) the sites are https://victim.test:PORT
// and https://evil.victim.test:PORT over TLS (the test CA of
// tests/e2e/tls.mjs) and HTTP/2 (mod_http2): request bodies of HTTP/2
// frames, the __Host- secret cookie.
const HTTPS = MODE === 'https';
const origin = (name, port) => (HTTPS ? `https://${name}:${port}` : `http://127.0.0.1:${port}`);
let tls = null;
const vhost = (port) => `<VirtualHost 127.0.0.1:${port}>${HTTPS ? `
    SSLEngine on
    SSLCertificateFile ${tls.cert}
    SSLCertificateKeyFile ${tls.key}
    Protocols h2 http/1.1` : ''}`;

let demo;
let browser;
let ap;
const site = {};
const plain = {}; // the same app through Apache without the module

// apache2 in the foreground, in a session of its own (on SIGTERM it
// signals its whole process group).
async function startApache(body, ports) {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-ap-browser-'));
  fs.chmodSync(prefix, 0o755);
  fs.mkdirSync(path.join(prefix, 'run'));
  const root = process.getuid && process.getuid() === 0;
  if (root) spawnSync('chown', ['nobody:nogroup', path.join(prefix, 'run')]);
  const conf = `
ServerRoot ${prefix}
ServerName 127.0.0.1
${ports.map((p) => `Listen 127.0.0.1:${p}`).join('\n')}
PidFile ${prefix}/httpd.pid
DefaultRuntimeDir ${prefix}/run
Mutex file:${prefix}/run default
ErrorLog ${prefix}/error.log
LogLevel info
${root ? 'User nobody\nGroup nogroup' : ''}
LoadModule mpm_event_module ${MODS}/mod_mpm_event.so
LoadModule authz_core_module ${MODS}/mod_authz_core.so
LoadModule proxy_module ${MODS}/mod_proxy.so
LoadModule proxy_http_module ${MODS}/mod_proxy_http.so
LoadModule filter_module ${MODS}/mod_filter.so
LoadModule substitute_module ${MODS}/mod_substitute.so
${HTTPS ? `LoadModule ssl_module ${MODS}/mod_ssl.so\nLoadModule http2_module ${MODS}/mod_http2.so` : ''}
LoadModule csrf_protect_module ${MODULE}
LogFormat "%m %U %>s %{csrf_result}n %H" csrf
CustomLog ${prefix}/access.log csrf
${body}
`;
  const file = path.join(prefix, 'httpd.conf');
  fs.writeFileSync(file, conf);
  const t = spawnSync(APACHE, ['-t', '-f', file], { encoding: 'utf8' });
  assert.equal(t.status, 0, `apache2 -t: ${t.stderr}`);
  const child = spawn(APACHE, ['-f', file, '-DFOREGROUND'], { stdio: 'ignore', detached: true });
  for (const p of ports) assert.ok(await waitConnect(p), `apache2 listens on ${p}`);
  const log = (f) => fs.readFileSync(path.join(prefix, f), 'utf8');
  return {
    errorLog: () => log('error.log'),
    accessLog: () => log('access.log'),
    async stop() {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const k = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(k);
      if (!process.env.CSRF_KEEP_TMP) fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}

before(async () => {
  assert.ok(MODULE && fs.existsSync(MODULE), 'CSRF_APACHE_MODULE points at the built module');
  if (HTTPS) tls = makeCA(['victim.test', 'evil.victim.test']);
  demo = await startDemo({ unprotected: true, mode: 'loopback' });
  const [pv, pa, uv, ua] = [await freePort(), await freePort(), await freePort(), await freePort()];
  site.victim = origin('victim.test', pv);
  site.attacker = origin('evil.victim.test', pa);
  plain.victim = origin('victim.test', uv);
  plain.attacker = origin('evil.victim.test', ua);
  ap = await startApache(`
${vhost(pv)}
    CSRF On
    CSRFSessionCookie demo_sid
    ProxyPass / ${demo.victim}/
    ProxyPassReverse / ${demo.victim}/
    <Location /vote>
        CSRFUnsafeGet On
    </Location>
</VirtualHost>
${vhost(pa)}
    ProxyPass / ${demo.attacker}/
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s|${demo.victim}|${site.victim}|n"
</VirtualHost>
${vhost(uv)}
    ProxyPass / ${demo.victim}/
    ProxyPassReverse / ${demo.victim}/
</VirtualHost>
${vhost(ua)}
    ProxyPass / ${demo.attacker}/
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s|${demo.victim}|${plain.victim}|n"
</VirtualHost>
`, [pv, pa, uv, ua]);
  directFor(site.victim, demo.victim);
  directFor(plain.victim, demo.victim);
  browser = await launch(BROWSER, { ca: tls && tls.ca });
});

after(async () => {
  if (browser) await browser.close();
  if (ap) {
    const log = ap.errorLog();
    await ap.stop();
    assert.doesNotMatch(log, /exit signal|Segmentation|core dumped/, 'no apache2 child crashed');
  }
  if (demo) await demo.stop();
  if (tls) tls.remove();
});

for (const attack of ATTACKS) {
  // the control, in one browser only (Firefox is the slower: make check's time)
  if (BROWSER === 'chromium')
  test(`${BROWSER} through Apache without the module: ${attack.name} (${attack.what}) succeeds`, async () => {
    const r = await runAttack(browser, plain, attack);
    assert.ok(r.changed, `the attack changed the victim's state through plain Apache (user now ${r.user})`);
  });
  test(`${BROWSER} through Apache with the module: ${attack.name} (${attack.what}) fails`, async () => {
    const r = await runAttack(browser, site, attack);
    assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
    assert.equal(r.changed, false);
  });
}

test(`${BROWSER} through Apache with the module: the rejections are logged with their reason`, () => {
  const log = ap.errorLog();
  assert.match(log, /csrf: rejected POST "\/transfer": \w+, client: 127\.0\.0\.1/);
  assert.match(log, /csrf: rejected POST "\/login": \w+/);
});

test(`${BROWSER} through Apache with the module: vote, two tabs, transfer, login again all work`, async () => {
  const { victim } = site;
  const page = await browser.newPage();
  await login(page, victim, 'alice', 'wonderland');
  const secret = (await browser.cookies(victim)).filter((c) => /csrf_secret$/.test(c.name));
  assert.deepEqual(secret.map((c) => [c.name, c.secure]), [[HTTPS ? '__Host-csrf_secret' : 'csrf_secret', HTTPS]]);
  const hidden = await page.count('form[action="/vote"] input[type=hidden][name^="csrf_"]');
  assert.ok(hidden > 0, 'vote forms carry the injected token');
  assert.equal(await page.count('meta[name="csrf-token"]'), 1, 'meta csrf-token injected');
  const click = (p, sel) => p.clickAndWait(sel);
  let s0 = await getState(victim);
  await click(page, '#vote-1-y');
  let s1 = await getState(victim);
  assert.equal(s1.votes['1'].y, s0.votes['1'].y + 1, 'the vote counted');
  const tab2 = await browser.newPage();
  await tab2.goto(`${victim}/`);
  s0 = await getState(victim);
  await click(tab2, '#vote-2-n');
  await click(page, '#vote-2-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['2'].n, s0.votes['2'].n + 1, 'the vote of the second tab counted');
  assert.equal(s1.votes['2'].y, s0.votes['2'].y + 1, 'the vote of the first tab counted');
  await tab2.close();
  await page.goto(`${victim}/account`);
  s0 = await getState(victim);
  await page.select('#transfer-to', 'bob');
  await page.fill('#transfer-amount', '7');
  await click(page, '#transfer-submit');
  assert.equal(page.url(), `${victim}/account`, 'the transfer answers 303 to /account');
  s1 = await getState(victim);
  assert.equal(s1.balances.alice, s0.balances.alice - 7, 'alice paid');
  await click(page, '#logout');
  await login(page, victim, 'alice', 'wonderland');
  s0 = await getState(victim);
  await click(page, '#vote-3-y');
  s1 = await getState(victim);
  assert.equal(s1.votes['3'].y, s0.votes['3'].y + 1, 'a vote after a new login counted');
  await page.close();
  // the browser proves these same-origin: no token needed
  assert.match(ap.accessLog(), /^POST \/login 30\d origin_verified HTTP\/[12]/m);
  // every request of the flow over HTTP/2 in the https mode
  const protocols = new Set(ap.accessLog().split('\n').filter(Boolean).map((l) => l.split(' ').pop()));
  assert.deepEqual([...protocols], [HTTPS ? 'HTTP/2.0' : 'HTTP/1.1']);
});
