# SPDX-License-Identifier: BSD-2-Clause
"""csrf_metrics_zone and csrf_metrics: two workers count into one set of
counters that add up exactly to the requests sent, by verdict and reason;
a reload keeps them; the endpoint is Prometheus text that the strict
parser (promtext.py) accepts; a metrics location that is not allowed
refuses (403); the configuration errors say what is missing."""

import os
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ngxtest import NGINX, Nginx, ProxyCase, exchange, request, send_whole, session_tokens  # noqa: E402
from promtext import parse  # noqa: E402

HTTP = """
    log_format pids '$pid $request_method $uri $status';
    csrf_metrics_zone csrf;
    server {{
        listen 127.0.0.1:{port0} reuseport;
        root {prefix}/www;
        access_log {prefix}/pids.log pids;
        csrf on;
        location / {{ }}
        location /ro/ {{ csrf_action log; csrf_metrics_zone ro; }}
    }}
    server {{
        listen 127.0.0.1:{port1};
        location = /metrics {{ csrf_metrics; allow 127.0.0.1; deny all; }}
        location = /closed {{ csrf_metrics; deny all; }}
        location = /judged {{ csrf on; csrf_metrics; }}
    }}
"""

PAGE = b"<!doctype html><html><head><title>t</title></head><body>" \
       b"<form method=post action=/x><input name=a></form></body></html>"
GET_BUTTON = b"<!doctype html><html><head></head><body><form method=post action=/x>" \
             b"<button formmethod=get>go</button></form></body></html>"
SJIS = b"<!doctype html><html><head><meta charset=shift_jis></head><body>" \
       b"<form method=post action=/x></form></body></html>"

FORM = "application/x-www-form-urlencoded"

# (verdict, reason) -> how to send one request of that kind
KINDS = {
    ("allowed", "safe_method"): lambda p, t: request(p, "GET", "/"),
    ("rejected", "cross_site"): lambda p, t: request(p, "POST", "/x", [("Sec-Fetch-Site", "cross-site")], "a=1"),
    ("rejected", "same_site"): lambda p, t: request(p, "POST", "/x", [("Sec-Fetch-Site", "same-site")], "a=1"),
    ("rejected", "origin_mismatch"): lambda p, t: request(p, "POST", "/x", [("Origin", "http://evil.example")],
                                                          "a=1"),
    ("report_only", "cross_site"): lambda p, t: request(p, "POST", "/ro/x", [("Sec-Fetch-Site", "cross-site")],
                                                        "a=1"),
    ("allowed", "origin_verified"): lambda p, t: request(p, "POST", "/x", [("Sec-Fetch-Site", "same-origin"), ("Cookie", t[0]),
                                                               ("X-CSRF-Token", t[2])], "a=1"),
    # no origin evidence: the token is read from the body (the library asks
    # for it first), and the request counts once
    ("allowed", "ok"): lambda p, t: request(p, "POST", "/x", [("Cookie", t[0]), ("Content-Type", FORM)],
                                            "a=1&%s=%s" % (t[1], t[2])),
}
EXPECTED_STATUS = {"rejected": 403, "report_only": 405, "allowed": None}


def scrape(port, path="/metrics"):
    r = request(port, "GET", path)
    return r, (parse(r.body) if r is not None and r.status == 200 else None)


def requests_total(fams, verdict, reason, zone="csrf"):
    return fams["csrf_requests_total"].value(zone=zone, verdict=verdict, reason=reason)


def zone_total(fams, zone):
    return sum(v for (_, labels), v in fams["csrf_requests_total"].samples.items() if ("zone", zone) in labels)


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ngx = Nginx(HTTP, ports=2, workers=2)
        cls.ngx.write("www/index.html", PAGE)
        cls.ngx.write("www/get.html", GET_BUTTON)
        cls.ngx.write("www/sjis.html", SJIS)
        cls.ngx.write("www/x", b"")
        cls.ngx.write("www/ro/x", b"")
        cls.ngx.start()
        cls.port, cls.mport = cls.ngx.ports

    @classmethod
    def tearDownClass(cls):
        cls.ngx.cleanup()

    def test_1_counts_add_up_across_workers(self):
        _, before = scrape(self.mport)
        self.assertIsNotNone(before)
        tokens = session_tokens(self.port)  # one GET: counted below
        self.assertIsNotNone(tokens[2])
        per_kind = 60
        jobs = [k for k in KINDS for _ in range(per_kind)]
        errors = []
        lock = threading.Lock()

        def worker(mine):
            for kind in mine:
                r = KINDS[kind](self.port, tokens)
                want = EXPECTED_STATUS[kind[0]]
                ok = r is not None and (want is None or r.status == want) and \
                    (kind[0] != "allowed" or r.status not in (403, 413))
                if not ok:
                    with lock:
                        errors.append((kind, r.status if r else None))

        threads = [threading.Thread(target=worker, args=(jobs[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for _ in range(3):
            request(self.port, "GET", "/get.html")
        for _ in range(2):
            request(self.port, "GET", "/sjis.html")

        r, after = scrape(self.mport)
        self.assertEqual(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8")
        self.assertEqual(r.header("cache-control"), "no-store")
        extra = {("allowed", "safe_method"): 1 + 3 + 2}  # session_tokens, get.html, sjis.html
        # /ro/ counts into its own zone, the rest into the http block's
        for kind in KINDS:
            zone = "ro" if kind[0] == "report_only" else "csrf"
            got = requests_total(after, *kind, zone=zone) - requests_total(before, *kind, zone=zone)
            self.assertEqual(got, per_kind + extra.get(kind, 0), kind)
        # nothing else was counted
        self.assertEqual(zone_total(after, "csrf") - zone_total(before, "csrf"), per_kind * (len(KINDS) - 1) + 6)
        self.assertEqual(zone_total(after, "ro") - zone_total(before, "ro"), per_kind)
        # every worker counted into the one set
        pids = {l.split()[0] for l in open(self.ngx.path("pids.log")).read().splitlines()}
        self.assertEqual(len(pids), 2, "requests should have reached both workers")

        def delta(name, zone="csrf", **labels):
            return after[name].value(zone=zone, **labels) - before[name].value(zone=zone, **labels)

        # pages: every GET of index.html (meta tags and a field) and
        # get.html (meta tags only) streamed through the injector, and so
        # did nginx's 405 page (meta tags) for each POST let through to the
        # static files, in the zone of the POST's location; sjis.html
        # passed for its charset
        let_through = 2 * per_kind
        self.assertEqual(delta("csrf_inject_pages_total"), (per_kind + 1) + 3 + let_through)
        self.assertEqual(delta("csrf_inject_insertions_total"), 2 * (per_kind + 1) + 3 + let_through)
        self.assertEqual(delta("csrf_inject_pages_total", zone="ro"), per_kind)
        self.assertEqual(delta("csrf_inject_insertions_total", zone="ro"), per_kind)
        self.assertEqual(delta("csrf_inject_withheld_total", status="get_button"), 3)
        self.assertEqual(delta("csrf_inject_passed_total", cause="charset"), 2)
        self.assertEqual(delta("csrf_inject_passed_total", cause="encoding"), 0)

    def test_2_reload_keeps_counts(self):
        _, before = scrape(self.mport)
        old = set(self.ngx.worker_pids())
        rc = subprocess.run([NGINX, "-p", self.ngx.prefix, "-c", self.ngx.conf, "-s", "reload"],
                            capture_output=True, text=True, env=self.ngx.server_env())
        self.assertEqual(rc.returncode, 0, rc.stderr)
        end = time.time() + 15
        while time.time() < end:
            now = set(self.ngx.worker_pids())
            if len(now) == 2 and not (now & old):
                break
            time.sleep(0.1)
        else:
            self.fail("the workers were not replaced by the reload:\n" + self.ngx.error_log()[-2000:])
        r, after = scrape(self.mport)
        self.assertIsNotNone(after, r and r.status)
        self.assertEqual(after["csrf_requests_total"].samples, before["csrf_requests_total"].samples)
        for zone in ("csrf", "ro"):
            self.assertEqual(after["csrf_metrics_start_time_seconds"].value(zone=zone),
                             before["csrf_metrics_start_time_seconds"].value(zone=zone))
        KINDS[("rejected", "cross_site")](self.port, None)
        _, later = scrape(self.mport)
        self.assertEqual(requests_total(later, "rejected", "cross_site"),
                         requests_total(before, "rejected", "cross_site") + 1)

    def test_3_denied_location_refuses(self):
        r = request(self.mport, "GET", "/closed")
        self.assertEqual(r.status, 403)
        self.assertNotIn(b"csrf_requests_total", r.body)

    def test_4_methods(self):
        r = request(self.mport, "POST", "/metrics", body="a=1")
        self.assertEqual(r.status, 405)
        data = exchange(self.mport, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5)
        head, _, body = data.partition(b"\r\n\r\n")
        self.assertIn(b" 200 ", head.split(b"\r\n")[0])
        self.assertEqual(body, b"")

    def test_5_metrics_location_under_csrf(self):
        """A metrics location the module also judges: a GET is safe and
        counted like any other request before the page is served."""
        _, before = scrape(self.mport)
        r, fams = scrape(self.mport, "/judged")
        self.assertEqual(r.status, 200)
        self.assertEqual(requests_total(fams, "allowed", "safe_method"),
                         requests_total(before, "allowed", "safe_method") + 1)
        self.assertEqual(self.ngx.crashed(), [])


class Upstream(ProxyCase):
    """Pages from an upstream: one that arrives compressed (the operator
    forced gzip) is passed for its encoding; a form longer than the hold
    and a page that ends inside a form are withheld by their status."""

    HTTP = """
    csrf_metrics_zone up;
    server {{
        listen 127.0.0.1:{port};
        csrf on;
        location / {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /forced/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_set_header Accept-Encoding gzip; }}
        location = /metrics {{ csrf off; csrf_metrics; allow 127.0.0.1; deny all; }}
    }}
"""

    @classmethod
    def upstream(cls, c, head, body):
        import gzip
        path = head.split(b" ")[1]
        if path.startswith(b"/forced/"):
            send_whole(c, gzip.compress(PAGE), "text/html", extra=b"Content-Encoding: gzip\r\n")
        elif path == b"/cut":
            # a page whose rest comes late: the client leaves before it
            first = b"<html><head></head><body><form method=post action=/x><input name=a></form>" + b"p" * 20000
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
                      str(len(first) + 10000).encode() + b"\r\nConnection: close\r\n\r\n" + first)
            cls.cut_gone.wait(10)
            try:
                c.sendall(b"q" * 10000)
            except OSError:
                pass
        elif path == b"/long":
            send_whole(c, b"<html><head></head><body><form method=post action=/x>" + b"x" * 40000 + b"</form>")
        else:
            send_whole(c, b"<html><head></head><body><form method=post action=/x><input name=a>")

    cut_gone = threading.Event()

    def test_page_cut_short_counts(self):
        """A client that goes away in the middle of a page: the page is
        counted when nginx lets the request go, with the insertions it got
        (the meta tags and the form's input)."""
        _, before = scrape(self.ngx.port)
        s = socket.create_connection(("127.0.0.1", self.ngx.port), timeout=5)
        try:
            s.sendall(b"GET /cut HTTP/1.1\r\nHost: localhost\r\n\r\n")
            got = b""
            while b"</form>" not in got:
                d = s.recv(65536)
                if not d:
                    break
                got += d
            self.assertIn(b"</form>", got)
        finally:
            s.close()
        try:
            deadline = time.monotonic() + 5
            while True:
                _, after = scrape(self.ngx.port)
                pages = after["csrf_inject_pages_total"].value(zone="up") - \
                    before["csrf_inject_pages_total"].value(zone="up")
                if pages or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        finally:
            self.cut_gone.set()
        self.assertEqual(pages, 1)
        self.assertEqual(after["csrf_inject_insertions_total"].value(zone="up") -
                         before["csrf_inject_insertions_total"].value(zone="up"), 2)
        self.assertEqual(self.ngx.crashed(), [])

    def test_passed_and_withheld(self):
        _, before = scrape(self.ngx.port)
        for path in ("/forced/a", "/forced/b", "/long", "/open"):
            r = request(self.ngx.port, "GET", path)
            self.assertEqual(r.status, 200, path)
        _, after = scrape(self.ngx.port)

        def delta(name, **labels):
            return after[name].value(zone="up", **labels) - before[name].value(zone="up", **labels)

        self.assertEqual(delta("csrf_inject_passed_total", cause="encoding"), 2)
        self.assertEqual(delta("csrf_inject_passed_total", cause="charset"), 0)
        self.assertEqual(delta("csrf_inject_pages_total"), 2)
        self.assertEqual(delta("csrf_inject_withheld_total", status="long_form"), 1)
        self.assertEqual(delta("csrf_inject_withheld_total", status="unclosed"), 1)
        self.assertEqual(delta("csrf_inject_insertions_total"), 2)  # the meta tags of each
        self.assertEqual(delta("csrf_requests_total", verdict="allowed", reason="safe_method"), 4)


class Config(unittest.TestCase):
    def check(self, http):
        ngx = Nginx(http)
        try:
            return ngx.test_config()
        finally:
            ngx.cleanup()

    def test_endpoint_without_zone(self):
        rc, out = self.check("server {{ listen 127.0.0.1:{port}; location = /m {{ csrf_metrics; }} }}")
        self.assertNotEqual(rc, 0)
        self.assertIn("csrf_metrics_zone NAME;", out)

    def test_zone_twice(self):
        rc, out = self.check("csrf_metrics_zone a; csrf_metrics_zone b; server {{ listen 127.0.0.1:{port}; }}")
        self.assertNotEqual(rc, 0)
        self.assertIn("is duplicate", out)

    def test_zone_twice_in_a_location(self):
        rc, out = self.check("server {{ listen 127.0.0.1:{port}; location / {{ csrf_metrics_zone a; "
                             "csrf_metrics_zone b; }} }}")
        self.assertNotEqual(rc, 0)
        self.assertIn("is duplicate", out)

    def test_zone_name_too_long(self):
        rc, out = self.check("csrf_metrics_zone %s; server {{ listen 127.0.0.1:{port}; }}" % ("z" * 65))
        self.assertNotEqual(rc, 0)
        self.assertIn("takes a name of 1 to 64 bytes", out)

    def test_zones_at_every_level(self):
        """One name at several levels is one zone."""
        rc, out = self.check("csrf_metrics_zone all; server {{ listen 127.0.0.1:{port}; csrf_metrics_zone site; "
                             "location /a/ {{ csrf_metrics_zone a; }} location /b/ {{ csrf_metrics_zone a; }} "
                             "location = /m {{ csrf_metrics; allow 127.0.0.1; deny all; }} }}")
        self.assertEqual(rc, 0, out)

    def test_zone_name_taken(self):
        rc, out = self.check("limit_req_zone $binary_remote_addr zone=m:1m rate=1r/s; csrf_metrics_zone m; "
                             "server {{ listen 127.0.0.1:{port}; }}")
        self.assertNotEqual(rc, 0)

    def test_valid(self):
        rc, out = self.check("csrf_metrics_zone m; server {{ listen 127.0.0.1:{port}; "
                             "location = /m {{ csrf_metrics; allow 127.0.0.1; deny all; }} }}")
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
