// SPDX-License-Identifier: BSD-2-Clause
// cold_start.test.mjs - a fleet starting at once: three csrf-demo
// instances spawned in the same moment on one new SQLite file, several
// rounds, each on a fresh file. Every instance must start (none may exit
// with "table users already exists" or "database is locked"), serve the
// demo data exactly once (three stories, three accounts, no duplicate
// seed), and sign alice in with the password the schema was seeded with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoBinary, getState } from '../e2e/demo.mjs';
import { loginSession } from '../http/client.mjs';
import { freePort } from './fleet.mjs';

const ROUNDS = 3;
const INSTANCES = 3;
const seeded = {
  votes: { 1: { y: 0, n: 0 }, 2: { y: 0, n: 0 }, 3: { y: 0, n: 0 } },
  balances: { alice: 1000, bob: 1000, mallory: 0 },
};

// Distinct free ports for every instance (victim and attacker each).
async function ports(n) {
  const out = new Set();
  while (out.size < n) out.add(await freePort());
  return [...out];
}

// Spawns one demo; resolves when it says it listens or when it exits.
function spawnDemo(db, victimPort, attackerPort) {
  const child = spawn(demoBinary(), ['--listen', `127.0.0.1:${victimPort}`, '--attacker-listen',
    `127.0.0.1:${attackerPort}`, '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
  const d = { child, output: '', victim: `http://127.0.0.1:${victimPort}`, exited: false };
  d.ready = new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 60000);
    const onData = (chunk) => {
      d.output += chunk.toString();
      if (/^attacker: /m.test(d.output)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => {
      d.exited = true;
      clearTimeout(timer);
      resolve(false);
    });
  });
  return d;
}

async function stop(d) {
  if (d.exited) return;
  const gone = new Promise((r) => d.child.once('exit', r));
  d.child.kill('SIGTERM');
  const t = setTimeout(() => d.child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

test('instances started at once on a new database all start and share one seed', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-cold-'));
    const db = path.join(dir, 'fleet.db');
    const p = await ports(2 * INSTANCES);
    const demos = [];
    try {
      for (let i = 0; i < INSTANCES; i++) demos.push(spawnDemo(db, p[2 * i], p[2 * i + 1]));
      const ready = await Promise.all(demos.map((d) => d.ready));
      for (let i = 0; i < INSTANCES; i++) {
        assert.ok(ready[i], `round ${round}, instance ${i} did not start:\n${demos[i].output}`);
        assert.doesNotMatch(demos[i].output, /csrf-demo: (database|cannot)|already exists|locked/,
          `round ${round}, instance ${i} complained about the database`);
      }
      for (let i = 0; i < INSTANCES; i++) {
        assert.deepEqual(await getState(demos[i].victim), seeded, `round ${round}, instance ${i}: the demo data once`);
        await loginSession(demos[i].victim, 'alice', 'wonderland');
      }
    } finally {
      await Promise.all(demos.map(stop));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
