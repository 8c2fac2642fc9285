# SPDX-License-Identifier: BSD-2-Clause
"""Targeted pages for scan_diff.py --attack: where the tokenizer's fast
paths decide (plain_tag's second-letter filter and name hash, the
attribute loop, attr_run's eight-byte lowering), each a page and its cuts.

- every case variant of each name the injector knows (and of near
  names: strong, html, body, font), as a start and an end tag, ended by
  each byte that can end a name, in each context the model follows
  (a table, an open form, a template, a select, svg, noscript), shifted
  against the 64-byte blocks and cut in or around its name;
- the attribute names the policy reads (action, method, formaction,
  formmethod, type, href, form) in forms, submitters and base, in case
  variants, cut by one, grown by one, with a NUL, doubled, with values
  that are references, quotes and '>', before or after a filler
  attribute, cut at every offset of the tag.

A form of our origin follows each, so that a state the tag left wrong
shows as a token more or less.
"""
import random

NAMES = ["form", "select", "template", "svg", "math", "script", "noscript", "plaintext", "textarea", "title",
         "style", "xmp", "iframe", "noembed", "noframes", "table", "base", "meta", "button", "input", "head",
         "keygen", "td", "th", "tr", "col", "tbody", "thead", "tfoot", "caption", "colgroup", "strong", "small",
         "html", "body", "font"]
CONTEXTS = ["", "<table>", "<form method=post action=/q>", "<template>", "<select>", "<svg>", "<table><tr><td>",
            "<noscript>"]
ENDS = [">", " >", "/>", "\t>", "\x0c>", "\r>", "\n>", " x>", " a=b>", "/x>"]
TAIL = ("<form method=post action=/x><input type=submit></form><p>t</p></form>"
        "<form method=post><button></button></form>")


def _variants(n):
    if len(n) <= 5:
        for bits in range(1 << len(n)):
            yield "".join(c.upper() if bits >> i & 1 else c for i, c in enumerate(n))
    else:
        yield from (n, n.upper(), n.capitalize(), n[:-1] + n[-1].upper(),
                    "".join(c.upper() if i % 2 else c for i, c in enumerate(n)))


def tag_names(rng):
    for n in NAMES:
        for v in _variants(n):
            for end in ("", "/"):
                for close in ENDS:
                    for ctx in CONTEXTS:
                        pre = "y" * rng.randint(0, 70)
                        page = (pre + ctx + "<" + end + v + close + TAIL).encode("latin-1")
                        at = len(pre) + len(ctx) + rng.randint(0, len(v) + 3)
                        yield page, rng.choice([[], [at], sorted({at, rng.randint(1, len(page) - 1)})])


ATTRS = ["action", "method", "formaction", "formmethod", "type", "href", "form", "name", "content"]
VALUES = ['"post"', "'post'", "post", '"https://evil.example/"', '"/x"', "//evil.example/", '"&#x70;ost"',
          '"submit"', "submit", '"get"', '""', '"a>b"', "'a\"b'", "p&#111;st", '"image"', '"button"']
FILLERS = ["", " id=a", ' class="ccccccccccccccccccc"', " x", " aaaaaaaaaaaaaaaaaaaa=1", " method=get",
           " action=//evil", " type=text", " formaction=/z"]


def attributes(rng):
    for tg in ("form", "input", "button", "base", "FORM", "Input"):
        for an in ATTRS:
            for a in (an, an.upper(), an.capitalize(), an + "x", an[:-1], "x" + an, an + "\x00",
                      an[:3] + "\x00" + an[3:], an + an, "data-" + an, "=" + an, an[:-1] + chr(ord(an[-1]) ^ 0x20)):
                for _ in range(3):
                    sep = rng.choice([" ", "/", "\n", "  ", "\t/ "])
                    fill = rng.choice(FILLERS)
                    one = sep + a + "=" + rng.choice(VALUES)
                    attrs = one + fill if rng.random() < 0.5 else fill + one
                    if tg.lower() == "form":
                        pre, body = "<p>" + "z" * rng.randint(0, 64), "<input type=submit></form>"
                        attrs += " method=post" if rng.random() < 0.5 else ""
                    elif tg.lower() == "base":
                        pre, body = "z" * rng.randint(0, 64), "<form method=post action=/x></form><form method=post></form>"
                    else:
                        pre, body = "z" * rng.randint(0, 64) + "<form method=post action=/y>", "</form>"
                    tag = "<" + tg + attrs + rng.choice([">", "/>", " >"])
                    page = (pre + tag + body).encode("latin-1")
                    for at in range(len(pre), len(pre) + len(tag) + 1):
                        yield page, [at] if 0 < at < len(page) else []


def pages(rng):
    yield from tag_names(rng)
    yield from attributes(rng)
