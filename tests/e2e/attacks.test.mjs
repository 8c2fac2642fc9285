// attacks.test.mjs - every page of the attacker site, in headless Chromium,
// against csrf-demo. DEMO_MODE=unprotected: each attack must change the
// victim's state (the attacks are real). Otherwise (protected): the state
// stays the same, alice stays signed in, and the demo logs the rejection
// with its reason. Screenshots go to E2E_OUT.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startDemo, waitForLog } from './demo.mjs';
import { ATTACKS, closePage, launchBrowser, login, runAttack, step } from './lib.mjs';

const unprotected = process.env.DEMO_MODE === 'unprotected';
const mode = unprotected ? 'unprotected' : 'protected';
const out = process.env.E2E_OUT || path.join(path.dirname(new URL(import.meta.url).pathname), 'out');
let demo;
let browser;

before(async () => {
  fs.mkdirSync(out, { recursive: true });
  demo = await startDemo({ unprotected });
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (demo) {
    const code = await demo.stop();
    assert.equal(code, 0, 'csrf-demo exits cleanly on SIGTERM');
  }
});

for (const attack of ATTACKS) {
  test(`${mode}: ${attack.name} (${attack.what})`, async () => {
    const mark = demo.mark();
    const r = await runAttack(browser, demo, attack);
    if (unprotected) {
      assert.ok(r.changed, `the attack changed the victim's state (user now ${r.user})`);
      return;
    }
    assert.ok(r.unchanged, `state unchanged and alice still signed in (user now ${r.user})`);
    const re = new RegExp(`^rejected ${attack.request} from 127\\.0\\.0\\.1: \\S`, 'm');
    const logged = await waitForLog(demo, mark, re);
    assert.ok(logged, `the demo logged "rejected ${attack.request} ...: <reason>"`);
    if (attack.done === 'navigate') assert.ok(r.victimReason, 'the victim page names the reason');
  });
}

test(`${mode}: screenshots of the victim and the attacker`, async () => {
  const page = await browser.context.newPage();
  await login(page, demo.victim, 'alice', 'wonderland');
  await page.screenshot({ path: path.join(out, `victim-${mode}.png`) });
  await step(`open ${demo.attacker}/`, () => page.goto(`${demo.attacker}/`), { page });
  await page.screenshot({ path: path.join(out, `attacker.png`) });
  if (!unprotected) {
    await step('the attacker page /form-vote submits its form', () => Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${demo.victim}/`), { waitUntil: 'load', timeout: 0 }),
      page.goto(`${demo.attacker}/form-vote`, { waitUntil: 'commit', timeout: 0 }),
    ]), { page });
    assert.ok(await page.textContent('#reason'));
    await page.screenshot({ path: path.join(out, `rejected.png`) });
  }
  await closePage(page);
  for (const f of fs.readdirSync(out)) assert.ok(fs.statSync(path.join(out, f)).size > 1000, `${f} not empty`);
});
