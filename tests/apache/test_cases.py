# SPDX-License-Identifier: BSD-2-Clause
"""apache.cases: the shared table of response cases (tests/cases/response.json)
through mod_csrf_protect, each case a <Location> proxied (mod_proxy_http)
to a python upstream that gives the case's answer; nginx.cases and
cgi.cases run the same table. CSRF_CASES=REGEX picks cases by name."""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../cases"))
sys.path.insert(0, os.path.join(HERE, "../nginx"))
import aptest as A  # noqa: E402
import casetable as C  # noqa: E402
import ngxtest as T  # noqa: E402
from promtext import parse  # noqa: E402

CASES = C.load()
BY_PATH = {"/case/" + c["name"]: c for c in CASES}
REASONS = {200: "OK", 302: "Found", 404: "Not Found"}


def location(case):
    conf = case["conf"]
    lines = ["CSRF On", "CSRFOrigin %s" % C.ORIGIN]
    if conf["mode"]:
        lines.append("CSRFMode %s" % conf["mode"])
    if conf["form_action_csp"] is not None:
        lines.append("CSRFFormActionCSP %s" % ("On" if conf["form_action_csp"] else "Off"))
    for t in conf["trusted"]:
        lines.append("CSRFTrustedOrigin %s" % t)
    if conf["retry_token"]:
        lines.append("CSRFRetryToken On")
    if conf["body_max"]:
        lines.append("CSRFBodyMax %d" % conf["body_max"])
    lines.append("ProxyPass http://127.0.0.1:{upstream}/case/%s" % case["name"])
    # braces doubled: the configuration goes through str.format
    return "<Location /case/%s>\n    %s\n</Location>\n" % (case["name"], "\n    ".join(lines))


def answer(c, head, body):
    path = head.split(b" ", 2)[1].decode("latin-1")
    case = BY_PATH.get(path)
    if case is None:
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    up = case["upstream"]
    out = b"HTTP/1.1 %d %s\r\n" % (up["status"], REASONS.get(up["status"], "X").encode())
    for k, v in up["headers"]:
        out += ("%s: %s\r\n" % (k, v)).encode("latin-1")
    out += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(up["body"])
    if not head.startswith(b"HEAD "):
        out += up["body"]
    c.sendall(out)


CONF = ("<Location /metrics>\n    CSRF Off\n    SetHandler csrf-metrics\n</Location>\n"
        + "".join(location(c) for c in CASES))


class Cases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.up = T.Upstream(answer)
        cls.ap = A.Apache(CONF, modules=("proxy", "proxy_http"), upstream_port=cls.up.port)
        try:
            cls.ap.start()
        except Exception:
            cls.ap.cleanup()
            cls.up.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.ap.cleanup()
        cls.up.close()

    def reached(self, path, before):
        return any(h.split(b" ", 2)[1].decode("latin-1") == path for h, _ in self.up.requests[before:])

    def log_of(self, path, before):
        time.sleep(0.1)
        return "\n".join(l for l in self.ap.error_log()[before:].splitlines() if '"%s"' % path in l)

    def counters(self):
        r = T.request(self.ap.port, "GET", "/metrics", host=C.HOST)
        self.assertEqual(r.status, 200)
        return C.counters(parse(r.body))

    def test_cases(self):
        self.assertTrue(CASES, "no case matches CSRF_CASES")
        for case in CASES:
            with self.subTest(case=case["name"]):
                path = "/case/" + case["name"]
                req = case["request"]
                headers = list(map(tuple, req["headers"]))
                if req.get("prime"):
                    page = T.request(self.ap.port, "GET", path, host=C.HOST)
                    cookie = T.secret_cookie(page)
                    m = C.FIELD_TOKEN.search(page.body)
                    self.assertTrue(cookie and m, "the priming page has no token")
                    headers.append(("Cookie", cookie))
                    if req["prime"] == "tampered":
                        headers.append(("X-CSRF-Token", C.tamper(m.group(1).decode())))
                counted = self.counters()
                before, log_before = len(self.up.requests), len(self.ap.error_log())
                r = T.request(self.ap.port, req["method"], path, headers, req["body"], host=C.HOST)
                self.assertIsNotNone(r, "no answer")
                if case["expect"].get("headers", {}).get("content-length") == [] and \
                        r.all("content-length") == [str(len(r.body))] and req["method"] != "HEAD":
                    # the upstream's length went; Apache's content-length
                    # filter wrote the page's own for a body it held whole
                    r.headers = [kv for kv in r.headers if kv[0] != "content-length"]
                C.check(self, case, r, self.log_of(path, log_before), self.reached(path, before))
                C.check_metrics(self, case, counted, self.counters())
        self.assertFalse(self.ap.crashed())

    def test_log_note(self):
        """%{csrf_result}n: the verdict in the access log."""
        r = T.request(self.ap.port, "POST", "/case/default_mode_is_origin_or_token",
                      [("Sec-Fetch-Site", "cross-site"), ("Content-Type", "application/x-www-form-urlencoded")],
                      b"a=1", host=C.HOST)
        self.assertEqual(r.status, 403)
        log = self.ap.access_log()
        self.assertIn("POST /case/default_mode_is_origin_or_token 403 cross_site", log)


if __name__ == "__main__":
    unittest.main()
