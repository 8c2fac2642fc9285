// nginx.test.mjs - two nginx instances with ngx_http_csrf_module and one
// csrf_key_file in front of one unprotected csrf-demo (the application
// that cannot be changed): a page fetched through nginx A carries the
// injected token and the secret cookie, the POST with them through nginx B
// is accepted and one without is rejected; after `csrf-key rotate` and
// `nginx -s reload` on both the old token still verifies, after `retire`
// and a reload it fails with unknown_key. Skipped without nginx or the
// built module.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemo, getState } from '../e2e/demo.mjs';
import { request, form } from '../http/client.mjs';
import { csrfKey, keyIds, freePort, Jar, formFields, sleep } from './fleet.mjs';

const NGINX = process.env.CSRF_NGINX || '/usr/sbin/nginx';
const MODULE = process.env.CSRF_NGX_MODULE || '';
const skip = !fs.existsSync(NGINX) ? `${NGINX} is not installed`
  : !MODULE || !fs.existsSync(MODULE) ? `the module is not built (${MODULE || 'CSRF_NGX_MODULE unset'})` : false;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-fleet-ngx-'));
const keys = path.join(dir, 'csrf.keys');
let app;
let na;
let nb;

function conf(prefix, port, upstream) {
  const user = process.geteuid() === 0 ? 'user nobody nogroup;' : '';
  return `load_module ${MODULE};
worker_processes 1;
error_log ${prefix}/error.log notice;
pid ${prefix}/nginx.pid;
${user}
events { worker_connections 64; }
http {
    log_format csrf '$request_method $request_uri $status $csrf_result';
    access_log ${prefix}/access.log csrf;
    client_body_temp_path ${prefix}/body;
    proxy_temp_path ${prefix}/proxy;
    fastcgi_temp_path ${prefix}/fastcgi;
    uwsgi_temp_path ${prefix}/uwsgi;
    scgi_temp_path ${prefix}/scgi;
    server {
        listen 127.0.0.1:${port};
        csrf on;
        csrf_key_file ${keys};
        csrf_session_cookie demo_sid;
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            proxy_set_header Accept-Encoding "";
        }
    }
}
`;
}

function waitPort(port, ms = 10000) {
  const end = Date.now() + ms;
  return (async () => {
    while (Date.now() < end) {
      const ok = await request(`http://127.0.0.1:${port}`, { path: '/style.css' }).then(() => true, () => false);
      if (ok) return true;
      await sleep(50);
    }
    return false;
  })();
}

async function startNginx(name, upstream) {
  const prefix = path.join(dir, name);
  fs.mkdirSync(prefix, { mode: 0o755 });
  fs.chmodSync(prefix, 0o755);
  const port = await freePort();
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, conf(prefix, port, upstream));
  const child = spawn(NGINX, ['-p', prefix, '-c', file, '-g', 'daemon off; master_process on;'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const n = {
    name,
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    errorLog: () => (fs.existsSync(path.join(prefix, 'error.log')) ? fs.readFileSync(path.join(prefix, 'error.log'),
      'utf8') : ''),
    accessLog: () => fs.readFileSync(path.join(prefix, 'access.log'), 'utf8'),
    // nginx -s reload, then wait for the new worker.
    async reload() {
      const before = (n.errorLog().match(/start worker process/g) || []).length;
      const r = spawnSync(NGINX, ['-p', prefix, '-c', file, '-s', 'reload'], { encoding: 'utf8' });
      assert.equal(r.status, 0, `nginx -s reload on ${name}: ${r.stderr}`);
      const end = Date.now() + 10000;
      while ((n.errorLog().match(/start worker process/g) || []).length <= before) {
        assert.ok(Date.now() < end, `${name} did not start a new worker`);
        await sleep(50);
      }
      await sleep(200); // the old worker stops accepting
    },
    async stop() {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
  };
  if (!(await waitPort(port))) {
    await n.stop();
    throw new Error(`nginx ${name} did not start: ${err}${n.errorLog()}`);
  }
  return n;
}

before(async () => {
  if (skip) return;
  csrfKey('new', keys);
  app = await startDemo({ unprotected: true });
  const upstream = new URL(app.victim).port;
  na = await startNginx('a', upstream);
  nb = await startNginx('b', upstream);
});

after(async () => {
  for (const n of [na, nb]) if (n) await n.stop();
  if (app) await app.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const jar = new Jar();

async function get(n, p) {
  return jar.take(await request(n.base, { path: p, headers: { cookie: jar.header() } }));
}

async function post(n, p, fields, j = jar) {
  return j.take(await request(n.base, {
    method: 'POST',
    path: p,
    headers: { cookie: j.header(), origin: n.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: form(fields),
  }));
}

// The csrf_result nginx logged for the last request to p.
async function lastResult(n, p) {
  await sleep(100); // nginx logs after answering
  const lines = n.accessLog().split('\n').filter((l) => l.includes(` ${p} `));
  return lines.length ? lines[lines.length - 1].split(' ').slice(-2).join(' ') : null;
}

let voteFields;

test('a page through nginx A carries an injected token and the secret cookie', { skip }, async () => {
  const r = await get(na, '/');
  assert.equal(r.status, 200);
  assert.ok(jar.has('csrf_secret'), 'A sets the signed secret cookie');
  assert.ok(jar.has('demo_sid'), 'the application\'s own session cookie passes through');
  const login = formFields(r.body, '/login');
  assert.ok(login && Object.keys(login).some((k) => k.startsWith('csrf')), 'A injected the hidden field');
  assert.match(r.body, /<meta name="csrf-token" content="[^"]+">/);
  const s = await post(nb, '/login', { ...login, user: 'alice', password: 'wonderland' });
  assert.equal(s.status, 303, 'the login form of A is accepted through B');
  assert.equal(await lastResult(nb, '/login'), '303 ok');
  const home = await get(na, '/');
  assert.match(home.body, /id="whoami">alice</);
  voteFields = formFields(home.body, '/vote');
  assert.ok(voteFields, 'vote forms carry injected tokens for the new session');
});

async function vote(n, fields, expect, result, j = jar) {
  const before = await getState(app.victim);
  const r = await post(n, '/vote', { ...fields, type: 'y' }, j);
  assert.equal(r.status, expect, `POST /vote through ${n.name}`);
  assert.equal(await lastResult(n, '/vote'), `${expect} ${result}`, `${n.name} logs ${result}`);
  const counted = (await getState(app.victim)).votes[fields.story].y - before.votes[fields.story].y;
  assert.equal(counted, expect === 303 ? 1 : 0, expect === 303 ? 'the vote is counted' : 'nothing changed');
}

test('the token of A verifies on B; a POST without it is rejected', { skip }, async () => {
  await vote(nb, voteFields, 303, 'ok');
  const noToken = Object.fromEntries(Object.entries(voteFields).filter(([k]) => !k.startsWith('csrf')));
  await vote(nb, noToken, 403, 'token_missing');
  await vote(na, noToken, 403, 'token_missing');
});

test('rotate + nginx -s reload on both: the old token still verifies; retired, it fails', { skip }, async () => {
  const first = keyIds(keys).signing;
  csrfKey('rotate', keys);
  await na.reload();
  await nb.reload();
  await vote(nb, voteFields, 303, 'ok');
  await vote(na, voteFields, 303, 'ok');
  const fresh = formFields((await get(nb, '/')).body, '/vote');
  await vote(na, fresh, 303, 'ok');

  // Retiring the key also ends the secret cookies it signed: a user's
  // next page gets a new cookie and new tokens.
  csrfKey('retire', keys, String(first));
  await na.reload();
  await nb.reload();
  const before = jar.clone();
  await vote(na, voteFields, 403, 'unknown_key', before.clone());
  await vote(nb, voteFields, 403, 'unknown_key', before.clone());
  const again = formFields((await get(na, '/')).body, '/vote');
  assert.notEqual(jar.header(), before.header(), 'A replaced the secret cookie of the retired key');
  await vote(nb, again, 303, 'ok');
  for (const n of [na, nb]) assert.doesNotMatch(n.errorLog(), /exited on signal|core dumped/, `${n.name} workers`);
});
