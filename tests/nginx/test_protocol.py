# SPDX-License-Identifier: BSD-2-Clause
"""What the module owes the protocol now that the library owns it: a
rejected request never reaches an upstream with its method and body,
whatever error_page, named locations or try_files do next; the default
mode (origin_or_token); the module's own rejection page; log lines
without the query string; csrf_max_age; a repeated Origin."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {prefix}/www;
        csrf on;
        location / {{ }}
        location /app {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /both {{ csrf_mode both; proxy_pass http://127.0.0.1:{upstream}; }}
        location /named {{ csrf_mode both; error_page 403 = @denied; proxy_pass http://127.0.0.1:{upstream}; }}
        location @denied {{ csrf off; proxy_pass http://127.0.0.1:{upstream}; }}
        location /named-on {{ csrf_mode both; error_page 403 = @denied_on; proxy_pass http://127.0.0.1:{upstream}; }}
        location @denied_on {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /uri {{ csrf_mode both; error_page 403 /rejected; proxy_pass http://127.0.0.1:{upstream}; }}
        location /rejected {{ csrf off; proxy_pass http://127.0.0.1:{upstream}; }}
        location /tried {{ csrf_mode both; error_page 403 = /fallback; proxy_pass http://127.0.0.1:{upstream}; }}
        location /fallback {{ csrf off; try_files /nonexistent @denied; }}
        location /aged {{ csrf_mode both; csrf_max_age 2s; proxy_pass http://127.0.0.1:{upstream}; }}
        location /tf/ {{ try_files /nonexistent /legacy/apply.cgi?$args; }}
        location /legacy/ {{ csrf_unsafe_get on; proxy_pass http://127.0.0.1:{upstream}; }}
        location /legacy-ep/ {{ csrf_unsafe_get on; error_page 403 = @app; proxy_pass http://127.0.0.1:{upstream}; }}
        location /post-ep/ {{ error_page 403 = @app; proxy_pass http://127.0.0.1:{upstream}; }}
        location @app {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /front/ {{ try_files /nonexistent /strict/index.php; }}
        location /strict/ {{ csrf_mode both; proxy_pass http://127.0.0.1:{upstream}; }}
        # cache fields an operator adds to every answer of a location
        location /own/ {{
            alias {prefix}/www/;
            add_header Cache-Control "public, max-age=600" always;
            add_header CDN-Cache-Control "max-age=600" always;
            add_header Surrogate-Control "max-age=600" always;
            add_header X-Accel-Expires 600 always;
            add_header Expires "Thu, 01 Jan 2099 00:00:00 GMT" always;
            add_header Pragma "x-kept" always;
        }}
        location /log/ {{ csrf_action log; alias {prefix}/www/; add_header CDN-Cache-Control "max-age=600" always; }}
        location /ep-text/ {{ alias {prefix}/www/; error_page 403 /e/denied.txt; }}
        location /ep-html/ {{ alias {prefix}/www/; error_page 403 /e/index.html; }}
        location /ep-named/ {{ alias {prefix}/www/; error_page 403 = @cached; }}
        location @cached {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /e/ {{
            alias {prefix}/www/;
            add_header Cache-Control "public, max-age=600" always;
            add_header CDN-Cache-Control "max-age=600" always;
            add_header Expires "Thu, 01 Jan 2099 00:00:00 GMT" always;
        }}
    }}
    # a shared cache in front, keyed on the path alone as a CDN is
    proxy_cache_path {prefix}/cache keys_zone=front:1m;
    server {{
        listen 127.0.0.1:{port1};
        location / {{
            proxy_pass http://127.0.0.1:{port};
            proxy_cache front;
            proxy_cache_key $uri;
            add_header X-Cache $upstream_cache_status always;
        }}
    }}
"""

PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><form method=post action=/app></form></body></html>"


def echo(c, head, body):
    """The upstream says which method, body, target and credentials it got."""
    method, target = head.split(b" ", 2)[:2]
    if target.startswith(b"/ep-named/"):
        # an error page of the application that says it may be shared
        T.send_whole(c, b"denied", "text/plain", status=b"403 Forbidden",
                     extra=b"Cache-Control: public, max-age=600\r\nSurrogate-Control: max-age=600\r\n"
                           b"Expires: Thu, 01 Jan 2099 00:00:00 GMT\r\n")
        return
    lower = head.lower()
    override = b"x-http-method-override" in lower
    creds = int(b"\r\ncookie:" in lower) + 2 * int(b"\r\nauthorization:" in lower)
    T.send_whole(c, b"method=%s len=%d override=%d target=%s creds=%d" % (method, len(body), int(override), target,
                                                                          creds), "text/plain")


class ProtocolTest(T.SessionCase):
    HTTP = HTTP
    PORTS = 2
    upstream = staticmethod(echo)
    FILES = {"www/index.html": PAGE, "www/denied.txt": b"denied"}

    def test_rejected_request_never_reaches_upstream_unsafe(self):
        ck = ("Cookie", self.cookie)
        form = ("Content-Type", "application/x-www-form-urlencoded")
        # the body carries a genuine token, so the module reads it before it
        # rejects on the origin: the case where nginx kept the body
        body = ("amount=1000&to=mallory&%s=%s" % (self.field, self.token)).encode()
        forged = [("Origin", "http://evil.example"), ck, form, ("X-HTTP-Method-Override", "DELETE")]
        for path in ("/named", "/named-on", "/uri", "/tried"):
            with self.subTest(path):
                r = T.request(self.port, "POST", path, forged, body)
                self.assertIsNotNone(r)
                # what the upstream received, if anything, is a GET without
                # a body or an override
                if r.status == 200:
                    self.assertIn(b"method=GET len=0 override=0", r.body)
                self.assertNotIn(b"method=POST", r.body)
                self.assertNotIn(b"method=DELETE", r.body)
        # a forged token in a body that came with the head: judged where
        # nginx holds it, and then read and dropped before error_page
        # sends the request on
        bad = self.token[:-4] + ("AAAA" if not self.token.endswith("AAAA") else "BBBB")
        for field, value in ((self.field, bad), ("other", self.token)):
            fb = ("amount=1000&to=mallory&%s=%s" % (field, value)).encode()
            for path in ("/named", "/named-on", "/uri", "/tried"):
                with self.subTest("body token", path=path, field=field):
                    r = T.request(self.port, "POST", path, [("Origin", self.self_origin), ck, form], fb)
                    self.assertIsNotNone(r)
                    if r.status == 200:
                        self.assertIn(b"method=GET len=0 override=0", r.body)
                    self.assertNotIn(b"method=POST", r.body)
        # the body read before the rejection, cross-site by fetch metadata
        r = T.request(self.port, "POST", "/named",
                      [("Sec-Fetch-Site", "cross-site"), ck, form, ("Content-Length", str(len(body)))], body)
        self.assertNotIn(b"method=POST", r.body)
        log = self.ngx.access_log().splitlines()
        # $csrf_result keeps the verdict across the redirect
        self.assertTrue(any(l.startswith("GET /named ") and l.endswith(" origin_mismatch") for l in log), log)
        self.assertEqual(self.ngx.crashed(), [])

    def test_error_page_receives_no_query_and_no_credentials(self):
        """A rejected request that error_page sends to the application
        arrives as an anonymous GET of its path: the query of an
        unsafe_get URL (the <img> attack) and the parameters of a forged
        POST never reach it, nor the user's Cookie or Authorization."""
        rows = [
            ("<img> of an unsafe_get URL", "GET", "/legacy-ep/reboot?now=1",
             [("Sec-Fetch-Site", "cross-site")], b""),
            ("<img> of an unsafe_get URL, foreign Referer", "GET", "/legacy-ep/reboot?now=1",
             [("Referer", "http://evil.example/kittens")], b""),
            ("forged POST with a query", "POST", "/post-ep/transfer?to=mallory",
             [("Origin", "http://evil.example"), ("Content-Type", "application/x-www-form-urlencoded")],
             b"amount=1000"),
        ]
        for name, method, target, headers, body in rows:
            with self.subTest(name):
                hdrs = headers + [("Cookie", self.cookie), ("Authorization", "Basic YWRtaW46YWRtaW4=")]
                r = T.request(self.port, method, target, hdrs, body)
                self.assertEqual(r.status, 200, r.body)
                path = target.split("?")[0].encode()
                self.assertIn(b"method=GET len=0 override=0 target=%s creds=0" % path, r.body)
        # an allowed request keeps all of it
        r = T.request(self.port, "GET", "/legacy-ep/reboot?now=1", [("Sec-Fetch-Site", "same-origin"),
                                                                   ("Cookie", self.cookie)])
        self.assertIn(b"method=GET len=0 override=0 target=/legacy-ep/reboot?now=1 creds=1", r.body)

    def test_stricter_location_after_internal_redirect(self):
        # the first location's verdict does not cover a stricter one that
        # try_files sends the request to (found by the attack review)
        r = T.request(self.port, "GET", "/tf/x?reboot=1", [("Sec-Fetch-Site", "cross-site")], b"")
        self.assertEqual(r.status, 403)
        self.assertNotIn(b"method=", r.body)
        r = T.request(self.port, "GET", "/tf/x?reboot=1", [("Sec-Fetch-Site", "same-origin")], b"")
        self.assertEqual(r.status, 200)
        # same-origin evidence passes the default mode, not "both" without a token
        r = T.request(self.port, "POST", "/front/x", [("Sec-Fetch-Site", "same-origin")], b"a=1")
        self.assertEqual(r.status, 403)
        r = T.request(self.port, "POST", "/front/x", [("Sec-Fetch-Site", "same-origin"), ("Cookie", self.cookie),
                                                      ("X-CSRF-Token", self.token)], b"a=1")
        self.assertEqual(r.status, 200)
        self.assertIn(b"method=POST len=3", r.body)

    def test_default_mode_is_origin_or_token(self):
        so = self.self_origin
        rows = [
            # the browser proves same-origin: no token needed (script POSTs of unchanged apps)
            ("fetch same-origin", [("Sec-Fetch-Site", "same-origin")], 200),
            ("origin self", [("Origin", so)], 200),
            # no evidence at all: the token carries it
            ("no evidence, no token", [], 403),
            ("no evidence, token", [("Cookie", self.cookie), ("X-CSRF-Token", self.token)], 200),
            ("typed url, no token", [("Sec-Fetch-Site", "none")], 403),
            # evidence against: rejected whatever the token
            ("cross-site with token", [("Sec-Fetch-Site", "cross-site"), ("Cookie", self.cookie),
                                       ("X-CSRF-Token", self.token)], 403),
            ("foreign origin with token", [("Origin", "http://evil.example"), ("Cookie", self.cookie),
                                           ("X-CSRF-Token", self.token)], 403),
            ("origin sent twice", [("Origin", so), ("Origin", so)], 403),
        ]
        for name, headers, status in rows:
            with self.subTest(name):
                r = T.request(self.port, "POST", "/app", headers, b"a=1")
                self.assertEqual(r.status, status)
        log = self.ngx.access_log().splitlines()
        self.assertTrue(any(l.endswith(" origin_verified") for l in log))

    def test_own_rejection_page(self):
        r = T.request(self.port, "POST", "/both?x=<script>", [("Sec-Fetch-Site", "cross-site")], b"a=1")
        self.assertEqual(r.status, 403)
        self.assertIn(b"Request rejected", r.body)
        self.assertIn(b"cross_site", r.body)
        self.assertNotIn(b"<script>", r.body)
        csp = [v for k, v in r.headers if k == "content-security-policy"]
        self.assertTrue(csp and "default-src 'none'" in csp[0], r.headers)
        # as csrf-cgi's: no cache keeps a rejection (nor serves it for the
        # page the user then reloads)
        self.assertEqual(r.all("cache-control"), ["no-store"])
        # no token or secret cookie on a rejection page
        self.assertIsNone(T.secret_cookie(r))
        self.assertNotIn(b"csrf-token", r.body)

    OVERRIDE = [("X-HTTP-Method-Override", "DELETE")]

    def assertNoStore(self, r):
        """Whatever location answered a rejection: only no-store, no field
        a cache would obey over it."""
        self.assertEqual(r.all("cache-control"), ["no-store"], r.headers)
        for name in ("cdn-cache-control", "surrogate-control", "x-accel-expires", "expires"):
            self.assertEqual(r.all(name), [], "%s stayed on a rejection" % name)

    def test_own_rejection_page_loses_every_cache_field(self):
        """A GET with a method override is rejected, and a CDN keys on the
        path alone: a rejection it kept would be served to everyone
        (found by the cache review)."""
        rows = [("GET", self.OVERRIDE, b""), ("POST", [("Sec-Fetch-Site", "cross-site")], b"a=1"),
                ("HEAD", self.OVERRIDE, b"")]
        for method, hdrs, body in rows:
            with self.subTest(method):
                r = T.request(self.port, method, "/own/index.html", hdrs, body)
                self.assertEqual(r.status, 403)
                if method != "HEAD":
                    self.assertIn(b"Request rejected", r.body)
                self.assertNoStore(r)
                self.assertEqual(r.all("pragma"), ["x-kept"])
                self.assertIsNone(T.secret_cookie(r))
        # an allowed answer of the location keeps them
        r = T.request(self.port, "GET", "/own/denied.txt")
        self.assertEqual(r.all("cache-control"), ["public, max-age=600"])
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])
        self.assertEqual(r.all("x-accel-expires"), ["600"])
        # report-only: the would-be rejection is an allowed request
        r = T.request(self.port, "GET", "/log/denied.txt", self.OVERRIDE)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])

    def test_error_page_of_a_rejection_is_no_store(self):
        """error_page sends a rejection to a location that says the answer
        may be shared (add_header ... always, an application's error page):
        it still goes out with only no-store."""
        for path in ("/ep-text/index.html", "/ep-html/index.html", "/ep-named/index.html"):
            with self.subTest(path):
                r = T.request(self.port, "GET", path, self.OVERRIDE)
                self.assertEqual(r.status, 403)
                self.assertIn(b"denied" if path != "/ep-html/index.html" else b"<form", r.body)
                self.assertNoStore(r)
        # the location itself, asked directly, keeps what it says
        r = T.request(self.port, "GET", "/e/denied.txt")
        self.assertEqual(r.all("cache-control"), ["public, max-age=600"])
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])

    def test_shared_cache_in_front_keeps_no_rejection(self):
        """A real proxy_cache in front, keyed on the path: the rejected
        request's answer is not stored, and the next visitor's plain GET
        gets the page, not the 403."""
        front = self.ngx.ports[1]
        for path in ("/own/denied.txt", "/ep-text/denied.txt", "/ep-html/denied.txt", "/ep-named/denied.txt"):
            with self.subTest(path):
                r = T.request(front, "GET", path, self.OVERRIDE)
                self.assertEqual(r.status, 403)
                r = T.request(front, "GET", path)
                self.assertEqual((r.status, r.body), (200, b"denied"), r.headers)

    def test_rejection_never_sets_the_secret_cookie(self):
        """error_page to an HTML page of a location that injects: the
        error location sees an anonymous visitor, and a page prepared for
        it would carry a new secret cookie, replacing the user's own (a
        cross-site form could log every open tab of the victim out of
        their tokens). A rejected request's answer gets no token and no
        cookie, with or without a secret in the request."""
        form = ("Content-Type", "application/x-www-form-urlencoded")
        for name, cookie in (("valid secret", [("Cookie", self.cookie)]), ("no secret", []),
                             ("forged secret", [("Cookie", "csrf_secret=forged")])):
            for method, hdrs, body in (("POST", [("Sec-Fetch-Site", "cross-site"), form], b"a=1"),
                                       ("GET", self.OVERRIDE, b"")):
                with self.subTest(name, method=method):
                    r = T.request(self.port, method, "/ep-html/index.html", hdrs + cookie, body)
                    self.assertEqual(r.status, 403)
                    # assertTrue: a failure must not print a cookie or a token
                    self.assertTrue(r.all("set-cookie") == [], "a rejection's answer set a cookie")
                    self.assertTrue(r.body == PAGE, "the error page was changed")
                    self.assertNoStore(r)
        # the user's token still passes
        r = T.request(self.port, "POST", "/both", [("Cookie", self.cookie), ("X-CSRF-Token", self.token)], b"a=1")
        self.assertEqual(r.status, 200)
        # the error location injects as usual into a page it serves itself
        r = T.request(self.port, "GET", "/e/index.html")
        self.assertIsNotNone(T.secret_cookie(r))
        self.assertEqual(T.count_injected(r.body), (1, 1))

    def test_log_lines_hold_no_query(self):
        tok = self.token
        r = T.request(self.port, "POST", "/both?%s=%s&q=1" % (self.field, tok), [("Sec-Fetch-Site", "cross-site")],
                      b"")
        self.assertEqual(r.status, 403)
        err = self.ngx.error_log()
        self.assertIn("csrf: rejected POST", err)
        self.assertNotIn(tok, err)
        self.assertNotIn(tok[:40], err)

    def test_max_age(self):
        c, f, t = T.session_tokens(self.port)
        hdrs = [("Origin", self.self_origin), ("Cookie", c), ("X-CSRF-Token", t)]
        self.assertEqual(T.request(self.port, "POST", "/aged", hdrs, b"").status, 200)
        time.sleep(3.2)
        r = T.request(self.port, "POST", "/aged", hdrs, b"")
        self.assertEqual(r.status, 403)
        self.assertIn(b"expired", r.body)


if __name__ == "__main__":
    unittest.main()
