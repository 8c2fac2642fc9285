# SPDX-License-Identifier: BSD-2-Clause
"""casetable - the shared table of response cases (response.json) and its
checks, for the drivers: tests/nginx/test_cases.py (nginx.cases),
tests/apache/test_cases.py (apache.cases) and tests/cgi/test_cases.py
(cgi.cases). A driver turns a case's settings (settings()) into its
adapter's configuration, and its request and upstream answer, and hands
what the client got to check(); the two servers in front of a python
upstream share the whole run (ServerCases). CSRF_CASES=REGEX runs only the
matching cases.
A case's expect.metrics is what the adapter's counters (the nginx zone,
csrf-cgi's counters file) gain from its request: check_metrics compares
them exactly, so the two adapters count each outcome the same way
(CSRF_CASES_SHOW_METRICS=1 prints each case's, to write a new row's).
Never prints a token or a cookie value."""

import copy
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the raw HTTP client and the exposition parser
sys.path.insert(0, os.path.join(HERE, "../nginx"))
from ngxtest import request  # noqa: E402
from promtext import parse  # noqa: E402

TABLE = os.path.join(HERE, "response.json")
ORIGIN = "http://app.test"
HOST = "app.test"
SECRET = re.compile(r"^(__Host-)?csrf_secret=")
META_TOKEN = re.compile(rb'<meta name="csrf-token" content="([^"]+)">')
FIELD_TOKEN = re.compile(rb'<input type="hidden" name="csrf_[0-9a-f]+" value="([^"]+)">')


def expand(s):
    """"pad=@2000" is pad= and 2000 x."""
    return re.sub(r"@(\d+)", lambda m: "x" * int(m.group(1)), s)


def load():
    with open(TABLE) as f:
        table = json.load(f)
    d = table["defaults"]
    want = os.environ.get("CSRF_CASES")
    out = []
    for c in table["cases"]:
        if want and not re.search(want, c["name"]):
            continue
        case = {"name": c["name"], "drift": c.get("drift"), "expect": c["expect"]}
        for part in ("conf", "request", "upstream"):
            merged = copy.deepcopy(d[part])
            merged.update(c.get(part, {}))
            case[part] = merged
        case["request"]["body"] = expand(case["request"]["body"]).encode()
        case["upstream"]["body"] = case["upstream"]["body"].encode("latin-1")
        out.append(case)
    return out


def settings(conf):
    """A case's conf as (setting, value) pairs in the order the drivers
    write them, named as csrf-cgi names them (nginx's directive is csrf_
    and the name): mode, form_action_csp, trusted_origin (one each),
    retry_token, body_max; the default settings left out."""
    out = []
    if conf["mode"]:
        out.append(("mode", conf["mode"]))
    if conf["form_action_csp"] is not None:
        out.append(("form_action_csp", "on" if conf["form_action_csp"] else "off"))
    for t in conf["trusted"]:
        out.append(("trusted_origin", t))
    if conf["retry_token"]:
        out.append(("retry_token", "on"))
    if conf["body_max"]:
        out.append(("body_max", "%d" % conf["body_max"]))
    return out


REASONS = {200: "OK", 302: "Found", 404: "Not Found"}


def answer(c, head, body):
    """The upstream's side (ngxtest.Upstream's handler): writes on c the
    answer of the case whose path head requests, as raw HTTP/1.1."""
    path = head.split(b" ", 2)[1].decode("latin-1")
    case = next((k for k in load() if "/case/" + k["name"] == path), None)
    if case is None:
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    up = case["upstream"]
    out = b"HTTP/1.1 %d %s\r\n" % (up["status"], REASONS.get(up["status"], "X").encode())
    for k, v in up["headers"]:
        out += ("%s: %s\r\n" % (k, v)).encode("latin-1")
    out += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(up["body"])
    if not head.startswith(b"HEAD "):
        out += up["body"]
    c.sendall(out)


def strip_injected(body):
    body = re.sub(rb'<meta name="csrf-param" content="[^"]*"><meta name="csrf-token" content="[^"]*">', b"", body)
    return re.sub(rb'<input type="hidden" name="csrf_[0-9a-f]+" value="[^"]*">', b"", body)


def tamper(token):
    """A token of the right shape whose MAC no longer verifies."""
    i = len(token) - 4  # in the MAC: the middle can make the token malformed instead
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]


def check(t, case, r, log, reached):
    """t: the unittest.TestCase; r: .status, .headers (lower-case names),
    .body, .all(name); log: the adapter's warnings for this case; reached:
    whether the application ran."""
    e = case["expect"]
    name = case["name"]
    t.assertEqual(r.status, e["status"], name)
    for h, values in e.get("headers", {}).items():
        t.assertEqual(r.all(h), values, "%s: %s" % (name, h))
    cookies = r.all("set-cookie")
    if "secret_cookie" in e:
        t.assertEqual(any(SECRET.match(c) for c in cookies), e["secret_cookie"], "%s: the secret cookie" % name)
    for c in e.get("set_cookie_has", []):
        t.assertIn(c, cookies, name)
    if case["request"]["method"] != "HEAD":
        if "body" in e:
            t.assertEqual(r.body, e["body"].encode("latin-1"), name)
        if "injected" in e:
            t.assertEqual(r.body.count(b'<input type="hidden" name="csrf_'), e["injected"], "%s: fields" % name)
        if "body_stripped" in e:
            t.assertEqual(strip_injected(r.body), e["body_stripped"].encode("latin-1"), name)
        if "body_has" in e:
            t.assertIn(e["body_has"].encode(), r.body, name)
    if "log" in e:
        t.assertIn(e["log"], log, name)
    if "upstream_reached" in e:
        t.assertEqual(reached, e["upstream_reached"], "%s: the application ran" % name)
    if "retry_token" in e:
        token = r.header("x-csrf-token")
        t.assertEqual(token is not None, e["retry_token"], "%s: X-CSRF-Token" % name)
        if token:
            m = META_TOKEN.search(r.body)
            t.assertTrue(m and m.group(1).decode() == token, "%s: the page's token is the header's" % name)


def secret_pair(r):
    """'name=value' of the secret cookie r sets (for a Cookie header), or
    None."""
    for c in r.all("set-cookie"):
        if SECRET.match(c):
            return c.split(";", 1)[0]
    return None


def run(t, send, mark):
    """Runs every case through an adapter. send(method, path, headers,
    body) answers one request (Host: HOST); mark() is where the upstream's
    requests and the adapter's log stand, a pair, before a case's request:
    t.reached(path, mark[0]) says whether the application ran since,
    t.log_of(path, mark[1]) gives the adapter's lines since; t.counters()
    reads its counters. t.adjust(case, r), where t has one, is the
    adapter's own reading of a response before the checks."""
    cases = load()
    t.assertTrue(cases, "no case matches CSRF_CASES")
    for case in cases:
        with t.subTest(case=case["name"]):
            path = "/case/" + case["name"]
            req = case["request"]
            headers = list(map(tuple, req["headers"]))
            if req.get("prime"):
                page = send("GET", path, [], b"")
                cookie = secret_pair(page)
                m = FIELD_TOKEN.search(page.body)
                t.assertTrue(cookie and m, "the priming page has no token")
                headers.append(("Cookie", cookie))
                if req["prime"] == "tampered":
                    headers.append(("X-CSRF-Token", tamper(m.group(1).decode())))
            counted = t.counters()
            where = mark()
            r = send(req["method"], path, headers, req["body"])
            t.assertIsNotNone(r, "no answer")
            if hasattr(t, "adjust"):
                t.adjust(case, r)
            check(t, case, r, t.log_of(path, where[1]), t.reached(path, where[0]))
            check_metrics(t, case, counted, t.counters())


def counters(fams):
    """The counter series of a parsed exposition (promtext.parse; None: no
    counters yet) as {'name{label=value,...}': value}, labels sorted by
    name, the zone label left out."""
    out = {}
    for f in (fams or {}).values():
        if f.type != "counter":
            continue
        for (name, labels), v in f.samples.items():
            key = "%s{%s}" % (name, ",".join("%s=%s" % kv for kv in labels if kv[0] != "zone"))
            out[key] = out.get(key, 0) + v
    return out


def check_metrics(t, case, before, after):
    """The counters the case's request changed (before and after as
    counters() gives them) are exactly its expect.metrics, when it has
    one."""
    want = case["expect"].get("metrics")
    got = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    if os.environ.get("CSRF_CASES_SHOW_METRICS"):
        print(case["name"], json.dumps({k: v for k, v in sorted(got.items()) if v}))
    if want is not None:
        t.assertEqual({k: v for k, v in got.items() if v}, want, "%s: the counters" % case["name"])


class ServerCases:
    """The table through a server in front of ngxtest.Upstream answering
    with answer() (nginx.cases, apache.cases), mixed into a
    servertest.ServerCase whose server has port, error_log() and
    crashed(); /metrics on it gives the adapter's counters."""

    def send(self, method, path, headers=(), body=b""):
        return request(self.server.port, method, path, headers, body, host=HOST)

    def reached(self, path, before):
        return any(h.split(b" ", 2)[1].decode("latin-1") == path for h, _ in self.up.requests[before:])

    def log_of(self, path, before):
        time.sleep(0.1)
        return "\n".join(l for l in self.server.error_log()[before:].splitlines() if '"%s"' % path in l)

    def counters(self):
        r = self.send("GET", "/metrics")
        self.assertEqual(r.status, 200)
        return counters(parse(r.body))

    def test_cases(self):
        run(self, self.send, lambda: (len(self.up.requests), len(self.server.error_log())))
        self.assertFalse(self.server.crashed())
