// SPDX-License-Identifier: BSD-2-Clause
// router.test.mjs - the demo's router (busybox httpd, 2007-style CGI admin
// pages, HTTP Basic user admin) in a real browser. Behind csrf-cgi the
// admin saves a setting and restores the defaults by clicking, and the
// attacker site's /router page (an <img> of the GET reset page, then a
// self-submitting form that sets the DNS servers) changes nothing, each
// attempt logged with its reason. Without the wrapper (--unprotected) the
// same page resets the router and sets mallory's DNS servers.
//
// Run in the browser E2E_BROWSER names and the mode E2E_MODE names
// (tests/e2e/browser.mjs; ctest: cgi.router.chromium, cgi.router.firefox,
// cgi.router.named.chromium, cgi.router.named.firefox):
//   loopback  the router at http://127.0.0.1:PORT, the attacker another
//             port of 127.0.0.1 (same site; both browsers send
//             Sec-Fetch-Site: same-site), every tab answers the Basic
//             challenge itself
//   named     the router as it is reached at home, http://router.test:PORT
//             over plain HTTP (no Sec-Fetch-*), the demo's --router-origin;
//             the attacker on another site, http://evil.test:PORT. The
//             admin signs in once in one tab; the attacker's page opens in
//             a tab that answers no challenge, so what reaches the router
//             is what the browser itself sends along: the Basic
//             credentials it holds for the router go with the cross-site
//             top-level form POST, in both browsers, and not with the
//             <img>'s GET of the reset page (busybox answers it 401: the
//             reset is not done even unprotected).
// Screenshots (loopback): router-admin- and router-rejected-BROWSER.png
// (shotFile).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { BROWSER, MODE, launch, shotFile } from '../../tests/e2e/browser.mjs';
import { startDemo, waitForLog } from '../../tests/e2e/demo.mjs';
import { freePort } from '../../tests/fleet/fleet.mjs';

const ADMIN = { username: 'admin', password: 'admin' };
const named = MODE === 'named';
if (!['loopback', 'named'].includes(MODE)) throw new Error(`router.test.mjs runs in loopback and named, not ${MODE}`);

// The router's own address for the test's requests (node does not know
// router.test).
let direct = null;

// GET with the admin's Basic credentials. The lenient parser: the bare
// programs (--unprotected) end their header lines with LF only, as
// firmware of 2007 did, which browsers accept and fetch does not.
function adminGet(url) {
  if (direct) url = url.replace(/^http:\/\/[^/]+/, direct);
  const auth = 'Basic ' + Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64');
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: auth }, insecureHTTPParser: true }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
  });
}

// The router's settings and change log, as its admin page shows them.
async function routerState(router) {
  const r = await adminGet(`${router}/cgi-bin/index.cgi`);
  assert.equal(r.status, 200, 'the admin page answers');
  const html = r.body;
  const value = (id) => (html.match(new RegExp(`id="${id}" name="${id}" value="([^"]*)"`)) || [])[1];
  const changes = (html.match(/<pre id="changes">([^<]*)<\/pre>/) || [])[1];
  return { dns1: value('dns1'), dns2: value('dns2'), changes: changes.split('\n').filter(Boolean) };
}

// A tab that answers the router's Basic challenge as the admin.
async function adminPage(browser) {
  const page = await browser.newPage();
  await page.authenticate(ADMIN);
  return page;
}

async function saveDns(page, router, dns1, dns2) {
  await page.goto(`${router}/cgi-bin/index.cgi`);
  await page.fill('#dns1', dns1);
  await page.fill('#dns2', dns2);
  await page.clickAndWait('#save');
  assert.equal(page.url(), `${router}/cgi-bin/index.cgi`);
  assert.equal(await page.evaluate(() => document.querySelector('#dns1').value), dns1);
}

for (const unprotected of [false, true]) {
  const mode = unprotected ? 'unprotected' : 'protected';
  describe(`${BROWSER}: router, ${mode}`, () => {
    let demo, browser, router;

    let attacker;

    before(async () => {
      const port = await freePort();
      direct = `http://127.0.0.1:${port}`;
      router = named ? `http://router.test:${port}` : direct;
      const args = ['--router', `127.0.0.1:${port}`];
      if (named) args.push('--router-origin', router);
      demo = await startDemo({ unprotected, args });
      attacker = named ? demo.attackers.find((a) => a.kind === 'cross-site').origin : demo.attacker;
      assert.ok(await waitForLog(demo, 0, new RegExp(`^router: +${router}/`, 'm')), 'the demo runs the router');
      browser = await launch(BROWSER);
    });

    after(async () => {
      if (browser) await browser.close();
      if (demo) assert.equal(await demo.stop(), 0, 'csrf-demo (and its router) exit cleanly');
    });

    test(`${mode}: the admin saves a setting and restores the defaults by clicking`, async () => {
      const page = await adminPage(browser);
      const mark = demo.mark();
      await saveDns(page, router, '9.9.9.9', '149.112.112.112');
      let s = await routerState(router);
      assert.deepEqual([s.dns1, s.dns2], ['9.9.9.9', '149.112.112.112']);
      await page.clickAndWait('#reset');
      assert.equal(page.url(), `${router}/cgi-bin/reset.cgi`);
      assert.equal(await page.text('#done'), 'Factory defaults restored.');
      s = await routerState(router);
      assert.deepEqual([s.dns1, s.changes.at(-1)], ['192.168.1.1', 'reset']);
      await saveDns(page, router, '9.9.9.9', '149.112.112.112');
      if (!unprotected) {
        await page.goto(`${router}/cgi-bin/index.cgi`);
        assert.equal(await page.count('form input[type=hidden][name^="csrf_"]'), 1, 'the form has a token field');
        assert.match(await page.attr('form input[type=hidden][name^="csrf_"]', 'name'), /^csrf_[0-9a-f]{12}$/);
        assert.match(await page.attr('form input[type=hidden][name^="csrf_"]', 'value'), /^[\w-]{51}$/); // version 4
        await page.screenshot(shotFile(`router-admin-${BROWSER}`));
      }
      assert.doesNotMatch(demo.logSince(mark), /csrf-cgi: rejected/);
      await page.close();
    });

    test(`${mode}: the attacker's page (<img> reset, self-submitting DNS form)${named ? ' on another site' : ''}`, async () => {
      const before = await routerState(router);
      assert.equal(before.dns1, '9.9.9.9');
      const mark = demo.mark();
      // named: the admin signed in in the first test (another tab); this
      // tab answers no challenge, only what the browser holds goes along.
      const page = named ? await browser.newPage() : await adminPage(browser);
      await page.goto(`${attacker}/router`, { wait: false });
      await page.waitForUrl('the attacker page /router submits its form to the router',
        (u) => u.startsWith(`${router}/`));
      const after = await routerState(router);
      // Basic credentials the browser holds go with a cross-site top-level
      // POST, not with a cross-site <img> (measured: Chromium 156, Firefox
      // ESR 153).
      const imgAuth = !named;
      if (unprotected) {
        const changes = imgAuth ? ['reset', 'dns 6.6.6.6 6.6.4.4'] : ['dns 6.6.6.6 6.6.4.4'];
        assert.deepEqual(after.changes.slice(before.changes.length), changes, 'the attack changed the router');
        assert.deepEqual([after.dns1, after.dns2], ['6.6.6.6', '6.6.4.4']);
      } else {
        assert.deepEqual(after, before, 'the router is unchanged');
        // On loopback both browsers send Sec-Fetch-Site (a trustworthy
        // origin for Firefox too): the other port is the same site. By
        // name over plain HTTP they send none: the form's Origin is the
        // attacker's, and so is the <img>'s Referer. csrf-cgi's page
        // proves the POST came with the credentials: busybox runs the CGI
        // only for an authenticated request.
        const reasons = named
          ? { 'GET /cgi-bin/reset.cgi': 'referer_mismatch', 'POST /cgi-bin/dns.cgi': 'origin_mismatch' }
          : { 'GET /cgi-bin/reset.cgi': 'same_site', 'POST /cgi-bin/dns.cgi': 'same_site' };
        assert.equal(await page.text('#reason'), reasons['POST /cgi-bin/dns.cgi'], 'the rejection page names the reason');
        // ... and its words say what the browser said: another address of
        // this site (Sec-Fetch-Site: same-site), or another address (Origin)
        assert.match(await page.text('#advice'), named
          ? /^Your browser said the request came from a page at another address/
          : /^The request was sent by a page at another address of this site/);
        if (!named) await page.screenshot(shotFile(`router-rejected-${BROWSER}`));
        for (const [req, reason] of Object.entries(reasons)) {
          if (req.startsWith('GET') && !imgAuth) {
            assert.doesNotMatch(demo.logSince(mark), /csrf-cgi: rejected GET/, 'the <img> went without credentials');
            continue;
          }
          const re = new RegExp(`^csrf-cgi: rejected ${req}: ${reason}$`, 'm');
          assert.ok(await waitForLog(demo, mark, re), `csrf-cgi logged "rejected ${req}: ${reason}"`);
        }
      }
      await page.close();
    });
  });
}
