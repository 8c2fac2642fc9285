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
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopChild, waitConnect } from '../nginx/net.mjs';
import { BROWSER } from '../e2e/lib.mjs';
import { HTTPS, attackTests, flowTest, suite } from '../e2e/behind.mjs';

const APACHE = process.env.CSRF_APACHE || '/usr/sbin/apache2';
const MODULE = process.env.CSRF_APACHE_MODULE;
const MODS = '/usr/lib/apache2/modules';

// In the https mode (E2E_MODE=https) the sites are https://victim.test:PORT
// and https://evil.victim.test:PORT over TLS (the test CA of
// tests/e2e/tls.mjs) and HTTP/2 (mod_http2): request bodies of HTTP/2
// frames, the __Host- secret cookie.
const origin = (name, port) => (HTTPS ? `https://${name}:${port}` : `http://127.0.0.1:${port}`);
let tls = null;
const vhost = (port) => `<VirtualHost 127.0.0.1:${port}>${HTTPS ? `
    SSLEngine on
    SSLCertificateFile ${tls.cert}
    SSLCertificateKeyFile ${tls.key}
    Protocols h2 http/1.1` : ''}`;

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
    stop: () => stopChild(child, 'SIGTERM', prefix),
  };
}

// the demo on loopback; its victim and attacker behind Apache, each with
// and without the module
async function start(demo, ca) {
  assert.ok(MODULE && fs.existsSync(MODULE), 'CSRF_APACHE_MODULE points at the built module');
  tls = ca;
  const [pv, pa, uv, ua] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const victim = origin('victim.test', pv);
  const plain = origin('victim.test', uv);
  const ap = await startApache(`
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
    Substitute "s|${demo.victim}|${victim}|n"
</VirtualHost>
${vhost(uv)}
    ProxyPass / ${demo.victim}/
    ProxyPassReverse / ${demo.victim}/
</VirtualHost>
${vhost(ua)}
    ProxyPass / ${demo.attacker}/
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s|${demo.victim}|${plain}|n"
</VirtualHost>
`, [pv, pa, uv, ua]);
  return {
    ...ap,
    protected: { victim, attackers: { 'same-site': origin('evil.victim.test', pa) } },
    unprotected: { victim: plain, attackers: { 'same-site': origin('evil.victim.test', ua) } },
  };
}

const s = suite({ names: ['victim.test', 'evil.victim.test'], start,
  crash: /exit signal|Segmentation|core dumped/, what: 'apache2 child' });

// the control, in one browser only (Firefox is the slower: make check's time)
attackTests(s, `${BROWSER} through Apache`, { control: BROWSER === 'chromium' });

test(`${BROWSER} through Apache with the module: the rejections are logged with their reason`, () => {
  const log = s.server.errorLog();
  assert.match(log, /csrf: rejected POST "\/transfer": \w+, client: 127\.0\.0\.1/);
  assert.match(log, /csrf: rejected POST "\/login": \w+/);
});

test(`${BROWSER} through Apache with the module: vote, two tabs, transfer, login again all work`, async () => {
  await flowTest(s.browser, s.server.protected.victim);
  // the browser proves these same-origin: no token needed
  assert.match(s.server.accessLog(), /^POST \/login 30\d origin_verified HTTP\/[12]/m);
  // every request of the flow over HTTP/2 in the https mode
  const protocols = new Set(s.server.accessLog().split('\n').filter(Boolean).map((l) => l.split(' ').pop()));
  assert.deepEqual([...protocols], [HTTPS ? 'HTTP/2.0' : 'HTTP/1.1']);
});
