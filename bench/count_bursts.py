# SPDX-License-Identifier: BSD-2-Clause
"""count_bursts.py PORT WORKER_PID PAIRS BURST COOKIE_FILE BODY_FILE - the
nginx worker's CPU per request in short bursts alternating between a
location that counts (/count/) and one that does not (/quiet/), for
bench/nginx_count.sh.

A burst is BURST requests over one keep-alive connection, one after the
other; the worker's time on the CPU (/proc/PID/schedstat, nanoseconds) is
read before and after it. A pair of bursts takes some tens of
milliseconds, so what drifts on a shared machine over seconds cancels
within a pair; which location goes first swaps every pair. Prints one
JSON line a burst: bench (nginx_count_get, the 20-form page;
nginx_count_post, a POST whose token is in the body), variant (off:
/quiet/, on: /count/), pair, cpu_ns (per request). The cookie and the
body are read from files so that no token is on a command line."""
import http.client
import json
import sys

port, worker, pairs, burst = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cookie = open(sys.argv[5]).read().strip()
body = open(sys.argv[6]).read().strip()


def oncpu():
    with open(f"/proc/{worker}/schedstat") as f:
        return int(f.read().split()[0])


conn = http.client.HTTPConnection("127.0.0.1", port)


def one(kind, loc):
    if kind == "get":
        conn.request("GET", f"/{loc}/form.html", headers={"Cookie": cookie})
        want = 200
    else:
        conn.request("POST", f"/{loc}/submit", body=body,
                     headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        want = 303
    r = conn.getresponse()
    r.read()
    if r.status != want:
        sys.exit(f"count_bursts: {kind} /{loc}/ answered {r.status}, not {want}")


for kind in ("get", "post"):
    for loc in ("quiet", "count"):  # warm-up
        for _ in range(burst):
            one(kind, loc)
    for p in range(pairs):
        order = ("quiet", "count") if p % 2 == 0 else ("count", "quiet")
        for loc in order:
            t0 = oncpu()
            for _ in range(burst):
                one(kind, loc)
            t1 = oncpu()
            print(json.dumps({"bench": f"nginx_count_{kind}", "variant": "on" if loc == "count" else "off",
                              "pair": p, "cpu_ns": (t1 - t0) / burst}))
