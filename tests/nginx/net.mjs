// SPDX-License-Identifier: BSD-2-Clause
// net.mjs - the loopback helpers of the nginx browser tests.
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
