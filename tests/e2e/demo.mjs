// SPDX-License-Identifier: BSD-2-Clause
// demo.mjs - starts a csrf-demo of its own for a test: free loopback ports
// (a base per test, retried on a conflict), a temporary database, its
// output collected so tests can look for "rejected ..." lines, and a stop
// that kills it (SIGTERM, then SIGKILL). In the mode browser.mjs's MODE
// names, the browser reaches it as
//   loopback  victim http://127.0.0.1:P, attacker http://127.0.0.1:P+1
//             (same site, other origin)
//   named     victim http://victim.test:P (the demo's --origin), attackers
//             http://evil.victim.test:P+1 (same site) and
//             http://evil.test:P+1 (another site): one attacker server, two
//             names
//   https     nginx with TLS and HTTP/2 in front of both (front.mjs), the
//             demo's --origin https://victim.test:Q (a __Host- session
//             cookie), attackers https://evil.victim.test:R and
//             https://evil.test:R
// The test itself reads /api/state straight from the demo (getState maps
// the victim's public origin to the demo's own address).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MODE } from './browser.mjs';
import { freePort, freePorts, release } from '../nginx/net.mjs';
import { startTlsFront } from './front.mjs';
import { makeCA } from './tls.mjs';

// The public origin of each demo started here -> its own address.
const DIRECT = new Map();

const here = path.dirname(new URL(import.meta.url).pathname);

export function demoBinary() {
  const b = process.env.CSRF_DEMO || path.resolve(here, '../../build/csrf-demo');
  if (!fs.existsSync(b)) throw new Error(`csrf-demo not found at ${b} (set CSRF_DEMO)`);
  return b;
}

// The victim's ports to try (the attacker's is the next one): the base's,
// then pairs net.mjs reserves (freePorts: below the kernel's ephemeral
// range, held from other tests until the demo listens). The random even
// ports of 20000-59998 tried before were mostly in the ephemeral range,
// where the kernel takes even ports for the source of outgoing
// connections (a demo's start then met EADDRINUSE, retried on another
// random one, now and then on every one under load).
async function* portCandidates(base) {
  if (base) for (let i = 0; i < 4; i++) yield base + 2 * i;
  for (let i = 0; i < 6; i++) yield await freePorts(2);
}

// What the last csrf-demo that did not start printed, and how it ended:
// the error of startDemo says it.
let lastFailure = '';

function startOnce(binary, args, victimPort) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const demo = { child, output: '', victimPort };
    let settled = false;
    const done = (ok) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!ok) lastFailure = `${demo.output.trim().split('\n').slice(-3).join(' | ')} (${demo.ended || 'no exit yet'})`;
      resolve(ok ? demo : null);
    };
    const onData = (d) => {
      demo.output += d.toString();
      if (/^attacker: /m.test(demo.output)) done(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      demo.exited = true;
      demo.ended = signal ? `signal ${signal}` : `exit ${code}`;
      done(false);
    });
    // a binary that cannot be run (being rebuilt, say): this port's try failed
    child.on('error', (e) => {
      demo.exited = true;
      demo.ended = e.message;
      done(false);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(false);
    }, 30000);
  });
}

// Starts csrf-demo; opts: { unprotected, portBase, args, mode (MODE),
// origin(port) (the victim's public origin when it is not the mode's) }.
// Resolves to { victim, attacker, attackers, direct, tls, front, log(),
// logSince(mark), mark(), stop(), dir }: attacker is the same-site one,
// attackers every attacker of the mode ([{ kind: 'same-site' |
// 'cross-site', origin }]), direct the demo's own http://127.0.0.1:P, tls
// the test CA (https mode; launch's ca is tls.ca), front the TLS nginx.
export async function startDemo(opts = {}) {
  const binary = demoBinary();
  const mode = opts.mode || MODE;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-demo-test-'));
  const base = opts.portBase || Number(process.env.DEMO_PORT_BASE) || 0;
  let tls = null;
  let fp = 0;
  let fa = 0;
  if (mode === 'https') {
    tls = makeCA(['victim.test', 'evil.victim.test', 'evil.test', 'router.test']);
    [fp, fa] = [await freePort(), await freePort()];
  }
  let last = '';
  for await (const port of portCandidates(base)) {
    const args = ['--listen', `127.0.0.1:${port}`, '--attacker-listen', `127.0.0.1:${port + 1}`,
      '--db', path.join(dir, 'demo.db')];
    const pub = { loopback: null, named: `http://victim.test:${port}`, https: `https://victim.test:${fp}` }[mode];
    const victim = opts.origin ? opts.origin(port) : pub;
    if (victim) args.push('--origin', victim);
    if (opts.unprotected) args.push('--unprotected');
    if (opts.args) args.push(...opts.args);
    const d = await startOnce(binary, args, port);
    release(port);
    release(port + 1);
    if (!d) {
      last = `${port}`;
      continue;
    }
    const direct = `http://127.0.0.1:${port}`;
    let attackers = [{ kind: 'same-site', origin: `http://127.0.0.1:${port + 1}` }];
    if (mode === 'named') {
      attackers = [{ kind: 'same-site', origin: `http://evil.victim.test:${port + 1}` },
        { kind: 'cross-site', origin: `http://evil.test:${port + 1}` }];
    }
    let front = null;
    if (mode === 'https') {
      try {
        front = await startTlsFront(tls, [{ port: fp, upstream: port }, { port: fa, upstream: port + 1 }]);
      } catch (e) {
        d.child.kill('SIGKILL');
        tls.remove();
        throw e;
      }
      attackers = [{ kind: 'same-site', origin: `https://evil.victim.test:${fa}` },
        { kind: 'cross-site', origin: `https://evil.test:${fa}` }];
    }
    const site = victim || direct;
    DIRECT.set(site, direct);
    return {
      victim: site,
      attacker: attackers[0].origin,
      attackers,
      direct,
      mode,
      tls,
      front,
      dir,
      child: d.child,
      log: () => d.output,
      mark: () => d.output.length,
      logSince: (m) => d.output.slice(m),
      alive: () => !d.exited,
      async stop() {
        DIRECT.delete(site);
        if (front) await front.stop();
        if (tls) tls.remove();
        if (!d.exited) {
          const gone = new Promise((r) => d.child.once('exit', r));
          d.child.kill('SIGTERM');
          const t = setTimeout(() => d.child.kill('SIGKILL'), 5000);
          await gone;
          clearTimeout(t);
        }
        fs.rmSync(dir, { recursive: true, force: true });
        return d.child.exitCode;
      },
    };
  }
  fs.rmSync(dir, { recursive: true, force: true });
  if (tls) tls.remove();
  throw new Error(`csrf-demo did not start (last port tried ${last}; it said: ${lastFailure})`);
}

// Waits until the demo's output since mark matches re (log lines are
// written as the request is answered, so a short wait is enough).
export async function waitForLog(demo, mark, re, ms = 3000) {
  const end = Date.now() + ms;
  for (;;) {
    const s = demo.logSince(mark);
    if (re.test(s)) return s;
    if (Date.now() > end) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Says that the public origin site (a front such as nginx, reached by a
// name node cannot resolve) serves the demo at direct (its own
// http://127.0.0.1:P): getState(site) reads the state there.
export function directFor(site, direct) {
  DIRECT.set(site, direct);
}

// GET /api/state, bounded: a server that does not answer fails the test
// with the request's name instead of hanging it. victim: a demo's public
// origin (read from the demo itself) or any other URL.
export async function getState(victim, ms = Number(process.env.E2E_STEP_MS) || 20000) {
  victim = DIRECT.get(victim) || victim;
  let r;
  try {
    r = await fetch(`${victim}/api/state`, { signal: AbortSignal.timeout(ms) });
  } catch (e) {
    throw new Error(`GET ${victim}/api/state: ${e.name === 'TimeoutError' ? `no answer within ${ms} ms` : e.message}`);
  }
  if (r.status !== 200) throw new Error(`/api/state answered ${r.status}`);
  return r.json();
}
