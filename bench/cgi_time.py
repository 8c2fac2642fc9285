#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cgi_time.py - the time of one CGI request, measured so that load on the
machine (other builds, other tests) biases no row against another.

    cgi_time.py --runs N --warmup W --stdin FILE --json OUT LABEL CMD [LABEL CMD]...

Each CMD (split like a shell line, no shell run) is started the way a web
server starts a CGI program: posix_spawn with FILE on standard input and
/dev/null as standard output and error (csrf-cgi logs a rejection there),
in the current directory and environment.
The commands run in rounds, one run of each per round in turn, so a change
of load during the measurement falls on every row alike. Per row:

- wall: the fastest run (the closest to an idle machine) and the median;
- cpu: user + system time of the process and the children it waited for
  (wait4's rusage: the scheduler's own accounting), median: the time the
  process ran on a core, which waiting for a core under load does not add;
- against the first row (the bare program): the median of the per-round
  differences, wall and cpu (two runs of one round saw the same load).

Prints the figures and writes them as JSON to OUT. Exits non-zero when a
run does not exit 0.
"""
import argparse
import json
import os
import shlex
import statistics
import sys
import time


def run_once(argv, stdin_path):
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, stdin_path, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    start = time.perf_counter_ns()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter_ns() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"cgi_time.py: {shlex.join(argv)} exited with status {os.waitstatus_to_exitcode(status)}")
    return wall / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--stdin", default=os.devnull)
    ap.add_argument("--json")
    ap.add_argument("rows", nargs="+", help="LABEL CMD pairs; the first is the baseline")
    a = ap.parse_args()
    if len(a.rows) % 2:
        ap.error("rows come in LABEL CMD pairs")
    rows = [(a.rows[i], shlex.split(a.rows[i + 1])) for i in range(0, len(a.rows), 2)]
    for _ in range(a.warmup):
        for _, argv in rows:
            run_once(argv, a.stdin)
    wall = [[] for _ in rows]
    cpu = [[] for _ in rows]
    for _ in range(a.runs):
        for i, (_, argv) in enumerate(rows):
            w, c = run_once(argv, a.stdin)
            wall[i].append(w)
            cpu[i].append(c)
    out = []
    for i, (label, argv) in enumerate(rows):
        r = {
            "label": label,
            "command": shlex.join(argv),
            "runs": a.runs,
            "wall_min_ms": min(wall[i]),
            "wall_median_ms": statistics.median(wall[i]),
            "cpu_median_ms": statistics.median(cpu[i]),
        }
        if i > 0:
            r["added_wall_median_ms"] = statistics.median(w - b for w, b in zip(wall[i], wall[0]))
            r["added_wall_min_ms"] = min(wall[i]) - min(wall[0])
            r["added_cpu_median_ms"] = statistics.median(c - b for c, b in zip(cpu[i], cpu[0]))
        out.append(r)
        print(
            f"{label}: wall min {r['wall_min_ms']:.3f} ms, median {r['wall_median_ms']:.3f} ms; "
            f"cpu median {r['cpu_median_ms']:.3f} ms"
            + (
                f"; added wall (paired median) {r['added_wall_median_ms']:+.3f} ms, "
                f"cpu {r['added_cpu_median_ms']:+.3f} ms"
                if i > 0
                else ""
            )
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
