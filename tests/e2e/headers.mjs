// SPDX-License-Identifier: BSD-2-Clause
// headers.mjs - what each browser sends with each forged request of the
// attacker site (as csrf-demo --log-requests or nginx's access log records
// it), and the table of it that the tests write for docs/browsers.md.
//
// The attacker (http://127.0.0.1:PORT+1) and the victim (PORT) are one
// site, two origins, over plain HTTP on loopback. Loopback is a
// potentially trustworthy origin, so Firefox sends Sec-Fetch-* here too
// (it leaves them out only for plain HTTP to other hosts). The demo's
// session cookie says SameSite=Lax itself, so neither browser's default
// matters and both send it with every same-site request. Referer is the
// attacker's origin alone (strict-origin-when-cross-origin, the default of
// both). Measured with Chromium 156 and Firefox ESR 153: the same headers
// in both browsers for every attack.
//
// In the named and https modes (browser.mjs) expectedHeaders derives the
// rest from this table: by name no Sec-Fetch-* at all; Sec-Fetch-Site says
// the attacker's kind; from another site no cookie. Measured the same in
// both browsers (docs/browsers.md has the tables).

// Per attack: the headers as the log shows them, "-" for absent;
// ATTACKER stands for the attacker's origin.
const SENT = {
  'img-vote': { origin: '-', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors',
    'content-type': '-', cookie: 'yes' },
  'form-vote': { origin: 'ATTACKER', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site',
    'sec-fetch-mode': 'navigate', 'content-type': 'application/x-www-form-urlencoded', cookie: 'yes' },
  transfer: { origin: 'ATTACKER', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate',
    'content-type': 'application/x-www-form-urlencoded', cookie: 'yes' },
  'text-plain': { origin: 'ATTACKER', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site',
    'sec-fetch-mode': 'navigate', 'content-type': 'text/plain', cookie: 'yes' },
  'login-csrf': { origin: 'ATTACKER', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site',
    'sec-fetch-mode': 'navigate', 'content-type': 'application/x-www-form-urlencoded', cookie: 'yes' },
  'fetch-token': { origin: 'ATTACKER', referer: 'ATTACKER/', 'sec-fetch-site': 'same-site',
    'sec-fetch-mode': 'no-cors', 'content-type': 'application/x-www-form-urlencoded', cookie: 'yes' },
};

// Where a browser differs from SENT, per attack. Empty: none measured.
const BY_BROWSER = { chromium: {}, firefox: {} };

// The headers browser sends with attack when the attacker's origin is
// attackerOrigin; where: { mode, kind } (browser.mjs's modes; kind
// 'same-site' or 'cross-site', the attacker's site against the victim's).
//   - named (plain HTTP to a host name, no secure context): no Sec-Fetch-*
//     at all, in both browsers;
//   - Sec-Fetch-Site otherwise says the attacker's kind;
//   - cross-site: the demo's cookies (SameSite=Lax) stay home: neither an
//     <img> nor a form POST nor a no-cors fetch of another site carries
//     them, in both browsers.
export function expectedHeaders(browser, attack, attackerOrigin, { mode = 'loopback', kind = 'same-site' } = {}) {
  const want = { ...SENT[attack.name], ...(BY_BROWSER[browser][attack.name] || {}) };
  if (mode === 'named') {
    want['sec-fetch-site'] = '-';
    want['sec-fetch-mode'] = '-';
  } else {
    want['sec-fetch-site'] = kind;
  }
  if (kind === 'cross-site') want.cookie = 'no';
  for (const k of Object.keys(want)) want[k] = want[k].replace('ATTACKER', attackerOrigin);
  return want;
}

const COLUMNS = ['origin', 'referer', 'sec-fetch-site', 'sec-fetch-mode', 'content-type', 'cookie'];
const TITLES = ['Origin', 'Referer', 'Sec-Fetch-Site', 'Sec-Fetch-Mode', 'Content-Type', 'Cookie'];

// A Markdown table of rows ({ attack, method, path, ...headers } as
// recorded), the attacker's origin written as "attacker".
// rows may carry the attacker's origin (attacker) and kind of their own.
export function headerTable(browser, rows, attackerOrigin) {
  const cell = (v, a) => (v === '-' ? '(none)' : v === 'yes' ? 'sent' : v === 'no' ? 'not sent'
    : `\`${v.replace(a, 'attacker')}\``);
  const lines = [`| ${browser}: attack | attacker | request | ${TITLES.join(' | ')} |`,
    `|${' --- |'.repeat(TITLES.length + 3)}`];
  for (const r of rows) {
    const a = r.attacker || attackerOrigin;
    lines.push(`| ${r.attack} | ${r.kind || 'same-site'} \`${a}\` | ${r.method} ${r.path} | `
      + `${COLUMNS.map((c) => cell(r[c], a)).join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}
