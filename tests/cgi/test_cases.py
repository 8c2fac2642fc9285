# SPDX-License-Identifier: BSD-2-Clause
"""cgi.cases: the shared table of response cases (tests/cases/response.json)
through csrf-cgi, run as a server runs it; the module runs the same table
(nginx.cases). CSRF_CASES=REGEX picks cases by name."""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../cases"))
sys.path.insert(0, os.path.join(HERE, "../nginx"))
import casetable as C  # noqa: E402
import cgitest as T  # noqa: E402
from promtext import parse  # noqa: E402

def counters(path):
    """The counters file's series (casetable.counters); {} before the first
    request is counted."""
    p = subprocess.run([T.CGI, "--metrics", path], capture_output=True)
    return C.counters(parse(p.stdout)) if p.returncode == 0 else {}


class Cases(unittest.TestCase):
    def run_case(self, site, case, method, headers, body):
        env = {"REQUEST_METHOD": method, "SCRIPT_NAME": "/cgi-bin/case.cgi", "HTTP_HOST": C.HOST,
               "CSRF_CGI_CONFIG": site.conf, "CGI_TEST_DIR": site.dir}
        for k, v in headers:
            if k.lower() == "content-type":
                env["CONTENT_TYPE"] = v
            else:
                env["HTTP_" + k.upper().replace("-", "_")] = v
        if body:
            env["CONTENT_LENGTH"] = str(len(body))
        site.clear()
        return T.run_direct(env, "./case.cgi", body)

    def test_cases(self):
        cases = C.load()
        self.assertTrue(cases, "no case matches CSRF_CASES")
        for case in cases:
            with self.subTest(case=case["name"]):
                site = T.Site("%s %s" % kv for kv in C.settings(case["conf"]))
                site.lines.append("metrics_file " + site.path("counters"))
                try:
                    site.configure(C.ORIGIN)
                    up = case["upstream"]
                    answer = b"Status: %d %s\r\n" % (up["status"], C.REASONS.get(up["status"], "X").encode())
                    for k, v in up["headers"]:
                        answer += ("%s: %s\r\n" % (k, v)).encode("latin-1")
                    with open(site.path("answer"), "wb") as f:
                        f.write(answer + b"\r\n" + up["body"])
                    req = case["request"]
                    headers = list(map(tuple, req["headers"]))
                    if req.get("prime"):
                        rc, page, err = self.run_case(site, case, "GET", [], b"")
                        cookie = [c.split(";")[0] for c in page.all("set-cookie") if C.SECRET.match(c)]
                        m = C.FIELD_TOKEN.search(page.body)
                        self.assertTrue(cookie and m, "the priming page has no token")
                        headers.append(("Cookie", cookie[0]))
                        if req["prime"] == "tampered":
                            headers.append(("X-CSRF-Token", C.tamper(m.group(1).decode())))
                    before = counters(site.path("counters"))
                    rc, r, err = self.run_case(site, case, req["method"], headers, req["body"])
                    self.assertEqual(rc, 0, err)
                    C.check(self, case, r, err, bool(site.ran()))
                    C.check_metrics(self, case, before, counters(site.path("counters")))
                finally:
                    site.cleanup()


if __name__ == "__main__":
    unittest.main()
