# SPDX-License-Identifier: BSD-2-Clause
"""nginx.cases: the shared table of response cases (tests/cases/response.json)
through the module in front of a python upstream that gives each case's
answer; csrf-cgi runs the same table (cgi.cases). CSRF_CASES=REGEX picks
cases by name."""

import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../cases"))
import casetable as C  # noqa: E402
import ngxtest as T  # noqa: E402
from promtext import parse  # noqa: E402

CASES = C.load()


def location(case):
    conf = case["conf"]
    lines = ["csrf on;", "csrf_origin %s;" % C.ORIGIN]
    if conf["mode"]:
        lines.append("csrf_mode %s;" % conf["mode"])
    if conf["form_action_csp"] is not None:
        lines.append("csrf_form_action_csp %s;" % ("on" if conf["form_action_csp"] else "off"))
    for t in conf["trusted"]:
        lines.append("csrf_trusted_origin %s;" % t)
    if conf["retry_token"]:
        lines.append("csrf_retry_token on;")
    if conf["body_max"]:
        lines.append("csrf_body_max %d;" % conf["body_max"])
    lines.append("proxy_pass http://127.0.0.1:{upstream};")
    # braces doubled: the configuration goes through str.format ({port}, {upstream})
    return "        location = /case/%s {{\n            %s\n        }}\n" % (case["name"], "\n            ".join(lines))


class Cases(T.ProxyCase):
    HTTP = ("    csrf_metrics_zone cases;\n"
            "    server {{\n        listen 127.0.0.1:{port};\n        server_name %s;\n" % C.HOST
            + "        location = /metrics {{ csrf off; csrf_metrics; }}\n"
            + "".join(location(c) for c in CASES) + "    }}\n")

    @classmethod
    def upstream(cls, c, head, body):
        C.answer(c, head, body)

    def reached(self, path, before):
        return any(h.split(b" ", 2)[1].decode("latin-1") == path for h, _ in self.up.requests[before:])

    def log_of(self, path, before):
        time.sleep(0.1)
        return "\n".join(l for l in self.ngx.error_log()[before:].splitlines() if '"%s"' % path in l)

    def counters(self):
        r = T.request(self.ngx.port, "GET", "/metrics", host=C.HOST)
        self.assertEqual(r.status, 200)
        return C.counters(parse(r.body))

    def test_cases(self):
        C.run(self, lambda m, p, h, b: T.request(self.ngx.port, m, p, h, b, host=C.HOST),
              lambda: (len(self.up.requests), len(self.ngx.error_log())))
        self.assertFalse(self.ngx.crashed())

if __name__ == "__main__":
    unittest.main()
