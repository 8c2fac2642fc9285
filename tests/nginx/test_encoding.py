# SPDX-License-Identifier: BSD-2-Clause
"""Compressed upstreams: where the module injects, the upstream is asked
for an uncompressed page by the module itself (Accept-Encoding: identity,
for proxy_pass and for fastcgi_pass to a real php-fpm whose script
compresses with ob_gzhandler when allowed), without any
proxy_set_header; nginx's own gzip still compresses what goes to the
client, with the tokens inside. A page that arrives compressed anyway
passes through byte for byte with one warning. Locations without
injection forward the client's Accept-Encoding unchanged."""

import gzip
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

PHP_FPM = os.environ.get("PHP_FPM", "/usr/sbin/php-fpm8.2")

PAGE = (b"<!DOCTYPE html><html><head><title>t</title></head><body>" + b"<p>some text to compress</p>" * 40 +
        b"<form method=post action=/echo><input name=a><button>go</button></form></body></html>")

PHP = b"""<?php ob_start('ob_gzhandler'); header('Content-Type: text/html; charset=utf-8'); ?>
<!DOCTYPE html><html><head><title>php</title></head><body>
<p id=ae><?= htmlspecialchars($_SERVER['HTTP_ACCEPT_ENCODING'] ?? '(none)') ?></p>
<?= str_repeat('<p>some text to compress</p>', 40) ?>
<form method=post action=/echo><input name=a><button>go</button></form></body></html>
"""

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        gzip on;
        gzip_min_length 1;
        location /up/ {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /forced/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_set_header Accept-Encoding gzip; }}
        location /noinject/ {{ csrf_inject off; proxy_pass http://127.0.0.1:{upstream}; }}
        location /origin/ {{ csrf_mode origin; proxy_pass http://127.0.0.1:{upstream}; }}
        location ~ \\.php$ {{
            fastcgi_pass unix:{prefix}/fpm.sock;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param QUERY_STRING $query_string;
        }}
    }}
"""


def accept_encodings(head):
    return [m.decode() for m in re.findall(rb"\r\naccept-encoding:[ \t]*([^\r]*)", head, re.I)]


class EncodingTest(T.ProxyCase):
    HTTP = HTTP
    fpm = None

    @classmethod
    def prepare(cls, ngx):
        ngx.write("www/page.php", PHP)
        if os.path.exists(PHP_FPM):
            conf = cls.ngx.write("fpm.conf", "[global]\npid = %s\nerror_log = %s\ndaemonize = no\n[t]\n%s"
                                 "listen = %s\nlisten.mode = 0666\npm = static\npm.max_children = 1\n" %
                                 (cls.ngx.path("fpm.pid"), cls.ngx.path("fpm.log"),
                                  "user = nobody\ngroup = nogroup\n" if os.geteuid() == 0 else "",
                                  cls.ngx.path("fpm.sock")))
            cls.fpm = subprocess.Popen([PHP_FPM, "-y", conf, "-F"] + (["-R"] if os.geteuid() == 0 else []),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if os.path.exists(cls.ngx.path("fpm.sock")):
                    break
                time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        if cls.fpm:
            cls.fpm.send_signal(signal.SIGTERM)
            cls.fpm.wait(10)
        super().tearDownClass()

    @classmethod
    def upstream(cls, c, head, body):
        # compresses whenever the request allows gzip, as applications do
        if any("gzip" in v for v in accept_encodings(head)):
            T.send_whole(c, gzip.compress(PAGE), "text/html", extra=b"Content-Encoding: gzip\r\n")
        else:
            T.send_whole(c, PAGE, "text/html")

    def fetch(self, path, headers):
        n = len(self.up.requests)
        r = T.request(self.ngx.port, "GET", path, headers)
        self.assertEqual(r.status, 200)
        seen = [accept_encodings(h) for h, _ in self.up.requests[n:]]
        return r, seen

    def compressed_lines(self, path):
        time.sleep(0.2)
        return [l for l in self.ngx.error_log().splitlines() if '"%s": it arrived compressed' % path in l]

    def test_injected_then_gzipped_by_nginx(self):
        rows = [
            ("gzip", [("Accept-Encoding", "gzip")], ["identity"]),
            ("gzip, deflate, br", [("Accept-Encoding", "gzip, deflate, br")], ["identity"]),
            # (nginx's gzip reads the first one)
            ("two headers", [("Accept-Encoding", "gzip"), ("Accept-Encoding", "br")], ["identity", "identity"]),
        ]
        for name, headers, upstream_saw in rows:
            with self.subTest(name):
                r, seen = self.fetch("/up/" + name.replace(" ", "_").replace(",", ""), headers)
                self.assertEqual(seen, [upstream_saw])
                self.assertEqual(r.header("content-encoding"), "gzip", "nginx's gzip did not compress")
                body = gzip.decompress(r.body)
                self.assertEqual(T.count_injected(body), (1, 1))
                self.assertTrue(T.strip_injected(body) == PAGE)
                self.assertIsNotNone(T.secret_cookie(r))

    def test_client_without_gzip(self):
        for name, headers in (("none", []), ("identity", [("Accept-Encoding", "identity")])):
            with self.subTest(name):
                r, seen = self.fetch("/up/plain-" + name, headers)
                self.assertEqual(seen, [["identity"]], "the upstream was not asked for an uncompressed page")
                self.assertIsNone(r.header("content-encoding"))
                self.assertEqual(T.count_injected(r.body), (1, 1))

    def test_compressed_anyway_passes_with_one_warning(self):
        r, seen = self.fetch("/forced/x", [("Accept-Encoding", "gzip")])
        self.assertEqual(seen, [["gzip"]])
        self.assertEqual(r.header("content-encoding"), "gzip")
        self.assertTrue(r.body == gzip.compress(PAGE), "a compressed page was changed")
        self.assertIsNone(T.secret_cookie(r))
        lines = self.compressed_lines("/forced/x")
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("[warn]", lines[0])
        self.assertIn("Content-Encoding: gzip", lines[0])
        self.assertEqual(self.compressed_lines("/up/gzip"), [])

    def test_no_injection_no_change(self):
        for path in ("/noinject/x", "/origin/x"):
            with self.subTest(path):
                r, seen = self.fetch(path, [("Accept-Encoding", "gzip")])
                self.assertEqual(seen, [["gzip"]], "the client's Accept-Encoding was changed")
                self.assertTrue(r.body == gzip.compress(PAGE))
                self.assertEqual(self.compressed_lines(path), [])

    @unittest.skipUnless(os.path.exists(PHP_FPM), "php-fpm not installed (scripts/deps.sh)")
    def test_fastcgi(self):
        for headers, client_gzip in (([("Accept-Encoding", "gzip, deflate")], True), ([], False)):
            with self.subTest(headers=headers):
                r = T.request(self.ngx.port, "GET", "/page.php", headers)
                self.assertEqual(r.status, 200)
                self.assertEqual(r.header("content-encoding"), "gzip" if client_gzip else None)
                body = gzip.decompress(r.body) if client_gzip else r.body
                self.assertIn(b"<p id=ae>identity</p>", body, "php-fpm saw another Accept-Encoding")
                self.assertEqual(T.count_injected(body), (1, 1))
        self.assertEqual(self.compressed_lines("/page.php"), [])

    def test_no_crash(self):
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
