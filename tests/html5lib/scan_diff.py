#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The same answers on every path of the injector's block scanner.

Runs one inject_driver per scanner path (CSRF_SCAN=scalar, portable,
sse2, avx2, neon; a path this build or CPU lacks is left out and named),
and, with --ref, the driver of another build (the injector before the
block scanner: scan-diff.sh builds it from git), and feeds every driver the
same pages in the same cuts:

- the html5lib differential's generated pages (inject_diff.make_page,
  and make_extra_page's after every fourth), each in random cuts;
- every file of the given corpus directories (the fuzz corpora), whole and
  split in two at every offset;
- the given pages (the benchmark's), whole, in random cuts, and shifted
  against the block grid by 0..63 bytes of text before them;
- with --attack, attack_pages.py's: every case of the names the injector
  knows and of the attribute names its policy reads, where its fast paths
  decide; and its referrer pages with CSRF_INJECT_OPT_RAISE_REFERRER
  (CSRF_DIFF_OPTIONS=1), through the paths only (a reference driver
  built from an older tree may not set options).

Each driver checks that its whole and split runs agree and that its output
without the insertions is the page; this script checks that every driver's
output, count and status equal the scalar path's (the byte-at-a-time
reference), byte for byte, and the reference driver's when given.

With --list-ref the records where the reference driver differs are
listed (each marked when its page has no "<template" and "<col") and the
run goes on: a run against an injector whose answers were changed on
purpose shows every page the change touches.

Usage: scan_diff.py DRIVER [--ref OLD_DRIVER] [--pages N] [--seed S]
                   [--corpus DIR ...] [--page FILE ...] [--shifts N] [--attack]
                   [--list-ref]
Exits 0 when every driver agreed; prints the first difference otherwise.
"""
import argparse
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attack_pages  # noqa: E402  (--attack: targeted pages)
import inject_diff  # noqa: E402  (the page generator)

PATHS = ["scalar", "portable", "sse2", "avx2", "neon"]

# A form deep in the tree gets the injector's random id (docs/
# architecture.md, "The tree depth cap"): the paths are compared with its
# 16 characters masked; against --ref (an injector before it) with the
# ids, the fields' form="", the ids' share of the count and
# CSRF_INJECT_DEEP taken out.
PIN = re.compile(rb'( id="csrf-| form="csrf-)[A-Za-z0-9_-]{16}"')
DEEP = 0x80000


def masked(got):
    out, count, status = got
    return (PIN.sub(lambda m: m.group(1) + b"#" * 16 + b'"', out), count, status)


def without_ids(got):
    out, count, status = got
    ids = len(re.findall(rb' id="csrf-[A-Za-z0-9_#-]{16}"', out))
    return (PIN.sub(b"", re.sub(rb' id="csrf-#{16}"| form="csrf-#{16}"', b"", out)), count - ids, status & ~DEEP)


class Driver:
    def __init__(self, name, argv, env):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def run(self, page, cuts):
        try:
            self.proc.stdin.write(("%d %d %s\n" % (len(page), len(cuts), " ".join(map(str, cuts)))).encode())
            self.proc.stdin.write(page)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return "driver: gone (exit %s)" % self.proc.wait()
        head = self.proc.stdout.readline().decode()
        if not head or head.startswith("ERR"):
            return "driver: " + (head.strip() or "no answer (exit %s)" % self.proc.poll())
        out_len, count, status = (int(x) for x in head.split())
        return (self.proc.stdout.read(out_len), count, status)

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait()


def start_paths(driver, options=""):
    """A driver for each path this machine runs, scalar first (options:
    the injector's, CSRF_DIFF_OPTIONS)."""
    drivers, missing = [], []
    for path in PATHS:
        env = dict(os.environ, CSRF_SCAN=path, CSRF_DIFF_OPTIONS=options)
        d = Driver(path, [driver], env)
        # a driver that lacks its path says so at once (exit 4)
        probe = d.run(b"<p>", [])
        if isinstance(probe, str):
            try:
                d.proc.stdin.close()
            except BrokenPipeError:
                pass
            d.proc.wait()
            if d.proc.returncode != 4:
                raise SystemExit("scan_diff: the %s driver failed: %s" % (path, probe))
            missing.append(path)
            continue
        drivers.append(d)
    if not drivers or drivers[0].name != "scalar":
        raise SystemExit("scan_diff: the scalar reference path did not start")
    return drivers, missing


def cuts_random(rng, n, most=8):
    return sorted(rng.sample(range(1, n), min(n - 1, rng.randint(0, most)))) if n > 1 else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("--ref", help="a driver of another build, which must agree too")
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", nargs="*", default=[])
    ap.add_argument("--page", nargs="*", default=[])
    ap.add_argument("--shifts", type=int, default=64, help="shifts of each --page against the block grid")
    ap.add_argument("--report", type=int, default=0)
    ap.add_argument("--attack", action="store_true", help="also the targeted pages of attack_pages.py")
    ap.add_argument("--list-ref", action="store_true",
                    help="list the records where --ref differs (and go on) instead of stopping at the first; "
                         "the paths must still agree")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    drivers, missing = start_paths(args.driver)
    if args.ref:
        env = {k: v for k, v in os.environ.items() if k != "CSRF_SCAN"}
        drivers.append(Driver("ref", [args.ref], env))

    counts = {"pages": 0, "records": 0, "ref": 0, "ref_other": 0}

    def check(page, cuts, what, among=None):
        counts["records"] += 1
        want = None
        for d in among or drivers:
            got = d.run(page, cuts)
            if isinstance(got, str):
                print("%s (%s, cuts %s): %s: %s" % (what, d.name, cuts, d.name, got))
                return False
            got = masked(got)
            if d.name == "ref":
                got, want = without_ids(got), without_ids(want)
            if want is None:
                want = got
            elif got != want and d.name == "ref" and args.list_ref:
                # an intended difference from the older injector: listed
                low = page.lower()
                tc = b"<template" in low and b"<col" in low
                counts["ref"] += 1
                counts["ref_other"] += not tc
                print("ref differs%s: %s (cuts %s): count %d/%d status %#x/%#x: %r" %
                      ("" if tc else " (no template and col)", what, cuts, got[1], want[1], got[2], want[2],
                       page[:300]))
            elif got != want:
                print("%s: path %s differs from scalar (cuts %s): count %d/%d status %#x/%#x" %
                      (what, d.name, cuts, got[1], want[1], got[2], want[2]))
                print("input:  %r" % page[:2000])
                return False
        return True

    xrng = random.Random("extra %d" % args.seed)  # inject_diff's extra pages, one after every fourth
    for n in range(args.pages):
        page = inject_diff.make_page(rng).encode("latin-1")
        if not check(page, cuts_random(rng, len(page)), "generated page %d (seed %d)" % (n, args.seed)):
            return 1
        counts["pages"] += 1
        if n % 4 == 3:
            page = inject_diff.make_extra_page(xrng).encode("latin-1")
            if not check(page, cuts_random(xrng, len(page)), "extra page %d (seed %d)" % (n // 4, args.seed)):
                return 1
            counts["pages"] += 1
        if args.report and (n + 1) % args.report == 0:
            print("%d pages" % (n + 1), flush=True)
    if args.attack:
        for n, (page, cuts) in enumerate(attack_pages.pages(rng)):
            if not check(page, cuts, "attack page %d (seed %d)" % (n, args.seed)):
                return 1
            counts["pages"] += 1
        # CSRF_INJECT_OPT_RAISE_REFERRER's pages, through the paths with
        # that option (not the reference: an older driver may not set it)
        raised, _ = start_paths(args.driver, "1")
        for n, (page, cuts) in enumerate(attack_pages.referrer_pages(rng)):
            if not check(page, cuts, "referrer page %d (seed %d)" % (n, args.seed), raised):
                return 1
            counts["pages"] += 1
        for d in raised:
            if d.close() != 0:
                print("the %s driver with the referrer option failed (exit %d)" % (d.name, d.proc.returncode))
                return 1
    for top in args.corpus:
        for dirpath, _, files in sorted(os.walk(top)):
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                with open(path, "rb") as fh:
                    page = fh.read()
                if len(page) > (1 << 20):
                    continue
                counts["pages"] += 1
                if not check(page, [], path + " whole"):
                    return 1
                # split in two at every offset (long files: 256 of them)
                offs = range(1, len(page)) if len(page) <= 4096 else sorted(rng.sample(range(1, len(page)), 256))
                for at in offs:
                    if not check(page, [at], "%s split at %d" % (path, at)):
                        return 1
    for path in args.page:
        with open(path, "rb") as fh:
            page = fh.read()
        counts["pages"] += 1
        if not check(page, cuts_random(rng, len(page), 64), path + " in cuts"):
            return 1
        for k in range(args.shifts):
            if not check(b"x" * k + page, cuts_random(rng, len(page), 8), "%s shifted by %d" % (path, k)):
                return 1
    for d in drivers:
        if d.close() != 0:
            print("the %s driver failed (exit %d)" % (d.name, d.proc.returncode))
            return 1
    if counts["ref"]:
        print("scan differential: %d pages, %d records: the paths the same, the reference different on %d records "
              "(%d of them without \"<template\" and \"<col\")" %
              (counts["pages"], counts["records"], counts["ref"], counts["ref_other"]))
        return 1
    print("scan differential: %d pages, %d records, each through %s: the same output, count and status%s" %
          (counts["pages"], counts["records"], ", ".join(d.name for d in drivers),
           "; paths not here: " + ", ".join(missing) if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
