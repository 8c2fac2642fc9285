// SPDX-License-Identifier: BSD-2-Clause
// net.mjs - the loopback and process helpers of the node tests that start
// servers (tests/nginx, tests/apache, tests/fleet).
import fs from 'node:fs';
import net from 'node:net';

// Ports for the servers the tests start (tests/lib/servertest.py picks
// the same way). The old way, bind port 0, close, hand the number to a
// server, left the port free while the server started (nginx -t, php-fpm,
// a demo: seconds under load), and the kernel hands such a port (from its
// ephemeral range, ip_local_port_range) to the next bind to port 0 or
// outgoing connection's source on the machine: another test's pick, a
// browser's or nginx's connection. The server then met EADDRINUSE, or a
// test reached another test's server. So a port here is picked
//   - below the ephemeral range, in RANGE (below the fixed bases of the
//     ctest tests, 28100 and up, and below tests/fleet's own 21000-27999):
//     the kernel gives none of these to a port-0 bind or a connection;
//   - reserved among the tests until its server accepts on it: the pick
//     holds a listener on 127.0.0.2:PORT (loopback, no server of the tests
//     uses that address), which another test's pick cannot take, until
//     waitConnect sees the server on 127.0.0.1:PORT (or the process ends:
//     the kernel closes it).
export const RANGE = [10000, 21000];
const RESERVE_HOST = '127.0.0.2';
const held = new Map();

function listenOn(port, host) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, host, () => resolve(s.unref()));
  });
}

// Reserves port: true when no other test holds it and nothing listens on
// 127.0.0.1:port now.
async function reserve(port) {
  if (held.has(port)) return false;
  const r = await listenOn(port, RESERVE_HOST);
  if (!r) return false;
  const probe = await listenOn(port, '127.0.0.1');
  if (!probe) {
    r.close();
    return false;
  }
  await new Promise((done) => probe.close(done));
  held.set(port, r);
  return true;
}

// Ends the reservation of port (a server accepts on it now, or it was not
// used).
export function release(port) {
  const r = held.get(port);
  if (r) r.close();
  held.delete(port);
}

// count consecutive ports on 127.0.0.1, free and reserved for this
// process (see RANGE): the first one. [lo, hi) the range to pick from.
export async function freePorts(count, [lo, hi] = RANGE) {
  for (let i = 0; i < 200; i++) {
    const port = lo + Math.floor(Math.random() * (hi - lo - count + 1));
    const got = [];
    for (let p = port; p < port + count && (await reserve(p)); p++) got.push(p);
    if (got.length === count) return port;
    got.forEach(release);
  }
  throw new Error(`no ${count} free loopback ports in ${lo}-${hi - 1}`);
}

// A TCP port on 127.0.0.1 that no other test will pick, free until the
// server the caller starts there takes it (waitConnect ends the
// reservation).
export function freePort(range = RANGE) {
  return freePorts(1, range);
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
        if (typeof target === 'number') release(target);
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
