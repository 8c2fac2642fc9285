# SPDX-License-Identifier: BSD-2-Clause
"""report.py - turns bench/run.sh's measurements into the table printed at
the end of `make bench`, bench/RESULTS.md and bench/results.png (gnuplot)."""
import argparse
import datetime
import json
import os
import statistics
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--ops", required=True)
ap.add_argument("--servers", required=True)
ap.add_argument("--counts", default=None, help="bench/nginx_count.sh's instructions and CPU per request")
ap.add_argument("--inject", default=None, help="csrf-bench-inject's JSON lines")
ap.add_argument("--stores", default=None)
ap.add_argument("--out", required=True)
ap.add_argument("--cpu", default="unknown")
ap.add_argument("--cmd", default="make bench")
ap.add_argument("--quick", default="0")
ap.add_argument("--cgi", default="", help="csrf-cgi's section from bench/cgi.sh (Markdown)")
a = ap.parse_args()



def jsonl(path):
    """The JSON objects of a file of JSON lines; none if there is no file."""
    if not path or not os.path.exists(path):
        return
    for line in open(path):
        line = line.strip()
        if line:
            yield json.loads(line)


ops = {}
for r in jsonl(a.ops):
    row = r["row"]
    ops.setdefault((row["impl"], row["op"]), []).append(row["ns"])
ops = {k: statistics.median(v) for k, v in ops.items()}

servers = {}
for r in jsonl(a.servers):
    servers.setdefault((r["bench"], r["variant"]), []).append(r)

# Counting off and on in one nginx worker (bench/nginx_count.sh):
# callgrind's instructions per request, one figure a segment; the worker's
# CPU per request, one figure a burst, bursts in pairs.
count_ir = {}
bursts = {}
for r in jsonl(a.counts):
    if "ir" in r:
        count_ir.setdefault((r["bench"], r["variant"]), []).append(r["ir"])
    elif "cpu_ns" in r:
        bursts.setdefault(r["bench"], {}).setdefault(r["pair"], {})[r["variant"]] = r["cpu_ns"]


def med(rows):
    s = sorted(rows, key=lambda r: r["rps"])
    return s[len(s) // 2]


def paired(base_rows, var_rows):
    """The ratio of two variants measured in alternation: the median of
    the ratios of runs made one after the other (noise that drifts over
    minutes cancels within a pair), and the middle half of those ratios
    (None below 4 pairs). The ratio of the median runs when the counts
    differ."""
    if len(base_rows) != len(var_rows) or not base_rows:
        b, v = med(base_rows), med(var_rows)
        return (v["rps"] / b["rps"] if b["rps"] else 0), None
    rs = [v["rps"] / b["rps"] if b["rps"] else 0 for b, v in zip(base_rows, var_rows)]
    if len(rs) < 4:
        return statistics.median(rs), None
    q = statistics.quantiles(rs, n=4)
    return statistics.median(rs), (q[0], q[2])


def us(ns):
    return f"{ns / 1000:.2f} µs" if ns >= 1000 else f"{ns:.0f} ns"


lines = []
verify = ops.get(("libcsrf", "verify"))
floor = ops.get(("libcsrf", "mac_floor"))
peer_verify = {k[0]: v for k, v in ops.items() if k[1] == "verify" and k[0] != "libcsrf"}
lines.append("| implementation | issue | verify | check (whole request) | verify vs libcsrf |")
lines.append("|---|---:|---:|---:|---:|")
impls = ["libcsrf"] + sorted({k[0] for k in ops if k[0] not in ("libcsrf", "openssl")}, key=lambda i: ops.get((i, "verify"), 0))
for impl in impls:
    iss, ver, chk = ops.get((impl, "issue")), ops.get((impl, "verify")), ops.get((impl, "check"))
    ratio = f"{ver / verify:.1f}×" if ver and verify else "–"
    lines.append(f"| {impl} | {us(iss) if iss else '–'} | {us(ver) if ver else '–'} | {us(chk) if chk else '–'} | {ratio} |")
# libcsrf's verify above binds a session, as the demo does; the nginx
# module and csrf-cgi bind none by default, and check the signed secret
# cookie on every request
for op, what in (("verify_nosession", "libcsrf, no session bound (the nginx module's and csrf-cgi's default)"),
                 ("cookie_decode", "libcsrf, the signed secret cookie checked")):
    v = ops.get(("libcsrf", op))
    if v and verify:
        lines.append(f"| {what} | | {us(v)} | | {v / verify:.2f}× |")
if floor:
    lines.append(f"| floor: one HMAC-SHA256 over 64 bytes, libcsrf's precomputed states | | {us(floor)} | | {floor / verify:.2f}× |")
one = ops.get(("openssl", "hmac_oneshot"))
if one:
    lines.append(f"| reference: OpenSSL `HMAC()` one-shot, same input | | {us(one)} | | {one / verify:.2f}× |")
op_table = "\n".join(lines)

lines = ["| benchmark | variant | requests/s | p99 | non-2xx/3xx | ratio |", "|---|---|---:|---:|---:|---:|"]
pairs = [("nginx_get", "plain", "module", "nginx GET of a page with 20 forms (injection)"),
         ("nginx_real", "plain", "module", "nginx GET of a real 242 KB page (bench/pages/socat.html)"),
         ("nginx_post", "plain", "module", "nginx POST with a valid token"),
         ("nginx_post_header", "plain", "module",
          "nginx POST, the token in X-CSRF-Token (no fetch metadata or Origin: the token decides)"),
         ("nginx_post_body", "plain", "module",
          "nginx POST, the token in an urlencoded body (no fetch metadata or Origin: the token decides)"),
         ("nginx_count_get", "off", "on",
          "nginx GET of the 20-form page with the module, counters off and on: one worker, a location with and one "
          "without csrf_metrics_zone"),
         ("nginx_count_post", "off", "on",
          "nginx POST, the token in an urlencoded body, counters off and on: one worker, a location with and one "
          "without csrf_metrics_zone"),
         ("demo_get", "unprotected", "protected", "csrf-demo GET / (logged in)"),
         ("demo_store", "memory", "redis", "csrf-demo GET / (logged in), wrk -c64: sessions in memory, in Redis")]
ratios = {}


def short_title(title):
    return title.split(":")[0].split(" (")[0] + (", wrk -c64" if "-c64" in title else "")


def cpu_med(bench, variant, who):
    """The median over the runs of what process `who` spent per request
    (µs of CPU, user + system, from /proc), or None."""
    v = [r[f"cpu_{who}"] for r in servers.get((bench, variant), []) if f"cpu_{who}" in r]
    return statistics.median(v) if v else None


# The third nginx server, stock sub_filter with a comparable static
# insertion: module / sub_filter per page (above 1: the module is faster).
# The fourth, the copy-only floor: module / floor per page.
vs_sub = {}
vs_floor = {}
for bench, base, var, title in pairs:
    if (bench, base) not in servers or (bench, var) not in servers:
        continue
    b, v = med(servers[(bench, base)]), med(servers[(bench, var)])
    ratio, spread = paired(servers[(bench, base)], servers[(bench, var)])
    ratios[bench] = ratio
    n = len(servers[(bench, base)])
    shown = f"{ratio * 100:.1f}%" + (f" ({spread[0] * 100:.0f}–{spread[1] * 100:.0f}%)" if spread else "")
    lines.append(f"| {title} ({n} runs each) | {base} | {b['rps']:.0f} | {b['p99']} | {b['bad']} | |")
    lines.append(f"| | {var} | {v['rps']:.0f} | {v['p99']} | {v['bad']} | {shown} |")
    # the peers on the same page: their own ratio to plain, and the
    # module's to them (sub_filter, then the copy-only floor)
    for peer, label, against in (("sub_filter", "stock `sub_filter`", vs_sub), ("floor", "the copy-only floor", vs_floor)):
        if (bench, peer) not in servers:
            continue
        pr = med(servers[(bench, peer)])
        p_ratio, p_spread = paired(servers[(bench, base)], servers[(bench, peer)])
        against[bench], m_spread = paired(servers[(bench, peer)], servers[(bench, var)])
        lines.append(f"| | {label} | {pr['rps']:.0f} | {pr['p99']} | {pr['bad']} | {p_ratio * 100:.1f}%"
                     + (f" ({p_spread[0] * 100:.0f}–{p_spread[1] * 100:.0f}%)" if p_spread else "") + " |")
        lines.append(f"| | module ÷ {label.replace('stock ', '')} | | | | {against[bench]:.2f}×"
                     + (f" ({m_spread[0]:.2f}–{m_spread[1]:.2f})" if m_spread else "") + " |")
count = ops.get(("libcsrf", "count"))
if count and ("nginx_get", "module") in servers:
    # one worker: a request takes 1e9 / rps ns of it; counting adds count ns
    rps = med(servers[("nginx_get", "module")])["rps"]
    lines.append("")
    lines.append(f"Counting (`csrf_metrics_zone`) adds {count:.1f} ns to a request (`bench/micro.c`: "
                 f"`csrf_metrics_count_check` and `csrf_metrics_count_page`, uncontended): at the module's "
                 f"{rps:.0f} GET requests/s on one worker, {count * rps / 1e7:.3f}% of its time, an expected "
                 f"ratio of {(1 - count * rps / 1e9) * 100:.2f}%.")


def count_cost(bench):
    """Counting's cost by callgrind: (instructions per request off, on,
    their ratio off ÷ on, the segments' range off and on), or None."""
    off, on = count_ir.get((bench, "off")), count_ir.get((bench, "on"))
    if not off or not on:
        return None
    o, n = statistics.median(off), statistics.median(on)
    return o, n, o / n, (min(off), max(off)), (min(on), max(on))


def middle(rs):
    """The median of ratios, their middle half (None below 4), how many."""
    mid = statistics.quantiles(rs, n=4) if len(rs) >= 4 else None
    return statistics.median(rs), (mid[0], mid[2]) if mid else None, len(rs)


def count_wall(bench):
    """Counting's cost by the clock, each as middle() of the pairs' ratios:
    the worker's CPU per request in alternating bursts (off ÷ on), and in
    the wrk runs, requests/s (on ÷ off) and the worker's CPU per request
    (off ÷ on)."""
    offs, ons = servers.get((bench, "off"), []), servers.get((bench, "on"), [])
    out = {}
    rs = [p["off"] / p["on"] for p in bursts.get(bench, {}).values() if p.get("off") and p.get("on")]
    if rs:
        out["burst"] = middle(rs)
    for key, ratio in (("rps", lambda b, v: v["rps"] / b["rps"] if b["rps"] else None),
                       ("cpu", lambda b, v: b["cpu_worker"] / v["cpu_worker"]
                        if b.get("cpu_worker") and v.get("cpu_worker") else None)):
        rs = [r for r in (ratio(b, v) for b, v in zip(offs, ons)) if r]
        if rs:
            out[key] = middle(rs)
    return out


def pct(r):
    m, mid, _ = r
    return f"{m * 100:.1f}%" + (f" ({mid[0] * 100:.0f}–{mid[1] * 100:.0f}%)" if mid else "")


titles = dict((p[0], p[3]) for p in pairs)
for bench in ("nginx_count_get", "nginx_count_post"):
    cost, wall = count_cost(bench), count_wall(bench)
    if not cost and not wall:
        continue
    lines.append("")
    text = f"{short_title(titles[bench])}, in one worker:"
    if cost:
        o, n, r, ro, rn = cost
        text += (f" {o:,.0f} instructions per request off, {n:,.0f} on (callgrind, median of "
                 f"{len(count_ir[(bench, 'off')])} segments each; segments {ro[0]:,.0f}–{ro[1]:,.0f} and "
                 f"{rn[0]:,.0f}–{rn[1]:,.0f}): counting adds {n - o:,.0f}, off ÷ on {r * 100:.2f}%.")
    if "burst" in wall:
        pairs_b = bursts[bench].values()
        off_us = statistics.median(p["off"] for p in pairs_b if "off" in p) / 1000
        on_us = statistics.median(p["on"] for p in pairs_b if "on" in p) / 1000
        text += (f" The worker's CPU per request in bursts alternating between the locations: {off_us:.1f} µs off, "
                 f"{on_us:.1f} µs on (median bursts), off ÷ on {pct(wall['burst'])} (median of {wall['burst'][2]} "
                 f"pairs, middle half in brackets).")
    if "rps" in wall:
        text += (f" wrk runs alternating ({wall['rps'][2]} pairs): requests/s on ÷ off {pct(wall['rps'])}"
                 + (f", the worker's CPU per request off ÷ on {pct(wall['cpu'])}" if "cpu" in wall else "") + ".")
    lines.append(text)
srv_table = "\n".join(lines)


cores = os.cpu_count() or 1


def machine_us(bench, variant):
    """What a request cost the machine's cores at the median run's rate (µs)."""
    return cores * 1e6 / med(servers[(bench, variant)])["rps"]


cpu_rows = []
for bench, base, var, title in pairs:
    for variant in (base, var):
        d, rd = cpu_med(bench, variant, "demo"), cpu_med(bench, variant, "redis")
        if d is None:
            continue
        cpu_rows.append(f"| {short_title(title)} | {variant} | {d:.1f} | "
                        f"{'' if rd is None else f'{rd:.1f}'} | {machine_us(bench, variant):.1f} |")
cpu_table = ""
if cpu_rows:
    cpu_table = ("CPU time per request (user + system from /proc, median of the runs), "
                 f"and what a request costs the machine's {cores} cores at the median run's rate:\n\n"
                 "| benchmark | variant | csrf-demo, µs | redis-server, µs | the whole machine, µs |\n"
                 "|---|---|---:|---:|---:|\n" + "\n".join(cpu_rows))


stores = {}
for r in jsonl(a.stores):
    stores.setdefault((r["store"], r["threads"]), []).append(r["ops"])
stores = {k: statistics.median(v) for k, v in stores.items()}
store_names = ["redis, pool of 8", "redis, one connection", "redis-benchmark", "memory"]
store_titles = {"redis, pool of 8": "Redis, a pool of 8 connections",
                "redis, one connection": "Redis, one connection (the store before the pool)",
                "redis-benchmark": "reference: `redis-benchmark -t get`, 1 and 4 connections (Redis's own client)",
                "memory": "memory store"}
lines = ["| store | 1 thread, ops/s | 4 threads, ops/s | 4 threads ÷ 1 |", "|---|---:|---:|---:|"]
store_ratio = {}
for name in store_names:
    one, four = stores.get((name, 1)), stores.get((name, 4))
    if one and four:
        store_ratio[name] = four / one
        lines.append(f"| {store_titles[name]} | {one:.0f} | {four:.0f} | {four / one:.2f}× |")
store_table = "\n".join(lines) if store_ratio else ""


def target(ok, text):
    return f"- {'met' if ok else 'NOT met'}: {text}"


targets = []
if verify and floor:
    nosession = ops.get(("libcsrf", "verify_nosession"))
    also = f" (no session bound: {nosession / floor:.2f}×)" if nosession else ""
    targets.append(target(verify <= 1.5 * floor, f"verify at most 1.5× the bare MAC: {verify / floor:.2f}×{also}"))
if verify and peer_verify:
    fastest = min(peer_verify, key=peer_verify.get)
    r = peer_verify[fastest] / verify
    targets.append(target(r >= 5, f"verify at least 5× faster than the fastest peer ({fastest}): {r:.1f}×"))
for bench, need, text in [("nginx_get", 0.95, "nginx GET with injection at least 95% of plain nginx"),
                          ("nginx_real", 0.85, "nginx GET of the real page at least 85% of plain nginx"),
                          ("nginx_post", 0.95, "nginx POST at least 95% of plain nginx"),
                          ("nginx_post_header", 0.97,
                           "nginx POST with the token in X-CSRF-Token at least 97% of plain nginx"),
                          ("nginx_post_body", 0.95,
                           "nginx POST with the token in an urlencoded body at least 95% of plain nginx"),
                          ("demo_get", 0.95, "the demo protected at least 95% of unprotected (GET /, logged in)"),
                          ("demo_store", 0.80, "the demo with Redis at least 80% of the memory store (wrk -c64)")]:
    if bench in ratios:
        targets.append(target(ratios[bench] >= need, f"{text}: {ratios[bench] * 100:.1f}%"))
    else:
        targets.append(f"- not measured: {text}")

# Counting on against off, judged by the instructions a request costs one
# worker (callgrind: deterministic, the same requests through a location
# that counts and one that does not): off ÷ on at least 0.99 is on at
# least 99% of off's rate for a worker that is busy all the time. The wall
# clock beside it: this machine's pairs of runs scatter by several per cent
# (the middle half in brackets), more than the one per cent judged.
for bench, text in [("nginx_count_get", "nginx GET"), ("nginx_count_post", "nginx POST, the token in the body")]:
    cost, wall = count_cost(bench), count_wall(bench)
    if cost:
        o, n, r, _, _ = cost
        shown = "; by the clock (not judged): " + ", ".join(
            f"{label} {pct(wall[k])}" for k, label in (("burst", "the worker's CPU per request in alternating bursts"),
                                                       ("rps", "wrk requests/s")) if k in wall) if wall else ""
        targets.append(target(r >= 0.99, f"{text} with counting on at least 99% of off, by instructions per "
                                         f"request (callgrind, one worker): {o:,.0f} off, {n:,.0f} on, +{n - o:,.0f}, "
                                         f"{r * 100:.2f}%{shown}"))
    else:
        targets.append(f"- not measured: {text} with counting on at least 99% of off")
if vs_sub:
    worst = min(vs_sub, key=vs_sub.get)
    each = ", ".join(f"{b} {r:.2f}×" for b, r in sorted(vs_sub.items()))
    targets.append(target(vs_sub[worst] >= 1.5,
                          f"nginx with the module at least 1.5× stock `sub_filter` on every page: {each}"))
else:
    targets.append("- not measured: nginx with the module at least 1.5× stock `sub_filter` on every page")
if vs_floor:
    worst = min(vs_floor, key=vs_floor.get)
    each = ", ".join(f"{b} {r:.2f}×" for b, r in sorted(vs_floor.items()))
    targets.append(target(vs_floor[worst] >= 0.90,
                          f"nginx with the module at least 0.90× the copy-only floor on every page: {each}"))
else:
    targets.append("- not measured: nginx with the module at least 0.90× the copy-only floor on every page")

lines = ["| page | bytes | tags | injector, bytes/cycle | memchr, bytes/cycle | injector / memchr "
         "| '<' then '>', bytes/cycle | injector / that |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
for r in jsonl(a.inject):
    ratio = r["inject_bpc"] / r["memchr_bpc"] if r["memchr_bpc"] else 0
    tags = r.get("tags_bpc", 0)
    of_tags = f"{r['inject_bpc'] / tags * 100:.0f}%" if tags else "–"
    lines.append(f"| {r['page']} | {r['bytes']} | {r.get('tags', '–')} | {r['inject_bpc']:.3f} | "
                 f"{r['memchr_bpc']:.2f} | {ratio * 100:.2f}% | {tags:.3f} | {of_tags} |")
inject_table = "\n".join(lines)

print()
print(inject_table)

if "redis, pool of 8" in store_ratio:
    r = store_ratio["redis, pool of 8"]
    ceiling = stores.get(("redis-benchmark", 4))
    of = f" (4 threads reach {stores[('redis, pool of 8', 4)] / ceiling * 100:.0f}% of what redis-benchmark gets from this Redis with 4 connections)" if ceiling else ""
    targets.append(target(r >= 2.5, f"store operations from 4 threads at least 2.5× one thread against one local Redis: {r:.2f}×{of}"))
else:
    targets.append("- not measured: store operations from 4 threads at least 2.5× one thread against one local Redis")

print()
print(op_table)
print()
print(srv_table)
print()
print(store_table)
print()
print("\n".join(targets))

os.makedirs(a.out, exist_ok=True)
tmp = tempfile.mkdtemp()
dat = os.path.join(tmp, "results.dat")
with open(dat, "w") as f:
    if floor:
        f.write(f"\"HMAC floor\" {floor / 1000:.4f}\n")
    for impl in impls:
        if (impl, "verify") in ops:
            f.write(f"\"{impl}\" {ops[(impl, 'verify')] / 1000:.4f}\n")
short = {"nginx_get": "nginx GET (injecting)", "nginx_real": "nginx GET (real page)", "nginx_post": "nginx POST (token)",
         "nginx_post_header": "nginx POST (header token)", "nginx_post_body": "nginx POST (body token)",
         "nginx_count_get": "nginx GET, counting", "nginx_count_post": "nginx POST, counting", "demo_get": "csrf-demo GET /",
         "demo_store": "csrf-demo Redis / memory"}
srv = os.path.join(tmp, "servers.dat")
with open(srv, "w") as f:
    for bench, base, var, title in pairs:
        # counting: the judged figure, callgrind's (requests/s pairs
        # scatter by more than what they would show)
        cost = count_cost(bench) if bench.startswith("nginx_count_") else None
        if cost:
            f.write(f"\"{short[bench]} (instructions)\" {cost[2] * 100:.2f}\n")
        elif bench in ratios:
            f.write(f"\"{short[bench]}\" {ratios[bench] * 100:.2f}\n")
png = os.path.join(a.out, "results.png")
gp = f"""
set terminal pngcairo size 1100,460 font ",10" noenhanced
set output '{png}'
set multiplot layout 1,2
set style fill solid 0.8 border -1
set boxwidth 0.6
set grid y
set logscale y
set ylabel "verify, µs per token (log scale, lower is better)"
set title "Token verify, one run, {a.cpu[:40]}"
set xtics rotate by -25
set yrange [0.05:*]
plot '{dat}' using 0:2:xtic(1) with boxes lc rgb "#3b7dd8" notitle
unset logscale y
set yrange [0:110]
set ylabel "requests/s with libcsrf, % of without"
set title "Servers under wrk (higher is better)"
plot '{srv}' using 0:2:xtic(1) with boxes lc rgb "#2f9e44" notitle, 95 with lines dt 2 lc rgb "#c92a2a" title "95%", 90 with lines dt 3 lc rgb "#e67700" title "90%"
unset multiplot
"""
try:
    subprocess.run(["gnuplot"], input=gp, text=True, check=True, capture_output=True)
except (OSError, subprocess.CalledProcessError) as e:
    print(f"gnuplot failed: {e}", file=sys.stderr)
    sys.exit(1)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

cgi = open(a.cgi).read().strip() + "\n\n" if a.cgi and os.path.exists(a.cgi) else ""
if cgi:
    print()
    print(cgi)
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
quick = "\n**Quick mode (`make check`): too few iterations for the figures to mean anything.**\n" if a.quick == "1" else ""
gap_lines = []
if ratios.get("nginx_get", 1) < 0.95 or ratios.get("nginx_real", 1) < 0.85 or min(vs_floor.values(), default=1) < 0.90:
    gap_lines.append("""- nginx with injection, profiled again on 2026-12-07 at night
  (callgrind on a one-process nginx in front of the same backend,
  instructions a request, bench/nginx_callgrind.sh, N=100; plain nginx is
  sent the same cookie and token headers):
  - the 20-form page: plain nginx 27.5 K instructions, the module
    97.5 K (98.9 K in the evening, 101.7 K in the morning of
    2026-12-07, 121.5 K on 2026-12-06, 146.5 K before). Of the module's
    70 K: the injector about 47 K with the output calls it makes (a
    form, its input, its button and its end tags about 1,870 between
    them: the plain tags' name look-ups, the attribute reading, then the
    tree and the policy); the page's token, the secret cookie and the
    field name about 14 K, two thirds of it the five SHA-256
    compressions a page, which valgrind runs without the CPU's SHA
    extensions (on the clock about a tenth of that); the module's own
    functions about 6 K (headers, cookies, the charset prescan, now
    skipped where no `<m` can start a meta tag, the cache rule, the
    output). The kernel's share of a small page is what
    plain nginx pays too.
  - the real page (socat.html, a tag every 23 bytes): plain 86.3 K, the
    module 1,364 K (1,380 K before the night of 2026-12-07, 1,498 K
    earlier), nearly all of it the injector (about 1,199 K, some 115
    instructions a tag: reading the plain tags of a window from the
    block masks, plain_fast, most of it; classifying the blocks, by
    nibble lookups, about 14). 2.0 bytes a cycle would leave about 11
    cycles a tag. Tried and measured slower (docs/architecture.md):
    block-wise readings of the quotes, a classifier mask of the tags
    that can be skipped unread (the branch on it mispredicts as a
    page's names alternate), a branchless step to the next block
    (0.64x), a block's plain tags read as one run from carry masks
    (0.78x). That run with its name test left out (wrong output,
    measuring only) cut 26% of the instructions and left the clock as
    it was: the page is bound not by its tags' instructions but, by
    inference (no hardware counters here), by the branches that vary
    with it, about 2.5 mispredicted a 64-byte block (the exit of a
    block's tag loop, a tag across a block's end). Code placement alone
    moves this page's clock by up to 13% (plain_fast's loops are now
    aligned to 64 bytes).
  - system calls are the same for plain nginx, the floor and the module
    (2 writev a form page, 32 a real page): no extra writes; one output
    buffer is filled across a call's input bufs; pass-through runs of
    1 KiB or more leave uncopied.
  - on the clock (perf cpu-clock samples of the module's worker under
    wrk, the 20-form page; this machine has no hardware counters): the
    kernel 64% of the samples, nginx 15%, the module 14.7% (the injector
    10.0%, the rest 4.6% over some 40 functions), libc 5.2%, libcrypto
    0.8% (its SHA-256 runs on the CPU's SHA extensions). The worker's user
    time a page: plain 4.1 µs, the copy floor 4.2 µs, the module 9.5 µs;
    system time 12 to 15 µs for all three. Of the module's 5.4 µs, about
    2.5 µs is the injector, 1.5 µs the rest of the module, the rest
    nginx's and libc's work for it (allocations, copies, the chunked
    encoding of a page whose length changes). By the same proportion
    (an estimate, not measured), an injector at 2 bytes a cycle (about
    1.1 µs for this page) would bring the row near 85% of plain; 92%
    needs the module's whole extra user time near 2 µs a page.
  - POST: a token in X-CSRF-Token adds 12.1 K instructions (40.5 K
    against 28.3 K), one in the body 15.6 K (42.9 K against 27.3 K); of
    each 8 K to 10 K is SHA-256 under valgrind (4 or 5 compressions a
    POST; the cookie's signature is what makes its time and key
    trustworthy, so none is skipped), the rest base64 (now one vector
    block for a value's last group), the secret cookie, the headers and
    the body's field. The X-CSRF-Token row's clock figure moves between
    95% and 97% from run to run on this machine (its middle half spans
    about 4 points).""")
if ratios.get("demo_get", 1) < 0.95:
    gap_lines.append("""- the protected demo, profiled on 2026-12-03 (perf on the demo): what
  it adds to a page is one token (two HMACs and a random pad), the field
  name, and a page about 1 KB bigger (the token in the head and in every
  form); the demo's own code and libcrypto take about 2.5% more of the
  samples than unprotected, the rest of a request is SQLite, the socket
  and the allocator, which both variants pay alike. The ratio's spread
  (in brackets) is this machine's noise: two virtual cores whose stolen
  time moves between 3% and 22%, shared by wrk and the demo.""")
if ratios.get("demo_store", 1) < 0.80:
    dm, dr, rr = cpu_med("demo_store", "memory", "demo"), cpu_med("demo_store", "redis", "demo"), \
        cpu_med("demo_store", "redis", "redis")
    cost = ""
    if None not in (dm, dr, rr):
        whole_m = machine_us("demo_store", "memory")
        cost = f"""
  In this run a request cost the machine {whole_m:.0f} µs with the memory
  store; with Redis the demo spent {dr - dm:.0f} µs more CPU on it and
  `redis-server` {rr:.0f} µs. At 80% the whole round trip may cost at most
  a quarter of {whole_m:.0f} µs, {whole_m / 4:.0f} µs. The demo's own CPU alone
  would give {dm / dr * 100:.0f}% ({dm:.0f} against {dr:.0f} µs)."""
    gap_lines.append(f"""- the demo with Redis: one `GET` of the session a request, which
  costs the library two system calls (the command and the reply; no
  poll, no socket option) and the demo's thread a sleep until Redis
  answers. Everything else a request does is the same with both
  stores.{cost}
  Profiled on 2026-12-03 (perf), both sides of the round trip spend most
  of it in the kernel: in the TCP path, and in sleeping and waking, which
  on this machine's virtual cores cost more than the work of a `GET`.
  Measured and not kept (same method, alternating runs): pipelining the
  gets of concurrent threads halved `redis-server`'s CPU a request (15 to
  9 µs), but the threads that wait on a batch are woken one by one and
  the demo's CPU rose by more (10 µs); a Unix socket, 4 or 16 server
  threads, and spinning on the reply gained nothing or lost.""")
if store_ratio.get("redis, pool of 8", 99) < 2.5:
    gap_lines.append("""- store operations from 4 threads: this machine has 2 cores, shared by
  the 4 threads and `redis-server`.""")
gaps = "\n".join(gap_lines) if gap_lines else "None: every target above is met."

md = f"""# Benchmarks: libcsrf against the peers
{quick}
Measured {date} on {a.cpu}, {os.cpu_count()} cores, all in one run of
`{a.cmd}`. Only the ratios compare: absolute figures drift between machines.

![verify per token and server throughput](results.png)

## Per operation (median of interleaved rounds)

"issue" makes a token for a response, "verify" checks one (bound to an
18-byte session), "check" is a whole request decision: libcsrf's `csrf_check()` on an HTTPS form POST with
Origin, Sec-Fetch-Site, a cookie header and the token in an urlencoded body;
Django's `CsrfViewMiddleware.process_view` on a RequestFactory POST (HTTPS,
Referer checked, token in `X-CSRFToken`). Peers: {next((k[0] for k in ops if k[0].startswith('Django')), 'Django 3.2')}
(Debian's python3-django), npm `csrf` 3.1.0, `@fastify/csrf` 8.1.1 (also with its
HMAC `userInfo` binding), `csrf-csrf` 4.0.3, pinned in `bench/peers-package-lock.json`.

{op_table}

## The injector alone (best of the runs, 8 KiB chunks, time stamp counter)

`csrf_inject_feed` over each page next to `memchr` over the same bytes
(the physical limit of a scan), and next to the least a reader that goes
from tag to tag must do: find each `<` and the `>` after it (two `memchr`
calls a tag, no tokenizer), from `build/csrf-bench-inject`. On a page of
many small tags the second bounds what any tag-by-tag injector can reach.

{inject_table}

## Servers (wrk -t2 -c32, runs alternating)

Requests/s and p99 are the median run's. A ratio is the median of the
ratios of runs made one after the other (variant ÷ base), so that what
drifts on a shared machine cancels within a pair; in brackets, the
middle half of those ratios, which shows this machine's noise.

The nginx rows: a plain reverse proxy, the same with the module, the
same with stock `sub_filter` doing a comparable static insertion (the two
meta tags after `<head>`, a hidden input after each POST form start tag,
`sub_filter_once off`), and the copy-only floor: the least any body
filter that rewrites a page costs, a module built for the benchmark only
(`bench/copy_filter`) that drops the length, copies every buffer into new
8 KiB ones and inserts nothing; all in front of one static nginx backend.

The counting rows (`bench/nginx_count.sh`): one nginx worker serves the
same requests through a location that counts (`csrf_metrics_zone`) and
one that does not (found by the same comparisons: with the zone moved to
the other, the instruction counts swap), wrk runs alternating between
them, then bursts of requests over one connection alternating between
them, the worker's CPU time read around each burst. Their target is
judged by the instructions a request costs that worker, from callgrind
in the same configuration (segments of requests alternating between the
locations; they agree to a few instructions), since this machine's pairs
of runs scatter by more than the 1% judged. An instruction count weighs
each of counting's relaxed atomic adds (one a request, two more a page
injected) as one: a locked add takes some 20 cycles uncontended, about
100 when workers contend for its cache line: three of them, 300 cycles,
are under 0.4% of a GET that costs the worker some 40 µs on a 2 GHz core.

{srv_table}

{cpu_table}

{cgi}## Store operations (median of alternating rounds)

`bench/store.c`: each thread loops over what a request of the demo asks
of the store (a get of a session, a set of one, an increment of a lockout
counter), all threads on one store; operations completed per second.
Redis is one local `redis-server` (no persistence), sharing the machine's
cores with the threads.

{store_table if store_table else "(not measured: redis-server or csrf-bench-store missing)"}

## Targets

{chr(10).join(targets)}

## Where the gaps are

{gaps}

## How to reproduce

```sh
make bench          # about 12 minutes; rewrites this file and results.png
```
"""
with open(os.path.join(a.out, "RESULTS.md"), "w") as f:
    f.write(md)
print(f"\nwrote {os.path.join(a.out, 'RESULTS.md')} and {png}")
