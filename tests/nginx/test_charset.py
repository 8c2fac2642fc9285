# SPDX-License-Identifier: BSD-2-Clause
"""The charset hold-back of the body filter: the module feeds a page to the
injector only when the library says the browser reads it in an
ASCII-compatible charset (Content-Type charset, byte order mark, <meta>
in the first 1024 bytes); other pages (ISO-2022-JP, UTF-16, UTF-7,
unknown labels) go through byte for byte with their headers, no cookie,
and one line in the error log, wherever the upstream splits its buffers."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402


def page(meta=b""):
    return (b"<!DOCTYPE html>\n<html><head>" + meta + b"<title>t</title></head>\n<body>\n"
            b"<p>" + b"filler text " * 20 + b"</p>\n"
            b"<form method=post action=/echo><input name=a><button>go</button></form>\n</body></html>\n")


UTF16 = page().decode().encode("utf-16-le")

# (name, Content-Type, body, injected?, encoding named in the log)
CASES = [
    ("hdr-iso2022jp", "text/html; charset=iso-2022-jp", page(), False, "ISO-2022-JP"),
    ("hdr-iso2022jp-quoted", 'text/html; charset="ISO-2022-JP"', page(), False, "ISO-2022-JP"),
    ("meta-iso2022jp", "text/html", page(b'<meta charset="iso-2022-jp">'), False, "ISO-2022-JP"),
    ("meta-httpequiv-iso2022jp", "text/html",
     page(b'<meta http-equiv="Content-Type" content="text/html; charset=iso-2022-jp">'), False, "ISO-2022-JP"),
    ("bom-utf16le", "text/html", b"\xff\xfe" + UTF16, False, "UTF-16LE"),
    ("bom-utf16le-hdr-utf8", "text/html; charset=utf-8", b"\xff\xfe" + UTF16, False, "UTF-16LE"),
    ("bom-utf16be", "text/html", b"\xfe\xff" + page().decode().encode("utf-16-be"), False, "UTF-16BE"),
    ("hdr-utf16", "text/html; charset=utf-16", UTF16, False, "UTF-16LE"),
    ("hdr-utf7", "text/html; charset=utf-7", page(), False, "an unknown label"),
    # a label the browser does not know in a <meta> is ignored, as the
    # browser ignores it: the page is read as the default
    ("meta-utf7", "text/html", page(b"<meta charset=utf-7>"), True, None),
    ("hdr-unknown", "text/html; charset=x-no-such-charset", page(), False, "an unknown label"),
    ("meta-unknown", "text/html", page(b"<meta charset=klingon>"), True, None),
    ("meta-unknown-then-iso", "text/html", page(b"<meta charset=klingon><meta charset=csISO2022JP>"), False,
     "ISO-2022-JP"),
    ("hdr-shiftjis", "text/html; charset=shift_jis", page(), False, "Shift_JIS"),
    ("hdr-utf8", "text/html; charset=utf-8", page(), True, None),
    ("hdr-latin1", "text/html; charset=iso-8859-1", page(), True, None),
    ("hdr-1252", "text/html; charset=windows-1252", page(), True, None),
    ("meta-utf8", "text/html", page(b'<meta charset="utf-8">'), True, None),
    ("meta-latin1", "text/html", page(b"<meta charset=ISO-8859-1>"), True, None),
    ("meta-1252", "text/html", page(b'<meta http-equiv=content-type content="text/html;charset=windows-1252">'),
     True, None),
    ("bom-utf8", "text/html", b"\xef\xbb\xbf" + page(), True, None),
    ("none", "text/html", page(), True, None),
    ("empty", "text/html; charset=iso-2022-jp", b"", False, "ISO-2022-JP"),
    ("empty-utf8", "text/html", b"", True, None),
]
BY_NAME = {c[0]: c for c in CASES}

# A meta that only the prescan finds, after the head's first bytes; split
# at every byte around it in separate upstream writes.
SPLIT_PAD = b"<!-- " + b"x" * 300 + b" -->"
SPLIT = {
    "iso": page(SPLIT_PAD + b'<meta charset="iso-2022-jp">'),
    "utf8": page(SPLIT_PAD + b'<meta charset="utf-8">'),
}

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        location /up/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
        location /buf/ {{ proxy_pass http://127.0.0.1:{upstream}/up/; }}
        location /sjis/ {{ charset shift_jis; alias {prefix}/www/; }}
        location /koi/ {{ charset koi8-r; alias {prefix}/www/; }}
    }}
"""


class CharsetTest(T.ProxyCase):
    HTTP = HTTP

    @classmethod
    def prepare(cls, ngx):
        ngx.write("www/plain.html", page())

    @classmethod
    def upstream(cls, c, head, body):
        path = head.split(b" ", 2)[1].decode().split("?")[0]
        parts = path.split("/")
        if parts[2] == "case":
            _, ct, data, _, _ = BY_NAME[parts[3]]
            T.send_whole(c, data, ct)
        elif parts[2] == "split":
            data = SPLIT[parts[3]]
            k = int(parts[4])
            T.send_chunked(c, [data[:k], data[k:]], "text/html", delay=0.05)
        elif parts[2] == "trickle":
            # the first bytes one at a time: the held bytes grow over many buffers
            data = BY_NAME[parts[3]][2]
            ct = BY_NAME[parts[3]][1]
            T.send_chunked(c, [data[i:i + 1] for i in range(40)] + [data[40:]], ct, delay=0.002)

    def log_lines(self, uri):
        time.sleep(0.2)
        return [l for l in self.ngx.error_log().splitlines() if '"%s"' % uri in l and "csrf:" in l]

    def check_untouched(self, uri, r, data, encoding):
        self.assertEqual(r.status, 200)
        self.assertTrue(r.body == data, "the response was changed")
        self.assertIsNone(T.secret_cookie(r), "a cookie for a page without tokens")
        self.assertNotIn("Cookie", r.all("vary"))
        self.assertNotEqual(r.header("cache-control"), "private")
        lines = self.log_lines(uri)
        self.assertEqual(len(lines), 1, "one log line per response: %r" % lines)
        self.assertIn("passed through untouched", lines[0])
        self.assertIn(encoding, lines[0])
        self.assertIn("[warn]", lines[0])

    def check_injected(self, uri, r, data):
        self.assertEqual(r.status, 200)
        self.assertTrue(T.strip_injected(r.body) == data, "output minus insertions differs from the input")
        hidden, meta = T.count_injected(r.body)
        self.assertEqual(hidden, 1 if data else 0)
        self.assertEqual(meta, 1 if data else 0)
        self.assertIsNotNone(T.secret_cookie(r))
        self.assertEqual(self.log_lines(uri), [])

    def test_cases(self):
        for prefix in ("up", "buf"):
            for name, ct, data, inject, enc in CASES:
                uri = "/%s/case/%s" % (prefix, name)
                with self.subTest(uri):
                    r = T.request(self.ngx.port, "GET", uri)
                    if inject:
                        self.check_injected(uri, r, data)
                    else:
                        self.check_untouched(uri, r, data, enc)
                        self.assertEqual(r.header("content-length"), str(len(data)))

    def test_meta_split_across_buffers(self):
        for which, data in SPLIT.items():
            at = data.index(b"<meta")
            for k in list(range(at - 2, data.index(b">", at) + 2)) + [1, 1023, 1024, 1025]:
                uri = "/up/split/%s/%d" % (which, k)
                with self.subTest(uri):
                    r = T.request(self.ngx.port, "GET", uri)
                    if which == "iso":
                        self.check_untouched(uri, r, data, "ISO-2022-JP")
                    else:
                        self.check_injected(uri, r, data)

    def test_trickle(self):
        for name in ("meta-iso2022jp", "bom-utf16le", "meta-utf8", "none"):
            uri = "/up/trickle/%s" % name
            with self.subTest(name):
                r = T.request(self.ngx.port, "GET", uri)
                _, _, data, inject, enc = BY_NAME[name]
                if inject:
                    self.check_injected(uri, r, data)
                else:
                    self.check_untouched(uri, r, data, enc)

    def test_charset_directive(self):
        # nginx's charset filter runs before the module's: a page it
        # declares Shift_JIS passes untouched, without a secret cookie
        r = T.request(self.ngx.port, "GET", "/sjis/plain.html")
        self.assertEqual(r.status, 200)
        self.assertIn("charset=shift_jis", r.header("content-type"))
        self.assertEqual(T.count_injected(r.body), (0, 0))
        self.assertTrue(r.body == page(), "the page was changed")
        self.assertIsNone(T.secret_cookie(r))
        lines = self.log_lines("/sjis/plain.html")
        self.assertEqual(len(lines), 1)
        self.assertIn("shift_jis", lines[0].lower())
        # an ASCII-compatible one: tokens as usual
        r = T.request(self.ngx.port, "GET", "/koi/plain.html")
        self.assertIn("charset=koi8-r", r.header("content-type"))
        self.assertEqual(T.count_injected(r.body), (1, 1))
        self.assertEqual(self.log_lines("/koi/plain.html"), [])

    def test_log_has_no_secrets(self):
        r = T.request(self.ngx.port, "GET", "/up/case/hdr-utf8")
        token = T.META_TOKEN.search(r.body).group(1).decode()
        cookie = T.secret_cookie(r).split("=", 1)[1]
        T.request(self.ngx.port, "GET", "/up/case/hdr-iso2022jp?x=" + token, [("Cookie", "csrf_secret=" + cookie)])
        log = self.ngx.error_log()
        self.assertTrue(token not in log and cookie not in log, "a token or cookie in the error log")
        self.assertEqual(self.ngx.crashed(), [])
        # a filter that passes an empty buf on makes nginx log an alert
        self.assertEqual([l for l in log.splitlines() if "[alert]" in l], [])


if __name__ == "__main__":
    unittest.main()
