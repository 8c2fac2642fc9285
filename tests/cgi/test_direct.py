# SPDX-License-Identifier: BSD-2-Clause
"""csrf-cgi run as a server runs it (a CGI environment, the request body
on standard input): the configuration file and its errors, where the
configuration and the program come from, the request translated from the
environment (HTTPS, REMOTE_USER, the session cookie of a login), the modes
and switches, bad input, and what is kept of the program (exit status,
standard error)."""

import base64
import os
import select
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cgitest as T  # noqa: E402

ORIGIN = "http://192.168.1.1"
FORM = "application/x-www-form-urlencoded"


class Direct(unittest.TestCase):
    LINES = ()

    def setUp(self):
        self.site = T.Site(self.LINES)
        self.site.configure(ORIGIN)

    def tearDown(self):
        self.site.cleanup()

    def conf(self, text):
        with open(self.site.conf, "w") as f:
            f.write(text.replace("KEYS", self.site.keys))
        return self.site.conf

    def run_cgi(self, method="GET", script="echo.cgi", env=None, stdin=b"", **kw):
        e = {"REQUEST_METHOD": method, "SCRIPT_NAME": "/cgi-bin/" + script, "HTTP_HOST": "192.168.1.1",
             "CSRF_CGI_CONFIG": self.site.conf, "CGI_TEST_DIR": self.site.dir}
        if stdin:
            e["CONTENT_LENGTH"] = str(len(stdin))
        e.update(env or {})
        e = {k: v for k, v in e.items() if v is not None}
        self.site.clear()
        return T.run_direct(e, "./" + script, stdin, **kw)

    def tokens(self, env=None):
        rc, r, err = self.run_cgi(script="page.cgi", env=env)
        self.assertEqual(rc, 0, err)
        return T.page_tokens(r)


class ConfigTest(Direct):
    BAD = [
        ("frobnicate on\n", ":4: unknown directive \"frobnicate\""),
        ("mode\n", ":4: mode takes 1 argument"),
        ("mode fast\n", ":4: mode takes one of both token origin origin_or_token"),
        ("action allow\n", ":4: action takes one of deny log"),
        ("inject maybe\n", ":4: inject takes one of on off"),
        ("form_action_csp maybe\n", ":4: form_action_csp takes one of on off"),
        ("referrer_same_origin yes\n", ":4: referrer_same_origin takes one of on off"),
        ("referrer_same_origin\n", ":4: referrer_same_origin takes 1 argument"),
        ("exempt POST /a /b\n", ":4: exempt takes 1 or 2 arguments"),
        ("origin a b c d e f\n", ":4: too many arguments"),
        ("origin a b\n", ":4: origin takes 1 argument"),
        ("session_cookie a b c d e\n", ":4: session_cookie takes 1 to 4 arguments"),
        ("session_cookie sid sid\n", ":4: session cookie \"sid\" is named twice"),
        ("session_cookie sid a;b\n", ":4: "),
        ("trusted_origin http://b\u00fccher.example\n", ":4: trusted origin \"http://b\u00fccher.example\" has a host that is not ASCII"),
        ("exempt\n", ":4: exempt takes 1 or 2 arguments"),
        ("exempt POST a\n", ":4: "),
        ("trusted_origin partner.example\n", ":4: "),
        ("trusted_origin http://partner.example/path\n", ":4: "),
        ("unsafe_get reset.cgi\n", ":4: unsafe_get takes a path that starts with '/'"),
        ("unsafe_get /a?b\n", ":4: unsafe_get takes a path that starts with '/'"),
        ("session_cookie a;b\n", ":4: "),
        ("body_max 0\n", ":4: body_max takes a size"),
        ("body_max 10x\n", ":4: body_max takes a size"),
        ("body_max 99999999999999999999999\n", ":4: body_max takes a size"),
        ("max_age -1\n", ":4: max_age takes seconds"),
        ("max_age 4294967296\n", ":4: max_age takes seconds"),
        ("max_age 0100\n", ":4: max_age takes seconds"),
        ("issue_version 1\n", ":4: issue_version takes 2, 3 or 4"),
        ("issue_version 5\n", ":4: issue_version takes 2, 3 or 4"),
        ("issue_version 02\n", ":4: issue_version takes 2, 3 or 4"),
        ("issue_version 3x\n", ":4: issue_version takes 2, 3 or 4"),
        ("issue_version /\n", ":4: issue_version takes 2, 3 or 4"),
        ("issue_version 3\nissue_version 2\n", ":5: issue_version is duplicate"),
        ("origin http://other.example\n", ":4: origin is duplicate"),
        ("mode both\nmode token\n", ":5: mode is duplicate"),
        ("x" * 2000 + "\n", ":4: line longer than 1024 bytes"),
    ]

    def base(self):
        return "# router\norigin %s\nkey_file KEYS\n" % ORIGIN

    def assertFailsClosed(self, rc, r, err, where):
        self.assertEqual(rc, 1)
        self.assertEqual(r.status, 500)
        self.assertIn(where, err)
        self.assertEqual(self.site.ran(), [], "the program ran with a broken configuration")

    def test_bad_lines(self):
        for text, msg in self.BAD:
            with self.subTest(text[:40]):
                path = self.conf(self.base() + text)
                rc, r, err = self.run_cgi("POST", stdin=b"a=1", env={"CONTENT_TYPE": FORM, "HTTP_ORIGIN": ORIGIN})
                self.assertFailsClosed(rc, r, err, path + msg)
                self.assertEqual(err.count("\n"), 1, err)

    def test_library_messages_are_shown(self):
        path = self.conf(self.base() + "trusted_origin partner.example\n")
        rc, r, err = self.run_cgi()
        self.assertFailsClosed(rc, r, err, path + ":4: ")
        self.assertIn("partner.example", err)
        self.assertIn("scheme", err)

    def test_no_key_file(self):
        path = self.conf("origin %s\n" % ORIGIN)
        rc, r, err = self.run_cgi()
        self.assertFailsClosed(rc, r, err, path + ": no key_file")

    def test_key_file_that_cannot_be_read(self):
        path = self.conf("key_file %s/none\n" % self.site.dir)
        rc, r, err = self.run_cgi()
        self.assertFailsClosed(rc, r, err, path + ":1: ")

    def test_key_file_that_is_garbage(self):
        with open(self.site.keys, "w") as f:
            f.write("key 1 2 zz sign\n")
        path = self.conf(self.base())
        rc, r, err = self.run_cgi()
        self.assertFailsClosed(rc, r, err, path + ":3: ")

    def test_missing_file(self):
        rc, r, err = self.run_cgi(env={"CSRF_CGI_CONFIG": self.site.dir + "/nope.conf"})
        self.assertFailsClosed(rc, r, err, self.site.dir + "/nope.conf: cannot read the configuration")

    def test_default_file(self):
        if os.path.exists("/etc/csrf-cgi.conf"):
            self.skipTest("/etc/csrf-cgi.conf exists on this machine")
        rc, r, err = self.run_cgi(env={"CSRF_CGI_CONFIG": None})
        self.assertFailsClosed(rc, r, err, "/etc/csrf-cgi.conf: cannot read the configuration")

    def test_config_option_wins(self):
        good = self.site.path("good.conf")
        with open(good, "w") as f:
            f.write(self.base().replace("KEYS", self.site.keys))
        rc, r, err = self.run_cgi(env={"CSRF_CGI_CONFIG": self.site.dir + "/nope.conf"}, config=good)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.site.ran(), ["GET /cgi-bin/echo.cgi"])

    def test_every_truncated_configuration(self):
        text = ("origin %s\nkey_file %s\nexempt POST /cgi-bin/login.cgi\ntrusted_origin http://10.0.0.2:8080\n"
                "mode both\nbody_max 64k\nmax_age 1d\n" % (ORIGIN, self.site.keys))
        key_end = text.index("\n", text.index("key_file")) + 1
        for n in range(len(text) + 1):
            with self.subTest(prefix=n):
                with open(self.site.conf, "w") as f:
                    f.write(text[:n])
                rc, r, err = self.run_cgi()
                if rc == 0:
                    self.assertGreaterEqual(n, key_end - 1, "ran without a key file")
                    self.assertEqual(self.site.ran(), ["GET /cgi-bin/echo.cgi"])
                else:
                    self.assertFailsClosed(rc, r, err, self.site.conf)
                    self.assertEqual(err.count("\n"), 1, err)

    def test_comments_blanks_tabs_and_crlf(self):
        self.conf("# a router\r\n\r\n\torigin\t%s   # the LAN address\r\nkey_file KEYS\r\n   # mode token\r\n"
                  "unsafe_get /cgi-bin/reset.cgi\r\nexempt /cgi-bin/echo.cgi\nexempt POST /cgi-bin/login.cgi\n"
                  "trusted_origin https://partner.example:8443\ntrusted_origin http://10.0.0.2\n"
                  "session_cookie sid\nmax_age 12h\nbody_max 64k\naction deny\ninject on\nmode both\n" % ORIGIN)
        rc, r, err = self.run_cgi("POST", stdin=b"a=1", env={"CONTENT_TYPE": FORM, "HTTP_ORIGIN": "http://evil"})
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.site.ran(), ["POST /cgi-bin/echo.cgi"], "exempt did not apply")
        rc, r, err = self.run_cgi("GET", "reset.cgi")
        self.assertEqual(r.status, 403, "unsafe_get did not apply")


class RequestTest(Direct):
    LINES = ("unsafe_get /cgi-bin/reset.cgi",)

    def test_program_from_the_argument_else_script_filename(self):
        rc, r, err = self.run_cgi(args=[])
        self.assertEqual(r.status, 500)
        self.assertIn("not run as a CGI interpreter", err)
        script = os.path.join(T.WWW, "cgi-bin", "echo.cgi")
        rc, r, err = self.run_cgi(env={"SCRIPT_FILENAME": script}, args=[])
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.site.ran(), ["GET /cgi-bin/echo.cgi"])

    def test_not_a_cgi_request(self):
        rc, r, err = self.run_cgi(env={"REQUEST_METHOD": None})
        self.assertEqual((rc, r.status), (2, 500))
        self.assertIn("usage:", err)
        self.assertEqual(self.site.ran(), [])

    def test_program_that_cannot_run(self):
        rc, r, err = self.run_cgi(args=["./no-such.cgi"])
        self.assertEqual((rc, r.status), (1, 500))
        self.assertIn("cannot run the program for GET /cgi-bin/echo.cgi: ./no-such.cgi: No such file", err)

    def test_exit_status_and_stderr_kept(self):
        rc, r, err = self.run_cgi(script="exit3.cgi")
        self.assertEqual(rc, 3)
        self.assertEqual(r.body, b"bye\n")
        self.assertIn("exit3.cgi: a line for the error log", err)

    def test_killed_program(self):
        rc, r, err = self.run_cgi(script="dies.cgi")
        self.assertEqual((rc, r.status), (128 + 9, 502))
        self.assertIn("killed by signal 9", err)

    def test_https_names_the_secret_cookie_host_and_secure(self):
        self.site.lines = ()
        self.site.configure("https://router.example")
        rc, r, err = self.run_cgi(script="page.cgi", env={"HTTPS": "on", "HTTP_HOST": "router.example"})
        cookie = [c for c in r.all("set-cookie") if "csrf_secret" in c]
        self.assertEqual(len(cookie), 1)
        self.assertTrue(cookie[0].startswith("__Host-csrf_secret="), "no __Host- prefix over HTTPS")
        self.assertIn("Secure", cookie[0])

    def test_issue_version_held_at_two_through_an_upgrade(self):
        """A fleet's upgrade: issue_version 2 (or 3) issues what the
        previous releases read (tokens and cookies of version 2; tokens of
        version 3, masked, and cookies of 3); at the default, version 4
        (51 characters, unmasked, cookies of 3), and what was issued at 2
        and 3 still passes."""
        def version(value):
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            self.assertIn(len(raw), (77, 38, 76))
            # a cookie, a version 4 token (unmasked), or pad || raw ^ pad
            return raw[0] if len(raw) in (77, 38) else raw[0] ^ raw[len(raw) // 2]

        def post(cookie, field, token):
            body = ("%s=%s" % (field, token)).encode()
            rc, r, err = self.run_cgi("POST", stdin=body, env={"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie})
            return r.status, err

        issued = {}
        for lines, want in ((["issue_version 2"], 2), (["issue_version 3"], 3), ([], 4), (["issue_version 4"], 4)):
            self.site.lines = lines
            self.site.configure(ORIGIN)
            cookie, field, token = self.tokens()
            self.assertEqual((version(cookie.split("=", 1)[1]), version(token)), (min(want, 3), want))
            self.assertEqual(len(token), 51 if want == 4 else 102)
            issued[want] = (cookie, field, token)
            for v in issued:
                status, err = post(*issued[v])
                self.assertEqual(status, 200, "version %d after issuing %d: %s" % (v, want, err))

    def test_remote_user_binds_tokens(self):
        cookie, field, token = self.tokens({"REMOTE_USER": "admin"})
        body = ("%s=%s" % (field, token)).encode()
        env = {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie}
        rc, r, err = self.run_cgi("POST", stdin=body, env=dict(env, REMOTE_USER="admin"))
        self.assertEqual(r.status, 200, err)
        for user in ("guest", None, ""):
            rc, r, err = self.run_cgi("POST", stdin=body, env=dict(env, REMOTE_USER=user))
            self.assertEqual(r.status, 403)
            self.assertIn("token_session", err)

    def test_session_cookie_of_a_login_binds_its_page(self):
        self.site.lines = ["session_cookie sid"]
        self.site.configure(ORIGIN)
        rc, r, err = self.run_cgi(script="login.cgi", env={"NEW_SID": "fresh1", "HTTP_COOKIE": "sid=old"})
        self.assertIn("sid=fresh1; Path=/; HttpOnly", r.all("set-cookie"))
        cookie, field, token = T.page_tokens(r)
        body = ("%s=%s" % (field, token)).encode()
        for sid, status in (("fresh1", 200), ("old", 403)):
            rc, r, err = self.run_cgi("POST", stdin=body, env={"CONTENT_TYPE": FORM,
                                                               "HTTP_COOKIE": "%s; sid=%s" % (cookie, sid),
                                                               "REMOTE_USER": "admin"})
            self.assertEqual(r.status, status, err)

    def test_two_session_cookie_names(self):
        # a program that names its session cookie per scheme: either binds,
        # and a cookie planted under the other name never takes over
        self.site.lines = ["session_cookie sid sid_https"]
        self.site.configure(ORIGIN)

        def post(cookie, field, token, sessions):
            body = ("%s=%s" % (field, token)).encode()
            rc, r, err = self.run_cgi("POST", stdin=body, env={"CONTENT_TYPE": FORM, "REMOTE_USER": "admin",
                                                               "HTTP_COOKIE": "; ".join([cookie] + sessions)})
            return r.status, err

        rc, r, err = self.run_cgi(script="page.cgi", env={"HTTP_COOKIE": "sid_https=victim"})
        cookie, field, token = T.page_tokens(r)
        self.assertEqual(post(cookie, field, token, ["sid_https=victim"])[0], 200)
        status, err = post(cookie, field, token, ["sid_https=other"])
        self.assertEqual(status, 403)
        self.assertIn("token_session", err)
        status, err = post(cookie, field, token, ["sid=planted", "sid_https=victim"])
        self.assertEqual(status, 403)
        self.assertIn("token_session", err)
        # the login page binds the cookie it sets
        rc, r, err = self.run_cgi(script="login.cgi", env={"NEW_SID": "fresh1", "HTTP_COOKIE": "sid_https=old"})
        cookie, field, token = T.page_tokens(r)
        self.assertEqual(post(cookie, field, token, ["sid=fresh1"])[0], 200)
        self.assertEqual(post(cookie, field, token, ["sid=fresh1", "sid_https=old"])[0], 403)

    def test_headers_back_from_the_environment(self):
        cookie, field, token = self.tokens()
        # X-CSRF-Token comes as HTTP_X_CSRF_TOKEN; lighttpd adds
        # HTTP_CONTENT_LENGTH beside CONTENT_LENGTH, which is no second one.
        rc, r, err = self.run_cgi("POST", stdin=b"{}", env={"CONTENT_TYPE": "application/json",
                                                             "HTTP_COOKIE": cookie, "HTTP_X_CSRF_TOKEN": token,
                                                             "HTTP_CONTENT_LENGTH": "2",
                                                             "HTTP_CONTENT_TYPE": "application/json"})
        self.assertEqual(r.status, 200, err)
        self.assertEqual(self.site.body(), b"{}")

    def test_bad_input(self):
        cookie, field, token = self.tokens()
        tok = ("a=1&%s=%s" % (field, token)).encode()
        rows = [
            ("body shorter than CONTENT_LENGTH", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie,
                                                  "CONTENT_LENGTH": str(len(tok) + 10)}, tok, 400,
             "body_malformed"),
            ("CONTENT_LENGTH not a number", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie, "CONTENT_LENGTH": "12a"},
             tok, 403, "body_malformed"),
            ("CONTENT_LENGTH over body_max", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie,
                                              "CONTENT_LENGTH": "99999999999"}, tok, 413, "body_too_large"),
            ("body over body_max", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie}, tok + b"&x=" + b"y" * (1 << 20), 413,
             "body_too_large"),
            ("oversized cookie", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie + "; big=" + "c" * 20000}, tok, 403,
             "header_too_large"),
            ("secret cookie twice", {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie + "; " + cookie}, tok, 403,
             "cookie_ambiguous"),
            ("malformed Origin", {"CONTENT_TYPE": FORM, "HTTP_ORIGIN": "http://a b"}, b"a=1", 403,
             "origin_malformed"),
            ("malformed Sec-Fetch-Site", {"CONTENT_TYPE": FORM, "HTTP_SEC_FETCH_SITE": "maybe"}, b"a=1", 403,
             "fetch_site_malformed"),
            ("override to a non-method", {"CONTENT_TYPE": FORM, "HTTP_ORIGIN": ORIGIN,
                                          "HTTP_X_HTTP_METHOD_OVERRIDE": "DE LETE"}, b"a=1", 403, "method_override"),
            ("multipart without boundary", {"CONTENT_TYPE": "multipart/form-data", "HTTP_COOKIE": cookie}, tok, 403,
             "body_malformed"),
        ]
        for name, env, body, status, reason in rows:
            with self.subTest(name):
                rc, r, err = self.run_cgi("POST", stdin=body, env=env)
                self.assertEqual((rc, r.status), (0, status), err)
                self.assertIn("rejected POST /cgi-bin/echo.cgi: " + reason, err)
                self.assertIn('<code id="reason">%s</code>' % reason, r.text())
                self.assertEqual(r.all("cache-control"), ["no-store"])
                self.assertEqual(self.site.ran(), [])
                self.assertNotIn(token, err)
                self.assertNotIn(cookie.split("=", 1)[1], err)

    def test_every_truncated_answer_of_the_program(self):
        answer = (b"Status: 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nSet-Cookie: s=1; Path=/\r\n"
                  b"Content-Length: 40\r\n\r\n<form method=post></form><p>end</p>\n")
        head = answer.index(b"\r\n\r\n") + 4
        for n in range(len(answer) + 1):
            with self.subTest(prefix=n):
                with open(self.site.path("answer"), "wb") as f:
                    f.write(answer[:n])
                rc, r, err = self.run_cgi(script="replay.cgi")
                if n < head:
                    self.assertEqual(r.status, 502, err)
                    self.assertIn("bad answer of the program", err)
                    continue
                self.assertEqual((rc, r.status), (0, 200), err)
                self.assertEqual(r.all("set-cookie")[0], "s=1; Path=/")
                self.assertEqual(T.strip_injected(r.text()), answer[head:n].decode())

    def test_memory_does_not_grow_with_the_page(self):
        def peak(mb):
            # ru_maxrss of a fresh process's children: csrf-cgi's peak
            # (the program's shell and yes stay smaller).
            code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
                    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
            env = dict(os.environ, REQUEST_METHOD="GET", SCRIPT_NAME="/cgi-bin/big.cgi", HTTP_HOST="192.168.1.1",
                       CSRF_CGI_CONFIG=self.site.conf, BIG_PAGE_MB=str(mb))
            out = subprocess.run([sys.executable, "-c", code, T.CGI, "./big.cgi"], env=env, capture_output=True,
                                 cwd=os.path.join(T.WWW, "cgi-bin"), check=True)
            return int(out.stdout)
        small, large = peak(1), peak(64)
        self.assertLess(large - small, 4096, "peak KiB with a 1 MiB page %d, with 64 MiB %d" % (small, large))

    def wait_page(self, content_type=None):
        e = dict(os.environ, REQUEST_METHOD="GET", SCRIPT_NAME="/cgi-bin/wait.cgi", HTTP_HOST="192.168.1.1",
                 CSRF_CGI_CONFIG=self.site.conf, CGI_TEST_DIR=self.site.dir)
        if content_type:
            e["WAIT_CONTENT_TYPE"] = content_type
        return subprocess.Popen([T.CGI, "./wait.cgi"], env=e, stdout=subprocess.PIPE,
                                cwd=os.path.join(T.WWW, "cgi-bin"))

    def test_the_page_streams_out_as_it_is_written(self):
        p = self.wait_page()
        got = b""
        while b"</form>" not in got:
            c = p.stdout.read1(4096)
            self.assertTrue(c, "the output ended before the form")
            got += c
        self.assertIn(b'<form method=post><input type="hidden"', got,
                      "the form came out with its token")
        self.assertNotIn(b"rest", got)
        open(self.site.path("go"), "w").close()
        rest = p.stdout.read()
        p.wait(10)
        self.assertIn(b"<p>rest</p>", rest)

    def test_a_page_without_a_charset_waits_for_its_first_kilobyte_or_its_end(self):
        """As a browser's prescan looks for <meta charset> in the first
        1024 bytes, csrf-cgi holds the page (and its headers) back until
        it has them or the page ends; then it goes out with its token."""
        p = self.wait_page("text/html")
        ready, _, _ = select.select([p.stdout], [], [], 1.0)
        self.assertEqual(ready, [], "a page of undecided charset went out before its charset was known")
        open(self.site.path("go"), "w").close()
        out = p.stdout.read()
        p.wait(10)
        self.assertIn(b'<form method=post><input type="hidden"', out)
        self.assertIn(b"<p>rest</p>", out)

    def test_cache_control_of_an_injected_page(self):
        """The library's rule (csrf_response_cache): Cache-Control stays
        only when it keeps the page out of shared caches, and the targeted
        cache fields CDNs obey over it go."""
        targeted = (b"CDN-Cache-Control: max-age=600\r\nSurrogate-Control: max-age=600\r\n"
                    b"Cloudflare-CDN-Cache-Control: max-age=600\r\nEdge-Control: cache-maxage=600s\r\n")
        expires = b"Expires: Thu, 01 Jan 2099 00:00:00 GMT\r\n"
        for given, want in ((b"Cache-Control: no-store\r\n", ["no-store"]),
                            (b"Cache-Control: Private, max-age=60\r\n", ["Private, max-age=60"]),
                            (b"Cache-Control: public, max-age=600\r\n", ["private"]), (b"", ["private"]),
                            (b'Cache-Control: public, max-age=600, private="Set-Cookie"\r\n', ["private"]),
                            (b'Cache-Control: private="a, b", s-maxage=600\r\n', ["private"]),
                            (b"Cache-Control: no-store=1\r\n", ["private"]),
                            (b'Cache-Control: private, x="open\r\n', ["private"]),
                            # two lines: a cache that reads only the first would see "public"
                            (b"Cache-Control: public\r\nCache-Control: private\r\n", ["private"]),
                            (b"Cache-Control: private\r\nCache-Control: no-cache\r\n", ["private"]),
                            (b"Cache-Control: private\r\n" + targeted, ["private"]), (targeted, ["private"]),
                            # Expires goes with a replaced Cache-Control, stays beside a private one
                            (b"Cache-Control: public, max-age=600\r\n" + expires, ["private"]),
                            (expires, ["private"]),
                            (b"Cache-Control: private, max-age=60\r\n" + expires, ["private, max-age=60"])):
            with self.subTest(given):
                with open(self.site.path("answer"), "wb") as f:
                    f.write(b"Content-Type: text/html\r\nETag: \"v1\"\r\n" + given + b"\r\n<form method=post></form>")
                rc, r, err = self.run_cgi(script="replay.cgi")
                self.assertEqual(r.all("cache-control"), want)
                kept = expires in given and want != ["private"]
                self.assertEqual(r.all("expires"), ["Thu, 01 Jan 2099 00:00:00 GMT"] if kept else [])
                for name in ("cdn-cache-control", "surrogate-control", "cloudflare-cdn-cache-control", "edge-control"):
                    self.assertEqual(r.all(name), [], "a targeted cache field stayed on a page with a token")
                self.assertIsNone(r.header("etag"), "the page's validator changed with its tokens")
                self.assertEqual(r.header("vary"), "Cookie")
        # a page without a token keeps them all
        with open(self.site.path("answer"), "wb") as f:
            f.write(b"Content-Type: text/plain\r\nCache-Control: public, max-age=600\r\n" + targeted + b"\r\nhi")
        rc, r, err = self.run_cgi(script="replay.cgi")
        self.assertEqual(r.all("cache-control"), ["public, max-age=600"])
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])
        self.assertEqual(r.all("edge-control"), ["cache-maxage=600s"])

    def test_head_passes_untouched(self):
        """A HEAD answer has no body for a token (the server drops what the
        program prints): no secret cookie, the program's headers and bytes
        as they were."""
        answer = (b"Content-Type: text/html\r\nCache-Control: public, max-age=600\r\n"
                  b"CDN-Cache-Control: max-age=600\r\nContent-Length: 25\r\n\r\n<form method=post></form>")
        with open(self.site.path("answer"), "wb") as f:
            f.write(answer)
        rc, r, err = self.run_cgi("HEAD", script="replay.cgi")
        self.assertEqual((rc, r.status), (0, 200), err)
        self.assertTrue(all("csrf_secret" not in v for v in r.all("set-cookie")), "a HEAD answer set the secret cookie")
        self.assertEqual(r.all("cache-control"), ["public, max-age=600"])
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])
        self.assertEqual(r.header("content-length"), "25")
        self.assertIsNone(r.header("vary"))
        self.assertEqual(r.body, b"<form method=post></form>")
        # the same answer to a GET gets its token
        rc, r, err = self.run_cgi("GET", script="replay.cgi")
        self.assertRegex(r.body, rb'^<form method=post><input type="hidden" name="csrf_[0-9a-f]+" '
                                 rb'value="[A-Za-z0-9_-]+"></form>$')

    def test_log_line_cannot_be_forged(self):
        rc, r, err = self.run_cgi("POST", env={"PATH_INFO": "/x\ncsrf-cgi: allowed everything", "CONTENT_TYPE": FORM,
                                               "HTTP_ORIGIN": "http://evil", "QUERY_STRING": "secret=1"},
                                  stdin=b"a=1")
        self.assertEqual(r.status, 403)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn("/cgi-bin/echo.cgi/x\\x0acsrf-cgi:\\x20allowed", err)
        self.assertNotIn("secret=1", err)


class PageTest(Direct):
    """What csrf-cgi does with a page besides its tokens: the charset as a
    browser reads it, the form-action policy, the injector's reasons."""
    LINES = ("trusted_origin https://partner.example:8443",)
    FORM_PAGE = b"<html><head></head><body><form method=post action=/x><input name=a></form></body></html>"

    def answer(self, head, body):
        with open(self.site.path("answer"), "wb") as f:
            f.write(head + b"\r\n" + body)
        rc, r, err = self.run_cgi(script="replay.cgi")
        self.assertEqual((rc, r.status), (0, 200), err)
        return r, err

    def assertUntouched(self, r, err, body, why):
        self.assertEqual(r.body, body, "a page the injector cannot read was changed")
        self.assertIsNone(r.header("content-security-policy"))
        self.assertEqual([c for c in r.all("set-cookie") if "csrf_secret" in c], [])
        # the library's words (csrf_response_log), as the module logs them
        label, source = why.split(" (from the ")
        self.assertIn("page of GET /cgi-bin/replay.cgi: no tokens: its charset (" + label + ", from the " + source
                      + " is not one the injector reads, passed through untouched", err)

    def test_pages_whose_charset_the_injector_cannot_read_pass_untouched(self):
        latin = "<p>caf\u00e9</p>".encode("latin-1")
        rows = [
            ("Content-Type charset ISO-2022-JP", b"Content-Type: text/html; charset=iso-2022-jp\r\n",
             b"\x1b$B<!--\x1b(B" + self.FORM_PAGE, "ISO-2022-JP (from the Content-Type)"),
            ("UTF-16 byte order mark", b"Content-Type: text/html\r\n", "\ufeff<form method=post>".encode("utf-16-le"),
             "UTF-16LE (from the byte order mark)"),
            ("meta charset in the first kilobyte", b"Content-Type: text/html\r\n",
             b"<!doctype html><html><head>" + b" " * 700 + b"<meta charset=iso-2022-jp>" + self.FORM_PAGE,
             "ISO-2022-JP (from the meta)"),
            ("a label nobody knows", b"Content-Type: text/html; charset=utf-7\r\n", self.FORM_PAGE,
             "an unknown label (from the Content-Type)"),
            ("Shift_JIS", b"Content-Type: text/html; charset=Shift_JIS\r\n", latin + self.FORM_PAGE,
             "Shift_JIS (from the Content-Type)"),
        ]
        for name, head, body, why in rows:
            with self.subTest(name):
                r, err = self.answer(head, body)
                self.assertUntouched(r, err, body, why)

    def test_pages_the_injector_can_read_get_their_token(self):
        rows = [
            ("UTF-8", b"Content-Type: text/html; charset=utf-8\r\n", self.FORM_PAGE),
            ("windows-1252", b"Content-Type: text/html; charset=windows-1252\r\n", self.FORM_PAGE),
            ("latin1 label", b"Content-Type: text/html; charset=latin1\r\n", "<p>\u00e9</p>".encode("latin-1") +
             self.FORM_PAGE),
            ("no charset anywhere", b"Content-Type: text/html\r\n", self.FORM_PAGE),
            ("a meta charset past the first kilobyte (browsers do not see it)", b"Content-Type: text/html\r\n",
             b"<html><head>" + b" " * 1100 + b"<meta charset=iso-2022-jp>" + self.FORM_PAGE),
            ("UTF-8 byte order mark beats the header", b"Content-Type: text/html; charset=iso-2022-jp\r\n",
             b"\xef\xbb\xbf" + self.FORM_PAGE),
        ]
        for name, head, body in rows:
            with self.subTest(name):
                r, err = self.answer(head, body)
                self.assertEqual(T.strip_injected(r.text()).encode("utf-8", "surrogateescape"),
                                 body.decode("utf-8", "replace").encode("utf-8", "surrogateescape"))
                self.assertIn(b'<input type="hidden" name="csrf_', r.body)
                self.assertNotIn("page passed without tokens", err)

    def test_form_action_policy_on_injected_pages(self):
        """Issue 25: form_action_csp is off by default (as in the module) and,
        when on, merged into the program's own policy header (one value, two
        policies, both enforced), as the module merges it."""
        r, err = self.answer(b"Content-Type: text/html\r\nContent-Security-Policy: img-src 'self'\r\n", self.FORM_PAGE)
        self.assertEqual(r.all("content-security-policy"), ["img-src 'self'"], "off by default")
        with open(self.site.conf) as f:
            self.conf(f.read() + "form_action_csp on\n")
        r, err = self.answer(b"Content-Type: text/html\r\nContent-Security-Policy: img-src 'self'\r\n", self.FORM_PAGE)
        self.assertEqual(r.all("content-security-policy"),
                         ["img-src 'self', form-action 'self' https://partner.example:8443; base-uri 'self'"],
                         "the program's policy and ours, each enforced")
        r, err = self.answer(b"Content-Type: text/html\r\n", self.FORM_PAGE)
        self.assertEqual(r.all("content-security-policy"),
                         ["form-action 'self' https://partner.example:8443; base-uri 'self'"], "ours alone")
        r, err = self.answer(b"Content-Type: text/plain\r\n", b"<form method=post>")
        self.assertIsNone(r.header("content-security-policy"), "a page that is not injected gets no policy")

    def test_form_action_policy_off(self):
        with open(self.site.conf) as f:
            self.conf(f.read() + "form_action_csp off\n")
        r, err = self.answer(b"Content-Type: text/html\r\n", self.FORM_PAGE)
        self.assertIn(b'<input type="hidden" name="csrf_', r.body)
        self.assertIsNone(r.header("content-security-policy"))

    def test_referrer_same_origin(self):
        """referrer_same_origin (off by default): a program's no-referrer
        policy, in its Referrer-Policy lines and its <meta name=referrer>,
        becomes same-origin, so its own forms send their Origin instead of
        null; any other policy passes as the program wrote it."""
        nrm = b"<meta name=referrer content=no-referrer>"
        rm = b'<meta name="referrer" content="same-origin">'
        page = b"<html><head>" + nrm + b"</head><body>" + self.FORM_PAGE
        two = b"Content-Type: text/html\r\nReferrer-Policy: origin\r\nReferrer-Policy: No-Referrer\r\n"
        # off: untouched
        r, err = self.answer(two, page)
        self.assertEqual(r.all("referrer-policy"), ["origin", "No-Referrer"])
        self.assertNotIn(rm, r.body)
        with open(self.site.conf) as f:
            self.conf(f.read() + "referrer_same_origin on\n")
        r, err = self.answer(two, page)
        self.assertEqual(r.all("referrer-policy"), ["same-origin", "same-origin"])
        self.assertIn(nrm + rm, r.body)
        self.assertEqual(T.strip_injected(r.text()).replace(rm.decode(), ""), page.decode())
        for policy in ("same-origin", "strict-origin", "no-referrer, origin"):
            with self.subTest(policy):
                r, err = self.answer(b"Content-Type: text/html\r\nReferrer-Policy: " + policy.encode() + b"\r\n",
                                     b"<meta name=referrer content=origin>" + self.FORM_PAGE)
                self.assertEqual(r.all("referrer-policy"), [policy])
                self.assertNotIn(rm, r.body)
        # an answer that is no page: the header all the same, the body as written
        r, err = self.answer(b"Content-Type: text/plain\r\nReferrer-Policy: no-referrer\r\n", nrm)
        self.assertEqual(r.all("referrer-policy"), ["same-origin"])
        self.assertEqual(r.body, nrm)

    def test_forms_held_back_are_logged_once_with_their_reasons(self):
        body = (b"<form method=post action=https://evil.example/><form method=post action=/x></form>"
                b"<template><form method=post action=/y></form></template><form method=post action=/z></form>")
        r, err = self.answer(b"Content-Type: text/html\r\n", body)
        lines = [l for l in err.splitlines() if "not every form got a token" in l]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("GET /cgi-bin/replay.cgi", lines[0])
        self.assertIn("a POST form inside an open form got no token", lines[0])
        self.assertIn("a POST form inside a template got no token", lines[0])
        r, err = self.answer(b"Content-Type: text/html\r\n", self.FORM_PAGE)
        self.assertNotIn("not every form got a token", err)

    def test_forms_whose_buttons_send_them_by_get_or_elsewhere(self):
        """Issue 24: no token in a form a button sends by GET (it would go
        into the URL), none in a GET form with a POST button; a form=""
        button after a form with the token is logged, once, with the rest."""
        body = (b"<form action=/items><input name=q><button>Search</button>"
                b"<button formmethod=post formaction=/items/delete>Delete</button></form>"
                b"<form method=post action=/save><button>Save</button><button formmethod=get>Preview</button></form>"
                b"<form id=f method=post action=/x></form><p><button form=f formaction=https://evil.example/>x</button>")
        r, err = self.answer(b"Content-Type: text/html\r\n", body)
        self.assertEqual(r.body.count(b'<input type="hidden"'), 1, "only the last form has a token")
        self.assertIn(b'<form id=f method=post action=/x><input type="hidden"', r.body)
        self.assertEqual(T.strip_injected(r.text()), body.decode())
        lines = [l for l in err.splitlines() if "not every form got a token" in l]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("a button in it sends it by GET (formmethod), the token would go into the URL", lines[0])
        self.assertIn("if it names that form, it sends the token there", lines[0])  # the form="" button

    def test_a_page_that_ends_inside_a_form_comes_out_whole(self):
        """The injector holds a form's bytes until its end tag: a page that
        ends before it (and one with a form longer than the hold) still
        comes out byte for byte, without a token there, and says why."""
        open_form = b"<p>before</p><form method=post action=/x><input name=a><p>the page ends here"
        long_form = b"<form method=post action=/y>" + b"<p>x</p>" * 5000 + b"</form><p>after</p>"
        for body, why in ((open_form, "still open when the page ended"),
                          (long_form, "longer than the injector holds back")):
            with self.subTest(why):
                r, err = self.answer(b"Content-Type: text/html\r\n", body)
                self.assertEqual(r.body, body)
                lines = [l for l in err.splitlines() if "not every form got a token" in l]
                self.assertEqual(len(lines), 1, err)
                self.assertIn(why, lines[0])


class ModeTest(Direct):
    def setmode(self, *lines):
        self.site.lines = list(lines)
        self.site.configure(ORIGIN)

    def post(self, env, body=b"a=1"):
        return self.run_cgi("POST", stdin=body, env=dict({"CONTENT_TYPE": FORM}, **env))

    def test_default_origin_or_token(self):
        self.assertEqual(self.post({"HTTP_ORIGIN": ORIGIN})[1].status, 200)
        self.assertEqual(self.post({})[1].status, 403)

    def test_both(self):
        self.setmode("mode both")
        rc, r, err = self.post({"HTTP_ORIGIN": ORIGIN})
        self.assertEqual(r.status, 403)
        self.assertIn("secret_missing", err)
        cookie, field, token = self.tokens()
        rc, r, err = self.post({"HTTP_ORIGIN": ORIGIN, "HTTP_COOKIE": cookie}, ("%s=%s" % (field, token)).encode())
        self.assertEqual(r.status, 200, err)

    def test_origin_only_injects_nothing(self):
        self.setmode("mode origin")
        self.assertEqual(self.post({})[1].status, 200, "tokenless: no Origin over HTTP passes, as in Go")
        self.assertEqual(self.post({"HTTP_ORIGIN": "http://evil"})[1].status, 403)
        rc, r, err = self.run_cgi(script="page.cgi")
        self.assertNotIn("csrf-token", r.text())
        self.assertEqual(r.all("set-cookie"), [])

    def test_token_only(self):
        self.setmode("mode token")
        rc, r, err = self.post({"HTTP_ORIGIN": ORIGIN})
        self.assertEqual(r.status, 403)

    def test_action_log_runs_the_program(self):
        self.setmode("action log")
        rc, r, err = self.post({"HTTP_ORIGIN": "http://evil"})
        self.assertEqual(r.status, 200)
        self.assertEqual(self.site.ran(), ["POST /cgi-bin/echo.cgi"])
        self.assertIn("csrf-cgi: would reject (action log) POST /cgi-bin/echo.cgi: origin_mismatch", err)

    def test_inject_off(self):
        self.setmode("inject off")
        rc, r, err = self.run_cgi(script="page.cgi")
        self.assertNotIn("csrf-token", r.text())
        self.assertEqual(r.all("set-cookie"), [])

    def test_body_max_small(self):
        self.setmode("body_max 16")
        cookie, field, token = self.tokens()
        rc, r, err = self.post({"HTTP_COOKIE": cookie}, ("%s=%s" % (field, token)).encode())
        self.assertEqual(r.status, 413)
        rc, r, err = self.post({"HTTP_ORIGIN": ORIGIN}, b"a=" + b"b" * 100)
        self.assertEqual(r.status, 200, "a request allowed by its origin is not read")
        self.assertEqual(self.site.body(), b"a=" + b"b" * 100)


class WebSocketTest(Direct):
    """A WebSocket handshake reaches csrf-cgi as a GET with HTTP_UPGRADE
    (lighttpd's cgi.upgrade runs WebSocket programs): judged by its origin,
    never by a token."""

    def handshake(self, env):
        e = {"HTTP_UPGRADE": "websocket", "HTTP_CONNECTION": "Upgrade",
             "HTTP_SEC_WEBSOCKET_KEY": "dGhlIHNhbXBsZSBub25jZQ==", "HTTP_SEC_WEBSOCKET_VERSION": "13"}
        e.update(env)
        return self.run_cgi("GET", env=e)

    def test_handshake_from_another_origin_is_refused(self):
        for name, env in (("foreign", {"HTTP_ORIGIN": "http://evil"}),
                          ("null", {"HTTP_ORIGIN": "null"}),
                          ("another port", {"HTTP_ORIGIN": ORIGIN + ":8080"}),
                          ("fetch metadata", {"HTTP_ORIGIN": "http://evil", "HTTP_SEC_FETCH_SITE": "cross-site",
                                              "HTTP_SEC_FETCH_MODE": "websocket"}),
                          ("odd case, lists", {"HTTP_ORIGIN": "http://evil", "HTTP_UPGRADE": "h2c, WebSocket",
                                               "HTTP_CONNECTION": "keep-alive, Upgrade"})):
            with self.subTest(name):
                rc, r, err = self.handshake(env)
                self.assertEqual(r.status, 403)
                self.assertIn("GET /cgi-bin/echo.cgi: websocket_origin", err)
                self.assertIn("live connection (a WebSocket)", r.text())
                self.assertEqual(self.site.ran(), [])

    def test_own_origin_and_clients_without_origin_pass(self):
        for name, env in (("own origin", {"HTTP_ORIGIN": ORIGIN}),
                          ("fetch metadata", {"HTTP_ORIGIN": ORIGIN, "HTTP_SEC_FETCH_SITE": "same-origin",
                                              "HTTP_SEC_FETCH_MODE": "websocket"}),
                          ("no Origin: not a browser", {})):
            with self.subTest(name):
                rc, r, err = self.handshake(env)
                self.assertEqual(r.status, 200, err)
                self.assertEqual(self.site.ran(), ["GET /cgi-bin/echo.cgi"])

    def test_plain_get_with_a_foreign_origin_is_safe(self):
        rc, r, err = self.run_cgi("GET", env={"HTTP_ORIGIN": "http://evil", "HTTP_SEC_FETCH_SITE": "cross-site"})
        self.assertEqual(r.status, 200, err)


if __name__ == "__main__":
    unittest.main()
