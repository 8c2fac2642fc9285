// SPDX-License-Identifier: BSD-2-Clause
// ngx.mjs - the stock Debian nginx with the module for the node tests of
// tests/nginx (and the TLS front of the e2e tests' https mode, which loads
// the module only when CSRF_NGX_MODULE names it): one master and one worker in a temporary prefix, on ports
// the caller picked (net.mjs freePort), stopped and removed by stop().
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { freePort, stopChild, waitConnect } from './net.mjs';

const NGINX = process.env.CSRF_NGINX || '/usr/sbin/nginx';
export const MODULE = process.env.CSRF_NGX_MODULE;

// nginx writes a request's log line after its answer has gone, so a client
// can read the answer before the line is there (under load it does). The
// barrier closes that gap: a server of its own that logs nothing and
// leaves the module out. nginx's one worker ends a request, its log line
// included, before its event loop takes a new connection, so once the
// barrier has answered, every request answered before is in the logs.
export function barrierServer(port, module = !!MODULE) {
  return `
    server {
        listen 127.0.0.1:${port};
        access_log off;
        ${module ? 'csrf off;' : ''}
        location / { return 204; }
    }
`;
}

export function barrier(port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`barrier: ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
}

// Starts nginx with http (the body of the http block; the temporary paths
// are set) once it listens on every one of ports. name: the prefix's name.
// Answers { prefix, log(file), logged(file), errorLog(), stop() }: log
// reads a log as it is, logged after the barrier (every request answered
// so far written).
export async function startNginx(name, http, ports) {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const settle = await freePort();
  fs.chmodSync(prefix, 0o755);
  const user = process.getuid && process.getuid() === 0 ? 'user nobody nogroup;' : '';
  const conf = `
${MODULE ? `load_module ${MODULE};` : ''}
worker_processes 1;
error_log ${prefix}/error.log info;
pid ${prefix}/nginx.pid;
${user}
events { worker_connections 256; }
http {
    client_body_temp_path ${prefix}/body;
    proxy_temp_path ${prefix}/proxy;
    fastcgi_temp_path ${prefix}/fastcgi;
    uwsgi_temp_path ${prefix}/uwsgi;
    scgi_temp_path ${prefix}/scgi;
${http.replaceAll('{prefix}', prefix)}
${barrierServer(settle)}
}
`;
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const t = spawnSync(NGINX, ['-t', '-p', prefix, '-c', file], { encoding: 'utf8' });
  assert.equal(t.status, 0, `nginx -t: ${t.stderr}`);
  const child = spawn(NGINX, ['-p', prefix, '-c', file, '-g', 'daemon off; master_process on;'], { stdio: 'ignore' });
  for (const p of [...ports, settle]) assert.ok(await waitConnect(p), `nginx listens on ${p}`);
  const log = (f) => fs.readFileSync(path.join(prefix, f), 'utf8');
  return {
    prefix,
    log,
    async logged(f) {
      await barrier(settle);
      return log(f);
    },
    errorLog: () => log('error.log'),
    stop: () => stopChild(child, 'SIGQUIT', prefix),
  };
}
