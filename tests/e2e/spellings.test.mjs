// SPDX-License-Identifier: BSD-2-Clause
// spellings.test.mjs - the origin as a person types it and as the browser
// sends it, by name over plain HTTP (E2E_MODE=named: no Sec-Fetch-*, so
// the Origin header decides; ctest e2e.spellings.named.chromium and
// .firefox). For each spelling a legitimate login through the demo's own
// form passes, the Origin the browser sent is logged, and a look-alike
// attacker's self-submitting form is refused on its Origin:
//
//   upper case     typed http://VICTIM.TEST:P/login; the browser sends the
//                  host in lower case
//   final dot      typed http://victim.test.:P/login; the browser keeps the
//                  dot in Origin (http://victim.test.:P), the library takes
//                  it for the same host as the configured victim.test
//   IDN            typed http://bücher.test:P/login; the browser sends
//                  punycode (http://xn--bcher-kva.test:P), which is what
//                  the operator configures (--origin)
//
// Not here: an IPv6 literal (http://[::1]:P is loopback, a potentially
// trustworthy origin: both browsers send Sec-Fetch-Site and the Origin's
// spelling never decides; an address that is not loopback is not the test
// machine's to use), explicit default ports (:80 next to none: a
// privileged port, and Firefox resolves the test names to 127.0.0.1 only,
// where other tests may hold port 80). The library's own tests cover
// their spellings (tests/unit).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, getState, waitForLog } from './demo.mjs';
import { MODE } from './browser.mjs';
import { ATTACKS, BROWSER, launch, requestLines } from './lib.mjs';

if (MODE !== 'named') throw new Error('spellings.test.mjs runs in the named mode');

const IDN = 'bücher.test';
const IDN_ASCII = 'xn--bcher-kva.test';
const formVote = ATTACKS.find((a) => a.name === 'form-vote');

let plain; // the demo at http://victim.test:P
let idn; // the demo at http://xn--bcher-kva.test:P
let browser;

before(async () => {
  plain = await startDemo({ args: ['--log-requests'] });
  idn = await startDemo({ args: ['--log-requests'], origin: (port) => `http://${IDN_ASCII}:${port}` });
  // Firefox's network.dns.localDomains needs each name as it is looked up
  browser = await launch(BROWSER, { hosts: ['victim.test.', IDN_ASCII, 'bucher.test', 'evil.victim.test.'] });
});

after(async () => {
  if (browser) await browser.close();
  if (plain) await plain.stop();
  if (idn) await idn.stop();
});

// Logs alice in through the form of typed (the URL as a person types it)
// and answers the Origin the browser sent with the login.
async function loginAt(demo, typed) {
  await browser.clearCookies();
  const page = await browser.newPage();
  await page.goto(`${typed}/login`);
  const mark = demo.mark();
  await page.fill('#login-user', 'alice');
  await page.fill('#login-password', 'wonderland');
  const r = await page.clickAndWait('#login-submit');
  const sent = requestLines(demo.logSince(mark)).filter((q) => q.method === 'POST' && q.path === '/login');
  const who = await page.textOrNull('#whoami');
  return { page, status: r && r.status, who, sent };
}

// The attacker's self-submitting vote form from attacker (an origin of the
// demo's attacker server under a look-alike name) against alice's session.
async function lookAlike(demo, page, attacker) {
  const before = await getState(demo.victim);
  const mark = demo.mark();
  const tab = await browser.newPage();
  const url = `${attacker}${formVote.path}`;
  await tab.goto(url, { wait: false });
  await tab.waitForUrl(`${url} submits its form`, (u) => !u.startsWith(attacker) && u !== 'about:blank');
  await tab.close();
  assert.deepEqual((await getState(demo.victim)).votes, before.votes, 'the vote was not counted');
  const sent = requestLines(demo.logSince(mark)).filter((q) => q.method === 'POST' && q.path === '/vote');
  assert.deepEqual(sent.map((q) => q.origin), [attacker], 'the attacker\'s Origin came');
  assert.ok(await waitForLog(demo, mark, /^rejected POST \/vote from 127\.0\.0\.1: origin mismatch$/m),
    'refused on its Origin');
  await page.close();
}

const port = (u) => new URL(u).port;

test(`${BROWSER} named: upper case typed, lower case sent; a look-alike in upper case refused`, async () => {
  const r = await loginAt(plain, `http://VICTIM.TEST:${port(plain.victim)}`);
  assert.deepEqual(r.sent.map((q) => [q.origin, q['sec-fetch-site']]), [[plain.victim, '-']], 'Origin in lower case');
  assert.equal(r.who, 'alice', 'signed in');
  await lookAlike(plain, r.page, `http://evil.victim.test:${port(plain.attacker)}`);
});

test(`${BROWSER} named: a final dot is kept in Origin and passes; a look-alike with one is refused`, async () => {
  const typed = `http://victim.test.:${port(plain.victim)}`;
  const r = await loginAt(plain, typed);
  assert.deepEqual(r.sent.map((q) => q.origin), [typed], 'the browser keeps the final dot');
  assert.equal(r.who, 'alice', 'signed in: the same host as victim.test');
  await lookAlike(plain, r.page, `http://evil.victim.test.:${port(plain.attacker)}`);
});

test(`${BROWSER} named: an IDN host is sent in punycode and passes; a look-alike refused`, async () => {
  const r = await loginAt(idn, `http://${IDN}:${port(idn.victim)}`);
  assert.deepEqual(r.sent.map((q) => q.origin), [idn.victim], `Origin in punycode (${IDN_ASCII})`);
  assert.equal(r.who, 'alice', 'signed in');
  await lookAlike(idn, r.page, `http://bucher.test:${port(idn.attacker)}`);
});
