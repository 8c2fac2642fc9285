# SPDX-License-Identifier: BSD-2-Clause
"""apache.cases: the shared table of response cases (tests/cases/response.json)
through mod_csrf_protect, each case a <Location> proxied (mod_proxy_http)
to a python upstream that gives the case's answer; nginx.cases and
cgi.cases run the same table. CSRF_CASES=REGEX picks cases by name."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../cases"))
import aptest as A  # noqa: E402
import casetable as C  # noqa: E402
import ngxtest as T  # noqa: E402

CASES = C.load()
# casetable's settings by their Apache names
DIRECTIVES = {"mode": "CSRFMode", "form_action_csp": "CSRFFormActionCSP", "trusted_origin": "CSRFTrustedOrigin",
              "retry_token": "CSRFRetryToken", "body_max": "CSRFBodyMax"}


def location(case):
    lines = ["CSRF On", "CSRFOrigin %s" % C.ORIGIN]
    lines += ["%s %s" % (DIRECTIVES[k], v) for k, v in C.settings(case["conf"])]
    lines.append("ProxyPass http://127.0.0.1:{upstream}/case/%s" % case["name"])
    # braces doubled: the configuration goes through str.format
    return "<Location /case/%s>\n    %s\n</Location>\n" % (case["name"], "\n    ".join(lines))


CONF = ("<Location /metrics>\n    CSRF Off\n    SetHandler csrf-metrics\n</Location>\n"
        + "".join(location(c) for c in CASES))


class Cases(C.ServerCases, A.ApacheCase):
    CONF = CONF
    MODULES = ("proxy", "proxy_http")

    @classmethod
    def make_upstream(cls):
        return T.Upstream(C.answer)

    def adjust(self, case, r):
        """The upstream's length went; Apache's content-length filter writes
        the page's own for a body it held whole: accepted where it is the
        body's length."""
        if case["expect"].get("headers", {}).get("content-length") == [] and \
                r.all("content-length") == [str(len(r.body))] and case["request"]["method"] != "HEAD":
            r.headers = [kv for kv in r.headers if kv[0] != "content-length"]

    def test_log_note(self):
        """%{csrf_result}n: the verdict in the access log."""
        r = self.send("POST", "/case/default_mode_is_origin_or_token",
                      [("Sec-Fetch-Site", "cross-site"), ("Content-Type", "application/x-www-form-urlencoded")], b"a=1")
        self.assertEqual(r.status, 403)
        log = self.ap.access_log("POST /case/default_mode_is_origin_or_token 403 cross_site")
        self.assertIn("POST /case/default_mode_is_origin_or_token 403 cross_site", log)


if __name__ == "__main__":
    unittest.main()
