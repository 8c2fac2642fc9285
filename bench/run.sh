#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# run.sh - `make bench`: libcsrf against the peers, same machine, same run,
# reported as ratios. BENCH_QUICK=1 (what `make check` runs) uses a few
# iterations and one-second wrk runs so the harness itself cannot rot; its
# figures mean nothing, and its RESULTS.md goes to the build dir.
#   BUILD=dir   the build to measure (default: build/, a release build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD:-$root/build}
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then out=${BENCH_OUT:-$build/bench-quick}; else out=${BENCH_OUT:-$here}; fi
mkdir -p "$out"
work=$(mktemp -d)
pids=()
# The checkout as the run found it (untracked files included): a run that
# leaves anything behind but its results (RESULTS.md and its plot) and what
# git ignores (the peers' folder, the build) fails.
tree_state() {
  git -C "$root" status --porcelain --untracked-files=all -- . ':!bench/RESULTS.md' ':!bench/results.png' \
    2>/dev/null || true
}
tree_before=$(tree_state)
cleanup() {
  local status=$?
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
  local after
  after=$(tree_state)
  if [ "$after" != "$tree_before" ]; then
    echo "bench: the run changed the checkout:" >&2
    diff <(echo "$tree_before") <(echo "$after") >&2 || true
    [ "$status" -ne 0 ] || status=1
  fi
  exit "$status"
}
trap cleanup EXIT

if [ "$quick" = 1 ]; then
  ROUNDS=2 C_ITERS=2000 JS_ITERS=300 PY_ITERS=50 WRK_SECONDS=1 WRK_RUNS=1 STORE_ROUNDS=1 STORE_SECONDS=0.3
  DEMO_PAIRS=1 DEMO_SECONDS=1 COUNT_N=10 COUNT_SEGMENTS=1 COUNT_PAIRS=1 COUNT_SECONDS=1 COUNT_BURSTS=2 COUNT_BURST=10
else
  ROUNDS=${ROUNDS:-5} C_ITERS=${C_ITERS:-200000} JS_ITERS=${JS_ITERS:-20000} PY_ITERS=${PY_ITERS:-2000}
  # The nginx rows: six alternating runs, so each ratio has the middle
  # half of its pair ratios beside it.
  WRK_SECONDS=${WRK_SECONDS:-4} WRK_RUNS=${WRK_RUNS:-6} STORE_ROUNDS=${STORE_ROUNDS:-5} STORE_SECONDS=${STORE_SECONDS:-2}
  # The demo's variants differ by a few per cent, less than this machine's
  # run-to-run noise: many short runs, alternating, compared pair by pair.
  DEMO_PAIRS=${DEMO_PAIRS:-20} DEMO_SECONDS=${DEMO_SECONDS:-3}
  # Counting (csrf_metrics_zone) off and on in one worker
  # (bench/nginx_count.sh): callgrind over 4 segments of 100 requests each
  # way, 10 pairs of 2 s wrk runs, 200 pairs of bursts of 100 requests.
  COUNT_N=${COUNT_N:-100} COUNT_SEGMENTS=${COUNT_SEGMENTS:-4} COUNT_PAIRS=${COUNT_PAIRS:-10} COUNT_SECONDS=${COUNT_SECONDS:-2}
  COUNT_BURSTS=${COUNT_BURSTS:-200} COUNT_BURST=${COUNT_BURST:-100}
fi
export COUNT_N COUNT_SEGMENTS COUNT_PAIRS COUNT_SECONDS COUNT_BURSTS COUNT_BURST

# Peers, pinned by the committed lock file, in a folder git ignores.
peers="$here/peers"
mkdir -p "$peers"
if ! cmp -s "$here/peers-package-lock.json" "$peers/package-lock.json" || [ ! -d "$peers/node_modules" ]; then
  cp "$here/peers-package.json" "$peers/package.json"
  cp "$here/peers-package-lock.json" "$peers/package-lock.json"
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

micro="$build/csrf-bench-micro"
[ -x "$micro" ] || { echo "bench: $micro is missing (run make bench)"; exit 1; }

# 1. Per-operation costs: the three runtimes interleaved round by round.
echo "bench: per-operation costs ($ROUNDS rounds)" >&2
results="$work/ops.jsonl"
: >"$results"
tag() { sed "s/^/{\"round\":$1,\"row\":/; s/\$/}/"; }
for r in $(seq 1 "$ROUNDS"); do
  "$micro" 3 "$C_ITERS" | tag "$r" >>"$results"
  node "$here/peers.mjs" "$peers" 3 "$JS_ITERS" | tag "$r" >>"$results"
  /usr/bin/python3 "$here/django_bench.py" 3 "$PY_ITERS" | tag "$r" >>"$results"
done

# 1b. The injector's own throughput over the pages, next to memchr.
inject_speed="$work/inject.jsonl"
: >"$inject_speed"
if [ -x "$build/csrf-bench-inject" ]; then
  echo "bench: the injector over the pages (bytes per cycle)" >&2
  python3 "$here/page.py" >"$work/form.html"
  iters=200
  [ "$quick" = 1 ] && iters=5
  ITERS=$iters "$build/csrf-bench-inject" "$work/form.html" "$here/pages/"*.html >"$inject_speed"
fi

# 2. Servers under wrk, variants alternating run by run.
. "$here/lib.sh"
waitport_seconds=10
# redis_up NAME: a redis-server of the run's own (no persistence) on a free
# port, logging to $work/NAME.log; sets redis_port and redis_pid. Its
# working folder is $work/NAME.d, so nothing it writes (a dump.rdb on
# shutdown, say) can land in the checkout.
redis_up() {
  redis_port=$(freeport)
  mkdir -p "$work/$1.d"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/$1.d" --save "" --appendonly no --daemonize no \
    --logfile "$work/$1.log" &
  redis_pid=$!
  pids+=($!)
  waitport "$redis_port"
}
servers="$work/servers.jsonl"
: >"$servers"
counts="$work/counts.jsonl"
: >"$counts"
# ticks PID: the CPU time (user + system) the process has used, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
# wrk_run bench variant url [wrk args...]: runs for $secs, else WRK_SECONDS.
# With cpu="NAME:PID ..." it also records the CPU each of those processes
# spent per request (µs) as cpu_NAME.
wrk_run() {
  local name=$1 variant=$2 url=$3
  shift 3
  local txt rps p99 bad reqs extra="" i=0 spec
  local -a t0=()
  for spec in ${cpu:-}; do t0+=("$(ticks "${spec#*:}")"); done
  txt=$(wrk -t2 -c32 -d"${secs:-$WRK_SECONDS}s" --latency "$@" "$url")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$txt")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$txt")
  bad=$(awk '/Non-2xx or 3xx responses:/ {print $5}' <<<"$txt")
  reqs=$(awk '/ requests in / {print $1}' <<<"$txt")
  for spec in ${cpu:-}; do
    extra+=$(awk -v n="${spec%%:*}" -v t=$(($(ticks "${spec#*:}") - t0[i])) -v r="${reqs:-0}" -v hz="$hz" \
      'BEGIN { if (r > 0) printf ",\"cpu_%s\":%.1f", n, t * 1e6 / hz / r }')
    i=$((i + 1))
  done
  printf '{"bench":"%s","variant":"%s","rps":%s,"p99":"%s","bad":%s%s}\n' \
    "$name" "$variant" "${rps:-0}" "${p99:-?}" "${bad:-0}" "$extra" >>"$servers"
}

module="$build/nginx/ngx_http_csrf_module.so"
# The floor: a body filter that copies every buffer and inserts nothing.
copy_module="$build/bench/ngx_http_bench_copy_module.so"
if [ -f "$module" ]; then
  echo "bench: nginx with and without the module" >&2
  [ -f "$copy_module" ] || { echo "bench: $copy_module is missing (run make bench)" >&2; exit 1; }
  nb=$(freeport) np=$(freeport) nm=$(freeport) ns=$(freeport) nf=$(freeport)
  ng="$work/nginx"
  mkdir -p "$ng/html" "$ng/logs"
  python3 "$here/page.py" >"$ng/html/form.html"
  cp "$here/pages/socat.html" "$ng/html/real.html"
  # nginx's workers drop root for nobody: let them read the pages.
  chmod 755 "$work" "$ng" "$ng/html"
  chmod 644 "$ng/html/form.html" "$ng/html/real.html"
  "$build/csrf-key" new "$ng/keys" >/dev/null
  head="worker_processes 1; error_log $ng/logs/error.log warn; events { worker_connections 1024; }"
  up="upstream b { server 127.0.0.1:$nb; keepalive 16; }"
  loc='location / { proxy_pass http://b; proxy_http_version 1.1; proxy_set_header Connection ""; }'
  printf '%s pid %s;\nhttp { access_log off; server { listen 127.0.0.1:%s; root %s; location = /submit { return 303 /form.html; } } }\n' \
    "$head" "$ng/backend.pid" "$nb" "$ng/html" >"$ng/backend.conf"
  printf '%s pid %s;\nhttp { access_log off; %s server { listen 127.0.0.1:%s; %s } }\n' \
    "$head" "$ng/plain.pid" "$up" "$np" "$loc" >"$ng/plain.conf"
  printf 'load_module %s;\n%s pid %s;\nhttp { access_log off; %s server { listen 127.0.0.1:%s; csrf on; csrf_key_file %s; %s } }\n' \
    "$module" "$head" "$ng/module.pid" "$up" "$nm" "$ng/keys" "$loc" >"$ng/module.conf"
  # The floor: the least any rewriting body filter costs (the response
  # loses its length, every byte is copied into new 8 KiB buffers).
  printf 'load_module %s;\n%s pid %s;\nhttp { access_log off; %s server { listen 127.0.0.1:%s; bench_copy on; %s } }\n' \
    "$copy_module" "$head" "$ng/floor.pid" "$up" "$nf" "$loc" >"$ng/floor.conf"
  # The third server: stock nginx's sub_filter doing a comparable static
  # insertion (the meta tags after <head>, a hidden input after each POST
  # form start tag of the 20-form page), written once the module has shown
  # the field's name and a token of the real length.
  for c in backend plain module floor; do
    /usr/sbin/nginx -p "$ng" -c "$ng/$c.conf" -g 'daemon off;' 2>>"$ng/logs/stderr" &
    pids+=($!)
  done
  waitport "$nb"; waitport "$np"; waitport "$nm"; waitport "$nf"
  # A client of the protected site: its secret cookie and a token from a page.
  client "http://127.0.0.1:$nm/form.html" || { echo "bench: the module injected no token" >&2; exit 1; }
  {
    echo 'wrk.method = "POST"'
    echo "wrk.body = \"story=1&$field=$token\""
    echo 'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"'
    echo "wrk.headers[\"Cookie\"] = \"$cookie\""
    echo 'wrk.headers["Sec-Fetch-Site"] = "same-origin"'
  } >"$work/post.lua"
  # POSTs the token decides (no fetch metadata, no Origin: nothing else
  # vouches for them): the token in X-CSRF-Token, and in the body.
  {
    echo 'wrk.method = "POST"'
    echo 'wrk.body = "story=1"'
    echo 'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"'
    echo "wrk.headers[\"Cookie\"] = \"$cookie\""
    echo "wrk.headers[\"X-CSRF-Token\"] = \"$token\""
  } >"$work/post_header.lua"
  {
    echo 'wrk.method = "POST"'
    echo "wrk.body = \"story=1&$field=$token\""
    echo 'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"'
    echo "wrk.headers[\"Cookie\"] = \"$cookie\""
  } >"$work/post_body.lua"
  form_tag='<form method="post" action="/submit">'
  input="<input type=\"hidden\" name=\"$field\" value=\"$token\">"
  metas="<meta name=\"csrf-param\" content=\"$field\"><meta name=\"csrf-token\" content=\"$token\">"
  subs="sub_filter_types text/html; sub_filter_once off; sub_filter '<head>' '<head>$metas';"
  subs="$subs sub_filter '$form_tag' '$form_tag$input';"
  printf '%s pid %s;\nhttp { access_log off; %s server { listen 127.0.0.1:%s; %s %s } }\n' \
    "$head" "$ng/subfilter.pid" "$up" "$ns" "$subs" "$loc" >"$ng/subfilter.conf"
  /usr/sbin/nginx -p "$ng" -c "$ng/subfilter.conf" -g 'daemon off;' 2>>"$ng/logs/stderr" &
  pids+=($!)
  waitport "$ns"
  # Both insert the same: 20 inputs and the two meta tags on the form page.
  for p in "$nm" "$ns"; do
    got=$(curl -s -H "Cookie: $cookie" "http://127.0.0.1:$p/form.html" | grep -o "name=\"$field\"" | wc -l)
    if [ "$got" != 20 ]; then
      echo "bench: port $p inserted $got hidden inputs into the 20-form page" >&2
      exit 1
    fi
  done
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" -H 'Sec-Fetch-Site: same-origin' \
    --data "story=1&$field=$token" "http://127.0.0.1:$nm/submit")
  if [ "$code" != 303 ]; then
    echo "bench: the module rejected a valid POST ($code)" >&2
    exit 1
  fi
  # the token rows: the token is what lets them through
  for spec in "303 -H X-CSRF-Token:$token --data story=1" "303 --data story=1&$field=$token" "403 --data story=1"; do
    # shellcheck disable=SC2086 # the spec's words are curl's arguments
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" ${spec#* } "http://127.0.0.1:$nm/submit")
    if [ "$code" != "${spec%% *}" ]; then
      echo "bench: a POST with no fetch metadata (${spec#* }) got $code, not ${spec%% *}" | sed "s/$token/TOKEN/g" >&2
      exit 1
    fi
  done
  # the floor passes the page as it came
  if ! cmp -s <(curl -s "http://127.0.0.1:$nf/real.html") "$ng/html/real.html"; then
    echo "bench: the copy-only floor changed the real page" >&2
    exit 1
  fi
  for p in "$np" "$nm" "$ns" "$nf"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "http://127.0.0.1:$p/form.html")
    if [ "$code" != 200 ]; then
      echo "bench: GET through port $p answered $code" >&2
      cat "$ng/logs/error.log" >&2
      exit 1
    fi
  done
  for _ in $(seq 1 "$WRK_RUNS"); do
    wrk_run nginx_get plain "http://127.0.0.1:$np/form.html" -H "Cookie: $cookie"
    wrk_run nginx_get module "http://127.0.0.1:$nm/form.html" -H "Cookie: $cookie"
    wrk_run nginx_get sub_filter "http://127.0.0.1:$ns/form.html" -H "Cookie: $cookie"
    wrk_run nginx_get floor "http://127.0.0.1:$nf/form.html" -H "Cookie: $cookie"
    wrk_run nginx_real plain "http://127.0.0.1:$np/real.html" -H "Cookie: $cookie"
    wrk_run nginx_real module "http://127.0.0.1:$nm/real.html" -H "Cookie: $cookie"
    wrk_run nginx_real sub_filter "http://127.0.0.1:$ns/real.html" -H "Cookie: $cookie"
    wrk_run nginx_real floor "http://127.0.0.1:$nf/real.html" -H "Cookie: $cookie"
    wrk_run nginx_post plain "http://127.0.0.1:$np/submit" -s "$work/post.lua"
    wrk_run nginx_post module "http://127.0.0.1:$nm/submit" -s "$work/post.lua"
    wrk_run nginx_post_header plain "http://127.0.0.1:$np/submit" -s "$work/post_header.lua"
    wrk_run nginx_post_header module "http://127.0.0.1:$nm/submit" -s "$work/post_header.lua"
    wrk_run nginx_post_body plain "http://127.0.0.1:$np/submit" -s "$work/post_body.lua"
    wrk_run nginx_post_body module "http://127.0.0.1:$nm/submit" -s "$work/post_body.lua"
  done
  # Counting off and on in one worker: instructions per request by
  # callgrind, and wrk runs alternating between a counting location and
  # one that does not count.
  echo "bench: nginx counting on and off, one worker" >&2
  BUILD="$build" BENCH_QUICK="$quick" "$here/nginx_count.sh" "$servers" "$counts"
else
  echo "bench: $module is missing; nginx rows skipped" >&2
fi

demo="$build/csrf-demo"
# demo_up NAME ARGS...: csrf-demo with ARGS on a free port and alice signed
# in, the realistic GET /; sets demo_port, demo_cookie and demo_pid.
demo_up() {
  local name=$1 vp ap jar field token extra=""
  shift
  vp=$(freeport)
  ap=$(freeport)
  "$demo" --listen "127.0.0.1:$vp" --attacker-listen "127.0.0.1:$ap" --db "$work/demo-$name.db" "$@" \
    >"$work/demo-$name.log" 2>&1 &
  demo_pid=$!
  pids+=($!)
  waitport "$vp"
  jar="$work/jar-$name"
  curl -s -c "$jar" -b "$jar" -o "$work/login.html" "http://127.0.0.1:$vp/login"
  field=$(meta csrf-param "$work/login.html")
  token=$(meta csrf-token "$work/login.html")
  [ -n "$field" ] && extra="&$field=$token"
  curl -s -c "$jar" -b "$jar" -o /dev/null -H "Origin: http://127.0.0.1:$vp" \
    --data "user=alice&password=wonderland$extra" "http://127.0.0.1:$vp/login"
  demo_port=$vp
  demo_cookie=$(jar_cookie "$jar")
}
if [ -x "$demo" ]; then
  echo "bench: csrf-demo protected and unprotected" >&2
  declare -A port cookie dpid
  for variant in protected unprotected; do
    flag=()
    [ "$variant" = unprotected ] && flag=(--unprotected)
    demo_up "$variant" "${flag[@]}"
    port[$variant]=$demo_port
    cookie[$variant]=$demo_cookie
    dpid[$variant]=$demo_pid
  done
  for variant in unprotected protected; do # warm-up, not recorded
    wrk -t2 -c32 -d2s "http://127.0.0.1:${port[$variant]}/" -H "Cookie: ${cookie[$variant]}" >/dev/null
  done
  for _ in $(seq 1 "$DEMO_PAIRS"); do
    cpu="demo:${dpid[unprotected]}" secs=$DEMO_SECONDS wrk_run demo_get unprotected "http://127.0.0.1:${port[unprotected]}/" \
      -H "Cookie: ${cookie[unprotected]}"
    cpu="demo:${dpid[protected]}" secs=$DEMO_SECONDS wrk_run demo_get protected "http://127.0.0.1:${port[protected]}/" \
      -H "Cookie: ${cookie[protected]}"
  done
else
  echo "bench: $demo is missing; demo rows skipped" >&2
fi

# 2b. The protected demo with its sessions in a local Redis (a pool of 8
#     connections, the default) against the memory store, GET / signed in,
#     64 connections: what sharing sessions across a fleet costs a server.
if [ -x "$demo" ] && command -v redis-server >/dev/null 2>&1; then
  echo "bench: csrf-demo with the memory store and with Redis (wrk -c64)" >&2
  redis_up demo-redis
  demo_up store-memory --store memory
  mem_port=$demo_port mem_cookie=$demo_cookie mem_pid=$demo_pid
  demo_up store-redis --store "redis://127.0.0.1:$redis_port/0"
  wrk -t2 -c64 -d2s "http://127.0.0.1:$mem_port/" -H "Cookie: $mem_cookie" >/dev/null
  wrk -t2 -c64 -d2s "http://127.0.0.1:$demo_port/" -H "Cookie: $demo_cookie" >/dev/null
  for _ in $(seq 1 "$DEMO_PAIRS"); do
    cpu="demo:$mem_pid redis:$redis_pid" secs=$DEMO_SECONDS wrk_run demo_store memory "http://127.0.0.1:$mem_port/" -c64 \
      -H "Cookie: $mem_cookie"
    cpu="demo:$demo_pid redis:$redis_pid" secs=$DEMO_SECONDS wrk_run demo_store redis "http://127.0.0.1:$demo_port/" -c64 \
      -H "Cookie: $demo_cookie"
  done
else
  echo "bench: $demo or redis-server is missing; demo store rows skipped" >&2
fi

# 3. csrf-cgi: its size and the time it adds to a CGI program (hyperfine).
cgi_md="$work/cgi.md"
if [ -x "$build/csrf-cgi" ]; then
  echo "bench: csrf-cgi in front of a CGI program" >&2
  BUILD="$build" BENCH_QUICK="$quick" "$here/cgi.sh" "$cgi_md" >/dev/null
else
  echo "bench: $build/csrf-cgi is missing; csrf-cgi rows skipped" >&2
fi

[ ! -f "$build/apache/mod_csrf_protect.so" ] || BUILD="$build" BENCH_QUICK="$quick" "$here/apache.sh" >>"$cgi_md"  # Apache rows, beside csrf-cgi's section

# 4. Store operations from 1 and 4 threads, rounds alternating: Redis
#    through a pool of 8 connections, through one connection (what the store
#    did before the pool), and the memory store. Throughput, not latency:
#    a long timeout, so that a loaded machine slows the run down instead of
#    failing it.
stores="$work/stores.jsonl"
: >"$stores"
store_bench="$build/csrf-bench-store"
if [ -x "$store_bench" ] && command -v redis-server >/dev/null 2>&1; then
  echo "bench: store operations, 1 and 4 threads ($STORE_ROUNDS rounds)" >&2
  redis_up redis
  rp=$redis_port
  for _ in $(seq 1 "$STORE_ROUNDS"); do
    "$store_bench" "redis, pool of 8" "redis://127.0.0.1:$rp/0?pool=8&timeout_ms=10000" "$STORE_SECONDS" 1 4 >>"$stores"
    "$store_bench" "redis, one connection" "redis://127.0.0.1:$rp/0?pool=1&timeout_ms=10000" "$STORE_SECONDS" 1 4 \
      >>"$stores"
    "$store_bench" "memory" "memory" "$STORE_SECONDS" 1 4 >>"$stores"
    # the ceiling: Redis's own benchmark client, GETs, 1 and 4 connections
    for c in 1 4; do
      rps=$(redis-benchmark -p "$rp" -c "$c" -n "$(awk -v s="$STORE_SECONDS" 'BEGIN {print int(s * 30000)}')" \
        -t get --csv 2>/dev/null | awk -F'"' '$2 == "GET" {print $4}')
      printf '{"store":"redis-benchmark","threads":%s,"ops":%s}\n' "$c" "${rps:-0}" >>"$stores"
    done
  done
else
  echo "bench: $store_bench or redis-server is missing; store rows skipped" >&2
fi

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
python3 "$here/report.py" --ops "$results" --servers "$servers" --counts "$counts" --inject "$inject_speed" --stores "$stores" \
  --out "$out" --cpu "$cpu" --quick "$quick" --cgi "$cgi_md" \
  --cmd "make bench  (bench/run.sh; ROUNDS=$ROUNDS C_ITERS=$C_ITERS JS_ITERS=$JS_ITERS PY_ITERS=$PY_ITERS WRK_SECONDS=$WRK_SECONDS WRK_RUNS=$WRK_RUNS STORE_ROUNDS=$STORE_ROUNDS STORE_SECONDS=$STORE_SECONDS DEMO_PAIRS=$DEMO_PAIRS DEMO_SECONDS=$DEMO_SECONDS COUNT_N=$COUNT_N COUNT_SEGMENTS=$COUNT_SEGMENTS COUNT_PAIRS=$COUNT_PAIRS COUNT_SECONDS=$COUNT_SECONDS COUNT_BURSTS=$COUNT_BURSTS COUNT_BURST=$COUNT_BURST; wrk -t2 -c32)"
