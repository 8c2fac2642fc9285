# SPDX-License-Identifier: BSD-2-Clause
"""The strict Prometheus text parser the metrics tests use (promtext.py):
it accepts the format's own examples and refuses each kind of deviation,
so a test that parses an endpoint with it fails on a malformed one."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promtext import PromTextError, parse  # noqa: E402

GOOD = (
    "# HELP http_requests_total The total number of HTTP requests.\n"
    "# TYPE http_requests_total counter\n"
    'http_requests_total{method="post",code="200"} 1027 1395066363000\n'
    'http_requests_total{method="post",code="400"} 3 1395066363000\n'
    "# A comment\n"
    'msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9\n'
)


class Good(unittest.TestCase):
    def test_spec_example(self):
        text = GOOD.replace("# A comment\n", "# A comment\n# TYPE msdos_file_access_time_seconds gauge\n")
        fams = parse(text)
        self.assertEqual(fams["http_requests_total"].value(method="post", code="400"), 3)
        self.assertEqual(fams["http_requests_total"].help, "The total number of HTTP requests.")
        f = fams["msdos_file_access_time_seconds"]
        self.assertEqual(f.value(path="C:\\DIR\\FILE.TXT", error='Cannot find file:\n"FILE.TXT"'), 1.458255915e9)

    def test_values(self):
        text = "# TYPE g gauge\ng{a=\"1\"} -Inf\ng{a=\"2\"} +Inf\ng{a=\"3\"} NaN\ng{a=\"4\"} -1.5e-3\ng{a=\"5\",} 0\n"
        fams = parse(text)
        self.assertEqual(fams["g"].value(a="4"), -1.5e-3)
        self.assertEqual(fams["g"].value(a="5"), 0)

    def test_histogram(self):
        text = ("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 4.5\nh_count 3\n")
        self.assertEqual(parse(text)["h"].value("h_count"), 3)

    def test_help_escapes(self):
        fams = parse("# HELP c a\\\\b\\nc\n# TYPE c counter\nc 1\n")
        self.assertEqual(fams["c"].help, "a\\b\nc")


BAD = [
    ("no final newline", "# TYPE c counter\nc 1"),
    ("empty", ""),
    ("carriage return", "# TYPE c counter\r\nc 1\r\n"),
    ("blank line", "# TYPE c counter\n\nc 1\n"),
    ("not UTF-8", b"# HELP c \xff\n# TYPE c counter\nc 1\n"),
    ("bad metric name", "# TYPE 1c counter\n1c 1\n"),
    ("dash in name", "# TYPE c-d counter\nc-d 1\n"),
    ("bad type", "# TYPE c countr\nc 1\n"),
    ("TYPE without type", "# TYPE c\nc 1\n"),
    ("second TYPE", "# TYPE c counter\n# TYPE c counter\nc 1\n"),
    ("second HELP", "# HELP c a\n# HELP c b\n# TYPE c counter\nc 1\n"),
    ("TYPE after sample", "# HELP c a\nc 1\n# TYPE c counter\n"),
    ("HELP after sample", "# TYPE c counter\nc 1\n# HELP c a\n"),
    ("sample without TYPE", "c 1\n"),
    ("family split", "# TYPE a counter\na 1\n# TYPE b counter\nb 1\na{x=\"1\"} 2\n"),
    ("family HELP again later", "# TYPE a counter\na 1\n# TYPE b counter\nb 1\n# HELP a again\n"),
    ("duplicate series", "# TYPE c counter\nc{a=\"1\"} 1\nc{a=\"1\"} 2\n"),
    ("duplicate series, label order", "# TYPE c counter\nc{a=\"1\",b=\"2\"} 1\nc{b=\"2\",a=\"1\"} 2\n"),
    ("label twice", "# TYPE c counter\nc{a=\"1\",a=\"2\"} 1\n"),
    ("reserved label", "# TYPE c counter\nc{__name__=\"x\"} 1\n"),
    ("bad label name", "# TYPE c counter\nc{1a=\"x\"} 1\n"),
    ("unquoted label value", "# TYPE c counter\nc{a=x} 1\n"),
    ("unterminated label value", "# TYPE c counter\nc{a=\"x} 1\n"),
    ("bad label escape", "# TYPE c counter\nc{a=\"\\t\"} 1\n"),
    ("space in braces", "# TYPE c counter\nc{a=\"1\", b=\"2\"} 1\n"),
    ("missing brace", "# TYPE c counter\nc{a=\"1\" 1\n"),
    ("no value", "# TYPE c counter\nc\n"),
    ("two spaces", "# TYPE c counter\nc  1\n"),
    ("trailing space", "# TYPE c counter\nc 1 \n"),
    ("bad value", "# TYPE c counter\nc 1,5\n"),
    ("hex value", "# TYPE c counter\nc 0x10\n"),
    ("bad timestamp", "# TYPE c counter\nc 1 12.5\n"),
    ("three fields", "# TYPE c counter\nc 1 2 3\n"),
    ("negative counter", "# TYPE c counter\nc -1\n"),
    ("NaN counter", "# TYPE c counter\nc NaN\n"),
    ("infinite counter", "# TYPE c counter\nc +Inf\n"),
    ("counter sample with another name", "# TYPE c counter\nc_total 1\n"),
    ("gauge sample with a suffix", "# TYPE g gauge\ng_sum 1\n"),
    ("histogram bucket without le", "# TYPE h histogram\nh_bucket 1\n"),
    ("bad HELP escape", "# HELP c a\\tb\n# TYPE c counter\nc 1\n"),
    ("malformed HELP", "# HELP\n# TYPE c counter\nc 1\n"),
    ("HELP with a bad name", "# HELP c{x} a\n# TYPE c counter\nc 1\n"),
]


class Bad(unittest.TestCase):
    def test_each_refused(self):
        for what, text in BAD:
            with self.subTest(what=what):
                with self.assertRaises(PromTextError):
                    parse(text)


if __name__ == "__main__":
    unittest.main()
