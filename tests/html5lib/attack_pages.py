# SPDX-License-Identifier: BSD-2-Clause
"""Targeted pages for scan_diff.py --attack: where the tokenizer's fast
paths decide (plain_tag's second-letter filter and name hash, the
attribute loop, attr_run's eight-byte lowering), each a page and its cuts.

- every case variant of each name the injector knows (and of near
  names: strong, html, body, font), as a start and an end tag, ended by
  each byte that can end a name, in each context the model follows
  (a table, an open form, a template, one "in column group", a select,
  svg, noscript), shifted against the 64-byte blocks and cut in or
  around its name;
- the attribute names the policy reads (action, method, formaction,
  formmethod, type, href, form) in forms, submitters and base, in case
  variants, cut by one, grown by one, with a NUL, doubled, with values
  that are references, quotes and '>', before or after a filler
  attribute, cut at every offset of the tag.

- plain_fast's (the plain tags of a scan window read from its masks):
  three plain tags first (plain_tag takes the first three after the start
  or a tag that matters), then a tag of each shape whose reading decides
  (quotes that do or do not open a value, blanks, control bytes and bytes
  >= 0x80 in names, names that look plain but are not, end tags, '<' in
  tags, values across blocks and windows) with its '<' at each place of
  the first blocks and around the window's end (2048 bytes and the
  72-byte re-read); and tag soup whose quotes decide whether a form
  written inside a tag is one.
- the shortcuts of the quiet tags (a button or input with neither
  formaction nor formmethod, a form end tag, moved without the model's
  call), attribute names judged from the page's bytes (0x20 set in each),
  clean values left undecoded and path actions judged by their first two
  bytes: submitters and form end tags in each context the model follows,
  names in any case, as references, with a NUL or doubled (the first
  wins), action, formaction and href values that start like a path ("/\\",
  "//", a tab or a reference after the slash), '&' and NUL at the
  sixteen-byte edge of the clean test and at the caps of the kept values,
  cut at every offset of the tag (40 of a long one) or at 60 of the page.

- attrs_masked's (masked_edges): form, submitter, meta and base tags of
  usual attributes whose '=', quotes and closing quotes fall at each
  place near the end of the 64 bits read at once and of the scan window,
  values holding the other quote, '>' and a form start tag, names that
  start with '='; cut at every byte of the tag.
- the hold's limit (hold_events): a held form that reaches it around the
  tags that may or may not settle it, cut around the limit.

A form of our origin follows each, so that a state the tag left wrong
shows as a token more or less.
"""
import random

NAMES = ["form", "select", "template", "svg", "math", "script", "noscript", "plaintext", "textarea", "title",
         "style", "xmp", "iframe", "noembed", "noframes", "table", "base", "meta", "button", "input", "head",
         "keygen", "td", "th", "tr", "col", "tbody", "thead", "tfoot", "caption", "colgroup", "strong", "small",
         "html", "body", "font", "link", "basefont", "bgsound"]
CONTEXTS = ["", "<table>", "<form method=post action=/q>", "<template>", "<select>", "<svg>", "<table><tr><td>",
            "<noscript>", "<template><col>"]
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


HIDE = "<form method=post action=/h><input></form>"
EDGE_TAGS = ['<a b=c"d>', '<a "b"="c">', '<a b = "c">', "<a b='c\">'>", '<a b="c"d="e">', '<a/b="c">',
             '<a\tb="c">', '<a\rb="c>">', '<a\x0cb="c">', '<a\x00b="c>' + HIDE + '">', '<a\x0bb="c>' + HIDE + '">',
             '<a\x80b="c">', '<a b\x80="c">', '<FORM method=post action=/q>', '<Form\tmethod=post>',
             '<fOrM/method=post>', '<form\x00 method=post>', '</form>', '</FORM >', '</form/>', '</form\t>',
             '</form\x0c>', '</forms>', '</form\x00>', '<Input type=submit>', '<INPUT\x0ctype=submit>', '<BUTTON\r>',
             '<meta name=referrer>', '<BASE href="//evil.example/">', '<Script>x="' + HIDE + '"</script>',
             '<STYLE>a{}</STYLE>', '<textArea>' + HIDE + '</textarea>', '<TITLE>x</TITLE>',
             '<noscript>' + HIDE + '</noscript>', '<Select><option></select>', '<SVG><a/></svg>', '<maTh></math>',
             '<Template>' + HIDE + '</template>', '<tAble><tr><td></table>', '<iFrame></iframe>',
             '<noEmbed>' + HIDE + '</noembed>', '<Xmp>' + HIDE + '</xmp>', '<plainText>', '<!-- ' + HIDE + ' -->',
             '<!x>', '<?x>', '<a b="' + HIDE + '">', "<a b='" + HIDE + "'>", '<a b="c" d=\'e\'>', '<a b="c"/>',
             '<abc' + 'd' * 70 + '>', '<a ' + 'x' * 80 + '="y">', '<a b="' + 'v' * 130 + HIDE + '">',
             '<a b="' + 'v' * 2100 + '">', '<a' + ' x' * 1100 + '>', '<x<form method=post action=/h>',
             '<a b="c"' + HIDE + '>', '<td>', '</td>', '<TD>', '<caption>', '<titlex>', '<forma>', '<s>', '<svgx>',
             '<svg\x00>', '<ScRiPt\x0b>', '<a b="c\'>', '<a b="c" d="e" f="g" h="i" j="' + HIDE + '">',
             '<a  b="c>' + HIDE + '">', '</a b="c>' + HIDE + '">', '<a b=""c="d>' + HIDE + '">', '<a =b="c>' + HIDE + '">',
             '<a b=="c>' + HIDE + '">', '<a b ="c>' + HIDE + '">', '<a b= "c>' + HIDE + '">', '<a b="c" d"e="f>' + HIDE + '">']


def plain_fast_edges(rng):
    for tg in EDGE_TAGS:
        for filler, places in (("<i>", list(range(40, 140)) + list(range(1950, 2110))), ('<a b="c">y', range(40, 140))):
            for pos in places:
                pre = rng.choice(["<b><b><b>", "<form method=post action=/a><b><b><b>"])
                body = filler * max(0, (pos - len(pre)) // len(filler))
                body += "w" * max(0, pos - len(pre) - len(body))
                page = (pre + body + tg + "'\">" + "z" * 80 + TAIL).encode("latin-1")
                at = len(pre) + len(body)
                cut = [c for c in (at + rng.randint(-80, 80), rng.randint(1, len(page) - 1)) if 0 < c < len(page)]
                yield page, rng.choice([[], cut[:1], sorted(set(cut))])


SOUP = [" ", " ", "\t", "\n", "\r", "\x0c", "\x00", "\x0b", "/", "=", "=", '"', '"', "'", "'", "b", "dd", ">" + HIDE,
        ">" + HIDE, "<", "\x80", "<form", ' b="c"', " b='c'", "x" * 60, "<!--"]
SOUP_NAMES = ["a", "A", "i", "div", "s", "svgs", "form", "FORM", "input", "button", "td", "t", "xm", "tItle", "script",
              "select", "meta", "base", "math", "table", "xmp", "textarea", "noscript", "template", "forms", "abc" * 25]


def hidden_forms(rng):
    for _ in range(20000):
        out = ["w" * rng.randint(0, 140), "<b><b><b>"]
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                out.append(("<i>" + "t" * rng.randint(0, 2)) * rng.randint(0, 60))
            out.append("y" * rng.choice([0, 0, rng.randint(0, 140)]))
            name = rng.choice(SOUP_NAMES)
            if rng.random() < 0.15:
                name = name[:1] + rng.choice(["\x00", "\x0b", "\x80", '"', "'", "=", "<"]) + name[1:]
            out.append("<" + rng.choice(["", "", "", "/"]) + name + "".join(
                rng.choice(SOUP) for _ in range(rng.randint(1, 14))) + rng.choice([">", ">", "", '">', "'>"]))
        out.append("\"'>" + "z" * rng.randint(72, 200) + HIDE)
        page = "".join(out).encode("latin-1")
        n = len(page)
        yield page, rng.choice([[], [], [rng.randint(1, n - 1)], sorted(set(rng.randint(1, n - 1) for _ in range(8)))])


QUIET_CTX = ["", "<template>", "<select>", "<svg>", "<math><mi>", "<table>", "<table><tr><td>", "<noscript>",
             "<form method=post action=/n>", "</form>", "<form id=f method=post action=/i>", "<svg><foreignObject>",
             "<math><annotation-xml encoding=text/html>", "<template><form method=post>"]
URLS = ["/submit", "/s", "/", "//evil.example/", "/\\evil.example/", "\\/evil.example/", "/\t/evil.example/",
        "/\n\\evil.example/", "/&#92;evil.example/", "/&#47;evil.example/", "/&sol;evil.example/",
        "/&Tab;/evil.example/", "/&", "/&amp;x", " //evil.example/", "\x01/x", "/\x00/evil.example/", "/\x7f",
        "/\x80", "https://self.example/x", "https://evil.example/", "https://self.example&#46;evil.example/",
        "/abcdefghijklmn&", "/abcdefghijklmno&#47;", "/abcdefghijklm\x00x", "/abcdefghijklmnop", "?q", "#h",
        "/" + "a" * 2040 + "&#47;", "/" + "a" * 2046 + "\x00", "//evil.example/" + "b" * 2050]
METHODS = ["post", "POST", "pOsT", "p&#111;st", "post\x00", "get", "GET", "dialog", "DIALOG", "dial&#111;g", "",
           "x" * 15 + "&", "post" + " " * 30]
TYPES = ["submit", "SUBMIT", "image", "ImAgE", "reset", "button", "BUTTON", "text", "", "&#115;ubmit",
         "imag\x00", "rese&#116;"]


def _name(rng, n):
    r = rng.random()
    if r < 0.35:
        return n
    if r < 0.5:
        return n.upper()
    if r < 0.7:
        return "".join(c.upper() if rng.random() < 0.5 else c for c in n)
    return rng.choice(["&#%d;%s" % (ord(n[0]), n[1:]), n[:2] + "\x00" + n[2:], n + "\x00", "=" + n,
                       n[:-1] + chr(ord(n[-1]) - 0x40 if n[-1] > "`" else ord(n[-1])), n + n[-1], n[1:]])


def _val(rng, v):
    q = rng.choice(['"', "'", ""])
    if not q:
        v = "".join(c for c in v if c not in " \t\n\r\x0c>\"'")
    return "=" + q + v.replace(q, "") + q if q else "=" + v


def quiet(rng):
    for ctx in QUIET_CTX:
        for tg in ("button", "input", "BUTTON", "Input", "form", "base"):
            for _ in range(12):
                attrs = ""
                for _ in range(rng.randint(0, 4)):
                    kind = rng.random()
                    if tg.lower() == "form":
                        an, vals = rng.choice([("action", URLS), ("method", METHODS), ("id", ["f", "g"])])
                    elif tg.lower() == "base":
                        an, vals = "href", URLS
                    else:
                        an, vals = rng.choice([("formaction", URLS), ("formmethod", METHODS), ("type", TYPES),
                                               ("form", ["f", "g", ""])])
                    if kind < 0.1:
                        an, vals = rng.choice(["x", "data-" + an, an[:-1], an + "x", "aaaaaaaaaaaaaaaa"]), URLS
                    attrs += rng.choice([" ", "\n", "/", "  "]) + _name(rng, an) + (_val(rng, rng.choice(vals))
                                                                                     if rng.random() < 0.95 else "")
                tag = "<" + tg + attrs + rng.choice([">", "/>", " >"])
                if tg.lower() == "form":
                    body = "<input type=submit><button>b</button></form><button formaction=//evil.example/>e</button>"
                elif tg.lower() == "base":
                    body = "<form method=post action=rel><button>b</button></form>"
                else:
                    body = "</form>" * rng.randint(0, 2)
                pre = "z" * rng.randint(0, 40) + rng.choice(["", "<form method=post action=/p>",
                                                             "<form id=f method=post>"]) + ctx
                end = rng.choice(["</form>", "</FORM>", "</form x=y>", "</form/>", "</form\n>", ""])
                page = (pre + tag + body + end + TAIL).encode("latin-1")
                offs = range(len(pre), len(pre) + len(tag) + 1)
                for at in offs if len(offs) <= 40 else sorted(rng.sample(offs, 40)):
                    yield page, [at] if 0 < at < len(page) else []
                cuts = sorted(rng.sample(range(1, len(page)), min(60, len(page) - 1)))
                yield page, cuts


HOLD_MAX = 32768  # CSRF_INJECT_HOLD_MAX


def quiet_long(rng):
    """A quiet submitter that ends at the hold's last byte or past it (the
    form then goes without its token, whatever comes after), and a button
    that would rule the form out after it, whole and cut."""
    for sub in ("<input type=submit>", "<button>", "<INPUT TYPE=image>", "<button type=reset>"):
        for d in range(-3, 3):  # the '>' of sub ends at the hold's last byte + d
            page = ("<form method=post action=/p>" + "y" * (HOLD_MAX - len(sub) + 1 + d) + sub +
                    "<button formaction=//evil.example/>e</button></form>" + TAIL).encode("latin-1")
            yield page, []
            yield page, sorted(rng.sample(range(1, len(page)), 3))


MASK_KEYS = [("action", ["//evil.example/", "/ok", "https://evil.example/x", "&#47;/evil.example/"]),
             ("method", ["post", "get", "p&#111;st", "dialog"]), ("formaction", ["//evil.example/", "/ok", "/\\e/"]),
             ("formmethod", ["get", "post"]), ("type", ["submit", "image", "button", "reset"]), ("form", ["f"]),
             ("id", ["f"]), ("name", ["referrer"]), ("content", ["no-referrer"])]


def _masked_attr(rng, size):
    """name="value" (or '') of about size bytes: a name the policy reads
    (in case variants, a reference or a NUL in it) or a filler one, the
    value grown, the other quote, a '>' and a form start tag in it now
    and then."""
    if rng.random() < 0.08:  # a name that starts with '=' (13.2.5.32): its quotes open no value
        q = rng.choice("\"'")
        o = "'" if q == '"' else '"'
        n, vals = rng.choice(MASK_KEYS)
        return "=" + q + "a " + n + "=" + o + rng.choice(vals) + o + " b=" + q
    if rng.random() < 0.6:
        n, vals = rng.choice(MASK_KEYS)
        n = rng.choice([n, n.upper(), n.capitalize(), "&#%d;%s" % (ord(n[0]), n[1:]), n + "\x00", n[:-1] + "\x00"])
        v = rng.choice(vals)
    else:
        n, v = "d" * max(1, min(30, size // 2)), ""
    q = rng.choice("\"'")
    grow = max(0, size - len(n) - 3 - len(v))
    r = rng.random()
    if r < 0.4:
        v += "?" + "p" * grow
    elif r < 0.7:
        n = "z" * grow + n
    else:
        v += "v" * grow
    if rng.random() < 0.25:  # a form start tag in the value: a token there if a quote or '>' ended it
        k = rng.randint(0, len(v))
        v = v[:k] + rng.choice([">", "'", '"', "'>", '">']) + "<form method=post>" + v[k:]
    return n + "=" + q + v + q


def masked_edges(rng):
    """attrs_masked's (the usual name="value" attributes read from the
    masks of 64 bytes at once): form, submitter, meta and base tags whose
    attributes put a name's '=', its quote and the closing quote at every
    place near the 64 bits' end, the sixteen bytes a name needs and the
    scan window's end (2048 and 4096 bytes), in the contexts the model
    follows; whole, cut at every byte of the tag, and at one."""
    for _ in range(1500):
        tg = rng.choice(["form", "form", "FORM", "button", "input", "meta", "base"])
        tag = "<" + tg + "".join(rng.choice([" "] * 8 + ["\n", "  ", "\t", "/", ""]) + _masked_attr(rng, rng.randint(1, 70))
                                 for _ in range(rng.randint(1, 5))) + rng.choice([">", ">", " >", "/>"])
        ctx = rng.choice(["", "", "", "<form method=post action=/p>", "<template>", "<table>", "<select>", "<svg>",
                          "<noscript>", "<form id=f method=post>", "<math><mi>"])
        pre = "<b>" * rng.randint(0, 2) + ctx
        lead = rng.randint(0, 200) if rng.random() < 0.6 else rng.choice([2048, 4096]) - rng.randint(-10, 80) - len(tg)
        pre += "w" * max(0, lead - len(pre))
        body = "<input type=submit><button>b</button></form>" if tg.lower() == "form" else "</form>"
        page = (pre + tag + body + "<button form=f formaction=//evil.example/>x</button>" + TAIL).encode("latin-1")
        at = len(pre)
        every = [c for c in range(at, at + len(tag) + 1) if 0 < c < len(page)]
        yield page, []
        for k in range(0, len(every), 60):
            yield page, every[k:k + 60]
        yield page, [rng.choice(every)]


HOLD_EVENTS = ["<input type=submit>", "<button>", "<template></form></template>", "<template>", "</template>",
               "</form>", "<noscript><input></noscript>", "<noscript><button formaction=//e/>x</button></noscript>",
               "\x1b$B", "<head>", "<meta name=referrer content=no-referrer>", "<form method=post>", "<table>",
               "<td>", "</table>", "<button formaction=//evil.example/>", "<button formmethod=get>", "<select>",
               "</select>", "<svg>", "</svg>", "<!-- x -->", "<i>", "<textarea>x</textarea>",
               "<input form=f formaction=//evil.example/>", "<plaintext>", "<base href=//evil.example/>",
               "<template><form method=post>", "<button form=g>"]


def hold_events(rng):
    """A held form whose bytes reach the hold's limit (32768) around a run
    of the tags that can settle it or not (quiet submitters, a form end
    tag inside a template, noscript, ESC, a head's meta tags, table tags,
    nested forms, a stop): LONG_FORM at the same place however the stream
    was cut; whole, cut around the limit, at random and at every byte
    from 40 before it to 20 after it."""
    for _ in range(120):
        head = rng.choice(["", "<form method=post action=/p>", "<table><tr><td>"]) + rng.choice(
            ["<form method=post action=/p>", "<form id=f method=post>", "<FORM METHOD=\"post\" ACTION=\"/q\">"])
        evs = [rng.choice(HOLD_EVENTS) for _ in range(rng.randint(1, 5))]
        fill = "y" * max(0, HOLD_MAX - len("".join(evs)) + rng.randint(-40, 8))
        body = "".join(evs[:-1]) + fill + evs[-1] if rng.random() < 0.5 else fill + "".join(evs)
        tail = "".join(rng.choice(HOLD_EVENTS) for _ in range(rng.randint(0, 3))) + rng.choice(["</form>", ""]) + TAIL
        page = (head + body + tail).encode("latin-1")
        n, lim = len(page), len(head) + HOLD_MAX
        yield page, []
        yield page, sorted(set(c for c in (lim + rng.randint(-60, 60) for _ in range(3)) if 0 < c < n))
        yield page, sorted(set(rng.randint(1, n - 1) for _ in range(6)))
        yield page, list(range(max(1, lim - 40), min(n, lim + 20)))


REF_PARTS = ["<meta name=referrer content=no-referrer>", "<META NAME=\"referrer\" CONTENT=\"no-referrer\">",
             "<meta name=referrer content=origin>", "<head>", "</head>", "<noscript><input></noscript>",
             "<noscript><button formaction=//e/>x</button></noscript>", "<noscript><input form=f formmethod=get></noscript>",
             "<input type=submit>", "<button formmethod=get>", "<button formaction=//evil.example/>", "</form>",
             "<form method=post action=/r>", "<form id=f method=post>", "<template>", "</template>", "<table>", "<td>",
             "<i>", "<svg>", "</svg>", "<select>", "</select>", "<!-- c -->", "x" * 70]


def referrer_pages(rng):
    """CSRF_INJECT_OPT_RAISE_REFERRER (scan_diff.py runs these with it):
    no-referrer meta tags before, inside and after held forms, forms that
    a noscript button or a submitter rules out or that reach the hold's
    limit (inside noscript too), whole, at random cuts and cut at every
    byte around a meta tag."""
    nrm, plain = REF_PARTS[:2], ["<i>", "<!-- c -->", "x" * 70, "<td>", "</head>", ""]
    for _ in range(700):
        out = ["<form method=post action=/p>" if rng.random() < 0.7 else ""]
        for _ in range(rng.randint(0, 4)):
            out.append(rng.choice(REF_PARTS))
        if rng.random() < 0.5:  # a rule-out, then meta tags with no tag that settles between them
            out.append(rng.choice(REF_PARTS[5:11] + ["<noscript>" + "y" * (HOLD_MAX - rng.randint(0, 120)) +
                                                     "</noscript>"]))
            for _ in range(rng.randint(2, 3)):
                out.append(rng.choice(plain) + rng.choice(nrm))
        for _ in range(rng.randint(0, 4)):
            out.append(rng.choice(REF_PARTS))
        if rng.random() < 0.1:
            k = rng.randint(1, len(out))
            out.insert(k, rng.choice(["", "<noscript>"]) + "y" * (HOLD_MAX - rng.randint(0, 120)))
        out.append(rng.choice(["</form>", ""]) + TAIL)
        page = "".join(out).encode("latin-1")
        n = len(page)
        m = page.rfind(b"<meta")
        yield page, []
        yield page, sorted(set(rng.randint(1, n - 1) for _ in range(rng.randint(1, 8))))
        if m > 0:
            yield page, [c for c in range(m - 10, m + 50) if 0 < c < n]


def pages(rng):
    yield from tag_names(rng)
    yield from attributes(rng)
    yield from plain_fast_edges(rng)
    yield from hidden_forms(rng)
    yield from quiet(rng)
    yield from quiet_long(rng)
    yield from masked_edges(rng)
    yield from hold_events(rng)
