# SPDX-License-Identifier: BSD-2-Clause
"""promtext - a strict parser of the Prometheus text exposition format.

Every test that reads a metrics endpoint (the nginx module's csrf_metrics,
csrf-cgi --metrics, the library's rendering) parses it with this, so a
deviation from the format fails the test that met it. It follows the text
format 0.0.4 as Prometheus documents it ("Exposition formats", text-based
format), and is stricter than Prometheus' own parser where the format
leaves room:

- UTF-8, lines end with LF, the text ends with a LF; no CR, no blank line.
- "# HELP name docstring" and "# TYPE name type": the name matches
  [a-zA-Z_:][a-zA-Z0-9_:]*; the docstring's only escapes are \\ and \\n;
  the type is counter, gauge, histogram, summary or untyped. At most one
  HELP and one TYPE per family, both before its first sample; other "#"
  lines are comments.
- A sample: name, optional {label="value",...}, one space, a value,
  optionally one space and an integer timestamp. Label names match
  [a-zA-Z_][a-zA-Z0-9_]* and do not start with "__"; a label appears once
  per sample; label values escape only \\, \\" and \\n. Values are Go
  floats (digits, exponent, NaN, +Inf, -Inf).
- A family's lines are contiguous (HELP, TYPE, samples), and no series
  (name and label set) appears twice.
- Every sample of a family has its TYPE (no untyped sample without a TYPE
  line: stricter than the format, what the endpoints promise); a counter's
  samples are named as its TYPE line and are finite and non-negative, a
  gauge's are named as its TYPE line; histogram and summary samples carry
  the _bucket/_sum/_count suffixes and the le/quantile label.

parse(text) returns {family: Family}; a violation raises PromTextError with
the line number. As a program, it parses a file (or "-", stdin) and exits
0, or 1 with the error.
"""

import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Inf|inf|NaN)\Z")
TIMESTAMP = re.compile(r"-?[0-9]+\Z")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


class PromTextError(ValueError):
    pass


class Family:
    def __init__(self, name):
        self.name = name
        self.help = None
        self.type = None
        self.samples = {}  # (sample name, ((label, value), ...) sorted) -> float

    def value(self, sample=None, **labels):
        """The value of one series (sample name defaults to the family's)."""
        key = (sample or self.name, tuple(sorted(labels.items())))
        return self.samples[key]


def _fail(lineno, msg):
    raise PromTextError("line %d: %s" % (lineno, msg))


def _docstring(s, lineno):
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in "\\n":
                _fail(lineno, "HELP: bad escape in the docstring")
            out.append("\\" if s[i + 1] == "\\" else "\n")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _labels(s, i, lineno):
    """Parses {...} starting at s[i] == '{'; returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            _fail(lineno, "bad label name at column %d" % (i + 1))
        name = m.group(0)
        if name.startswith("__"):
            _fail(lineno, "label name %r is reserved (starts with __)" % name)
        if name in labels:
            _fail(lineno, "label %r given twice" % name)
        i = m.end()
        if s[i:i + 2] != '="':
            _fail(lineno, "label %r: expected =\"" % name)
        i += 2
        val = []
        while True:
            if i >= len(s):
                _fail(lineno, "label %r: unterminated value" % name)
            c = s[i]
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    _fail(lineno, "label %r: bad escape" % name)
                val.append({"\\": "\\", '"': '"', "n": "\n"}[s[i + 1]])
                i += 2
                continue
            if c == '"':
                i += 1
                break
            val.append(c)
            i += 1
        labels[name] = "".join(val)
        if i < len(s) and s[i] == ",":
            i += 1
            continue
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        _fail(lineno, "expected , or } after label %r" % name)


def _value(tok, lineno):
    if not FLOAT.match(tok):
        _fail(lineno, "bad value %r" % tok)
    return float(tok)


def _family_of(name, families):
    """The family a sample name belongs to: its own, or a histogram's or
    summary's by suffix."""
    if name in families:
        return families[name]
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            base = families.get(name[: -len(suffix)])
            if base is not None and base.type in ("histogram", "summary"):
                return base
    return None


def parse(text):
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PromTextError("not UTF-8: %s" % e)
    if text == "":
        raise PromTextError("empty exposition")
    if not text.endswith("\n"):
        raise PromTextError("the last line does not end with a line feed")
    if "\r" in text:
        raise PromTextError("a carriage return (lines end with LF only)")
    families = {}
    done = set()  # families whose lines have ended
    current = None
    for lineno, line in enumerate(text[:-1].split("\n"), 1):
        if line == "":
            _fail(lineno, "blank line")
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[0] == "#" and parts[1] in ("HELP", "TYPE"):
                kind, name = parts[1], parts[2]
                if not NAME.fullmatch(name):
                    _fail(lineno, "%s: bad metric name %r" % (kind, name))
                fam = families.get(name)
                if fam is None:
                    fam = families[name] = Family(name)
                if name in done:
                    _fail(lineno, "%s for %s after its family's lines ended" % (kind, name))
                if fam.samples:
                    _fail(lineno, "%s for %s after its samples" % (kind, name))
                if current is not None and current is not fam:
                    done.add(current.name)
                current = fam
                if kind == "HELP":
                    if fam.help is not None:
                        _fail(lineno, "second HELP for %s" % name)
                    fam.help = _docstring(parts[3] if len(parts) == 4 else "", lineno)
                else:
                    if fam.type is not None:
                        _fail(lineno, "second TYPE for %s" % name)
                    if len(parts) != 4 or parts[3] not in TYPES:
                        _fail(lineno, "TYPE for %s: bad type" % name)
                    fam.type = parts[3]
            elif line.startswith("# HELP") or line.startswith("# TYPE") or line.startswith("#HELP") or \
                    line.startswith("#TYPE"):
                _fail(lineno, "malformed HELP or TYPE line")
            continue
        m = NAME.match(line)
        if not m:
            _fail(lineno, "bad metric name")
        name = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = _labels(line, i, lineno)
        if i >= len(line) or line[i] != " ":
            _fail(lineno, "expected one space before the value")
        rest = line[i + 1:].split(" ")
        if len(rest) not in (1, 2) or "" in rest:
            _fail(lineno, "expected a value and an optional timestamp, one space apart")
        value = _value(rest[0], lineno)
        if len(rest) == 2 and not TIMESTAMP.match(rest[1]):
            _fail(lineno, "bad timestamp %r" % rest[1])
        fam = _family_of(name, families)
        if fam is None or fam.type is None:
            _fail(lineno, "sample %s has no TYPE line before it" % name)
        if fam.name in done or (current is not None and current is not fam):
            _fail(lineno, "sample %s outside its family's lines" % name)
        current = fam
        if fam.type in ("counter", "gauge", "untyped") and name != fam.name:
            _fail(lineno, "%s sample named %s, not %s" % (fam.type, name, fam.name))
        if fam.type == "counter" and (math.isnan(value) or value < 0 or math.isinf(value)):
            _fail(lineno, "counter %s with value %r (must be finite and non-negative)" % (name, rest[0]))
        if fam.type == "histogram" and name.endswith("_bucket") and "le" not in labels:
            _fail(lineno, "histogram bucket without le")
        key = (name, tuple(sorted(labels.items())))
        if key in fam.samples:
            _fail(lineno, "series %s%s given twice" % (name, dict(labels)))
        fam.samples[key] = value
    return families


def main(argv):
    if len(argv) != 2:
        print("usage: promtext.py FILE|-", file=sys.stderr)
        return 2
    data = sys.stdin.buffer.read() if argv[1] == "-" else open(argv[1], "rb").read()
    try:
        fams = parse(data)
    except PromTextError as e:
        print("promtext: %s" % e, file=sys.stderr)
        return 1
    print("promtext: %d families, %d series" % (len(fams), sum(len(f.samples) for f in fams.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
