// SPDX-License-Identifier: BSD-2-Clause
// tls.mjs - the test certificate authority of the HTTPS mode: made by each
// test run with openssl in a temporary directory, never a file of the
// repository. makeCA(names) answers { dir, ca, cert, key, remove() }: ca
// the CA's certificate (PEM), cert and key the server's, whose
// subjectAltName lists every name (DNS) and address (IP) given. Both
// browsers trust ca through their test profile (browser.mjs: certutil into
// an NSS database), never through a switch that ignores certificate errors.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';

function openssl(args, cwd) {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr}`);
}

export function makeCA(names) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrf-test-ca-'));
  // The CA: a P-256 key, basicConstraints CA:TRUE, valid for two days.
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=libcsrf test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const san = names.map((n) => (net.isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  fs.writeFileSync(path.join(dir, 'server.ext'),
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'server.key',
    '-out', 'server.csr', '-subj', `/CN=${names[0]}`], dir);
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
    '-extfile', 'server.ext', '-out', 'server.pem'], dir);
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    cert: path.join(dir, 'server.pem'),
    key: path.join(dir, 'server.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

// An NSS database (cert9.db) in dir that trusts the CA certificate ca to
// identify web sites, as certutil of libnss3-tools makes it: Chromium reads
// $HOME/.pki/nssdb, Firefox its profile directory.
export function nssTrust(dir, ca) {
  fs.mkdirSync(dir, { recursive: true });
  const run = (args) => {
    const r = spawnSync('certutil', args, { encoding: 'utf8' });
    if (r.error) throw new Error(`certutil: ${r.error.message} (scripts/deps.sh installs libnss3-tools)`);
    if (r.status !== 0) throw new Error(`certutil ${args.join(' ')}: ${r.stderr}`);
  };
  run(['-N', '-d', `sql:${dir}`, '--empty-password']);
  run(['-A', '-d', `sql:${dir}`, '-n', 'libcsrf test CA', '-t', 'C,,', '-i', ca]);
}
