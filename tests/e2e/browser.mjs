// SPDX-License-Identifier: BSD-2-Clause
// browser.mjs - the browser layer of every browser test: headless Debian
// Chromium over the DevTools protocol and Debian Firefox ESR over WebDriver
// BiDi, both driven by puppeteer-core (pinned in package-lock.json; it never
// downloads a browser). A test file is written once and run once per
// browser: ctest registers it as NAME.chromium and NAME.firefox and passes
// the browser in E2E_BROWSER.
//
//   launch(name, opts)    a fresh browser (a new profile, removed on close):
//                         { name, mode, newPage(), cookies(origin),
//                           clearCookies(), close() }; opts: { mode, ca,
//                           hosts } (see MODES)
//   page (from newPage)   goto(url), clickAndWait(sel), click(sel),
//                         fill(sel, v), select(sel, v), text(sel),
//                         textOrNull(sel), count(sel), attr(sel, name),
//                         evaluate(fn, ...args), back(), forward(),
//                         waitFor(sel), waitForUrl(name, pred),
//                         authenticate({ username, password }),
//                         screenshot(path), url(), close()
//   shotFile(name)        where a test writes screenshot NAME.png: the
//                         directory CSRF_SCREENSHOTS names (e.g. docs/img,
//                         to regenerate the README's images), else E2E_OUT
//                         (the build tree), so a test run never dirties the
//                         source tree; a relative CSRF_SCREENSHOTS is taken
//                         from the repository's top
//   step(name, fn, opts)  fn within STEP_MS or an error naming the step, the
//                         page's URL and the requests still in flight
//
// Every wait is a step, so a hang names itself instead of running into
// ctest's timeout. Every click that leads to another document waits for
// that document's load event, and a page is closed only after it: a page
// closed while its navigation commits can hang for good (Chromium answers
// Target.closeTarget with success and drops the close; puppeteer and
// playwright then wait for the target to go away without a timeout). A
// click brings its tab to the front first, as a person's would: Chromium
// does not hit-test a background tab it has stopped painting.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { nssTrust } from './tls.mjs';

export const BROWSERS = ['chromium', 'firefox'];
export const BROWSER = process.env.E2E_BROWSER || 'chromium';
if (!BROWSERS.includes(BROWSER)) throw new Error(`E2E_BROWSER=${BROWSER}: one of ${BROWSERS.join(', ')}`);

// The origin matrix (ctest: NAME.BROWSER for loopback, NAME.MODE.BROWSER
// for the others; E2E_MODE says which):
//   loopback  http://127.0.0.1:PORT, a potentially trustworthy origin: both
//             browsers send Sec-Fetch-* (what `make demo` shows)
//   named     http://victim.test:PORT and the other TEST_HOSTS, every one
//             resolved to 127.0.0.1 by the browser alone: plain HTTP to a
//             host name, no secure context, no Sec-Fetch-*, as a router or
//             an intranet site is reached
//   https     https://victim.test:PORT through nginx (TLS, HTTP/2), its
//             certificate from a test CA (tls.mjs) the profile trusts
export const MODES = ['loopback', 'named', 'https'];
export const MODE = process.env.E2E_MODE || 'loopback';
if (!MODES.includes(MODE)) throw new Error(`E2E_MODE=${MODE}: one of ${MODES.join(', ')}`);

// The names the browsers resolve to 127.0.0.1 in the named and https
// modes: the victim, a same-site attacker (evil.victim.test: the site is
// victim.test, .test being no public suffix of its own) and a cross-site
// one (evil.test), the router, phpMyAdmin. Chromium maps all of *.test;
// Firefox needs each name (network.dns.localDomains), so a test that uses
// another one passes it in launch's hosts.
export const TEST_HOSTS = ['victim.test', 'evil.victim.test', 'evil.test', 'router.test', 'pma.test', 'evil.pma.test'];

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const FIREFOX = process.env.FIREFOX || '/usr/bin/firefox-esr';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic'];

// One step of a test gets this long (E2E_STEP_MS). The slowest step is a
// login or a transfer: Argon2id (64 MiB, 2 passes) in the ASan build of the
// demo on a loaded 2-core machine takes about 2 s.
export const STEP_MS = Number(process.env.E2E_STEP_MS) || 20000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs fn({ signal }); a step that runs past ms rejects with its name and,
// given a page, where it was and which requests had no answer. signal is
// aborted then, so a polling fn stops too.
export async function step(name, fn, { page, ms = STEP_MS } = {}) {
  const ac = new AbortController();
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      const where = page ? `; the page is at ${page.url()}; requests without an answer: ${page.pending()}` : '';
      reject(new Error(`step "${name}" did not finish within ${ms} ms${where}`));
    }, ms);
  });
  try {
    return await Promise.race([fn({ signal: ac.signal }), late]);
  } finally {
    clearTimeout(timer);
  }
}

class Page {
  constructor(p) {
    this.p = p;
    this.inflight = new Map();
    p.on('request', (r) => this.inflight.set(r, Date.now()));
    p.on('requestfinished', (r) => this.inflight.delete(r));
    p.on('requestfailed', (r) => this.inflight.delete(r));
  }

  url() {
    return this.p.url();
  }

  pending() {
    if (this.inflight.size === 0) return 'none';
    const now = Date.now();
    return [...this.inflight].map(([r, t]) => `${r.method()} ${r.url()} (${now - t} ms)`).join(', ');
  }

  // Opens url and waits for its load event; the response ({ status,
  // headers }) of the document. wait: false only starts the navigation
  // (for pages that navigate away by themselves: waitForUrl next).
  async goto(url, { wait = true } = {}) {
    if (!wait) {
      this.p.goto(url, { timeout: 0 }).catch(() => {});
      return null;
    }
    const r = await step(`open ${url}`, () => this.p.goto(url, { waitUntil: 'load', timeout: 0 }), { page: this });
    return r && { status: r.status(), headers: r.headers() };
  }

  // A click that submits a form or follows a link, and the load of the
  // document it leads to (a POST answered with 303 included); the final
  // response ({ status, headers }).
  async clickAndWait(sel) {
    const r = await step(`click ${sel} on ${this.url()} and load what it leads to`, async () => {
      const nav = this.p.waitForNavigation({ waitUntil: 'load', timeout: 0 });
      await this.p.bringToFront();
      await this.#still(sel);
      await this.p.click(sel);
      return nav;
    }, { page: this });
    return r && { status: r.status(), headers: r.headers() };
  }

  async click(sel) {
    await step(`click ${sel} on ${this.url()}`, async () => {
      await this.p.bringToFront();
      await this.#still(sel);
      await this.p.click(sel);
    }, { page: this });
  }

  // Waits until sel's element stands still: the same box in two animation
  // frames in a row. A click is the pointer pressed and released at the
  // point where the element was a moment before; a page still moving it
  // (DokuWiki's preview scrolls itself for 500 ms from DOMContentLoaded,
  // past its load event) has put something else there by then, and the
  // click lands on that. (A missing element passes: the click says so.)
  async #still(sel) {
    await this.p.evaluate(async (s) => {
      const box = () => {
        const b = document.querySelector(s)?.getBoundingClientRect();
        return b ? `${b.x} ${b.y} ${b.width} ${b.height}` : '';
      };
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      for (let was = box(), now; ; was = now) {
        await frame();
        now = box();
        if (now === was) return;
      }
    }, sel);
  }

  // Types value into an empty field, as a person would.
  async fill(sel, value) {
    await step(`fill ${sel}`, async () => {
      await this.p.$eval(sel, (e) => {
        e.value = '';
      });
      await this.p.type(sel, value);
    }, { page: this });
  }

  async select(sel, value) {
    await step(`select ${value} in ${sel}`, () => this.p.select(sel, value), { page: this });
  }

  async text(sel) {
    return step(`read ${sel}`, () => this.p.$eval(sel, (e) => e.textContent), { page: this });
  }

  async textOrNull(sel) {
    return step(`read ${sel}`, () => this.p.$$eval(sel, (es) => (es.length ? es[0].textContent : null)), { page: this });
  }

  async count(sel) {
    return step(`count ${sel}`, () => this.p.$$eval(sel, (es) => es.length), { page: this });
  }

  async attr(sel, name) {
    return step(`read ${sel} ${name}`, () => this.p.$eval(sel, (e, n) => e.getAttribute(n), name), { page: this });
  }

  async evaluate(fn, ...args) {
    return step(`run a script on ${this.url()}`, () => this.p.evaluate(fn, ...args), { page: this });
  }

  async back() {
    await step(`Back from ${this.url()}`, () => this.p.goBack({ waitUntil: 'load', timeout: 0 }), { page: this });
  }

  async forward() {
    await step(`Forward from ${this.url()}`, () => this.p.goForward({ waitUntil: 'load', timeout: 0 }), { page: this });
  }

  async waitFor(sel) {
    await step(`wait for ${sel} on ${this.url()}`, () => this.p.waitForSelector(sel, { timeout: 0 }), { page: this });
  }

  // Waits until the page's URL satisfies pred and its document has loaded.
  async waitForUrl(name, pred) {
    await step(name, async ({ signal }) => {
      while (!signal.aborted) {
        if (pred(this.url())) {
          const state = await this.p.evaluate(() => document.readyState).catch(() => null);
          if (state === 'complete' && pred(this.url())) return;
        }
        await sleep(50);
      }
    }, { page: this });
  }

  // HTTP Basic credentials this tab answers every challenge with.
  async authenticate(creds) {
    await step('set HTTP credentials', () => this.p.authenticate(creds), { page: this });
  }

  async screenshot(file) {
    await step(`screenshot ${path.basename(file)}`, () => this.p.screenshot({ path: file }), { page: this });
  }

  async close() {
    await step(`close ${this.url()}`, () => this.p.close(), { page: this });
  }
}

const TOP = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

export function shotFile(name) {
  const env = process.env.CSRF_SCREENSHOTS;
  const dir = env ? path.resolve(TOP, env) : process.env.E2E_OUT || path.join(os.tmpdir(), 'csrf-e2e-out');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}

// Firefox's preferences for the named and https modes: the test names
// resolve to loopback (network.dns.localDomains), no DNS over HTTPS, no
// proxy, and no HTTPS-First upgrade of a typed http:// URL (its attempt at
// https://victim.test:PORT would reach a plain HTTP port).
function firefoxPrefs(hosts) {
  return {
    'network.dns.localDomains': hosts.join(','),
    'network.trr.mode': 5,
    'network.proxy.type': 0,
    'dom.security.https_first': false,
    'dom.security.https_first_schemeless': false,
    'dom.security.https_only_mode': false,
  };
}

// tmp: a temporary directory of this browser, removed on close.
function launchOptions(name, mode, hosts, tmp) {
  const common = { headless: true, defaultViewport: { width: 1000, height: 700 }, protocolTimeout: 60000 };
  const named = mode !== 'loopback';
  if (name === 'chromium') {
    // HOME is the temporary directory: Chromium reads the test CA from
    // $HOME/.pki/nssdb (https mode) and writes nothing into the real one.
    const args = [...CHROMIUM_ARGS];
    if (named) args.push('--host-resolver-rules=MAP *.test 127.0.0.1,MAP *.test. 127.0.0.1', '--disable-features=HttpsUpgrades');
    return { ...common, browser: 'chrome', executablePath: CHROMIUM, args, env: { ...process.env, HOME: tmp } };
  }
  // Firefox headless as root needs nothing but a home directory and
  // MOZ_HEADLESS for the child processes. Its profile is made here (the
  // https mode puts the CA into its cert9.db first); puppeteer adds its
  // preferences.
  return {
    ...common,
    browser: 'firefox',
    executablePath: FIREFOX,
    userDataDir: path.join(tmp, 'profile'),
    extraPrefsFirefox: named ? firefoxPrefs(hosts) : {},
    env: { ...process.env, HOME: tmp, MOZ_HEADLESS: '1' },
  };
}

// A fresh browser of the given kind, its profile in a temporary directory
// that close() removes. Cookies are those of the browser's default context.
// opts: mode (MODE), ca (the test CA's certificate, PEM: trusted by the
// profile; the https mode needs it), hosts (more names for Firefox to
// resolve to loopback).
export async function launch(name = BROWSER, { mode = MODE, ca = null, hosts = [] } = {}) {
  const exe = name === 'chromium' ? CHROMIUM : FIREFOX;
  if (!fs.existsSync(exe)) throw new Error(`${name}: ${exe} not found (scripts/deps.sh installs it)`);
  if (mode === 'https' && !ca) throw new Error('launch: the https mode needs the test CA (opts.ca)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `csrf-${name}-`));
  fs.mkdirSync(path.join(tmp, 'profile'));
  if (ca) nssTrust(name === 'chromium' ? path.join(tmp, '.pki', 'nssdb') : path.join(tmp, 'profile'), ca);
  const opts = launchOptions(name, mode, [...TEST_HOSTS, ...hosts], tmp);
  let b;
  try {
    b = await step(`start ${name}`, () => puppeteer.launch(opts), { ms: 60000 });
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return {
    name,
    mode,
    async newPage() {
      return new Page(await step('open a new tab', () => b.newPage()));
    },
    // The cookies the browser holds for origin's host.
    async cookies(origin) {
      const host = new URL(origin).hostname;
      return (await step('read cookies', () => b.cookies())).filter((c) => c.domain.replace(/^\./, '') === host);
    },
    async clearCookies() {
      await step('clear cookies', async () => {
        const all = await b.cookies();
        if (all.length) await b.deleteCookie(...all);
      });
    },
    async close() {
      try {
        await step(`close ${name}`, () => b.close(), { ms: 30000 });
      } catch (e) {
        b.process()?.kill('SIGKILL');
        throw e;
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    },
  };
}
