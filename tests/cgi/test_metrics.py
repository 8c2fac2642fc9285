# SPDX-License-Identifier: BSD-2-Clause
"""csrf-cgi's optional counters file (metrics_file): processes running at
once add up exactly, by verdict and reason, in one file of a fixed size;
csrf-cgi --metrics prints it as Prometheus text that the strict parser
accepts; a missing or foreign file is an error there and a fresh start for
a request; without metrics_file nothing is written."""

import os
import subprocess
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../nginx"))
import cgitest as T  # noqa: E402
from promtext import parse  # noqa: E402

ORIGIN = "http://192.168.1.1"
FORM = "application/x-www-form-urlencoded"

KINDS = {
    ("allowed", "safe_method"): ("GET", "page.cgi", {}),
    ("rejected", "cross_site"): ("POST", "echo.cgi", {"HTTP_SEC_FETCH_SITE": "cross-site"}),
    ("rejected", "origin_mismatch"): ("POST", "echo.cgi", {"HTTP_ORIGIN": "http://evil.example"}),
    ("rejected", "secret_missing"): ("POST", "echo.cgi", {}),
}


class Counters(unittest.TestCase):
    def setUp(self):
        self.site = T.Site()
        self.file = self.site.path("counters")
        self.site.lines = ["metrics_file " + self.file]
        self.site.configure(ORIGIN)

    def tearDown(self):
        self.site.cleanup()

    def run_cgi(self, method, script, env):
        e = {"REQUEST_METHOD": method, "SCRIPT_NAME": "/cgi-bin/" + script, "HTTP_HOST": "192.168.1.1",
             "CSRF_CGI_CONFIG": self.site.conf, "CGI_TEST_DIR": self.site.dir}
        stdin = b""
        if method == "POST":
            stdin = b"a=1"
            e["CONTENT_TYPE"] = FORM
            e["CONTENT_LENGTH"] = "3"
        e.update(env)
        return T.run_direct(e, "./" + script, stdin)

    def metrics(self):
        p = subprocess.run([T.CGI, "--metrics", self.file], capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse(p.stdout)

    def test_concurrent_processes_add_up(self):
        per_kind = 25
        jobs = [k for k in KINDS for _ in range(per_kind)]
        errors = []

        def worker(mine):
            for kind in mine:
                rc, r, err = self.run_cgi(*KINDS[kind])
                want = 200 if kind[0] == "allowed" else 403
                if r.status != want:
                    errors.append((kind, r.status, err))

        threads = [threading.Thread(target=worker, args=(jobs[i::6],)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        fams = self.metrics()
        total = 0
        for (verdict, reason) in KINDS:
            self.assertEqual(fams["csrf_requests_total"].value(verdict=verdict, reason=reason), per_kind,
                             (verdict, reason))
        total = sum(fams["csrf_requests_total"].samples.values())
        self.assertEqual(total, per_kind * len(KINDS))
        # page.cgi: the meta tags and one POST form's field, each time
        self.assertEqual(fams["csrf_inject_pages_total"].value(), per_kind)
        self.assertEqual(fams["csrf_inject_insertions_total"].value(), 2 * per_kind)
        size = os.path.getsize(self.file)
        self.run_cgi(*KINDS[("allowed", "safe_method")])
        self.assertEqual(os.path.getsize(self.file), size, "the file does not grow with traffic")
        self.assertEqual(os.stat(self.file).st_mode & 0o777, 0o640)

    def test_print_errors(self):
        p = subprocess.run([T.CGI, "--metrics", self.file], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no request counted yet", p.stderr)
        with open(self.file, "wb") as f:
            f.write(b"not counters\n")
        p = subprocess.run([T.CGI, "--metrics", self.file], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("is not a counters file", p.stderr)
        self.assertEqual(p.stdout, "")
        p = subprocess.run([T.CGI, "--metrics"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)

    def test_foreign_file_restarts(self):
        with open(self.file, "wb") as f:
            f.write(b"x" * 5000)
        rc, r, err = self.run_cgi(*KINDS[("rejected", "cross_site")])
        self.assertEqual(r.status, 403)
        fams = self.metrics()
        self.assertEqual(fams["csrf_requests_total"].value(verdict="rejected", reason="cross_site"), 1)
        self.assertLess(os.path.getsize(self.file), 5000)

    def test_unwritable_file_keeps_the_answer(self):
        os.mkdir(self.file)  # a directory where the file should be
        rc, r, err = self.run_cgi(*KINDS[("allowed", "safe_method")])
        self.assertEqual(r.status, 200)
        self.assertIn("counters file", err)

    def test_none_without_metrics_file(self):
        self.site.lines = []
        self.site.configure(ORIGIN)
        before = sorted(os.listdir(self.site.dir))
        rc, r, err = self.run_cgi(*KINDS[("rejected", "cross_site")])
        self.assertEqual(r.status, 403)
        after = sorted(os.listdir(self.site.dir))
        self.assertEqual(before, after)

    def test_relative_path_is_a_config_error(self):
        self.site.lines = ["metrics_file counters"]
        self.site.configure(ORIGIN)
        rc, r, err = self.run_cgi(*KINDS[("allowed", "safe_method")])
        self.assertEqual(r.status, 500)
        self.assertIn("metrics_file takes an absolute path", err)


if __name__ == "__main__":
    unittest.main()
