# SPDX-License-Identifier: BSD-2-Clause
"""WebSocket handshakes through the real nginx (Cross-Site WebSocket
Hijacking): a GET with Upgrade: websocket is judged by its Origin and
fetch metadata as an unsafe request would be, never by a token. A
handshake from another origin, a sibling port or Origin: null is refused
(websocket_origin) before the upstream sees it; the site's own origin, a
trusted one and a client that sends no Origin (no browser) reach a real
WebSocket echo upstream and get their frame back; a plain GET with a
foreign Origin stays a safe method. csrf_mode both and token, csrf off,
csrf_action log and csrf_unsafe_get keep their meaning; the rejection
page and the metrics counter say websocket_origin."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

PROXY = ("proxy_pass http://127.0.0.1:{upstream}; proxy_http_version 1.1; "
         "proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; proxy_read_timeout 10s;")

HTTP = """
    csrf_metrics_zone ws;
    server {{
        listen 127.0.0.1:{port0};
        server_name localhost;
        csrf on;
        location /ws {{ PROXY }}
        location /both/ {{ csrf_mode both; PROXY }}
        location /token/ {{ csrf_mode token; PROXY }}
        location /public/ {{ csrf off; PROXY }}
        location /log/ {{ csrf_action log; PROXY }}
        location /vote/ {{ csrf_unsafe_get on; PROXY }}
        location /partner/ {{ csrf_trusted_origin http://partner.example:8443; PROXY }}
        location /fallback/ {{ error_page 403 = @app; PROXY }}
        location /fallback-read/ {{
            if ($http_upgrade = "-") {{ return 404; }}
            set $sid_seen $cookie_sid;
            error_page 403 = @app; PROXY
        }}
        location @app {{ proxy_set_header X-Sid $cookie_sid; PROXY }}
        location /fallback-copy/ {{ error_page 403 = @copy; PROXY }}
        location @copy {{ set $up $http_upgrade; set $sid $cookie_sid; proxy_set_header X-Sid $sid; PROXY }}
    }}
    server {{
        listen 127.0.0.1:{port1};
        location = /metrics {{ csrf_metrics; allow 127.0.0.1; deny all; }}
    }}
""".replace("PROXY", PROXY)

EVIL = ("Origin", "http://evil.example")


def counter(body, verdict, reason):
    m = re.search(r'csrf_requests_total\{zone="ws",verdict="%s",reason="%s"\} (\d+)' % (verdict, reason),
                  body.decode())
    return int(m.group(1)) if m else 0


class WebSocket(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.up = T.Upstream(T.ws_echo)
        cls.ngx = T.Nginx(HTTP, cls.up.port, ports=2)
        cls.ngx.start()
        cls.port = cls.ngx.port
        cls.self_origin = "http://127.0.0.1:%d" % cls.port

    @classmethod
    def tearDownClass(cls):
        cls.ngx.cleanup()
        cls.up.close()

    def test_handshakes(self):
        rows = T.ws_rows(self.self_origin) + [
            ("same-site by name", "/ws/20", [("Origin", "http://evil.localhost:%d" % self.port),
                                             ("Sec-Fetch-Site", "same-site")], "websocket", "Upgrade", 403,
             "websocket_origin"),
            ("mode token", "/token/1", [EVIL], "websocket", "Upgrade", 403, "websocket_origin"),
            ("mode token, same origin, no token", "/token/2", [("Origin", self.self_origin)], "websocket", "Upgrade",
             101, "origin_verified"),
        ]
        T.ws_run_rows(self, self.port, rows, self.up)
        T.ws_check_log(self, self.ngx.access_log, rows)
        err = self.ngx.error_log()
        self.assertIn('rejected GET "/ws/1": websocket_origin', err)
        self.assertIn('would reject GET "/log/1": websocket_origin', err)

    def test_error_page_opens_no_socket(self):
        """A refused handshake that error_page sends to a named location
        proxying to the same WebSocket upstream goes on neutralized: a GET
        without Cookie and without Upgrade, so the upstream answers it as
        a plain GET and the other site's page gets no socket to read
        (before: 101, the frame echoed, to an anonymous session)."""
        for path in ("/fallback/1", "/fallback-read/1"):
            with self.subTest(path):
                status, echoed = T.ws_handshake(self.port, path, [EVIL, ("Cookie", "sid=1")])
                self.assertNotEqual(status, 101)
                self.assertIsNone(echoed)
                seen = [h for h, _ in self.up.requests if h.split(b" ", 2)[1] == path.encode()]
                self.assertEqual(len(seen), 1, "error_page sent the neutralized GET on")
                self.assertNotRegex(seen[0], rb"(?i)\r\n(upgrade|cookie|x-sid):")

    def test_error_page_reads_no_variable_of_the_refused_request(self):
        """The same when the first location read $http_upgrade and
        $cookie_sid before the verdict (an if, a set in its rewrite
        phase): nginx keeps a variable's value for the request's life,
        internal redirects included, so @app's proxy_set_header Upgrade
        $http_upgrade and X-Sid $cookie_sid would send what the renamed
        headers no longer say (before: 101, and the upstream got the
        victim's session as X-Sid). And when @copy itself copies them
        into its own variables in its rewrite phase, which runs before
        its access phase: the request is neutralized before error_page
        sends it on."""
        for path in ("/fallback-read/2", "/fallback-copy/1"):
            with self.subTest(path):
                status, _ = T.ws_handshake(self.port, path, [EVIL, ("Cookie", "sid=victim")])
                self.assertNotEqual(status, 101)
                seen = [h for h, _ in self.up.requests if h.split(b" ", 2)[1] == path.encode()]
                self.assertEqual(len(seen), 1)
                self.assertNotRegex(seen[0], rb"(?i)\r\n(upgrade|cookie|x-sid):")

    def test_plain_get_stays_safe(self):
        """Without Upgrade a GET with a foreign Origin (an image, a script
        tag's fetch) changes nothing: a safe method, answered."""
        for name, headers in (("foreign origin", [EVIL, ("Sec-Fetch-Site", "cross-site")]),
                              ("Connection: Upgrade only", [EVIL, ("Connection", "Upgrade")]),
                              ("Upgrade: h2c", [EVIL, ("Upgrade", "h2c")])):
            with self.subTest(name):
                r = T.request(self.port, "GET", "/ws/plain", headers)
                self.assertEqual(r.status, 200)
                self.assertEqual(r.body, b"no handshake")

    def test_rejection_page_and_counter(self):
        before = T.request(self.ngx.ports[1], "GET", "/metrics")
        self.assertEqual(before.status, 200)
        r = T.request(self.port, "GET", "/ws/page", [EVIL, ("Upgrade", "websocket"),
                                                     ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                                     ("Sec-WebSocket-Version", "13")])
        self.assertEqual(r.status, 403)
        self.assertIn(b"live connection (a WebSocket)", r.body)
        self.assertNotIn(b"another site", r.body)
        self.assertIsNone(r.header("upgrade"))
        after = T.request(self.ngx.ports[1], "GET", "/metrics")
        self.assertEqual(counter(after.body, "rejected", "websocket_origin"),
                         counter(before.body, "rejected", "websocket_origin") + 1)


if __name__ == "__main__":
    unittest.main()
