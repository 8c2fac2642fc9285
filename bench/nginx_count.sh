#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# nginx_count.sh SERVERS COUNTS - what counting (csrf_metrics_zone) costs the
# nginx module, measured in ONE nginx worker that serves the same requests
# with counting on and off: two locations of one server, the same proxy in
# front of one static backend, only /count/ naming a zone:
#
#     location /count/ { csrf_metrics_zone bench; proxy_pass http://b/; }
#     location /other/ { proxy_pass http://b/; }  # the locations tree's root
#     location /quiet/ { proxy_pass http://b/; }
#
# (/other/ sits at the root of nginx's locations tree, so that /count/ and
# /quiet/ are found by the same comparisons.) Three measurements, for the
# GET of the 20-form page and for the POST whose token decides (the token
# in an urlencoded body, no fetch metadata):
#
#   1. Instructions per request, deterministic: the same configuration in
#      one process under callgrind (master_process off). curl sends N
#      requests to one location over one connection, then a request to the
#      metrics endpoint, which makes callgrind dump what the N cost
#      (--dump-before its handler); segments alternate quiet, count,
#      count, quiet. Collected inside ngx_process_events_and_timers (the
#      event loop: no start-up), less two things: rendering the counters
#      (the marker's own work) and nginx's clock update, which formats
#      its time strings once a second (whether a second's edge falls into
#      a segment is the wall clock, not the location). What an empty
#      segment costs (the marker's rest, a connection) is measured and
#      taken off. One JSON line a segment into COUNTS: bench, variant
#      (off: /quiet/, on: /count/), ir (per request).
#   2. Wall clock: the same configuration as an ordinary nginx (a master
#      and one worker); wrk runs of COUNT_SECONDS alternate between
#      /quiet/ and /count/ (which goes first swaps every pair), so that
#      what drifts on the machine cancels within a pair, and the worker's
#      CPU per request (/proc/PID/schedstat, nanoseconds) beside
#      requests/s. One JSON line a run into SERVERS
#      (run.sh's format: bench, variant, rps, p99, bad, cpu_worker).
#   3. The worker's CPU per request in bursts of COUNT_BURST requests
#      over one connection, alternating between the locations
#      (bench/count_bursts.py): pairs of some tens of milliseconds, so
#      that drift cancels better than between wrk runs. One JSON line a
#      burst into COUNTS: bench, variant, pair, cpu_ns (per request).
#
# Then the counters must hold exactly what was sent to /count/, and
# nothing of /quiet/.
#   BUILD=dir  the build (default build/)   BENCH_QUICK=1  a few of each
#   COUNT_N requests a segment (100)   COUNT_SEGMENTS quiet-count pairs (4)
#   COUNT_PAIRS wrk pairs (10)   COUNT_SECONDS a wrk run (2)
#   COUNT_BURSTS pairs of bursts (200)   COUNT_BURST requests a burst (100)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${BUILD:-$root/build}" && pwd)
servers_out=$1
counts_out=$2
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  COUNT_N=10 COUNT_SEGMENTS=1 COUNT_PAIRS=1 COUNT_SECONDS=1 COUNT_BURSTS=2 COUNT_BURST=10
fi
COUNT_N=${COUNT_N:-100} COUNT_SEGMENTS=${COUNT_SEGMENTS:-4} COUNT_PAIRS=${COUNT_PAIRS:-10} COUNT_SECONDS=${COUNT_SECONDS:-2}
COUNT_BURSTS=${COUNT_BURSTS:-200} COUNT_BURST=${COUNT_BURST:-100}
module="$build/nginx/ngx_http_csrf_module.so"
command -v valgrind >/dev/null || { echo "bench: valgrind is missing (make deps)" >&2; exit 1; }
. "$here/lib.sh"
scratch
site
mkdir -p "$work/logs"
chmod 755 "$work/logs"

nb=$(freeport)
head="worker_processes 1; error_log $work/logs/error.log warn; events { worker_connections 1024; }"
printf '%s pid %s;\nhttp { access_log off; server { listen 127.0.0.1:%s; root %s; location = /submit { return 303 /form.html; } } }\n' \
  "$head" "$work/backend.pid" "$nb" "$work/html" >"$work/backend.conf"
/usr/sbin/nginx -p "$work" -c "$work/backend.conf" -g 'daemon off;' 2>>"$work/logs/stderr" &
pids+=($!)
waitport "$nb"

# conf NAME PORT METRICS_PORT: the configuration both measurements use.
conf() {
  local pass='proxy_pass http://b/; proxy_http_version 1.1; proxy_set_header Connection "";'
  cat >"$work/$1.conf" <<CONF
load_module $module;
$head pid $work/$1.pid;
http {
  access_log off;
  upstream b { server 127.0.0.1:$nb; keepalive 16; }
  server {
    listen 127.0.0.1:$2;
    csrf on;
    csrf_key_file $work/keys;
    location /count/ { csrf_metrics_zone bench; $pass }
    location /other/ { $pass }
    location /quiet/ { $pass }
  }
  server {
    listen 127.0.0.1:$3;
    location = /metrics { csrf_metrics; allow 127.0.0.1; deny all; }
  }
}
CONF
}
# sample PORT REASON: zone bench's count of requests allowed for REASON
sample() {
  curl -s "http://127.0.0.1:$1/metrics" |
    awk -v k="csrf_requests_total{zone=\"bench\",verdict=\"allowed\",reason=\"$2\"}" '$1 == k {print $2}'
}

# 1. Instructions per request.
cp=$(freeport) cq=$(freeport)
conf callgrind "$cp" "$cq"
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" --dump-instr=no --dump-line=no --collect-atstart=no \
  --toggle-collect=ngx_process_events_and_timers --toggle-collect=ngx_time_update \
  --toggle-collect=csrf_metrics_render_zones --dump-before=ngx_http_csrf_metrics_handler \
  /usr/sbin/nginx -p "$work" -c "$work/callgrind.conf" -g 'daemon off; master_process off;' 2>"$work/valgrind.log" &
vg=$!
pids+=($!)
waitport "$cp" || { cat "$work/valgrind.log" "$work/logs/error.log" >&2; exit 1; }
waitport "$cq"
# the client: its secret cookie and a token from a page
client "http://127.0.0.1:$cp/quiet/form.html" || { echo "bench: the module injected no token" >&2; exit 1; }
# send KIND LOCATION N: N requests over one connection; each must be
# answered as a protected one is (200, 303)
send() {
  local path=form.html want=200 args=() urls=() codes i
  if [ "$1" = post ]; then path=submit want=303 args=(--data "story=1&$field=$token"); fi
  for ((i = 0; i < $3; i++)); do urls+=(-o /dev/null "http://127.0.0.1:$cp/$2/$path"); done
  codes=$(curl -s -w '%{http_code}\n' -H "Cookie: $cookie" "${args[@]}" "${urls[@]}" | sort | uniq -c | awk '{print $2 "x" $1}')
  if [ "$codes" != "${want}x$3" ]; then
    echo "bench: $1 /$2/ answered $codes, not ${want}x$3" >&2
    exit 1
  fi
}
# both locations are protected alike: 20 tokens on the page, no POST
# without one
for loc in quiet count; do
  got=$(curl -s -H "Cookie: $cookie" "http://127.0.0.1:$cp/$loc/form.html" | grep -o "name=\"$field\"" | wc -l)
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" --data story=1 "http://127.0.0.1:$cp/$loc/submit")
  if [ "$got" != 20 ] || [ "$code" != 403 ]; then
    echo "bench: /$loc/ inserted $got hidden inputs into the 20-form page and answered $code to a POST without a token" >&2
    exit 1
  fi
done
mark() { curl -s -o /dev/null "http://127.0.0.1:$cq/metrics"; }
declare -A sent=([get]=1 [post]=0) # the check above sent one GET to /count/
n=$COUNT_N
for kind in get post; do # warm-up, not recorded
  for loc in quiet count; do send "$kind" "$loc" "$n"; done
  sent[$kind]=$((sent[$kind] + n))
done
mark # dump 1: start-up and warm-up
mark # dump 2: an empty segment
segments=()
for kind in get post; do
  for ((s = 0; s < COUNT_SEGMENTS; s++)); do
    order="quiet count"
    [ $((s % 2)) = 1 ] && order="count quiet"
    for loc in $order; do
      send "$kind" "$loc" "$n"
      [ "$loc" = count ] && sent[$kind]=$((sent[$kind] + n))
      mark
      segments+=("$kind $loc")
    done
  done
done
# one dump a marker: a dump missing (a handler renamed, say) would put
# two segments into one
dumps=$(find "$work" -name 'cg.out.*' | wc -l)
if [ "$dumps" != $((${#segments[@]} + 2)) ]; then
  echo "bench: callgrind dumped $dumps times, not $((${#segments[@]} + 2)) (one a marker)" >&2
  exit 1
fi
got_get=$(sample "$cq" safe_method)
got_post=$(sample "$cq" ok)
kill "$vg"
wait "$vg" 2>/dev/null || true
if [ "${got_get:-0}" != "${sent[get]}" ] || [ "${got_post:-0}" != "${sent[post]}" ]; then
  echo "bench: /count/ was sent ${sent[get]} GETs and ${sent[post]} POSTs, the counters say ${got_get:-none} and ${got_post:-none}" >&2
  exit 1
fi
total() { awk '/^totals:/ {print $2; exit}' "$work/cg.out.$1"; }
empty=$(total 2)
for i in "${!segments[@]}"; do
  read -r kind loc <<<"${segments[$i]}"
  variant=off
  [ "$loc" = count ] && variant=on
  awk -v b="nginx_count_$kind" -v v="$variant" -v t="$(total $((i + 3)))" -v e="$empty" -v n="$n" \
    'BEGIN { printf "{\"bench\":\"%s\",\"variant\":\"%s\",\"ir\":%.1f}\n", b, v, (t - e) / n }' >>"$counts_out"
done

# 2. Wall clock: one worker, wrk alternating between the locations.
wp=$(freeport) wq=$(freeport)
conf wrk "$wp" "$wq"
/usr/sbin/nginx -p "$work" -c "$work/wrk.conf" -g 'daemon off;' 2>>"$work/logs/stderr" &
master=$!
pids+=($!)
waitport "$wp"
waitport "$wq"
worker=""
for _ in $(seq 1 100); do
  worker=$(pgrep -P "$master" | head -n1 || true)
  [ -z "$worker" ] || break
  sleep 0.05
done
[ -n "$worker" ] || { echo "bench: the counting nginx has no worker" >&2; exit 1; }
{
  echo 'wrk.method = "POST"'
  echo "wrk.body = \"story=1&$field=$token\""
  echo 'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"'
  echo "wrk.headers[\"Cookie\"] = \"$cookie\""
} >"$work/post.lua"
# oncpu PID: the nanoseconds the process has run (/proc's clock ticks
# are 10 ms: a 2 s run would see its worker's time only to about 1%)
oncpu() { awk '{print $1}' "/proc/$1/schedstat"; }
# run BENCH VARIANT URL [wrk args...]
run() {
  local t0 txt rps p99 bad reqs
  t0=$(oncpu "$worker")
  txt=$(wrk -t2 -c32 -d"${COUNT_SECONDS}s" --latency "${@:4}" "$3")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$txt")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$txt")
  bad=$(awk '/Non-2xx or 3xx responses:/ {print $5}' <<<"$txt")
  reqs=$(awk '/ requests in / {print $1}' <<<"$txt")
  awk -v b="$1" -v v="$2" -v rps="${rps:-0}" -v p99="${p99:-?}" -v bad="${bad:-0}" -v r="${reqs:-0}" \
    -v t=$(($(oncpu "$worker") - t0)) \
    'BEGIN { printf "{\"bench\":\"%s\",\"variant\":\"%s\",\"rps\":%s,\"p99\":\"%s\",\"bad\":%s", b, v, rps, p99, bad;
             if (r > 0) printf ",\"cpu_worker\":%.2f", t / 1e3 / r; print "}" }' >>"$servers_out"
}
for loc in quiet count; do # warm-up, not recorded
  wrk -t2 -c32 -d1s "http://127.0.0.1:$wp/$loc/form.html" -H "Cookie: $cookie" >/dev/null
done
for ((i = 0; i < COUNT_PAIRS; i++)); do
  order="quiet count"
  [ $((i % 2)) = 1 ] && order="count quiet"
  for kind in get post; do
    for loc in $order; do
      variant=off
      [ "$loc" = count ] && variant=on
      if [ "$kind" = get ]; then
        run nginx_count_get "$variant" "http://127.0.0.1:$wp/$loc/form.html" -H "Cookie: $cookie"
      else
        run nginx_count_post "$variant" "http://127.0.0.1:$wp/$loc/submit" -s "$work/post.lua"
      fi
    done
  done
done
# 3. The worker's CPU per request in bursts alternating between the
#    locations (bench/count_bursts.py), on the same worker.
printf '%s\n' "$cookie" >"$work/cookie"
printf 'story=1&%s=%s\n' "$field" "$token" >"$work/body"
python3 "$here/count_bursts.py" "$wp" "$worker" "$COUNT_BURSTS" "$COUNT_BURST" "$work/cookie" "$work/body" >>"$counts_out"
if [ "$(sample "$wq" ok)" -lt 1 ]; then
  echo "bench: the counting location counted no POST" >&2
  exit 1
fi
