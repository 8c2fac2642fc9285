// attacks.test.mjs - every page of the attacker site against csrf-demo, in
// the browser E2E_BROWSER names (ctest: e2e.attacks_MODE.chromium and
// .firefox). DEMO_MODE=unprotected: each attack must change the victim's
// state (the attacks are real). Otherwise (protected): the state stays the
// same, alice stays signed in, and the demo logs the rejection with its
// reason. Either way the demo logs what the browser sent with each forged
// request (--log-requests), the test checks it against what this browser
// is known to send, and writes the table to E2E_OUT/headers-BROWSER-MODE.md;
// the screenshots go where shotFile says (CSRF_SCREENSHOTS=docs/img
// regenerates the README's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startDemo, waitForLog } from './demo.mjs';
import { shotFile } from './browser.mjs';
import { ATTACKS, BROWSER, launch, login, requestLines, runAttack } from './lib.mjs';
import { expectedHeaders, headerTable } from './headers.mjs';

const unprotected = process.env.DEMO_MODE === 'unprotected';
const mode = unprotected ? 'unprotected' : 'protected';
const out = process.env.E2E_OUT || path.join(path.dirname(new URL(import.meta.url).pathname), 'out');
let demo;
let browser;
const seen = [];

before(async () => {
  fs.mkdirSync(out, { recursive: true });
  demo = await startDemo({ unprotected, args: ['--log-requests'] });
  browser = await launch(BROWSER);
});

after(async () => {
  if (browser) await browser.close();
  if (demo) {
    const code = await demo.stop();
    assert.equal(code, 0, 'csrf-demo exits cleanly on SIGTERM');
  }
});

for (const attack of ATTACKS) {
  test(`${BROWSER} ${mode}: ${attack.name} (${attack.what})`, async () => {
    let mark = demo.mark();
    const r = await runAttack(browser, demo, attack, { beforeAttack: () => { mark = demo.mark(); } });
    const [method, route] = attack.request.split(' ');
    const sent = requestLines(demo.logSince(mark)).filter((q) => q.method === method && q.path === route);
    assert.equal(sent.length, 1, `the browser sent ${attack.request} once`);
    seen.push({ attack: attack.name, ...sent[0] });
    assert.deepEqual(sent[0], { ...sent[0], ...expectedHeaders(BROWSER, attack, demo.attacker) },
      `the headers ${BROWSER} sends with ${attack.name}`);
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

test(`${BROWSER} ${mode}: the headers table and screenshots of the victim and the attacker`, async () => {
  assert.equal(seen.length, ATTACKS.length, 'every attack was recorded');
  fs.writeFileSync(path.join(out, `headers-${BROWSER}-${mode}.md`), headerTable(BROWSER, seen, demo.attacker));
  const shot = (name) => shotFile(`${name}-${BROWSER}`);
  const page = await browser.newPage();
  await login(page, demo.victim, 'alice', 'wonderland');
  await page.screenshot(shot(`victim-${mode}`));
  await page.goto(`${demo.attacker}/`);
  await page.screenshot(shot('attacker'));
  if (!unprotected) {
    await page.goto(`${demo.attacker}/form-vote`, { wait: false });
    await page.waitForUrl('the attacker page /form-vote submits its form', (u) => u.startsWith(`${demo.victim}/`));
    assert.ok(await page.text('#reason'));
    await page.screenshot(shot('rejected'));
  }
  await page.close();
  const made = unprotected ? ['victim-unprotected', 'attacker'] : ['victim-protected', 'attacker', 'rejected'];
  for (const f of made) assert.ok(fs.statSync(shot(f)).size > 1000, `${path.basename(shot(f))} not empty`);
});
