# SPDX-License-Identifier: BSD-2-Clause
"""apache.websocket: WebSocket handshakes through Debian's apache2 and
mod_proxy_http's upgrade=websocket (Cross-Site WebSocket Hijacking). A GET
with Upgrade: websocket is judged by its Origin and fetch metadata, never
by a token: another origin, a sibling port or Origin: null is refused
(websocket_origin) before the upstream sees it; the site's own origin, a
trusted one and a client without Origin (no browser) reach a real
WebSocket echo upstream and get their frame back; a plain GET with a
foreign Origin stays a safe method. CSRFMode both, CSRF Off, CSRFAction
log and CSRFUnsafeGet keep their meaning. Over HTTP/2 (h2c, H2WebSockets
on) mod_http2 turns an extended CONNECT (RFC 8441) into the same GET with
Upgrade: websocket, so the same rule judges it (node's http2 client
speaks it; skipped without node)."""

import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402

T = A.T

CONF = """
Protocols h2c http/1.1
H2WebSockets on
CSRF On
ProxyPass /ws/ http://127.0.0.1:{upstream}/ws/ upgrade=websocket
<Location /both/>
    CSRFMode both
    ProxyPass http://127.0.0.1:{upstream}/both/ upgrade=websocket
</Location>
<Location /public/>
    CSRF Off
    ProxyPass http://127.0.0.1:{upstream}/public/ upgrade=websocket
</Location>
<Location /log/>
    CSRFAction log
    ProxyPass http://127.0.0.1:{upstream}/log/ upgrade=websocket
</Location>
<Location /vote/>
    CSRFUnsafeGet On
    ProxyPass http://127.0.0.1:{upstream}/vote/ upgrade=websocket
</Location>
<Location /partner/>
    CSRFTrustedOrigin http://partner.example:8443
    ProxyPass http://127.0.0.1:{upstream}/partner/ upgrade=websocket
</Location>
<Location /csrf-metrics>
    CSRF Off
    SetHandler csrf-metrics
</Location>
"""

EVIL = ("Origin", "http://evil.example")

# An HTTP/2 extended CONNECT (RFC 8441) as a browser sends it when the
# server allows it: prints the answer's :status.
H2_CLIENT = r"""
const http2 = require('node:http2');
const [port, origin] = process.argv.slice(1);
const s = http2.connect('http://127.0.0.1:' + port);
s.on('error', (e) => { console.log('error ' + e.code); process.exit(0); });
s.on('remoteSettings', (set) => {
  if (!set.enableConnectProtocol) { console.log('no-connect-protocol'); s.close(); return; }
  const h = {':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/ws/h2',
             ':authority': '127.0.0.1:' + port, 'sec-websocket-version': '13'};
  if (origin !== '-') h.origin = origin;
  const st = s.request(h, {endStream: false});
  st.on('response', (r) => { console.log(String(r[':status'])); st.close(); s.close(); });
  st.on('error', (e) => { console.log('error ' + e.code); s.close(); });
});
"""


class WebSocket(A.ApacheCase):
    CONF = CONF
    MODULES = ("http2", "proxy", "proxy_http")

    @classmethod
    def make_upstream(cls):
        return T.Upstream(T.ws_echo)

    def test_handshakes(self):
        rows = T.ws_rows("http://127.0.0.1:%d" % self.ap.port)
        T.ws_run_rows(self, self.ap.port, rows, self.up)
        T.ws_check_log(self, self.ap.access_log, rows)
        err = self.ap.error_log()
        self.assertIn('rejected GET "/ws/1": websocket_origin', err)
        self.assertIn('would reject GET "/log/1": websocket_origin', err)

    def test_plain_get_stays_safe(self):
        for name, headers in (("foreign origin", [EVIL, ("Sec-Fetch-Site", "cross-site")]),
                              ("Upgrade: h2c", [EVIL, ("Upgrade", "h2c")])):
            with self.subTest(name):
                r = T.request(self.ap.port, "GET", "/ws/plain", headers)
                self.assertEqual(r.status, 200)
                self.assertEqual(r.body, b"no handshake")

    def test_rejection_page_and_counter(self):
        def count():
            r = T.request(self.ap.port, "GET", "/csrf-metrics")
            self.assertEqual(r.status, 200)
            m = re.search(rb'csrf_requests_total\{verdict="rejected",reason="websocket_origin"\} (\d+)', r.body)
            return int(m.group(1)) if m else 0
        before = count()
        r = T.request(self.ap.port, "GET", "/ws/page", [EVIL, ("Upgrade", "websocket"),
                                                        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                                        ("Sec-WebSocket-Version", "13")])
        self.assertEqual(r.status, 403)
        self.assertIn(b"websocket_origin", r.body)
        self.assertIn(b"live connection (a WebSocket)", r.body)
        self.assertNotIn(b"another site", r.body)
        self.assertEqual(count(), before + 1)

    @unittest.skipUnless(shutil.which("node"), "node not installed")
    def test_http2_extended_connect(self):
        def connect(origin):
            out = subprocess.run(["node", "-e", H2_CLIENT, str(self.ap.port), origin], capture_output=True,
                                 text=True, timeout=20)
            return out.stdout.strip()
        self.assertEqual(connect("http://evil.example"), "403")
        self.assertEqual(connect("null"), "403")
        # mod_http2 answers a 101 of the upstream as the 200 of RFC 8441
        self.assertEqual(connect("http://127.0.0.1:%d" % self.ap.port), "200")
        self.assertEqual(connect("-"), "200")

    def test_no_crash(self):
        self.assertFalse(self.ap.crashed())


if __name__ == "__main__":
    unittest.main()
