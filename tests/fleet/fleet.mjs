// SPDX-License-Identifier: BSD-2-Clause
// fleet.mjs - what the fleet tests need beyond tests/e2e/demo.mjs and
// tests/http/client.mjs: a redis-server of the test's own on a free
// loopback port that can be paused, killed and started again on the same
// port (or as a replica of another); redis-sentinel watching a master; one
// Redis command over RESP (redisCommand); waiting on a condition with a
// deadline (waitFor); nginx in a prefix of its own, with or without the CSRF module;
// the csrf-key tool; the balanced fleet (two demos behind nginx); a cookie
// jar; timed requests; assertions that never
// echo a page. Nothing here prints a token, a secret, a key or a cookie
// value.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { request } from '../http/client.mjs';
import { startDemo } from '../e2e/demo.mjs';
import { barrier, barrierServer } from '../nginx/ngx.mjs';
import { freePort as netFreePort } from '../nginx/net.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);

export const redisBin = [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(
  (p) => p && fs.existsSync(p));

export function csrfKeyBinary() {
  const b = process.env.CSRF_KEY || path.resolve(here, '../../build/csrf-key');
  if (!fs.existsSync(b)) throw new Error(`csrf-key not found at ${b} (set CSRF_KEY)`);
  return b;
}

// Runs csrf-key with args; throws with its stderr (which never holds key
// material) when it fails. Returns its stdout.
export function csrfKey(...args) {
  const r = spawnSync(csrfKeyBinary(), args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`csrf-key ${args[0]} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The key ids of a key file from `csrf-key list`:
// { signing, verifying: [], staged: [] }.
export function keyIds(file) {
  const out = { signing: null, verifying: [], staged: [] };
  for (const line of csrfKey('list', file).split('\n')) {
    const m = /^(\d+)\s.*\s(signing|verifies|staged)\s*$/.exec(line);
    if (!m) continue;
    if (m[2] === 'signing') out.signing = Number(m[1]);
    else if (m[2] === 'staged') out.staged.push(Number(m[1]));
    else out.verifying.push(Number(m[1]));
  }
  return out;
}

// Below the kernel's ephemeral range (32768 and up), so that no outgoing
// connection takes the port before the server binds it; below the fixed
// port bases of the ctest tests (28100 and up); reserved among the tests
// as net.mjs's freePort does (a range of its own, apart from net.mjs's).
export function freePort(lo = 21000, span = 7000) {
  return netFreePort([lo, lo + span]);
}

// Each server runs in a folder of its own, removed when it exits: a
// replica writes the master's snapshot to its working folder even when
// neither of them saves.
function spawnRedis(port, extra = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-redis-'));
  const child = spawn(redisBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  let out = '';
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 5000);
    child.stdout.on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(t);
        resolve(child);
      }
    });
    child.on('exit', () => {
      clearTimeout(t);
      resolve(null);
    });
  });
}

// A redis-server on a free loopback port, no persistence; extra are more
// command-line options (e.g. ['--replicaof', '127.0.0.1', PORT]). The
// handle can kill it (SIGKILL: a crash), pause it (SIGSTOP: a hung server
// whose connections stay open) and start it again on the same port.
export async function startRedis(extra = []) {
  if (!redisBin) throw new Error('redis-server is not installed');
  for (let i = 0; i < 10; i++) {
    const port = await freePort();
    const child = await spawnRedis(port, extra);
    if (!child) continue;
    const r = {
      port,
      child,
      url: (db = 0) => `redis://127.0.0.1:${port}/${db}`,
      pause: () => r.child.kill('SIGSTOP'),
      resume: () => r.child.kill('SIGCONT'),
      async kill() {
        if (!r.child || r.child.exitCode !== null || r.child.signalCode !== null) return;
        const gone = new Promise((res) => r.child.once('exit', res));
        r.child.kill('SIGCONT');
        r.child.kill('SIGKILL');
        await gone;
      },
      async restart() {
        await r.kill();
        for (let n = 0; n < 50; n++) {
          r.child = await spawnRedis(port, extra);
          if (r.child) return;
          await new Promise((res) => setTimeout(res, 100));
        }
        throw new Error(`redis-server did not start again on port ${port}`);
      },
    };
    return r;
  }
  throw new Error('redis-server did not start');
}

export const sentinelBin = [process.env.REDIS_SENTINEL, '/usr/bin/redis-sentinel', '/usr/local/bin/redis-sentinel']
  .find((p) => p && fs.existsSync(p));

// One command to the Redis (or sentinel) on a loopback port, over its
// protocol (RESP), on a connection of its own: resolves to the reply
// (string, number, null, array; an error reply as an Error object, not a
// rejection), rejects when the server cannot be reached or does not
// answer within ms.
export function redisCommand(port, args, ms = 5000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`redis ${port}: no answer to ${args[0]} within ${ms} ms`));
    }, ms);
    const finish = (err, value) => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    // One reply from buf at i: [value, next index], or null while incomplete.
    const parse = (i) => {
      const eol = buf.indexOf('\r\n', i);
      if (eol < 0) return null;
      const line = buf.toString('utf8', i + 1, eol);
      const type = String.fromCharCode(buf[i]);
      if (type === '+') return [line, eol + 2];
      if (type === '-') return [new Error(line), eol + 2];
      if (type === ':') return [Number(line), eol + 2];
      if (type === '$') {
        const n = Number(line);
        if (n < 0) return [null, eol + 2];
        if (buf.length < eol + 2 + n + 2) return null;
        return [buf.toString('utf8', eol + 2, eol + 2 + n), eol + 2 + n + 2];
      }
      if (type === '*') {
        const n = Number(line);
        if (n < 0) return [null, eol + 2];
        const out = [];
        let j = eol + 2;
        for (let k = 0; k < n; k++) {
          const r = parse(j);
          if (!r) return null;
          out.push(r[0]);
          j = r[1];
        }
        return [out, j];
      }
      throw new Error(`redis ${port}: unexpected reply type ${JSON.stringify(type)}`);
    };
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      let r;
      try {
        r = parse(0);
      } catch (e) {
        finish(e);
        return;
      }
      if (r) finish(null, r[0]);
    });
    sock.on('error', (e) => finish(e));
    sock.on('close', () => finish(new Error(`redis ${port}: connection closed before a reply to ${args[0]}`)));
    const parts = args.map((a) => {
      const b = Buffer.from(String(a));
      return Buffer.concat([Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n')]);
    });
    sock.write(Buffer.concat([Buffer.from(`*${args.length}\r\n`), ...parts]));
  });
}

// Waits until check() resolves truthy (errors count as not yet), polling
// every 100 ms; throws with what after ms.
export async function waitFor(what, check, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

// A redis-sentinel on a free loopback port, in dir (it rewrites its own
// configuration file there), watching the master masterPort under name
// with the given down-after and failover timeouts. The handle has port
// and kill().
export async function startSentinel(dir, name, masterPort, { downAfterMs = 1000, failoverTimeoutMs = 5000 } = {}) {
  if (!sentinelBin) throw new Error('redis-sentinel is not installed');
  for (let i = 0; i < 10; i++) {
    const port = await freePort();
    const conf = path.join(dir, `sentinel-${port}.conf`);
    fs.writeFileSync(conf, `port ${port}
bind 127.0.0.1
daemonize no
protected-mode no
dir ${dir}
logfile ${path.join(dir, `sentinel-${port}.log`)}
sentinel monitor ${name} 127.0.0.1 ${masterPort} 2
sentinel down-after-milliseconds ${name} ${downAfterMs}
sentinel failover-timeout ${name} ${failoverTimeoutMs}
sentinel parallel-syncs ${name} 1
`);
    const child = spawn(sentinelBin, [conf], { stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    const up = await waitFor(`sentinel ${port}`, async () => exited || (await redisCommand(port, ['PING'])) === 'PONG',
      5000).then(() => !exited, () => false);
    if (!up) {
      child.kill('SIGKILL');
      continue;
    }
    return {
      port,
      child,
      log: () => fs.readFileSync(path.join(dir, `sentinel-${port}.log`), 'utf8'),
      async kill() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((res) => child.once('exit', res));
        child.kill('SIGKILL');
        await gone;
      },
    };
  }
  throw new Error('redis-sentinel did not start');
}

// Two csrf-demo instances sharing the key file keys (made here), the store
// arguments given and one database file in dir; port bases from
// DEMO_PORT_BASE when set. Returns { a, b }; stops A when B fails.
export async function startTwoDemos(dir, keys, storeArgs) {
  csrfKey('new', keys);
  const args = ['--key-file', keys, ...storeArgs, '--db', path.join(dir, 'fleet.db')];
  const base = Number(process.env.DEMO_PORT_BASE) || 0;
  const a = await startDemo({ args, portBase: base });
  try {
    return { a, b: await startDemo({ args, portBase: base && base + 10 }) };
  } catch (e) {
    await a.stop();
    throw e;
  }
}

// A cookie jar: name -> value from Set-Cookie headers (an expired cookie
// is dropped), and the Cookie header to send.
export class Jar {
  constructor() {
    this.c = new Map();
  }

  take(res) {
    for (const line of res.headers['set-cookie'] || []) {
      const m = /^([^=;\s]+)=([^;]*)/.exec(line);
      if (!m) continue;
      if (/;\s*max-age=(0|-\d+)/i.test(line)) this.c.delete(m[1]);
      else this.c.set(m[1], m[2]);
    }
    return res;
  }

  header() {
    return [...this.c].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  has(name) {
    return this.c.has(name);
  }

  clone() {
    const j = new Jar();
    j.c = new Map(this.c);
    return j;
  }
}

// request() with its duration in ms as res.ms.
export async function timed(base, opts) {
  const t0 = Date.now();
  const res = await request(base, opts);
  res.ms = Date.now() - t0;
  return res;
}

// The hidden fields of the first <form> whose action is `action`.
export function formFields(html, action) {
  const re = /<form\b[^>]*>([\s\S]*?)<\/form>/g;
  for (let m; (m = re.exec(html));) {
    if (!new RegExp(`action="${action}"`).test(m[0].slice(0, m[0].indexOf('>') + 1))) continue;
    const fields = {};
    const inp = /<input\b([^>]*)>/g;
    for (let i; (i = inp.exec(m[1]));) {
      const name = /\bname="([^"]*)"/.exec(i[1]);
      const value = /\bvalue="([^"]*)"/.exec(i[1]);
      if (name && /type="hidden"/.test(i[1])) fields[name[1]] = value ? value[1] : '';
    }
    return fields;
  }
  return null;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// assert.match / doesNotMatch put the text into the failure report; a page
// or a log may carry a token, so these report only the message.
export function has(text, re, message) {
  assert.ok(re.test(text), message || `expected ${re}`);
}

export function lacks(text, re, message) {
  assert.ok(!re.test(text), message || `unexpected ${re}`);
}

export const NGINX = process.env.CSRF_NGINX || '/usr/sbin/nginx';

function nginxConf(prefix, server, module, settle) {
  const user = process.geteuid() === 0 ? 'user nobody nogroup;' : '';
  return `${module ? `load_module ${module};` : ''}
worker_processes 1;
error_log ${prefix}/error.log notice;
pid ${prefix}/nginx.pid;
${user}
events { worker_connections 64; }
http {
    log_format csrf '$request_method $request_uri $status ${module ? '$csrf_result' : '-'}';
    access_log ${prefix}/access.log csrf;
    client_body_temp_path ${prefix}/body;
    proxy_temp_path ${prefix}/proxy;
    fastcgi_temp_path ${prefix}/fastcgi;
    uwsgi_temp_path ${prefix}/uwsgi;
    scgi_temp_path ${prefix}/scgi;
    ${server}
    ${barrierServer(settle, !!module)}
}
`;
}

async function waitHttp(base, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await request(base, { path: '/style.css' }).then(() => true, () => false)) return true;
    await sleep(50);
  }
  return false;
}

// /usr/sbin/nginx in its own prefix dir/name on a free loopback port, one
// worker, with the module when given. server(port) is the server block;
// opts.port a port chosen beforehand. The handle has the logs, reload()
// (nginx -s reload, then waits for the new worker) and stop().
export async function startNginx(dir, name, server, module = null, opts = {}) {
  const prefix = path.join(dir, name);
  fs.mkdirSync(prefix, { recursive: true });
  fs.chmodSync(prefix, 0o755); // workers run as nobody under root
  const port = opts.port || await freePort();
  const settle = await freePort();
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, nginxConf(prefix, server(port), module, settle));
  const child = spawn(NGINX, ['-p', prefix, '-c', file, '-g', 'daemon off; master_process on;'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const read = (f) => (fs.existsSync(path.join(prefix, f)) ? fs.readFileSync(path.join(prefix, f), 'utf8') : '');
  const workers = () => (read('error.log').match(/start worker process/g) || []).length;
  const n = {
    name,
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    errorLog: () => read('error.log'),
    // the access log once every request answered so far is in it
    async accessLog() {
      await barrier(settle);
      return read('access.log');
    },
    async reload() {
      const before = workers();
      const r = spawnSync(NGINX, ['-p', prefix, '-c', file, '-s', 'reload'], { encoding: 'utf8' });
      assert.equal(r.status, 0, `nginx -s reload on ${name}: ${r.stderr}`);
      const end = Date.now() + 10000;
      while (workers() <= before) {
        assert.ok(Date.now() < end, `${name} did not start a new worker`);
        await sleep(50);
      }
      await sleep(200); // the old worker stops accepting
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
  };
  if (!(await waitHttp(n.base))) {
    await n.stop();
    throw new Error(`nginx ${name} did not start: ${err}${n.errorLog()}`);
  }
  return n;
}

// The deployment of the balancer tests: a plain nginx load balancer (round
// robin, no CSRF module) in front of two protected csrf-demo instances
// that share one Redis, one key file and one database and are both given
// the balancer's origin (--origin). demoArgs go to both instances. Returns
// { a, b, lb, stop() }; null when redis-server or nginx is missing (skip
// says which).
export const balancerSkip = !redisBin ? 'redis-server is not installed'
  : !fs.existsSync(NGINX) ? `${NGINX} is not installed` : false;

export async function startBalancedFleet(demoArgs = []) {
  if (balancerSkip) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-lb-'));
  const keys = path.join(dir, 'csrf.keys');
  const f = { dir };
  f.stop = async () => {
    if (f.lb) await f.lb.stop();
    if (f.a) await f.a.stop();
    if (f.b) await f.b.stop();
    if (f.redis) await f.redis.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    f.redis = await startRedis();
    csrfKey('new', keys);
    // The balancer's port is chosen first: it is the origin of the site.
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const args = ['--key-file', keys, '--store', f.redis.url(0), '--db', path.join(dir, 'fleet.db'), '--origin', origin,
      ...demoArgs];
    const base = Number(process.env.DEMO_PORT_BASE) || 0;
    f.a = await startDemo({ args, portBase: base });
    f.b = await startDemo({ args, portBase: base && base + 4 });
    const up = (d) => `server 127.0.0.1:${new URL(d.victim).port};`;
    f.lb = await startNginx(dir, 'lb', (p) => `upstream fleet { ${up(f.a)} ${up(f.b)} }
    server {
        listen 127.0.0.1:${p};
        location / {
            proxy_pass http://fleet;
            proxy_set_header Host $http_host;
        }
    }`, null, { port });
    assert.equal(f.lb.base, origin);
  } catch (e) {
    await f.stop();
    throw e;
  }
  return f;
}
