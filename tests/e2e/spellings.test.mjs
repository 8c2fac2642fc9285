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
//   IPv6 literal   typed http://[::1]:P/login (a forwarder on [::1]:P in
//                  front of the demo, which listens on IPv4): the browser
//                  sends Origin http://[::1]:P and Host [::1]:P. [::1] is
//                  loopback, a potentially trustworthy origin: both
//                  browsers send Sec-Fetch-Site there, which decides
//                  (same-origin passes); the look-alikes http://[::1]:Q
//                  (another port: same-site in Chromium, cross-site in
//                  Firefox) and http://127.0.0.1:P (the same port on IPv4:
//                  another site) are refused
//   default port   typed http://victim.test:80/login (a forwarder on
//                  127.0.0.1:80 for the test's few seconds), the demo's
//                  --origin written http://victim.test:80: the browser
//                  drops the port (Origin http://victim.test, Host
//                  victim.test), the library takes both for the same
//                  origin; the look-alike http://victim.test:Q (the same
//                  host, another port) is refused on its Origin
//
// Not here: an explicit :443 (the same rule of the URL standard as :80,
// a privileged port again, and TLS in front: the library's unit tests
// cover https://host:443 against https://host).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startDemo, getState, waitForLog } from './demo.mjs';
import { MODE } from './browser.mjs';
import { ATTACKS, BROWSER, launch, requestLines } from './lib.mjs';

if (MODE !== 'named') throw new Error('spellings.test.mjs runs in the named mode');

const IDN = 'bücher.test';
const IDN_ASCII = 'xn--bcher-kva.test';
const formVote = ATTACKS.find((a) => a.name === 'form-vote');

let plain; // the demo at http://victim.test:P
let idn; // the demo at http://xn--bcher-kva.test:P
let ip6; // the demo at http://[::1]:P, with its forwarders (startIpv6)
let d80; // the demo at http://victim.test:80 (--origin), on another port
let browser;

before(async () => {
  // the demos start while the browser does (Firefox takes seconds)
  // (all settled, so that after() stops whichever did start)
  const all = await Promise.allSettled([
    startDemo({ args: ['--log-requests'] }),
    startDemo({ args: ['--log-requests'], origin: (port) => `http://${IDN_ASCII}:${port}` }),
    startIpv6(),
    startDemo({ args: ['--log-requests'], origin: () => 'http://victim.test:80' }),
    // Firefox's network.dns.localDomains needs each name as it is looked up
    launch(BROWSER, { hosts: ['victim.test.', IDN_ASCII, 'bucher.test', 'evil.victim.test.'] }),
  ]);
  [plain, idn, ip6, d80, browser] = all.map((r) => r.value);
  for (const r of all) if (r.status === 'rejected') throw r.reason;
});

after(async () => {
  if (browser) await browser.close();
  if (ip6) await ip6.close();
  for (const d of [plain, idn, d80]) if (d) await d.stop();
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
// demo's attacker server under a look-alike name) against alice's session,
// refused for why (the demo's words).
async function lookAlike(demo, page, attacker, why = 'origin mismatch') {
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
  await waitForLog(demo, mark, /^rejected POST \/vote /m);
  const said = demo.logSince(mark).match(/^rejected .*$/gm) || [];
  assert.deepEqual(said, [`rejected POST /vote from 127.0.0.1: ${why}`], 'refused');
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

// A TCP forwarder on host:port (0: any free port) to 127.0.0.1:to(), for a
// demo that listens on IPv4 only; it keeps the Host header of every
// request it passes on (what the browser sent, no other header).
function forward(host, port, to) {
  return new Promise((resolve, reject) => {
    const hosts = [];
    const conns = new Set();
    const srv = net.createServer((c) => {
      const u = net.connect(to(), '127.0.0.1');
      conns.add(c).add(u);
      c.on('data', (d) => {
        for (const m of d.toString('latin1').matchAll(/^Host: *(\S*)\r$/gim)) hosts.push(m[1]);
      });
      c.pipe(u).pipe(c);
      const end = () => { c.destroy(); u.destroy(); conns.delete(c); conns.delete(u); };
      c.on('error', end).on('close', end);
      u.on('error', end).on('close', end);
    });
    srv.once('error', reject);
    srv.listen(port, host, () => resolve({
      port: srv.address().port,
      hosts,
      close: () => new Promise((r) => { for (const c of conns) c.destroy(); srv.close(() => r()); }),
    }));
  });
}

// The demo at http://[::1]:P (a forwarder on [::1]:P to the demo, which
// listens on IPv4), its attacker at http://[::1]:Q and at
// http://127.0.0.1:P, the same port on IPv4 (forwarders to its attacker
// server): { demo, typed, victim, other, sameport, close() }.
async function startIpv6() {
  let target = 0;
  let attacker = 0;
  let victim;
  let sameport;
  for (let i = 0; !sameport; i++) {
    victim = await forward('::1', 0, () => target);
    sameport = await forward('127.0.0.1', victim.port, () => attacker).catch(async (e) => {
      await victim.close();
      if (e.code !== 'EADDRINUSE' || i > 10) throw e;
      return null;
    });
  }
  const typed = `http://[::1]:${victim.port}`;
  const demo = await startDemo({ args: ['--log-requests'], origin: () => typed });
  target = Number(new URL(demo.direct).port);
  attacker = Number(port(demo.attacker));
  const other = await forward('::1', 0, () => attacker);
  return {
    demo, typed, victim, other, sameport,
    close: () => Promise.all([victim.close(), sameport.close(), other.close(), demo.stop()]),
  };
}

test(`${BROWSER}: an IPv6 literal is sent as typed and passes; its look-alikes refused`, async () => {
  const { demo, typed, victim, other } = ip6;
  const r = await loginAt(demo, typed);
  assert.deepEqual(r.sent.map((q) => [q.origin, q['sec-fetch-site']]), [[typed, 'same-origin']],
    'Origin as typed, Sec-Fetch-Site (loopback: a potentially trustworthy origin)');
  assert.ok(victim.hosts.length > 0 && victim.hosts.every((h) => h === `[::1]:${victim.port}`),
    `Host [::1]:${victim.port} (got ${[...new Set(victim.hosts)]})`);
  assert.equal(r.who, 'alice', 'signed in');
  // another port of [::1]: Chromium says same-site (as for 127.0.0.1),
  // Firefox ESR 153 cross-site
  await lookAlike(demo, r.page, `http://[::1]:${other.port}`,
    BROWSER === 'firefox' ? 'cross-site request' : 'same-site request from another origin');
  // alice still signed in (the cookies stay)
  await lookAlike(demo, await browser.newPage(), `http://127.0.0.1:${victim.port}`, 'cross-site request');
});

// Port 80 for as long as this test needs it: another run of this test on
// the machine may hold it for its few seconds.
async function forward80(to) {
  for (const end = Date.now() + 20000; ;) {
    try {
      return await forward('127.0.0.1', 80, to);
    } catch (e) {
      if (e.code !== 'EADDRINUSE' || Date.now() > end) throw new Error(`port 80 on 127.0.0.1: ${e.message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

test(`${BROWSER} named: an explicit default port is dropped by the browser and passes; another port refused`, async () => {
  const fw = await forward80(() => Number(new URL(d80.direct).port));
  try {
    const r = await loginAt(d80, 'http://victim.test:80');
    assert.deepEqual(r.sent.map((q) => [q.origin, q['sec-fetch-site']]), [['http://victim.test', '-']],
      'Origin without the port, no Sec-Fetch-Site');
    assert.ok(fw.hosts.length > 0 && fw.hosts.every((h) => h === 'victim.test'), `Host victim.test (got ${[...new Set(fw.hosts)]})`);
    assert.equal(r.who, 'alice', 'signed in: --origin http://victim.test:80 is the same origin');
    await lookAlike(d80, r.page, `http://victim.test:${port(d80.attacker)}`);
  } finally {
    await fw.close();
  }
});
