// SPDX-License-Identifier: BSD-2-Clause
// pma_stack.mjs - phpMyAdmin from Debian's archive behind the stock nginx
// with the module, everything started here in one temporary folder:
//
//   MariaDB   mariadb-install-db + mysqld with its own data folder, a unix
//             socket in the folder, no network; a user with a random
//             password, a database `shop` with a table `items`
//   php-fpm   its own master (-y CONF -F), one pool on a unix socket in the
//             folder, sessions in the folder, mysqli's default socket
//             pointed at our mysqld, so Debian's /etc/phpmyadmin config
//             (auth_type cookie, host localhost) is used untouched
//   nginx     the server block of nginx/README.md as written; only the
//             module path, the listen address, the log and key paths and
//             the php-fpm socket are replaced, and the plumbing a
//             non-default prefix needs (pid, error log, temp folders) and
//             a second access log of the headers the browser sent are
//             added around it
//
// startStack({ host, tls, attacker }) returns { url, controlUrl,
// attackerUrl, attackDir, password, nginxAccessLog(), nginxErrorLog(),
// fpmAccessLog(), query(sql), stop() }; controlUrl is the same phpMyAdmin
// through a server without the module.
// host: the name the browser reaches them by (default 127.0.0.1; the named
// and https modes' pma.test). tls: the test CA of tests/e2e/tls.mjs (its
// server certificate must name host); then every server listens with
// `ssl http2` (the README's `listen 80;` becomes `listen ... ssl http2`
// with the certificate), and fastcgi.conf's HTTPS=on makes phpMyAdmin
// name its cookie phpMyAdmin_https. attacker: a name (evil.test) under
// which one more server serves the files the test writes into attackDir
// (attackerUrl), over the same scheme.
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitConnect } from './net.mjs';
import { barrier, barrierServer } from './ngx.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const README = path.join(HERE, '..', '..', 'nginx', 'README.md');
const NGINX = process.env.CSRF_NGINX || '/usr/sbin/nginx';
const MODULE = process.env.CSRF_NGX_MODULE;
const CSRF_KEY = process.env.CSRF_KEY_TOOL;
const PHP_FPM = process.env.PHP_FPM || '/usr/sbin/php-fpm8.2';
const MYSQLD = '/usr/sbin/mariadbd';
const IS_ROOT = process.getuid && process.getuid() === 0;

export const DB_USER = 'pma_e2e';
export const DB_NAME = 'shop';

function ids(user) {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

// A folder the given system user owns when we are root (the daemons drop
// to it), our own otherwise.
function ownedDir(dir, user) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (IS_ROOT) {
    const { uid, gid } = ids(user);
    fs.chownSync(dir, uid, gid);
  }
  return dir;
}

// The ```nginx block under "## A complete server block" in the README.
export function readmeServerBlock() {
  const md = fs.readFileSync(README, 'utf8');
  const at = md.indexOf('## A complete server block');
  assert.ok(at >= 0, 'nginx/README.md has "## A complete server block"');
  const m = /```nginx\n([\s\S]*?)\n```/.exec(md.slice(at));
  assert.ok(m, 'the section has an nginx code block');
  return m[1];
}

// Replaces each README value by the test's; every one must be present, so
// a README that drifts from what the test can run fails here, loudly.
function substitute(block, pairs) {
  let out = block;
  for (const [from, to] of pairs) {
    assert.ok(out.includes(from), `the README's server block has \`${from}\``);
    out = out.split(from).join(to);
  }
  return out;
}

function spawnLogged(cmd, args, logFile, opts = {}) {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', fd, fd], ...opts });
  fs.closeSync(fd);
  child.exitedWith = null;
  child.on('exit', (code, sig) => {
    child.exitedWith = sig || code;
  });
  return child;
}

async function stopChild(child, signal = 'SIGTERM') {
  if (!child || child.exitedWith !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const k = setTimeout(() => child.kill('SIGKILL'), 10000);
  await gone;
  clearTimeout(k);
}

async function startMariadb(tmp, password) {
  const dir = ownedDir(path.join(tmp, 'mysql'), 'mysql');
  const datadir = path.join(dir, 'data');
  const socket = path.join(dir, 'mysqld.sock');
  // Its own tmpdir too: the bootstrap's temporary tables in the shared
  // /tmp collide with other servers'.
  const tmpdir = ownedDir(path.join(dir, 'tmp'), 'mysql');
  const user = IS_ROOT ? ['--user=mysql'] : [];
  const inst = spawnSync(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${datadir}`, `--tmpdir=${tmpdir}`, ...user, '--auth-root-authentication-method=socket',
      '--skip-test-db'],
    { encoding: 'utf8' },
  );
  assert.equal(inst.status, 0, `mariadb-install-db: ${inst.stderr}`);
  // Run once at start, as the server itself: the account phpMyAdmin logs
  // in with, and the data the session works on.
  const init = path.join(dir, 'init.sql');
  fs.writeFileSync(
    init,
    `CREATE USER '${DB_USER}'@'localhost' IDENTIFIED BY '${password}';
GRANT ALL PRIVILEGES ON *.* TO '${DB_USER}'@'localhost';
CREATE DATABASE ${DB_NAME};
CREATE TABLE ${DB_NAME}.items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
INSERT INTO ${DB_NAME}.items VALUES (1, 'apple'), (2, 'pear');
`,
    { mode: 0o600 },
  );
  if (IS_ROOT) {
    const { uid, gid } = ids('mysql');
    fs.chownSync(init, uid, gid);
  }
  const child = spawnLogged(
    MYSQLD,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      `--socket=${socket}`,
      `--tmpdir=${tmpdir}`,
      '--skip-networking',
      `--pid-file=${path.join(dir, 'mysqld.pid')}`,
      `--init-file=${init}`,
      '--innodb-buffer-pool-size=16M',
      ...user,
    ],
    path.join(tmp, 'mysqld.log'),
  );
  assert.ok(await waitConnect(socket, 30000), `mysqld accepts connections (${path.join(tmp, 'mysqld.log')})`);
  return { child, socket };
}

async function startPhpFpm(tmp, mysqlSocket) {
  const dir = ownedDir(path.join(tmp, 'php'), 'www-data');
  const socket = path.join(tmp, 'php-fpm.sock');
  const conf = path.join(tmp, 'php-fpm.conf');
  fs.mkdirSync(path.join(dir, 'sessions'), { mode: 0o700 });
  if (IS_ROOT) {
    const { uid, gid } = ids('www-data');
    fs.chownSync(path.join(dir, 'sessions'), uid, gid);
  }
  // As root the workers run as www-data, Debian's own pool user: it may
  // read phpMyAdmin's blowfish secret and write its template cache.
  fs.writeFileSync(
    conf,
    `[global]
pid = ${path.join(tmp, 'php-fpm.pid')}
error_log = ${path.join(tmp, 'php-fpm.log')}
daemonize = no

[pma]
${IS_ROOT ? 'user = www-data\ngroup = www-data' : ''}
listen = ${socket}
listen.mode = 0666
pm = static
pm.max_children = 4
access.log = ${path.join(tmp, 'php-access.log')}
access.format = "%m %{REQUEST_URI}e %s"
catch_workers_output = yes
php_admin_value[session.save_path] = ${path.join(dir, 'sessions')}
php_admin_value[mysqli.default_socket] = ${mysqlSocket}
php_admin_value[error_log] = ${path.join(dir, 'php-errors.log')}
php_admin_flag[log_errors] = on
`,
  );
  const child = spawnLogged(PHP_FPM, ['-y', conf, '-F', ...(IS_ROOT ? ['-R'] : [])], path.join(tmp, 'php-fpm.out'));
  assert.ok(await waitConnect(socket), `php-fpm listens (${path.join(tmp, 'php-fpm.log')})`);
  return { child, socket };
}

// The test's own server next to the README's: the same phpMyAdmin without
// the module (csrf is on in the README's server only), to show that a
// forged request the module stops would otherwise work.
function listen(port, tls) {
  if (!tls) return `listen 127.0.0.1:${port};`;
  return `listen 127.0.0.1:${port} ssl http2;
        ssl_certificate ${tls.cert};
        ssl_certificate_key ${tls.key};`;
}

function controlServer(port, tmp, fpmSocket, tls) {
  return `
    server {
        ${listen(port, tls)}
        access_log ${path.join(tmp, 'control.log')} csrf;
        root /usr/share/phpmyadmin;
        location ~ \\.php$ {
            include /etc/nginx/fastcgi.conf;
            fastcgi_pass unix:${fpmSocket};
        }
    }
`;
}

// The attacker's site: static pages from dir, no module.
function attackerServer(port, dir, tls) {
  return `
    server {
        ${listen(port, tls)}
        access_log off;
        root ${dir};
    }
`;
}

async function startNginx(tmp, fpmSocket, { tls = null, attackDir = null } = {}) {
  const port = await freePort();
  const control = await freePort();
  const attacker = attackDir ? await freePort() : 0;
  const settle = await freePort();
  const keys = path.join(tmp, 'csrf.keys');
  const mk = spawnSync(CSRF_KEY, ['new', keys], { encoding: 'utf8' });
  assert.equal(mk.status, 0, `csrf-key new: ${mk.stderr}`);
  const readme = substitute(readmeServerBlock(), [
    ['/usr/local/lib/nginx/modules/ngx_http_csrf_module.so', MODULE],
    ['listen 80;', listen(port, tls)],
    ['access_log /var/log/nginx/pma.log csrf;',
      `access_log ${path.join(tmp, 'access.log')} csrf;\n        access_log ${path.join(tmp, 'sent.log')} sent;`],
    ['/etc/nginx/csrf.keys', keys],
    ['unix:/run/php/php8.2-fpm.sock', `unix:${fpmSocket}`],
    [
      'http {',
      `http {
    log_format sent '$request_method $uri $arg_route "$http_origin" "$http_sec_fetch_site" $server_protocol';
    client_body_temp_path ${tmp}/body;
    proxy_temp_path ${tmp}/proxy;
    fastcgi_temp_path ${tmp}/fastcgi;
    uwsgi_temp_path ${tmp}/uwsgi;
    scgi_temp_path ${tmp}/scgi;`,
    ],
  ]);
  // The control server goes at the end of the http block (it uses the
  // README's log format).
  assert.match(readme, /\n}$/, 'the README\'s block ends with the http block\'s brace');
  const more = controlServer(control, tmp, fpmSocket, tls) + (attackDir ? attackerServer(attacker, attackDir, tls) : '') +
    barrierServer(settle, true);
  const block = `${readme.slice(0, -1)}${more}}`;
  // load_module must come first: the README's block opens the file.
  const conf = `${block}
worker_processes 1;
error_log ${path.join(tmp, 'error.log')} info;
pid ${path.join(tmp, 'nginx.pid')};
${IS_ROOT ? 'user nobody nogroup;' : ''}
events { worker_connections 256; }
`;
  const file = path.join(tmp, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const t = spawnSync(NGINX, ['-t', '-p', tmp, '-c', file], { encoding: 'utf8' });
  assert.equal(t.status, 0, `nginx -t: ${t.stderr}`);
  const child = spawnLogged(NGINX, ['-p', tmp, '-c', file, '-g', 'daemon off; master_process on;'],
    path.join(tmp, 'nginx.out'));
  for (const p of [port, control, settle, ...(attacker ? [attacker] : [])])
    assert.ok(await waitConnect(p), `nginx listens on ${p}`);
  return { child, port, control, attacker, settle };
}

export async function startStack({ host = '127.0.0.1', tls = null, attacker = null } = {}) {
  for (const f of [MODULE, CSRF_KEY]) assert.ok(f && fs.existsSync(f), `built: ${f}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-pma-'));
  fs.chmodSync(tmp, 0o755);
  const password = crypto.randomBytes(18).toString('base64url');
  const procs = [];
  const stack = {
    tmp,
    password,
    // nginx's logs once every request answered so far is in them (the
    // barrier of ngx.mjs)
    nginxAccessLog: async () => {
      await barrier(stack.settle);
      return fs.readFileSync(path.join(tmp, 'access.log'), 'utf8');
    },
    nginxErrorLog: () => fs.readFileSync(path.join(tmp, 'error.log'), 'utf8'),
    // what the browser sent to the module's server, a line a request:
    // METHOD PATH ROUTE "ORIGIN" "SEC-FETCH-SITE" PROTOCOL (no query
    // values but phpMyAdmin's route, no cookies)
    sentLog: async () => {
      await barrier(stack.settle);
      return fs.readFileSync(path.join(tmp, 'sent.log'), 'utf8');
    },
    fpmAccessLog: () => fs.readFileSync(path.join(tmp, 'php-access.log'), 'utf8'),
    // Runs SQL as the test's account (the password goes through the
    // environment, never the command line); rows as arrays of strings.
    query(sql) {
      const r = spawnSync('mariadb', [`--socket=${stack.mysqlSocket}`, '-u', DB_USER, '-N', '-B', '-e', sql], {
        encoding: 'utf8',
        env: { ...process.env, MYSQL_PWD: password },
      });
      assert.equal(r.status, 0, `mariadb: ${r.stderr}`);
      return r.stdout.split('\n').filter(Boolean).map((l) => l.split('\t'));
    },
    async stop() {
      for (const p of procs.reverse()) await stopChild(p.child, p.signal);
      const crashed = procs.filter((p) => p.child.exitedWith !== 'SIGTERM' && p.child.exitedWith !== 'SIGQUIT' &&
        p.child.exitedWith !== 0);
      if (!process.env.CSRF_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
      return crashed.map((p) => `${p.name} ended with ${p.child.exitedWith}`);
    },
  };
  try {
    const my = await startMariadb(tmp, password);
    procs.push({ name: 'mysqld', child: my.child, signal: 'SIGTERM' });
    stack.mysqlSocket = my.socket;
    const fpm = await startPhpFpm(tmp, my.socket);
    procs.push({ name: 'php-fpm', child: fpm.child, signal: 'SIGTERM' });
    const attackDir = attacker ? path.join(tmp, 'attack') : null;
    if (attackDir) fs.mkdirSync(attackDir, { mode: 0o755 });
    const ngx = await startNginx(tmp, fpm.socket, { tls, attackDir });
    procs.push({ name: 'nginx', child: ngx.child, signal: 'SIGQUIT' });
    const scheme = tls ? 'https' : 'http';
    stack.port = ngx.port;
    stack.settle = ngx.settle;
    stack.url = `${scheme}://${host}:${ngx.port}`;
    stack.controlUrl = `${scheme}://${host}:${ngx.control}`;
    if (attackDir) {
      stack.attackDir = attackDir;
      stack.attackerUrl = `${scheme}://${attacker}:${ngx.attacker}`;
    }
  } catch (e) {
    await stack.stop();
    throw e;
  }
  return stack;
}
