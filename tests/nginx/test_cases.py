# SPDX-License-Identifier: BSD-2-Clause
"""nginx.cases: the shared table of response cases (tests/cases/response.json)
through the module in front of a python upstream that gives each case's
answer; csrf-cgi runs the same table (cgi.cases). CSRF_CASES=REGEX picks
cases by name."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../cases"))
import casetable as C  # noqa: E402
import ngxtest as T  # noqa: E402

CASES = C.load()


def location(case):
    lines = ["csrf on;", "csrf_origin %s;" % C.ORIGIN]
    lines += ["csrf_%s %s;" % kv for kv in C.settings(case["conf"])]
    lines.append("proxy_pass http://127.0.0.1:{upstream};")
    # braces doubled: the configuration goes through str.format ({port}, {upstream})
    return "        location = /case/%s {{\n            %s\n        }}\n" % (case["name"], "\n            ".join(lines))


class Cases(C.ServerCases, T.ProxyCase):
    HTTP = ("    csrf_metrics_zone cases;\n"
            "    server {{\n        listen 127.0.0.1:{port};\n        server_name %s;\n" % C.HOST
            + "        location = /metrics {{ csrf off; csrf_metrics; }}\n"
            + "".join(location(c) for c in CASES) + "    }}\n")

    @classmethod
    def upstream(cls, c, head, body):
        C.answer(c, head, body)


if __name__ == "__main__":
    unittest.main()
