// SPDX-License-Identifier: BSD-2-Clause
// net.mjs - the loopback and process helpers of the node tests that start
// servers (tests/nginx, tests/apache, tests/fleet).
import fs from 'node:fs';
import net from 'node:net';

// A TCP port on 127.0.0.1 that was free a moment ago.
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

// Resolves true once something accepts connections at a 127.0.0.1 port
// (a number) or a unix socket (a path), false after ms.
export function waitConnect(target, ms = 10000) {
  const end = Date.now() + ms;
  return new Promise((resolve) => {
    const attempt = () => {
      const c = typeof target === 'number' ? net.connect(target, '127.0.0.1') : net.connect(target);
      c.on('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => {
        if (Date.now() > end) resolve(false);
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

// Stops a server the test started: sends it signal, SIGKILL after 5 s, and
// once it has exited removes its temporary prefix (kept when CSRF_KEEP_TMP
// is set).
export async function stopChild(child, signal, prefix) {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const k = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(k);
  if (!process.env.CSRF_KEEP_TMP) fs.rmSync(prefix, { recursive: true, force: true });
}
