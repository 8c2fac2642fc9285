# SPDX-License-Identifier: BSD-2-Clause
"""apache.config: mod_csrf_protect's directives at `apache2 -t`: every
wrong value is a configuration error that names the directive (never a
request-time surprise), the right ones pass in server, virtual host,
<Directory> and <Location> contexts, and a section's settings merge over
its parent's (checked on a running server)."""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402

T = A.T
GOOD = """
CSRF On
CSRFMode origin_or_token
CSRFOrigin http://127.0.0.1:{port}
CSRFTrustedOrigin https://pay.example https://sso.example:8443
CSRFSessionCookie PHPSESSID sid
CSRFInject On
CSRFAction deny
CSRFBodyMax 64k
CSRFUnsafeGet Off
CSRFStatus 403
CSRFMaxAge 12h
CSRFIssueVersion 3
CSRFFormActionCSP Off
CSRFReferrerSameOrigin On
CSRFRetryToken On
CSRFExempt POST /hook
CSRFExempt /webhook
<VirtualHost 127.0.0.1:{port}>
    CSRFMode both
    <Directory {prefix}/htdocs/admin>
        CSRFUnsafeGet On
    </Directory>
    <Location /report>
        CSRFAction log
    </Location>
    <Location /off>
        CSRF Off
    </Location>
</VirtualHost>
"""

BAD = [
    ("CSRF maybe", "CSRF"),
    ("CSRFMode strict", "CSRFMode must be both, token, origin or origin_or_token"),
    ("CSRFOrigin example.com", "CSRFOrigin"),
    ("CSRFOrigin https://a.example/path", "CSRFOrigin"),
    ("CSRFTrustedOrigin null", "CSRFTrustedOrigin"),
    ("CSRFTrustedOrigin https://a.example https://u@b.example", "CSRFTrustedOrigin"),
    ("CSRFSessionCookie 'bad name'", "CSRFSessionCookie"),
    ("CSRFSessionCookie a a", "is named twice"),
    ("CSRFSessionCookie a b c d e", "at most 4 names"),
    ("CSRFKeyFile /nonexistent/keys", "CSRFKeyFile"),
    ("CSRFAction block", "CSRFAction must be deny or log"),
    ("CSRFBodyMax lots", "CSRFBodyMax"),
    ("CSRFBodyMax 0", "CSRFBodyMax"),
    ("CSRFBodyMax 10x", "CSRFBodyMax"),
    ("CSRFStatus 200", "CSRFStatus: must be between 400 and 599"),
    ("CSRFStatus 403x", "CSRFStatus"),
    ("CSRFMaxAge -1", "CSRFMaxAge"),
    ("CSRFMaxAge 1w", "CSRFMaxAge"),
    ("CSRFIssueVersion 1", "CSRFIssueVersion: must be 2, 3 or 4"),
    ("CSRFIssueVersion 5", "CSRFIssueVersion: must be 2, 3 or 4"),
    ("CSRFExempt POST relative", "CSRFExempt"),
    ("CSRFExempt /a?b", "CSRFExempt"),
    ("CSRFInject sometimes", "CSRFInject"),
]


class Config(unittest.TestCase):
    def test_good(self):
        ap = A.Apache(GOOD)
        try:
            rc, out = ap.config_test()
            self.assertEqual(rc, 0, out)
            self.assertIn("Syntax OK", out)
        finally:
            ap.cleanup()

    def test_bad_values_fail_configtest(self):
        for line, words in BAD:
            with self.subTest(line=line):
                ap = A.Apache("<Location /x>\n%s\n</Location>\n" % line)
                try:
                    rc, out = ap.config_test()
                    self.assertNotEqual(rc, 0, "%s passed:\n%s" % (line, out))
                    self.assertIn(words, out)
                finally:
                    ap.cleanup()

    def test_issue_versions(self):
        """4 by default (a token of 51 characters, unmasked), 3 and 2 when
        set (102, masked); a token of any verifies under any setting."""
        ap = A.Apache("CSRF On\nCSRFOrigin http://127.0.0.1:{port}\n"
                      "<Location /v3>\n    CSRFIssueVersion 3\n</Location>\n"
                      "<Location /v2>\n    CSRFIssueVersion 2\n</Location>\n"
                      "<Location /v4>\n    CSRFIssueVersion 4\n</Location>\n")
        for d in ("", "v2/", "v3/", "v4/"):
            ap.write("htdocs/%sindex.html" % d, "<html><head></head><body><form method=post action=/x></form></body></html>")
        with ap:
            cookie, _, _ = T.session_tokens(ap.port, "/index.html")
            got = {}
            for path in ("/", "/v2/", "/v3/", "/v4/"):
                _, _, token = T.session_tokens(ap.port, path + "index.html", cookie=cookie)
                got[path] = len(token or "")
                for to in ("/", "/v2/", "/v3/"):
                    r = T.request(ap.port, "POST", to + "index.html",
                                  [("Origin", "http://127.0.0.1:%d" % ap.port), ("Cookie", cookie),
                                   ("X-CSRF-Token", token)], b"x")
                    self.assertNotEqual(r.status, 403, (path, to))
            self.assertEqual(got, {"/": 51, "/v2/": 102, "/v3/": 102, "/v4/": 51})

    def test_key_file(self):
        tool = os.environ.get("CSRF_KEY_TOOL")
        if not tool:
            self.skipTest("CSRF_KEY_TOOL not set")
        ap = A.Apache("CSRF On\nCSRFKeyFile {prefix}/keys\n")
        try:
            rc, out = ap.config_test()
            self.assertNotEqual(rc, 0)
            subprocess.run([tool, "new", ap.path("keys")], check=True, capture_output=True)
            rc, out = ap.config_test()
            self.assertEqual(rc, 0, out)
        finally:
            ap.cleanup()

    def test_key_file_only_root_reads(self):
        """A key file only root may read (csrf-key new: 0600) serves the
        server's settings and a <Directory> and a <Location> that both set
        directives for one request: their contexts are made in the parent,
        before the children drop root."""
        tool = os.environ.get("CSRF_KEY_TOOL")
        if not tool or os.geteuid() != 0:
            self.skipTest("needs root and CSRF_KEY_TOOL")
        ap = A.Apache("CSRF On\nCSRFKeyFile {prefix}/keys\n"
                      "<Directory {prefix}/htdocs/a>\n    CSRFMode both\n</Directory>\n"
                      "<Location /a/b>\n    CSRFAction log\n</Location>\n")
        subprocess.run([tool, "new", ap.path("keys")], check=True, capture_output=True)
        self.assertEqual(os.stat(ap.path("keys")).st_mode & 0o777, 0o600)
        ap.write("htdocs/a/b/x.html", "<form method=post action=/x></form>")
        with ap:
            for path in ("/a/b/x.html", "/a/x.html", "/x.html"):
                ap.write("htdocs" + path, "<form method=post action=/x></form>")
                r = T.request(ap.port, "GET", path)
                self.assertEqual((r.status, T.count_injected(r.body)), (200, (1, 0)), path)

    def test_redirect_to_unbuildable_settings(self):
        """A request redirected (ErrorDocument) to settings whose context a
        child cannot build (three sections set directives for it: made on
        first use, and the key file only root reads) is answered 500, as
        the same settings are when they judge first; the first verdict
        does not cover them."""
        tool = os.environ.get("CSRF_KEY_TOOL")
        if not tool or os.geteuid() != 0:
            self.skipTest("needs root and CSRF_KEY_TOOL")
        ap = A.Apache("CSRF On\nCSRFKeyFile {prefix}/keys\n"
                      "<Directory {prefix}/htdocs/a>\n    CSRFMode both\n</Directory>\n"
                      "<Location /a/b>\n    CSRFAction log\n</Location>\n"
                      "<Files \"*.html\">\n    CSRFMaxAge 3600\n</Files>\n"
                      "<Location /ok/>\n    ErrorDocument 404 /a/b/x.html\n</Location>\n")
        subprocess.run([tool, "new", ap.path("keys")], check=True, capture_output=True)
        ap.write("htdocs/a/b/x.html", "<form method=post action=/x></form>")
        ap.write("htdocs/ok/y.txt", "plain")
        with ap:
            r = T.request(ap.port, "GET", "/ok/y.txt")   # the server's settings: built in the parent
            self.assertEqual(r.status, 200)
            r = T.request(ap.port, "GET", "/a/b/x.html")  # three sections: made in a child, cannot be
            self.assertEqual(r.status, 500)
            r = T.request(ap.port, "GET", "/ok/missing")  # judged by the server's, then redirected there
            self.assertEqual(r.status, 500, r.body[:200])
            self.assertNotIn(b"<form method=post action=/x>", r.body)

    def test_sections_lists(self):
        """Sections whose settings differ only in a list (trusted origins,
        exemptions, in content or in order) each get their own context,
        and a section equal to another shares its decisions: a request
        judged by one section's lists never by another's, however many
        requests alternate between them."""
        ap = A.Apache("CSRF On\nCSRFOrigin http://127.0.0.1:{port}\n"
                      "<Location /t1>\n    CSRFTrustedOrigin https://one.example\n</Location>\n"
                      "<Location /t2>\n    CSRFTrustedOrigin https://two.example\n</Location>\n"
                      "<Location /t3>\n    CSRFTrustedOrigin https://two.example\n"
                      "    CSRFTrustedOrigin https://one.example\n</Location>\n"
                      "<Location /t4>\n    CSRFTrustedOrigin https://one.example\n</Location>\n"
                      "<Location /e1>\n    CSRFExempt POST /e1/hook\n</Location>\n"
                      "<Location /e2>\n    CSRFExempt PUT /e2/hook\n</Location>\n")
        for d in ("t1", "t2", "t3", "t4", "e1", "e2"):
            ap.write("htdocs/%s/index.html" % d, "<p>x</p>")
        ap.write("htdocs/e1/hook", "x")
        ap.write("htdocs/e2/hook", "x")
        with ap:
            def post(path, origin):
                return T.request(ap.port, "POST", path, [("Origin", origin), ("Sec-Fetch-Site", "cross-site"),
                                                          ("Content-Type", "application/x-www-form-urlencoded")],
                                 b"a=1").status
            want = {("/t1/index.html", "https://one.example"): False, ("/t1/index.html", "https://two.example"): True,
                    ("/t2/index.html", "https://one.example"): True, ("/t2/index.html", "https://two.example"): False,
                    ("/t3/index.html", "https://one.example"): False, ("/t3/index.html", "https://two.example"): False,
                    ("/t4/index.html", "https://one.example"): False, ("/t4/index.html", "https://two.example"): True,
                    ("/e1/hook", "https://evil.example"): False, ("/e2/hook", "https://evil.example"): True}
            for _ in range(3):
                for (path, origin), rejected in want.items():
                    self.assertEqual(post(path, origin) == 403, rejected, (path, origin))
            self.assertFalse(ap.crashed())

    def test_merge(self):
        """A <Location> inherits what it does not set and overrides what it
        does; CSRF Off turns the module off beneath."""
        ap = A.Apache("CSRF On\nCSRFOrigin http://127.0.0.1:{port}\nCSRFAction deny\n"
                      "<Location /report>\n    CSRFAction log\n</Location>\n"
                      "<Location /off>\n    CSRF Off\n</Location>\n"
                      "<Location /unsafe>\n    CSRFUnsafeGet On\n</Location>\n")
        ap.write("htdocs/index.html", "<form method=post action=/x></form>")
        for d in ("report", "off", "unsafe"):
            ap.write("htdocs/%s/index.html" % d, "<form method=post action=/x></form>")
        with ap:
            cross = [("Sec-Fetch-Site", "cross-site"), ("Content-Type", "application/x-www-form-urlencoded")]
            self.assertEqual(T.request(ap.port, "POST", "/index.html", cross, b"a=1").status, 403)
            # report-only lets it through to the static file (405: POST to a file)
            self.assertNotEqual(T.request(ap.port, "POST", "/report/index.html", cross, b"a=1").status, 403)
            self.assertNotEqual(T.request(ap.port, "POST", "/off/index.html", cross, b"a=1").status, 403)
            self.assertEqual(T.request(ap.port, "GET", "/unsafe/index.html", cross[:1]).status, 403)
            self.assertEqual(T.request(ap.port, "GET", "/index.html", cross[:1]).status, 200)
            r = T.request(ap.port, "GET", "/index.html")
            self.assertEqual(T.count_injected(r.body), (1, 0))
            r = T.request(ap.port, "GET", "/off/index.html")
            self.assertEqual(T.count_injected(r.body), (0, 0))
            log = ap.error_log()
            self.assertIn('would reject POST "/report/index.html": cross_site (CSRFAction log), client: 127.0.0.1', log)
            self.assertIn('rejected POST "/index.html": cross_site, client: 127.0.0.1', log)
            self.assertFalse(ap.crashed())


if __name__ == "__main__":
    unittest.main()
