// SPDX-License-Identifier: BSD-2-Clause
// dokuwiki_stack.mjs - DokuWiki from Debian's archive (package dokuwiki)
// behind Debian's apache2 with mod_php (prefork) and mod_csrf_protect,
// everything started here in one temporary folder, nothing read from or
// written to /etc/apache2, /etc/dokuwiki or /var/lib/dokuwiki at run time:
//
//   DokuWiki  the package's code in /usr/share/dokuwiki, unchanged; its
//             configuration and data are copies in the folder: the
//             package's default configuration (/etc/dokuwiki's conffiles
//             but local.php, users.auth.php, acl.auth.php, which the test
//             writes: ACLs on, one user with a password hash, savedir in
//             the folder) and its data tree (/var/lib/dokuwiki/data), both
//             chosen by a PHP auto_prepend_file that defines DokuWiki's
//             DOKU_MAIN_CONF and DOKU_CONF before Debian's preload.php does
//   apache2   its own ServerRoot, PidFile, runtime folder and logs, on
//             loopback ports; the wiki's virtual host is the
//             "A complete configuration" block of apache/README.md as
//             written, with only the module path, the address, the name
//             and origin, the key file, the log path and the PHP handler
//             (mod_php's instead of php-fpm's) replaced, and the
//             DocumentRoot put where the block says "the rest as usual"
//
// Beside it, in the same apache2: the same wiki without the module (the
// control: does a forged request the module stops work otherwise?) and
// the attacker's site serving static pages from the folder.
//
// startStack({ host, attacker }) returns { url, controlUrl, attackerUrl,
// user, password, attacker, attackerPassword, tmp, page(id), lockFile(id), accessLog(), errorLog(),
// writeAttack(name, html), stop() }.
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitConnect } from '../nginx/net.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const README = path.join(HERE, '..', '..', 'apache', 'README.md');
const APACHE = process.env.CSRF_APACHE || '/usr/sbin/apache2';
const MODULE = process.env.CSRF_APACHE_MODULE;
const CSRF_KEY = process.env.CSRF_KEY_TOOL;
const MODS = '/usr/lib/apache2/modules';
const DOKU = '/usr/share/dokuwiki';
const DOKU_CONF = '/etc/dokuwiki';
const DOKU_DATA = '/var/lib/dokuwiki/data';
const IS_ROOT = process.getuid && process.getuid() === 0;
const RUN_AS = 'nobody';

export const USER = 'alice';
export const ATTACKER = 'mallory';

// The code block under "## A complete configuration" in apache/README.md.
export function readmeBlock() {
  const md = fs.readFileSync(README, 'utf8');
  const at = md.indexOf('## A complete configuration');
  assert.ok(at >= 0, 'apache/README.md has "## A complete configuration"');
  const rest = md.slice(at);
  // an indented code block: the lines after the heading's first blank
  // line that start with four spaces (or are blank), up to the next text
  const lines = rest.split('\n').slice(1);
  const out = [];
  let started = false;
  for (const l of lines) {
    if (/^ {4}/.test(l)) {
      started = true;
      out.push(l.slice(4));
    } else if (l.trim() === '') {
      if (started) out.push('');
    } else if (started) {
      break;
    }
  }
  assert.ok(out.length > 5, 'the section has a configuration block');
  return out.join('\n').trim();
}

// Replaces each README value by the test's; every one must be present, so
// a README that drifts from what the test runs fails here, loudly.
function substitute(block, pairs) {
  let out = block;
  for (const [from, to] of pairs) {
    assert.ok(out.includes(from), `the README's configuration has \`${from}\``);
    out = out.split(from).join(to);
  }
  return out;
}

function chownR(p, user) {
  if (IS_ROOT) execFileSync('chown', ['-R', `${user}:`, p]);
}

// DokuWiki's configuration and data, copied into tmp; the user's password
// hashed (SHA-512 crypt, which DokuWiki's PassHash reads) by openssl, the
// password going through stdin.
function prepareWiki(tmp, password, attackerPassword) {
  const conf = path.join(tmp, 'conf');
  fs.mkdirSync(conf, { mode: 0o755 });
  const own = new Set(['local.php', 'users.auth.php', 'acl.auth.php']);
  for (const f of fs.readdirSync(DOKU_CONF)) {
    const from = path.join(DOKU_CONF, f);
    if (own.has(f) || !/\.(php|conf|css|json)$/.test(f) || !fs.statSync(from).isFile()) continue;
    fs.copyFileSync(from, path.join(conf, f));
  }
  const data = path.join(tmp, 'data');
  fs.cpSync(DOKU_DATA, data, { recursive: true });
  fs.writeFileSync(path.join(data, 'pages', 'start.txt'), '====== Start ======\n\nThe start page of the test wiki.\n');
  const hash = (pw) => {
    const r = spawnSync('openssl', ['passwd', '-6', '-stdin'], { input: pw, encoding: 'utf8' });
    assert.equal(r.status, 0, `openssl passwd: ${r.stderr}`);
    return r.stdout.trim();
  };
  // the user, and the attacker's own account (for a forged login)
  fs.writeFileSync(path.join(conf, 'users.auth.php'), `# users.auth.php
# login:passwordhash:Real Name:email:groups
${USER}:${hash(password)}:Alice:alice@wiki.test:user
${ATTACKER}:${hash(attackerPassword)}:Mallory:mallory@evil.test:user
`);
  fs.writeFileSync(path.join(conf, 'acl.auth.php'),
    '# acl.auth.php\n*\t@ALL\t1\n*\t@user\t8\n');
  fs.writeFileSync(path.join(conf, 'local.php'), `<?php
$conf['title'] = 'libcsrf test wiki';
$conf['savedir'] = '${data}';
$conf['useacl'] = 1;
$conf['authtype'] = 'authplain';
$conf['superuser'] = '@admin';
$conf['disableactions'] = 'register';
`);
  // read before DokuWiki's inc/preload.php, which defines these unless set
  fs.writeFileSync(path.join(tmp, 'prepend.php'),
    `<?php\ndefine('DOKU_MAIN_CONF', '${conf}/');\ndefine('DOKU_CONF', '${conf}/');\n`);
  fs.mkdirSync(path.join(tmp, 'sessions'), { mode: 0o700 });
  chownR(data, RUN_AS);
  chownR(path.join(tmp, 'sessions'), RUN_AS);
  return { conf, data };
}

export async function startStack({ host = 'wiki.test', attacker = 'evil.test' } = {}) {
  for (const f of [MODULE, CSRF_KEY]) assert.ok(f && fs.existsSync(f), `built: ${f}`);
  assert.ok(fs.existsSync(path.join(DOKU, 'doku.php')), 'Debian\'s dokuwiki is installed (scripts/deps.sh)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-dokuwiki-'));
  try {
    return await start(tmp, host, attacker);
  } catch (e) {
    // apache2 is stopped by start() when it ran; the folder goes here
    if (!process.env.CSRF_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

async function start(tmp, host, attacker) {
  fs.chmodSync(tmp, 0o755);
  const password = crypto.randomBytes(18).toString('base64url');
  const attackerPassword = crypto.randomBytes(18).toString('base64url');
  const { data } = prepareWiki(tmp, password, attackerPassword);
  for (const d of ['run', 'evil']) fs.mkdirSync(path.join(tmp, d), { mode: 0o755 });
  if (IS_ROOT) execFileSync('chown', [`${RUN_AS}:`, path.join(tmp, 'run')]);
  const keys = path.join(tmp, 'csrf.keys');
  const mk = spawnSync(CSRF_KEY, ['new', keys], { encoding: 'utf8' });
  assert.equal(mk.status, 0, `csrf-key new: ${mk.stderr}`);

  const [port, control, evil] = [await freePort(), await freePort(), await freePort()];
  const url = `http://${host}:${port}`;
  const php = `<FilesMatch "\\.php$">
            SetHandler application/x-httpd-php
        </FilesMatch>`;
  const wiki = substitute(readmeBlock(), [
    ['/usr/lib/apache2/modules/mod_csrf_protect.so', MODULE],
    ['<VirtualHost *:443>', `<VirtualHost 127.0.0.1:${port}>`],
    ['ServerName app.example', `ServerName ${host}`],
    ['# ... SSLEngine and the rest as usual ...', `DocumentRoot ${DOKU}`],
    ['CSRFOrigin https://app.example', `CSRFOrigin ${url}`],
    ['/etc/libcsrf/keys', keys],
    ['CSRFSessionCookie PHPSESSID', 'CSRFSessionCookie DokuWiki'],
    ['SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"', 'SetHandler application/x-httpd-php'],
    ['${APACHE_LOG_DIR}/access.log', path.join(tmp, 'access.log')],
  ]);
  // LoadModule opens the README's block; the rest of the server's
  // configuration (what Debian's apache2.conf and mods-enabled give) goes
  // before it
  const conf = `ServerRoot ${tmp}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
Listen 127.0.0.1:${control}
Listen 127.0.0.1:${evil}
PidFile ${tmp}/httpd.pid
DefaultRuntimeDir ${tmp}/run
Mutex file:${tmp}/run default
ErrorLog ${tmp}/error.log
LogLevel info
${IS_ROOT ? `User ${RUN_AS}\nGroup nogroup` : ''}
LoadModule mpm_prefork_module ${MODS}/mod_mpm_prefork.so
LoadModule authz_core_module ${MODS}/mod_authz_core.so
LoadModule authz_host_module ${MODS}/mod_authz_host.so
LoadModule mime_module ${MODS}/mod_mime.so
LoadModule dir_module ${MODS}/mod_dir.so
LoadModule php_module ${MODS}/libphp8.2.so
TypesConfig /etc/mime.types
StartServers 2
MinSpareServers 2
MaxSpareServers 4
MaxRequestWorkers 8
Timeout 20
KeepAlive On
DirectoryIndex doku.php index.html
<Directory />
    Require all denied
</Directory>
<Directory ${DOKU}>
    Require all granted
    AllowOverride None
    php_admin_value auto_prepend_file ${tmp}/prepend.php
    php_admin_value session.save_path ${tmp}/sessions
    php_admin_value error_log ${tmp}/php-errors.log
    php_admin_flag log_errors on
    php_admin_flag display_errors off
</Directory>
<Directory ${DOKU}/bin>
    Require all denied
</Directory>
<Directory ${tmp}/evil>
    Require all granted
</Directory>
${wiki}

<VirtualHost 127.0.0.1:${control}>
    ServerName ${host}
    DocumentRoot ${DOKU}
    ${php}
    CustomLog ${tmp}/control.log "%m %U %>s"
</VirtualHost>

<VirtualHost 127.0.0.1:${evil}>
    ServerName ${attacker}
    DocumentRoot ${tmp}/evil
</VirtualHost>
`;
  const file = path.join(tmp, 'httpd.conf');
  fs.writeFileSync(file, conf);
  const t = spawnSync(APACHE, ['-t', '-f', file], { encoding: 'utf8' });
  assert.equal(t.status, 0, `apache2 -t: ${t.stderr}`);
  // a session of its own: on SIGTERM apache2 signals its process group
  const child = spawn(APACHE, ['-f', file, '-DFOREGROUND'], { stdio: 'ignore', detached: true });
  let exited = null;
  child.on('exit', (code, sig) => {
    exited = sig || code;
  });
  const read = (f) => {
    try {
      return fs.readFileSync(path.join(tmp, f), 'utf8');
    } catch {
      return '';
    }
  };
  const stack = {
    tmp,
    url,
    controlUrl: `http://${host}:${control}`,
    attackerUrl: `http://${attacker}:${evil}`,
    user: USER,
    password,
    attacker: ATTACKER,
    attackerPassword,
    accessLog: () => read('access.log'),
    controlLog: () => read('control.log'),
    errorLog: () => read('error.log'),
    phpErrors: () => read('php-errors.log'),
    // the page's wiki text as DokuWiki stored it (null: no such page)
    page: (id) => {
      try {
        return fs.readFileSync(path.join(data, 'pages', `${id.replace(/:/g, '/')}.txt`), 'utf8');
      } catch {
        return null;
      }
    },
    // DokuWiki's lock file of a page (wikiLockFN): its content is the
    // user holding the lock
    lockFile: (id) => path.join(data, 'locks', `${crypto.createHash('md5').update(id).digest('hex')}.lock`),
    writeAttack(name, html) {
      fs.writeFileSync(path.join(tmp, 'evil', name), html);
      return `${stack.attackerUrl}/${name}`;
    },
    async stop() {
      if (exited === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const k = setTimeout(() => child.kill('SIGKILL'), 10000);
        await gone;
        clearTimeout(k);
      }
      if (!process.env.CSRF_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
      return exited;
    },
  };
  for (const p of [port, control, evil]) {
    if (!(await waitConnect(p))) {
      const log = stack.errorLog();
      await stack.stop();
      assert.fail(`apache2 listens on ${p}: ${log.split('\n').slice(-5).join('\n')}`);
    }
  }
  return stack;
}
