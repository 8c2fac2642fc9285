// demo.mjs - starts a csrf-demo of its own for a test: free loopback ports
// (a base per test, retried on a conflict), a temporary database, its
// output collected so tests can look for "rejected ..." lines, and a stop
// that kills it (SIGTERM, then SIGKILL).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);

export function demoBinary() {
  const b = process.env.CSRF_DEMO || path.resolve(here, '../../build/csrf-demo');
  if (!fs.existsSync(b)) throw new Error(`csrf-demo not found at ${b} (set CSRF_DEMO)`);
  return b;
}

function portCandidates(base) {
  const out = [];
  if (base) for (let i = 0; i < 4; i++) out.push(base + 2 * i);
  for (let i = 0; i < 6; i++) out.push(20000 + 2 * Math.floor(Math.random() * 20000));
  return out;
}

function startOnce(binary, args, victimPort) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const demo = { child, output: '', victimPort };
    let settled = false;
    const done = (ok) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok ? demo : null);
    };
    const onData = (d) => {
      demo.output += d.toString();
      if (/^attacker: /m.test(demo.output)) done(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => {
      demo.exited = true;
      done(false);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(false);
    }, 30000);
  });
}

// Starts csrf-demo; opts: { unprotected, portBase, args }. Resolves to
// { victim, attacker, log(), logSince(mark), mark(), stop(), dir }.
export async function startDemo(opts = {}) {
  const binary = demoBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-demo-test-'));
  const base = opts.portBase || Number(process.env.DEMO_PORT_BASE) || 0;
  let last = '';
  for (const port of portCandidates(base)) {
    const args = ['--listen', `127.0.0.1:${port}`, '--attacker-listen', `127.0.0.1:${port + 1}`,
      '--db', path.join(dir, 'demo.db')];
    if (opts.unprotected) args.push('--unprotected');
    if (opts.args) args.push(...opts.args);
    const d = await startOnce(binary, args, port);
    if (!d) {
      last = `${port}`;
      continue;
    }
    const victim = `http://127.0.0.1:${port}`;
    const attacker = `http://127.0.0.1:${port + 1}`;
    return {
      victim,
      attacker,
      dir,
      child: d.child,
      log: () => d.output,
      mark: () => d.output.length,
      logSince: (m) => d.output.slice(m),
      alive: () => !d.exited,
      async stop() {
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
  throw new Error(`csrf-demo did not start (last port tried ${last})`);
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

// GET /api/state, bounded: a server that does not answer fails the test
// with the request's name instead of hanging it.
export async function getState(victim, ms = Number(process.env.E2E_STEP_MS) || 20000) {
  let r;
  try {
    r = await fetch(`${victim}/api/state`, { signal: AbortSignal.timeout(ms) });
  } catch (e) {
    throw new Error(`GET ${victim}/api/state: ${e.name === 'TimeoutError' ? `no answer within ${ms} ms` : e.message}`);
  }
  if (r.status !== 200) throw new Error(`/api/state answered ${r.status}`);
  return r.json();
}
