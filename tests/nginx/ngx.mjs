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
import { waitConnect } from './net.mjs';

const NGINX = process.env.CSRF_NGINX || '/usr/sbin/nginx';
export const MODULE = process.env.CSRF_NGX_MODULE;

// Starts nginx with http (the body of the http block; the temporary paths
// are set) once it listens on every one of ports. name: the prefix's name.
// Answers { prefix, log(file), errorLog(), stop() }.
export async function startNginx(name, http, ports) {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
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
}
`;
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const t = spawnSync(NGINX, ['-t', '-p', prefix, '-c', file], { encoding: 'utf8' });
  assert.equal(t.status, 0, `nginx -t: ${t.stderr}`);
  const child = spawn(NGINX, ['-p', prefix, '-c', file, '-g', 'daemon off; master_process on;'], { stdio: 'ignore' });
  for (const p of ports) assert.ok(await waitConnect(p), `nginx listens on ${p}`);
  const log = (f) => fs.readFileSync(path.join(prefix, f), 'utf8');
  return {
    prefix,
    log,
    errorLog: () => log('error.log'),
    async stop() {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      const k = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(k);
      if (!process.env.CSRF_KEEP_TMP) fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}
