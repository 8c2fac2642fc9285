# SPDX-License-Identifier: BSD-2-Clause
"""Tokens across byte orders and backends: a token and secret cookie
issued by a router build of csrf-cgi (run under qemu-user) verify on the
x86-64 builds, and theirs on it, with one key file, whichever build's
csrf-key wrote it; the hidden field's name (a SHA-256 of the secret) is
the same everywhere; a changed token or another user's is refused by each.

    test_interop.py ARCH DIST X86_CGI X86_KEY [X86_CGI...]

X86_CGI: the x86-64 csrf-cgi builds to compare with (the check build's,
on OpenSSL, and dist/router/x86_64-musl's, builtin); X86_KEY: an x86-64
csrf-key.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "cgi"))
import qemu_cgi  # noqa: E402
import cgitest as T  # noqa: E402

ARCH, DIST, X86_KEY = sys.argv[1], sys.argv[2], sys.argv[4]
X86_CGIS = [sys.argv[3]] + sys.argv[5:]
del sys.argv[1:]
WWW = os.path.join(HERE, "..", "cgi", "www", "cgi-bin")
ORIGIN = "http://192.168.1.1"


class Interop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="csrf-interop-")
        os.chmod(cls.dir, 0o755)
        cls.cgi, cls.key = qemu_cgi.wrappers(ARCH, DIST, cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def site(self, keygen):
        keys = os.path.join(self.dir, "keys-%d" % len(os.listdir(self.dir)))
        subprocess.run([keygen, "new", keys], check=True, capture_output=True)
        conf = keys + ".conf"
        with open(conf, "w") as f:
            f.write("origin %s\nkey_file %s\n" % (ORIGIN, keys))
        return conf

    def run_cgi(self, cgi, conf, method, script, user="admin", cookie=None, body=b""):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "REQUEST_METHOD": method,
               "SCRIPT_NAME": "/cgi-bin/" + script, "HTTP_HOST": "192.168.1.1", "CSRF_CGI_CONFIG": conf,
               "CGI_TEST_DIR": self.dir, "REMOTE_USER": user}
        if cookie:
            env["HTTP_COOKIE"] = cookie
        if body:
            env["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
            env["CONTENT_LENGTH"] = str(len(body))
        try:
            os.unlink(os.path.join(self.dir, "ran"))
        except FileNotFoundError:
            pass
        p = subprocess.run([cgi, "./" + script], input=body, env=env, capture_output=True, timeout=60, cwd=WWW)
        m = re.match(rb"Status: (\d{3})", p.stdout)
        r = T.Response(b"HTTP/1.1 " + (m.group(1) if m else b"200") + b" x\r\n" + p.stdout)
        r.ran = os.path.exists(os.path.join(self.dir, "ran"))
        r.err = p.stderr.decode("utf-8", "replace")
        return r

    def check_pair(self, issuer, verifier, conf):
        page = self.run_cgi(issuer, conf, "GET", "page.cgi")
        cookie, field, token = T.page_tokens(page)
        self.assertIsNotNone(token, page.err)
        self.assertEqual(len(token), 51)  # version 4, the default: unmasked
        # the field name from the secret: the same digest on the verifier
        again = self.run_cgi(verifier, conf, "GET", "page.cgi", cookie=cookie)
        self.assertEqual(again.all("set-cookie"), [], "the verifier did not accept the issuer's secret cookie")
        self.assertEqual(T.page_tokens(again)[1], field)
        body = ("a=1&%s=%s" % (field, token)).encode()
        r = self.run_cgi(verifier, conf, "POST", "echo.cgi", cookie=cookie, body=body)
        self.assertEqual(r.status, 200, r.err)
        self.assertTrue(r.ran, "the program did not run for the issuer's token")
        # and the verifier's own token back on the issuer
        _, _, token2 = T.page_tokens(again)
        r = self.run_cgi(issuer, conf, "POST", "echo.cgi", cookie=cookie,
                         body=("%s=%s" % (field, token2)).encode())
        self.assertEqual(r.status, 200, r.err)
        self.assertTrue(r.ran)
        # the tag's last characters changed (the very last one of a
        # 51-character token carries 4 bits and 2 zero bits: 'A' keeps it
        # well-formed)
        bad = token[:-6] + ("AAAAAA" if not token.endswith("AAAAAA") else "BBBBAA")
        r = self.run_cgi(verifier, conf, "POST", "echo.cgi", cookie=cookie, body=("%s=%s" % (field, bad)).encode())
        self.assertEqual(r.status, 403)
        self.assertIn("token_invalid", r.err)
        self.assertFalse(r.ran)
        r = self.run_cgi(verifier, conf, "POST", "echo.cgi", user="guest", cookie=cookie, body=body)
        self.assertEqual(r.status, 403)
        self.assertIn("token_session", r.err)
        self.assertFalse(r.ran)

    def test_tokens_cross_both_ways_with_either_key_file(self):
        for keygen in (self.key, X86_KEY):
            conf = self.site(keygen)
            for x86 in X86_CGIS:
                with self.subTest(key_file_by=keygen, x86=x86):
                    self.check_pair(self.cgi, x86, conf)
                    self.check_pair(x86, self.cgi, conf)


if __name__ == "__main__":
    unittest.main(verbosity=2)
