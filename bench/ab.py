#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ab.py - did a change make the nginx module slower? `make bench-ab BASE=rev`.

Builds ngx_http_csrf_module.so at BASE (a git revision, in a temporary
worktree, release build) and compares it with the current build's
(build/nginx/ngx_http_csrf_module.so, `make build`): two nginx servers with
the same configuration in front of one static backend, wrk runs alternating
between them (which goes first swaps every pair), on the 20-form page, the
real page (bench/pages/socat.html) and a POST with a valid token. Reported:
requests/s of each (median run), and the median of the pair ratios
(current / BASE) with the middle half of them, which shows the noise.

  python3 bench/ab.py BASE [--pairs N] [--seconds S] [--build DIR]
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def freeport():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def waitport(port):
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"ab: nothing listens on port {port}")


def build_base(rev, work):
    """The module at rev, built in a worktree of its own; its path."""
    wt = os.path.join(work, "base")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", wt, rev], check=True)
    try:
        b = os.path.join(wt, "build")
        subprocess.run(["cmake", "-S", wt, "-B", b, "-DCMAKE_BUILD_TYPE=Release"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", b, "-j", os.environ.get("JOBS", "2"), "--target",
                        "ngx_http_csrf_module"], check=True, stdout=subprocess.DEVNULL)
        so = os.path.join(work, "base.so")
        shutil.copy(os.path.join(b, "nginx", "ngx_http_csrf_module.so"), so)
        return so
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", wt], check=False)


def wrk(url, seconds, script=None, cookie=None):
    cmd = ["wrk", "-t2", "-c32", f"-d{seconds}s"]
    if script:
        cmd += ["-s", script]
    if cookie:
        cmd += ["-H", f"Cookie: {cookie}"]
    out = subprocess.run(cmd + [url], check=True, capture_output=True, text=True).stdout
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if bad:
        sys.exit(f"ab: {bad.group(1)} answers were not 2xx/3xx from {url}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    current = os.path.join(a.build, "nginx", "ngx_http_csrf_module.so")
    if not os.path.exists(current):
        sys.exit(f"ab: {current} is missing (make build)")
    work = tempfile.mkdtemp()
    procs = []
    try:
        os.chmod(work, 0o755)
        base = build_base(a.base, work)
        html = os.path.join(work, "html")
        os.makedirs(html)
        os.makedirs(os.path.join(work, "logs"))
        with open(os.path.join(html, "form.html"), "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "page.py")], stdout=f, check=True)
        shutil.copy(os.path.join(HERE, "pages", "socat.html"), os.path.join(html, "real.html"))
        for p in (html, os.path.join(html, "form.html"), os.path.join(html, "real.html")):
            os.chmod(p, 0o755 if os.path.isdir(p) else 0o644)
        keys = os.path.join(work, "keys")
        subprocess.run([os.path.join(a.build, "csrf-key"), "new", keys], check=True, stdout=subprocess.DEVNULL)
        head = f"worker_processes 1; error_log {work}/logs/error.log warn; events {{ worker_connections 1024; }}"
        nb = freeport()
        ports = {}
        confs = {"backend": f"{head} pid {work}/backend.pid;\nhttp {{ access_log off; server {{ listen 127.0.0.1:{nb}; "
                            f"root {html}; location = /submit {{ return 303 /form.html; }} }} }}\n"}
        for name, so in (("base", base), ("current", current)):
            ports[name] = freeport()
            confs[name] = (f"load_module {so};\n{head} pid {work}/{name}.pid;\nhttp {{ access_log off; "
                           f"upstream b {{ server 127.0.0.1:{nb}; keepalive 16; }} server {{ listen 127.0.0.1:{ports[name]}; "
                           f"csrf on; csrf_key_file {keys}; location / {{ proxy_pass http://b; proxy_http_version 1.1; "
                           f"proxy_set_header Connection \"\"; }} }} }}\n")
        for name, text in confs.items():
            path = os.path.join(work, name + ".conf")
            with open(path, "w") as f:
                f.write(text)
            procs.append(subprocess.Popen(["/usr/sbin/nginx", "-p", work, "-c", path, "-g", "daemon off;"]))
        for p in [nb] + list(ports.values()):
            waitport(p)
        # A client: the secret cookie and a token from the current module's page
        # (the same key file, so both accept it).
        with urllib.request.urlopen(f"http://127.0.0.1:{ports['current']}/form.html") as r:
            page = r.read().decode()
            cookie = "; ".join(c.split(";")[0] for c in r.headers.get_all("Set-Cookie"))
        field = re.search(r'<meta name="csrf-param" content="([^"]*)"', page).group(1)
        token = re.search(r'<meta name="csrf-token" content="([^"]*)"', page).group(1)
        post = os.path.join(work, "post.lua")
        with open(post, "w") as f:
            f.write('wrk.method = "POST"\n'
                    f'wrk.body = "story=1&{field}={token}"\n'
                    'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n'
                    f'wrk.headers["Cookie"] = "{cookie}"\n'
                    'wrk.headers["Sec-Fetch-Site"] = "same-origin"\n')
        rows = [("GET of the 20-form page", "/form.html", None), ("GET of the real page", "/real.html", None),
                ("POST with a valid token", "/submit", post)]
        print(f"ab: current build against {a.base}, {a.pairs} pairs of {a.seconds} s runs per row", file=sys.stderr)
        print("| request | BASE req/s | current req/s | current ÷ BASE (middle half) |")
        print("|---|---:|---:|---:|")
        for label, path, script in rows:
            rps = {"base": [], "current": []}
            ratios = []
            for i in range(a.pairs):
                order = ("base", "current") if i % 2 == 0 else ("current", "base")
                got = {}
                for name in order:
                    got[name] = wrk(f"http://127.0.0.1:{ports[name]}{path}", a.seconds, script,
                                    None if script else cookie)
                    rps[name].append(got[name])
                ratios.append(got["current"] / got["base"])
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            print(f"| {label} | {statistics.median(rps['base']):.0f} | {statistics.median(rps['current']):.0f} | "
                  f"{statistics.median(ratios) * 100:.1f}% ({q[0] * 100:.0f}–{q[2] * 100:.0f}%) |", flush=True)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
