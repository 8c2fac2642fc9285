#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# cgi.sh - csrf-cgi's footprint for `make bench` (bench/run.sh): the size of
# the binary and the time it adds per request on top of running the bare
# CGI program, measured with hyperfine, both as a server would run them
# (the CGI environment, the body on standard input). Writes a Markdown
# section to $1 that report.py puts into RESULTS.md.
#   BUILD=dir  the build to measure (default build/)   BENCH_QUICK=1  few runs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD:-$root/build}
out=$1
cgi="$build/csrf-cgi"
[ -x "$cgi" ] || { echo "bench: $cgi is missing (run make)" >&2; exit 1; }
if [ "${BENCH_QUICK:-0}" = 1 ]; then runs=10 warmup=2; else runs=${CGI_RUNS:-300} warmup=20; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
progs="$root/tests/cgi/www/cgi-bin"
"$build/csrf-key" new "$work/keys" >/dev/null
printf 'origin http://192.168.1.1\nkey_file %s\nunsafe_get /cgi-bin/reset.cgi\n' "$work/keys" >"$work/conf"
export CSRF_CGI_CONFIG="$work/conf" CGI_TEST_DIR="$work" HTTP_HOST=192.168.1.1 REMOTE_USER=admin

# A client's secret cookie and a token, from a page csrf-cgi served.
page=$(cd "$progs" && REQUEST_METHOD=GET SCRIPT_NAME=/cgi-bin/page.cgi "$cgi" ./page.cgi)
cookie=$(sed -n 's/^Set-Cookie: \(csrf_secret=[^;]*\);.*/\1/p' <<<"$page" | head -n1)
field=$(sed -n 's/.*<meta name="csrf-param" content="\([^"]*\)".*/\1/p' <<<"$page" | head -n1)
token=$(sed -n 's/.*<meta name="csrf-token" content="\([^"]*\)".*/\1/p' <<<"$page" | head -n1)
[ -n "$cookie" ] && [ -n "$field" ] && [ -n "$token" ] || { echo "bench: csrf-cgi gave no token" >&2; exit 1; }
printf 'dns1=9.9.9.9&dns2=149.112.112.112&%s=%s' "$field" "$token" >"$work/body"
len=$(stat -c %s "$work/body")

# Each case: the bare program, then the same behind csrf-cgi (one
# hyperfine run, commands alternating); both POST commands run in the
# same `sh -c` (the body on stdin), which costs both the same. Then csrf-cgi's own
# instructions, which no load on the machine changes (callgrind; not for a
# sanitizer build, which valgrind cannot run).
callgrind=1
if ! command -v valgrind >/dev/null || ldd "$cgi" | grep -q libasan; then callgrind=0; fi
measure() { # name, env..., -- bare wrapped csrf-cgi-alone (for callgrind)
  local name=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  (cd "$progs" && env "${envs[@]}" hyperfine -N --style none --warmup "$warmup" --runs "$runs" \
    --export-json "$work/$name.json" "$1" "$2" >/dev/null 2>&1)
  if [ "$callgrind" = 1 ]; then
    (cd "$progs" && env "${envs[@]}" sh -c "valgrind --tool=callgrind --callgrind-out-file=/dev/null $3" 2>&1 >/dev/null |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p' >"$work/$name.ir")
  fi
}
post_bare="sh -c './echo.cgi <$work/body'" post_cgi="sh -c '$cgi ./echo.cgi <$work/body'"
measure get REQUEST_METHOD=GET SCRIPT_NAME=/cgi-bin/page.cgi -- ./page.cgi "$cgi ./page.cgi" "$cgi ./page.cgi"
measure post REQUEST_METHOD=POST SCRIPT_NAME=/cgi-bin/echo.cgi CONTENT_TYPE=application/x-www-form-urlencoded \
  CONTENT_LENGTH="$len" HTTP_COOKIE="$cookie" -- "$post_bare" "$post_cgi" "$cgi ./echo.cgi <$work/body"
measure reject REQUEST_METHOD=POST SCRIPT_NAME=/cgi-bin/echo.cgi CONTENT_TYPE=application/x-www-form-urlencoded \
  CONTENT_LENGTH="$len" HTTP_ORIGIN=http://evil.example -- "$post_bare" "$post_cgi" "$cgi ./echo.cgi <$work/body"

strip -o "$work/stripped" "$cgi"
python3 - "$work" "$cgi" "$runs" "$root" >"$out" <<'EOF'
import json, os, subprocess, sys
work, cgi, runs, root = sys.argv[1:5]
def res(name, i):
    return json.load(open(os.path.join(work, name + ".json")))["results"][i]
def med(name, i):
    return res(name, i)["median"] * 1000
def low(name, i):
    return res(name, i)["min"] * 1000
def cpu(name, i):  # user + system, mean
    return (res(name, i)["user"] + res(name, i)["system"]) * 1000
def ir(name):  # csrf-cgi's own instructions (callgrind), "–" when not measured
    try:
        return f"{int(open(os.path.join(work, name + '.ir')).read()) / 1e6:.2f} M"
    except (OSError, ValueError):
        return "–"
libs = [l.split()[0] for l in subprocess.run(["ldd", cgi], capture_output=True, text=True).stdout.splitlines()
        if "=>" in l]
rows, worst = [], 0
for name, what in (("get", "GET of an HTML page (secret cookie, token, injection)"),
                   ("post", "POST, token in the urlencoded body (body read, checked, passed on)"),
                   ("reject", "POST from another origin (rejected: the program never runs)")):
    bare, wrapped = med(name, 0), med(name, 1)
    if name != "reject":
        worst = max(worst, wrapped - bare)
    rows.append(f"| {what} | {bare:.2f} ({low(name, 0):.2f}) ms | {wrapped:.2f} ({low(name, 1):.2f}) ms | "
                f"{wrapped - bare:+.2f} ({low(name, 1) - low(name, 0):+.2f}) ms | "
                f"{cpu(name, 1) - cpu(name, 0):+.2f} ms | {ir(name)} |")
print(f"""## csrf-cgi (the CGI adapter)

`{os.path.relpath(cgi, root)}`: {os.path.getsize(os.path.join(work, 'stripped')) / 1024:.0f} KiB stripped
({os.path.getsize(cgi) / 1024:.0f} KiB as built, with debug information), the library linked in
statically; it loads {", ".join(libs)}. Time per request, median (and
fastest) of {runs} runs (hyperfine), run as a server runs a CGI program; the
program is a small shell script (`tests/cgi/www/cgi-bin`), as on a router.
CPU is user + system of both processes, mean; instructions are csrf-cgi's
own (callgrind), which no load on the machine changes:

| request | bare program | behind csrf-cgi | added | added CPU (user+sys) | csrf-cgi's instructions |
|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

- {'met' if worst <= 1.0 else 'NOT met'}: csrf-cgi adds at most 1 ms per request: {worst:.2f} ms
""")
EOF
cat "$out"
