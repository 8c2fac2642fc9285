# SPDX-License-Identifier: BSD-2-Clause
"""Directives through `nginx -t` and a running nginx: bad values fail the
configuration test with the library's message and the file's line, a key
file shared by two servers makes their tokens interchangeable, the random
key of a server without one is warned about, directives inherit; several
csrf_session_cookie names bind (a planted second name cannot take the
binding over), and a session cookie never seen is warned about once."""

import base64
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402


def server(body, port="{port}"):
    return """
    server {{
        listen 127.0.0.1:%s;
        root {prefix}/www;
        %s
        location / {{ }}
    }}
""" % (port, body)


def key_file(path, keys):
    with open(path, "w") as f:
        f.write("# test keys\n")
        for kid, sign in keys:
            f.write("key %d %d %s%s\n" % (kid, int(time.time()), secrets.token_hex(32), " sign" if sign else ""))
    os.chmod(path, 0o600)


class ConfigTest(unittest.TestCase):
    def nginx_t(self, http):
        n = T.Nginx(http)
        try:
            return n.test_config()
        finally:
            n.cleanup()

    def test_bad_directives_fail(self):
        rows = [
            # (name, directives, message expected in nginx -t's output)
            ("trusted origin: bare host", "csrf on; csrf_trusted_origin example.com;", "csrf_trusted_origin"),
            ("trusted origin: path", "csrf on; csrf_trusted_origin https://a.example/x;", "csrf_trusted_origin"),
            ("trusted origin: null", "csrf on; csrf_trusted_origin null;", "csrf_trusted_origin"),
            ("trusted origin: userinfo", "csrf on; csrf_trusted_origin https://u@a.example;", "csrf_trusted_origin"),
            ("origin: bare host", "csrf on; csrf_origin app.example;", "csrf_origin"),
            ("origin: twice", "csrf_origin https://a.example; csrf_origin https://b.example;", "duplicate"),
            ("mode", "csrf on; csrf_mode sometimes;", "invalid value \"sometimes\""),
            ("action", "csrf on; csrf_action block;", "invalid value \"block\""),
            ("status", "csrf on; csrf_status 200;", "between 400 and 599"),
            ("issue version 1", "csrf on; csrf_issue_version 1;", "between 2 and 4"),
            ("issue version 5", "csrf on; csrf_issue_version 5;", "between 2 and 4"),
            ("flag", "csrf maybe;", "csrf"),
            ("body max", "csrf on; csrf_body_max lots;", "csrf_body_max"),
            ("key file missing", "csrf on; csrf_key_file /nonexistent/csrf.keys;", "csrf_key_file"),
            ("session cookie name", "csrf on; csrf_session_cookie 'a b';", "csrf_session_cookie"),
            ("session cookie: second name bad", "csrf on; csrf_session_cookie phpMyAdmin 'a;b';",
             "csrf_session_cookie"),
            ("session cookie: a name twice", "csrf on; csrf_session_cookie sid other sid;", "\"sid\" is named twice"),
            ("session cookie: five names", "csrf on; csrf_session_cookie a b c d e;", "at most 4 names"),
            ("session cookie: none", "csrf on; csrf_session_cookie;", "invalid number of arguments"),
            ("session cookie: directive twice", "csrf on; csrf_session_cookie a; csrf_session_cookie b;",
             "duplicate"),
            ("origin: IDN in Unicode", "csrf on; csrf_origin https://b\u00fccher.example;", "punycode"),
            ("trusted origin: IDN in Unicode", "csrf on; csrf_trusted_origin http://\u65e5\u672c.example:8080;",
             "xn--"),
            ("arguments", "csrf on; csrf_origin;", "invalid number of arguments"),
        ]
        for name, directives, message in rows:
            with self.subTest(name):
                rc, out = self.nginx_t(server(directives))
                self.assertNotEqual(rc, 0, out)
                self.assertIn(message, out)
                self.assertIn("nginx.conf:", out, "the error names the file and line")

    def test_good_configuration(self):
        rows = [
            ("minimal", "csrf on;"),
            ("everything", "csrf on; csrf_mode both; csrf_origin https://app.example:8443; "
             "csrf_trusted_origin https://partner.example; csrf_trusted_origin http://127.0.0.1:9; "
             "csrf_session_cookie SESSID; csrf_inject on; csrf_action log; csrf_body_max 64k; "
             "csrf_unsafe_get on; csrf_status 419; csrf_issue_version 2;"),
            ("session cookie per scheme", "csrf on; csrf_session_cookie phpMyAdmin phpMyAdmin_https;"),
            ("four session cookies", "csrf on; csrf_session_cookie a b c d;"),
            ("origins as browsers spell them", "csrf on; csrf_origin http://Wiki.LAN.:80; "
             "csrf_trusted_origin https://xn--bcher-kva.example:443; csrf_trusted_origin http://[::1]:8080;"),
            ("off", "csrf off; csrf_trusted_origin https://partner.example;"),
        ]
        for name, directives in rows:
            with self.subTest(name):
                rc, out = self.nginx_t(server(directives))
                self.assertEqual(rc, 0, out)

    def test_random_key_warning(self):
        rc, out = self.nginx_t(server("csrf on;"))
        self.assertEqual(rc, 0, out)
        self.assertIn("random key", out)

    def test_shared_key_file(self):
        # two servers with one key file: a fleet; a third with its own key
        a = T.Nginx(server("csrf on; csrf_mode both; csrf_key_file {prefix}/csrf.keys;", "{port0}") +
                    server("csrf on; csrf_mode both; csrf_key_file {prefix}/csrf.keys;", "{port1}") + server("csrf on; csrf_mode both;", "{port2}"),
                    ports=3)
        try:
            key_file(a.path("csrf.keys"), [(1, False), (2, True)])
            rc, out = a.test_config()
            self.assertEqual(rc, 0, out)
            a.write("www/index.html", "<html><head></head><body></body></html>")
            a.start()
            p0, p1, p2 = a.ports
            cookie, field, token = T.session_tokens(p0)
            self.assertIsNotNone(token)
            rows = [
                ("same server", p0, 405),  # static location: past the check, nginx answers 405
                ("other server, same key file", p1, 405),
                ("server with its own key", p2, 403),
            ]
            for name, port, status in rows:
                with self.subTest(name):
                    r = T.request(port, "POST", "/", [("Origin", "http://127.0.0.1:%d" % port), ("Cookie", cookie),
                                                      ("X-CSRF-Token", token)], b"x")
                    self.assertEqual(r.status, status)
        finally:
            a.cleanup()

    def test_fleet_at_two_issue_versions(self):
        """A fleet half way through its upgrade: one server holds the issue
        at version 2 (csrf_issue_version 2, set in its server block), one
        issues 4 (the default), one holds 3 with a location at 4 below it,
        one key file. A user the balancer moves between them keeps the
        secret cookie of wherever they started (version 2 at 2, 3 at 3 and
        4) and every page any served passes on all three; each issues its
        own version: 4 unmasked (51 characters), 3 and 2 masked (102)."""
        def version(value):
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            self.assertIn(len(raw), (77, 38, 76))
            # a cookie, a version 4 token (unmasked), or pad || raw ^ pad
            return raw[0] if len(raw) in (77, 38) else raw[0] ^ raw[len(raw) // 2]

        kf = "csrf on; csrf_mode both; csrf_key_file {prefix}/csrf.keys;"
        n = T.Nginx(server(kf + " csrf_issue_version 2;", "{port0}") + server(kf, "{port1}") +
                    server(kf + " csrf_issue_version 3; location /v4/ {{ csrf_issue_version 4; }}", "{port2}"), ports=3)
        try:
            key_file(n.path("csrf.keys"), [(1, True)])
            n.write("www/index.html", "<html><head></head><body></body></html>")
            n.write("www/v4/index.html", "<html><head></head><body></body></html>")
            n.start()
            p0, p1, p2 = n.ports

            def post(port, cookie, token):
                return T.request(port, "POST", "/", [("Origin", "http://127.0.0.1:%d" % port), ("Cookie", cookie),
                                                     ("X-CSRF-Token", token)], b"x").status

            for first, other in ((p0, p1), (p1, p0)):
                cookie, _, token = T.session_tokens(first)
                pages = [(first, token)]
                for port in (other, first, p2):
                    c, _, t = T.session_tokens(port, cookie=cookie)
                    self.assertEqual(c, cookie, "a valid secret cookie is kept, whichever version signed it")
                    pages.append((port, t))
                c, _, t = T.session_tokens(p2, "/v4/", cookie=cookie)
                pages.append((p2, t))
                want = {p0: 2, p1: 4, p2: 3}
                self.assertEqual(version(cookie.split("=", 1)[1]), min(want[first], 3))
                self.assertEqual([version(t) for _, t in pages], [want[first], want[other], want[first], 3, 4])
                self.assertEqual([len(t) for _, t in pages], [51 if version(t) == 4 else 102 for _, t in pages])
                for served, token in pages:
                    for port in (p0, p1, p2):
                        with self.subTest(first=first, served=served, to=port):
                            # a static location: past the check nginx answers 405
                            self.assertEqual(post(port, cookie, token), 405)
        finally:
            n.cleanup()

    def test_reload_rotated_key_file(self):
        # a rotation: the old key stays in the file (verifying), a new one signs
        n = T.Nginx(server("csrf on; csrf_mode both; csrf_key_file {prefix}/csrf.keys;"))
        try:
            keys = n.path("csrf.keys")
            now = int(time.time())
            k1 = "key 1 %d %s" % (now, secrets.token_hex(32))
            k2 = "key 2 %d %s" % (now, secrets.token_hex(32))
            so = [("Origin", "http://127.0.0.1:%d" % n.port)]

            def write_keys(*lines):
                with open(keys, "w") as f:
                    f.write("".join(l + "\n" for l in lines))
                os.chmod(keys, 0o600)

            def post(cookie, token):
                # a static location: past the check nginx answers 405
                return T.request(n.port, "POST", "/", so + [("Cookie", cookie), ("X-CSRF-Token", token)], b"x").status

            def reload():
                n.proc.send_signal(signal.SIGHUP)
                time.sleep(1.0)

            write_keys(k1 + " sign")
            n.write("www/index.html", "<html><head></head></html>")
            n.start()
            c1, _, t1 = T.session_tokens(n.port)
            write_keys(k1, k2 + " sign")
            reload()
            self.assertEqual(post(c1, t1), 405, "a token of the old key still verifies after the reload")
            c2, _, t2 = T.session_tokens(n.port)
            self.assertEqual(post(c2, t2), 405, "a token of the new key verifies")
            write_keys(k2 + " sign")
            reload()
            self.assertEqual(post(c1, t1), 403, "the retired key's tokens no longer verify")
            self.assertEqual(post(c2, t2), 405)
            self.assertEqual(n.crashed(), [])
        finally:
            n.cleanup()

    def test_inheritance(self):
        http = """
    csrf on;
    csrf_mode both;
    csrf_trusted_origin http://partner.example;
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        location / {{ }}
        location /own {{ csrf_trusted_origin http://other.example; }}
        location /off {{ csrf off; }}
        location /logonly {{ csrf_action log; }}
    }}
"""
        n = T.Nginx(http)
        try:
            n.write("www/index.html", "<html><head></head></html>")
            for d in ("own", "off", "logonly"):
                n.write("www/%s/index.html" % d, "<html><head></head></html>")
            n.start()
            rows = [
                # (path, Origin, expected result in the access log)
                ("/", "http://partner.example", "secret_missing"),  # origin passed, token stage
                ("/", "http://other.example", "origin_mismatch"),
                ("/own/", "http://other.example", "secret_missing"),
                ("/own/", "http://partner.example", "origin_mismatch"),  # a location's list replaces
                ("/off/", "http://evil.example", "-"),
                ("/logonly/", "http://evil.example", "origin_mismatch"),
            ]
            for i, (path, origin, result) in enumerate(rows):
                T.request(n.port, "POST", path + "?row=%d" % i, [("Origin", origin)], b"x")
            log = n.access_log().splitlines()
            for i, (path, origin, result) in enumerate(rows):
                with self.subTest(path=path, origin=origin):
                    line = [l for l in log if ("?row=%d " % i) in l]
                    self.assertEqual(len(line), 1)
                    self.assertTrue(line[0].endswith(" " + result), line[0])
        finally:
            n.cleanup()


SESSION_PAGE = (b"<!DOCTYPE html><html><head><title>t</title></head><body>"
                b"<form method=post action=/x><input name=a></form></body></html>")


class SessionCookieTest(T.ProxyCase):
    """csrf_session_cookie with two names, as phpMyAdmin needs them
    ("phpMyAdmin" over HTTP, "phpMyAdmin_https" over HTTPS): a token is
    bound to whichever the browser sends, to both when it sends both, and
    a cookie planted under the other name makes the request fail instead
    of taking the binding over. Mode token, so the token alone decides."""

    HTTP = """
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        csrf on;
        csrf_mode token;
        location /two/ {{ csrf_session_cookie phpMyAdmin phpMyAdmin_https; proxy_pass http://127.0.0.1:{upstream}; }}
        location /null/ {{ csrf_mode origin_or_token; csrf_session_cookie phpMyAdmin phpMyAdmin_https;
                           proxy_pass http://127.0.0.1:{upstream}; }}
        location /warn/ {{ csrf_session_cookie phpMyAdmin; proxy_pass http://127.0.0.1:{upstream}; }}
        location /nowarn/ {{ csrf_session_cookie phpMyAdmin phpMyAdmin_https; proxy_pass http://127.0.0.1:{upstream}; }}
        location /seen/ {{ csrf_session_cookie phpMyAdmin; proxy_pass http://127.0.0.1:{upstream}; }}
        location /unbound/ {{ proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""

    @classmethod
    def upstream(cls, c, head, body):
        if head.startswith(b"POST"):
            T.send_whole(c, b"ok", "text/plain")
            return
        extra = b""
        if b"setcookie" in head.split(b"\r\n", 1)[0]:
            # what phpMyAdmin sends over HTTPS, and a cookie of its own
            extra = b"Set-Cookie: phpMyAdmin_https=s3cr3tvalue; path=/; secure; HttpOnly\r\nSet-Cookie: pma_lang=en\r\n"
        T.send_whole(c, SESSION_PAGE, "text/html; charset=utf-8", extra=extra)

    def post(self, path, cookies, token, extra=()):
        r = T.request(self.ngx.port, "POST", path, [("Cookie", "; ".join(cookies)), ("X-CSRF-Token", token)] +
                      list(extra), b"")
        m = re.search(rb'<code id="reason">([a-z_]+)</code>', r.body)
        return r.status, (m.group(1).decode() if m else None)

    def token_for(self, path, session):
        r = T.request(self.ngx.port, "GET", path, [("Cookie", session)] if session else [])
        secret = T.secret_cookie(r)
        t = T.META_TOKEN.search(r.body)
        self.assertIsNotNone(secret)
        self.assertIsNotNone(t)
        return secret, t.group(1).decode()

    def test_binding_with_either_name(self):
        p = "/two/"
        # HTTPS: phpMyAdmin_https binds (with one name, phpMyAdmin, nothing did)
        sec, tok = self.token_for(p, "phpMyAdmin_https=victim")
        self.assertEqual(self.post(p, [sec, "phpMyAdmin_https=victim"], tok), (200, None))
        self.assertEqual(self.post(p, [sec, "phpMyAdmin_https=other"], tok), (403, "token_session"))
        self.assertEqual(self.post(p, [sec], tok), (403, "token_session"))
        # HTTP: phpMyAdmin binds
        sec, tok = self.token_for(p, "phpMyAdmin=victim")
        self.assertEqual(self.post(p, [sec, "phpMyAdmin=victim"], tok), (200, None))
        self.assertEqual(self.post(p, [sec, "phpMyAdmin=other"], tok), (403, "token_session"))
        # both, in either order: bound to both
        sec, tok = self.token_for(p, "phpMyAdmin=a; phpMyAdmin_https=b")
        self.assertEqual(self.post(p, [sec, "phpMyAdmin_https=b", "phpMyAdmin=a"], tok), (200, None))
        self.assertEqual(self.post(p, [sec, "phpMyAdmin_https=b"], tok), (403, "token_session"))
        # one name twice
        sec, tok = self.token_for(p, "phpMyAdmin_https=victim")
        self.assertEqual(self.post(p, [sec, "phpMyAdmin_https=victim", "phpMyAdmin_https=evil"], tok),
                         (403, "cookie_ambiguous"))

    def test_null_origin_needs_a_bound_session(self):
        # Origin: null (phpMyAdmin's no-referrer forms by name over plain HTTP): the token decides
        # when it is bound to the session the request carries ...
        # (mode origin_or_token: in mode token, as in /two/, the Origin is never read)
        p, null = "/null/", [("Origin", "null")]
        sec, tok = self.token_for(p, "phpMyAdmin=victim")
        self.assertEqual(self.post(p, [sec, "phpMyAdmin=victim"], tok, null), (200, None))
        self.assertEqual(self.post(p, [sec, "phpMyAdmin=other"], tok, null), (403, "token_session"))
        # ... never on a secret cookie and an unbound token alone, which a sibling subdomain or
        # another port of the host could have planted (outside review of issue 23)
        asec, atok = self.token_for(p, None)
        self.assertEqual(self.post(p, [asec], atok, null), (403, "null_origin"))
        self.assertEqual(self.post(p, [asec], atok), (200, None))

    def test_planted_second_name_cannot_take_the_binding(self):
        p = "/two/"
        # the attacker's own pair, bound to the session they hold
        asec, atok = self.token_for(p, "phpMyAdmin=attacker")
        # planted beside the victim's HTTPS session (a sibling subdomain or plain HTTP can add cookies)
        self.assertEqual(self.post(p, [asec, "phpMyAdmin=attacker", "phpMyAdmin_https=victim"], atok),
                         (403, "token_session"))
        asec, atok = self.token_for(p, "phpMyAdmin_https=attacker")
        self.assertEqual(self.post(p, [asec, "phpMyAdmin=victim", "phpMyAdmin_https=attacker"], atok),
                         (403, "token_session"))

    def test_login_page_binds_the_cookie_it_sets(self):
        # the response sets phpMyAdmin_https: the page's token is bound to it
        sec, tok = self.token_for("/nowarn/setcookie", None)
        self.assertEqual(self.post("/nowarn/", [sec, "phpMyAdmin_https=s3cr3tvalue"], tok), (200, None))
        self.assertEqual(self.post("/nowarn/", [sec, "phpMyAdmin_https=other"], tok), (403, "token_session"))

    def test_warning_once_for_a_session_cookie_never_seen(self):
        for _ in range(3):
            self.token_for("/warn/setcookie", None)
            self.token_for("/warn/setcookie", "pma_lang=en")
        # bound to both names: phpMyAdmin_https is one of them, no warning
        self.token_for("/nowarn/setcookie", None)
        # the request carries the configured cookie: seen, no warning ever
        self.token_for("/seen/setcookie", "phpMyAdmin=v")
        self.token_for("/seen/setcookie", None)
        # no binding configured: nothing to warn about
        self.token_for("/unbound/setcookie", None)
        time.sleep(0.3)
        log = self.ngx.error_log()
        lines = [l for l in log.splitlines() if "csrf_session_cookie" in l]
        self.assertEqual(len(lines), 1, log)
        self.assertIn("[warn]", lines[0])
        self.assertIn('csrf_session_cookie "phpMyAdmin"', lines[0])
        self.assertIn('sets the cookie "phpMyAdmin_https"', lines[0])
        self.assertNotIn("s3cr3tvalue", log, "a cookie value was logged")
        self.assertEqual(self.ngx.crashed(), [])


class ReadmeTest(unittest.TestCase):
    """The server block of nginx/README.md, as a user copies it, runs. Its
    phpMyAdmin behind php-fpm is nginx.phpmyadmin's part; here a plain
    upstream stands in for 127.0.0.1:8080 and nothing listens on the
    php-fpm socket, so a POST the module let through would get 502."""

    def test_readme_server_block(self):
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nginx", "README.md")
        with open(readme) as f:
            text = f.read()
        block = re.search(r"```nginx\n(.*?)```", text, re.S).group(1)
        html = b"<html><head></head><body><form method=post action=/x></form></body></html>"
        up = T.Upstream(lambda c, head, body: T.send_whole(c, html, "text/html"))
        prefix = tempfile.mkdtemp(prefix="csrf-ngx-readme-")
        os.chmod(prefix, 0o755)
        port = T.free_port()
        try:
            key_file(os.path.join(prefix, "csrf.keys"), [(1, True)])
            conf = (block.replace("/usr/local/lib/nginx/modules/ngx_http_csrf_module.so", T.MODULE)
                    .replace("/etc/nginx/csrf.keys", prefix + "/csrf.keys")
                    .replace("/var/log/nginx/pma.log", prefix + "/access.log")
                    .replace("unix:/run/php/php8.2-fpm.sock", "unix:%s/php-fpm.sock" % prefix)
                    .replace("listen 80;", "listen 127.0.0.1:%d;" % port)
                    .replace("127.0.0.1:8080", "127.0.0.1:%d" % up.port)
                    .replace("http {", "pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\n"
                             "    client_body_temp_path %s/body; proxy_temp_path %s/proxy;\n"
                             "    fastcgi_temp_path %s/f; uwsgi_temp_path %s/u; scgi_temp_path %s/s;\n"
                             % ((prefix,) * 7), 1))
            if os.geteuid() == 0:
                conf = "user nobody nogroup;\n" + conf
            path = os.path.join(prefix, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            env = T.sanitizer_env(prefix)
            r = subprocess.run([T.NGINX, "-t", "-p", prefix, "-c", path], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("random key", r.stderr)
            proc = subprocess.Popen([T.NGINX, "-p", prefix, "-c", path, "-g", "daemon off;"], env=env)
            try:
                self.assertTrue(T.wait_port(port))
                same = [("Sec-Fetch-Site", "same-origin")]
                cross = [("Sec-Fetch-Site", "cross-site")]
                got = T.request(port, "GET", "/admin/apply.cgi", same, host="db.example")
                self.assertEqual(got.status, 200)
                self.assertEqual(T.count_injected(got.body), (1, 1))
                self.assertEqual(T.request(port, "GET", "/admin/apply.cgi", cross, host="db.example").status, 403)
                bad = T.request(port, "POST", "/index.php", cross, b"a=1", host="db.example")
                self.assertEqual(bad.status, 403)
                hook = T.request(port, "POST", "/hooks/payment", cross, b"a=1", host="db.example")
                self.assertEqual(hook.status, 200)
            finally:
                proc.send_signal(signal.SIGQUIT)
                proc.wait(10)
            self.assertEqual(T.sanitizer_reports(prefix, T.read_text(os.path.join(prefix, "error.log"))), "")
        finally:
            up.close()
            shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
