#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# apache.sh - mod_csrf_protect for `make bench` (bench/run.sh): three Debian
# apache2 servers (event MPM, one child, the same settings) serving the same
# files, side by side in one run: Apache alone, with the module, and with
# stock mod_substitute doing the comparable static insertion (the meta tags
# after <head>, a hidden input after each POST form start tag); GETs of the
# 20-form page (bench/page.py) and the real page (pages/socat.html) under
# wrk, the variants alternating run by run. Writes a Markdown section to
# standard output (run.sh appends it to what report.py puts into
# RESULTS.md): requests/s ratios, the median and the middle half of the
# per-run ratios.
#   BUILD=dir  the build to measure (default build/)   BENCH_QUICK=1  short runs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${BUILD:-$root/build}" && pwd)
module="$build/apache/mod_csrf_protect.so"
if [ ! -f "$module" ] || [ ! -x /usr/sbin/apache2 ]; then
  echo "bench: $module or apache2 is missing; Apache rows skipped" >&2
  exit 0
fi
if [ "${BENCH_QUICK:-0}" = 1 ]; then secs=1 runs=1; else secs=${WRK_SECONDS:-8} runs=${APACHE_RUNS:-5}; fi

. "$here/lib.sh"
scratch

echo "bench: Apache alone, with mod_csrf_protect, with mod_substitute" >&2
site
user=""
[ "$(id -u)" != 0 ] || user="User nobody
Group nogroup"

# start NAME EXTRA: an apache2 in the foreground, in a session of its own
# (on SIGTERM it signals its whole process group).
declare -A port=()
start() {
  local name=$1 extra=$2 d="$work/$1"
  mkdir -p "$d/run"
  [ "$(id -u)" != 0 ] || chown nobody:nogroup "$d/run"
  port[$name]=$(freeport)
  cat >"$d/httpd.conf" <<CONF
ServerRoot $d
ServerName 127.0.0.1
Listen 127.0.0.1:${port[$name]}
PidFile $d/httpd.pid
DefaultRuntimeDir $d/run
Mutex file:$d/run default
ErrorLog $d/error.log
LogLevel warn
$user
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
TypesConfig /etc/mime.types
StartServers 1
ServerLimit 1
ThreadsPerChild 32
MaxRequestWorkers 32
KeepAlive On
MaxKeepAliveRequests 0
DocumentRoot $work/html
<Directory $work/html>
    Require all granted
</Directory>
$extra
CONF
  setsid /usr/sbin/apache2 -f "$d/httpd.conf" -DFOREGROUND 2>>"$d/stderr" &
  pids+=($!)
  waitport "${port[$name]}" || { cat "$d/stderr" "$d/error.log" >&2 2>/dev/null; exit 1; }
}
start plain ""
start module "LoadModule csrf_protect_module $module
CSRF On
CSRFKeyFile $work/keys"

# A client of the protected site: its secret cookie and a token.
client "http://127.0.0.1:${port[module]}/form.html" || { echo "bench: the module injected no token" >&2; exit 1; }
start substitute "$(substitute_conf)"
# the floor: mod_substitute on a pattern never found, what any filter
# that reads and rewrites the body costs where Apache alone sends the
# file by sendfile
start floor "$(substitute_conf floor)"
for v in module substitute; do
  got=$(curl -s -H "Cookie: $cookie" "http://127.0.0.1:${port[$v]}/form.html" | grep -o "name=\"$field\"" | wc -l)
  [ "$got" = 20 ] || { echo "bench: $v inserted $got hidden inputs into the 20-form page" >&2; exit 1; }
done

rows="$work/rows"
: >"$rows"
for _ in $(seq 1 "$runs"); do
  for page in form real; do
    for v in plain module substitute floor; do
      rps=$(wrk -t2 -c32 -d"${secs}s" -H "Cookie: $cookie" "http://127.0.0.1:${port[$v]}/$page.html" |
        awk '/^Requests\/sec:/ {print $2}')
      echo "$page $v ${rps:-0}" >>"$rows"
    done
  done
done
for v in plain module substitute floor; do
  if grep -qE "exit signal|Segmentation" "$work/$v/error.log" 2>/dev/null; then
    echo "bench: apache2 ($v) lost a child" >&2
    exit 1
  fi
done

# the instructions a request, for where the gaps are (not in quick runs)
cg="$work/callgrind"
: >"$cg"
if [ "${BENCH_QUICK:-0}" != 1 ]; then
  BUILD="$build" N=${APACHE_CG_N:-40} "$here/apache_callgrind.sh" >"$cg"
fi

python3 - "$rows" "$runs" "$secs" "$cg" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
rps = {}
for page, v, r in rows:
    rps.setdefault((page, v), []).append(float(r))
def spread(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0], xs[0], xs[0]]
    return "%.0f%% (%.0f–%.0f%%)" % (100 * statistics.median(xs), 100 * q[0], 100 * q[2])
print("## Apache httpd: mod_csrf_protect (wrk -t2 -c32, %s runs of %s s, variants alternating)\n" % (sys.argv[2], sys.argv[3]))
print("| page | Apache alone, req/s | with the module, req/s | with mod_substitute, req/s | floor, req/s | module / alone | module / mod_substitute | module / floor |")
print("|---|---|---|---|---|---|---|---|")
for page, label in (("form", "20 forms (bench/page.py)"), ("real", "the real page (pages/socat.html)")):
    p, m, s, fl = (rps[(page, v)] for v in ("plain", "module", "substitute", "floor"))
    print("| %s | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |" % (label, statistics.median(p), statistics.median(m),
          statistics.median(s), statistics.median(fl), spread([b / a for a, b in zip(p, m)]),
          spread([b / a for a, b in zip(s, m)]), spread([b / a for a, b in zip(fl, m)])))
print("\nRatios: the median of the per-run ratios, the middle half in brackets. Target: the module at least 90% of "
      "Apache alone on the 20-form page, faster than mod_substitute on both pages. The floor is mod_substitute with a "
      "pattern never found: what any filter that reads and rewrites the body costs.")
cg = sys.argv[4] if len(sys.argv) > 4 else ""
ir = {}
for l in (open(cg) if cg else []):
    f = l.split()
    if len(f) == 3:
        ir[(f[0], f[1])] = float(f[2])
def k(x):
    return "%.2f M" % (x / 1e6) if x >= 1e6 else "%.1f k" % (x / 1e3)
if ir:
    print("""
Where the gaps are (bench/apache_callgrind.sh, measured in this run: instructions per request of one apache2 -X
child under callgrind, inside ap_run_process_connection, keep-alive GETs; load-independent, user space only: the
kernel's part, such as mod_substitute's page faults on the pool memory it copies lines into, shows in requests/s,
not here):

| page | Apache alone | floor | mod_substitute | the module | module ÷ floor |
|---|---|---|---|---|---|""")
    for page, label in (("form", "20 forms"), ("real", "the real page")):
        row = [ir.get((page, v), 0) for v in ("plain", "floor", "substitute", "module")]
        print("| %s | %s | %.2f× |" % (label, " | ".join(k(x) for x in row), row[3] / row[1] if row[1] else 0))
    print("""
Apache alone sends the file by sendfile and never reads it; any filter that rewrites the body must read and copy
it (the floor), so against Apache alone no such filter reaches 90% on the real page. The module reads the page once
and copies only what it changes; its instructions by function: callgrind_annotate on the files apache_callgrind.sh
keeps with OUT=dir.""")
PY
