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


CONF = ("<Location /metrics>\n    CSRF Off\n    SetHandler csrf-metrics\n</Location>\n"
        + "".join(location(c) for c in CASES))


class Cases(A.ApacheCase):
    CONF = CONF
    MODULES = ("proxy", "proxy_http")

    @classmethod
    def make_upstream(cls):
        return T.Upstream(C.answer)

    def reached(self, path, before):
        return any(h.split(b" ", 2)[1].decode("latin-1") == path for h, _ in self.up.requests[before:])

    def log_of(self, path, before):
        time.sleep(0.1)
        return "\n".join(l for l in self.ap.error_log()[before:].splitlines() if '"%s"' % path in l)

    def counters(self):
        r = T.request(self.ap.port, "GET", "/metrics", host=C.HOST)
        self.assertEqual(r.status, 200)
        return C.counters(parse(r.body))

    def adjust(self, case, r):
        """The upstream's length went; Apache's content-length filter writes
        the page's own for a body it held whole: accepted where it is the
        body's length."""
        if case["expect"].get("headers", {}).get("content-length") == [] and \
                r.all("content-length") == [str(len(r.body))] and case["request"]["method"] != "HEAD":
            r.headers = [kv for kv in r.headers if kv[0] != "content-length"]

    def test_cases(self):
        C.run(self, lambda m, p, h, b: T.request(self.ap.port, m, p, h, b, host=C.HOST),
              lambda: (len(self.up.requests), len(self.ap.error_log())))
        self.assertFalse(self.ap.crashed())

    def test_log_note(self):
        """%{csrf_result}n: the verdict in the access log."""
        r = T.request(self.ap.port, "POST", "/case/default_mode_is_origin_or_token",
                      [("Sec-Fetch-Site", "cross-site"), ("Content-Type", "application/x-www-form-urlencoded")],
                      b"a=1", host=C.HOST)
        self.assertEqual(r.status, 403)
        log = self.ap.access_log("POST /case/default_mode_is_origin_or_token 403 cross_site")
        self.assertIn("POST /case/default_mode_is_origin_or_token 403 cross_site", log)


if __name__ == "__main__":
    unittest.main()
