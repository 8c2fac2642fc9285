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

    def upstream_saw(self, path):
        return sum(1 for head, _ in self.up.requests if head.split(b" ", 2)[1] == path.encode())

    def test_handshakes(self):
        so = ("Origin", self.self_origin)
        rows = [
            # (name, path, headers, upgrade, connection, status, $csrf_result)
            ("cross-site", "/ws/1", [EVIL], "websocket", "Upgrade", 403, "websocket_origin"),
            ("cross-site, fetch metadata", "/ws/2", [EVIL, ("Sec-Fetch-Site", "cross-site"),
                                                     ("Sec-Fetch-Mode", "websocket")],
             "websocket", "Upgrade", 403, "websocket_origin"),
            ("another port of the host", "/ws/3", [("Origin", "http://127.0.0.1:1")], "websocket", "Upgrade", 403,
             "websocket_origin"),
            ("same-site by name", "/ws/4", [("Origin", "http://evil.localhost:%d" % self.port),
                                            ("Sec-Fetch-Site", "same-site")],
             "websocket", "Upgrade", 403, "websocket_origin"),
            ("origin null", "/ws/5", [("Origin", "null")], "websocket", "Upgrade", 403, "websocket_origin"),
            ("odd case, Connection list", "/ws/6", [EVIL], "WebSocket", "keep-alive, Upgrade", 403,
             "websocket_origin"),
            ("Upgrade list", "/ws/7", [EVIL], "h2c, websocket", "Upgrade", 403, "websocket_origin"),
            ("mode both", "/both/1", [EVIL], "websocket", "Upgrade", 403, "websocket_origin"),
            ("mode token", "/token/1", [EVIL], "websocket", "Upgrade", 403, "websocket_origin"),
            ("unsafe get, cross-site", "/vote/1", [EVIL], "websocket", "Upgrade", 403, "websocket_origin"),
            ("unsafe get, no origin", "/vote/2", [], "websocket", "Upgrade", 403, "no_evidence"),
            ("same origin", "/ws/10", [so], "websocket", "Upgrade", 101, "origin_verified"),
            ("same origin, fetch metadata", "/ws/11", [so, ("Sec-Fetch-Site", "same-origin"),
                                                       ("Sec-Fetch-Mode", "websocket")],
             "websocket", "Upgrade", 101, "origin_verified"),
            ("same origin, odd case", "/ws/12", [so], "WEBSOCKET", "keep-alive, Upgrade", 101, "origin_verified"),
            ("no origin (not a browser)", "/ws/13", [], "websocket", "Upgrade", 101, "origin_verified"),
            ("trusted origin", "/partner/1", [("Origin", "http://partner.example:8443")], "websocket", "Upgrade",
             101, "origin_verified"),
            ("mode both, same origin, no token", "/both/2", [so], "websocket", "Upgrade", 101, "origin_verified"),
            ("mode token, same origin, no token", "/token/2", [so], "websocket", "Upgrade", 101, "origin_verified"),
            ("unsafe get, same origin", "/vote/3", [so], "websocket", "Upgrade", 101, "origin_verified"),
            ("csrf off", "/public/1", [EVIL], "websocket", "Upgrade", 101, None),
            ("csrf_action log", "/log/1", [EVIL], "websocket", "Upgrade", 101, "websocket_origin"),
        ]
        log_from = len(self.ngx.access_log(settle=0).splitlines())
        for name, path, headers, upgrade, connection, status, result in rows:
            with self.subTest(name):
                got, echoed = T.ws_handshake(self.port, path, headers, upgrade=upgrade, connection=connection)
                self.assertEqual(got, status)
                if status == 101:
                    self.assertEqual(echoed, b"ping", "the echo upstream's frame came back")
                else:
                    self.assertEqual(self.upstream_saw(path), 0, "a refused handshake reached the upstream")
        lines = self.ngx.access_log().splitlines()[log_from:]
        for name, path, headers, upgrade, connection, status, result in rows:
            with self.subTest(name):
                mine = [l for l in lines if l.split(" ")[1] == path]
                self.assertEqual(len(mine), 1, mine)
                self.assertEqual(mine[0].split(" ")[3], result or "-", mine[0])
        err = self.ngx.error_log()
        self.assertIn('rejected GET "/ws/1": websocket_origin', err)
        self.assertIn('would reject GET "/log/1": websocket_origin', err)

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
