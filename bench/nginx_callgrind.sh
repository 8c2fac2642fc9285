#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# nginx_callgrind.sh - instructions per request of one nginx process (the
# module's server as bench/run.sh sets it up, master_process off, under
# callgrind), load-independent beside run.sh's and ab.py's wrk figures.
# Four cases, each a run of N keep-alive requests on one connection, with
# the secret cookie: the 20-form page (form), the real page (real,
# bench/pages/socat.html), a POST with the token in X-CSRF-Token (posth)
# and one with the token in the body (postb), neither with fetch metadata.
# A LABEL without a BUILD (plain) after one with is sent the same cookie
# and token, so that both parse and proxy the same bytes.
# Each case is counted twice in fresh processes, with W and with W + N
# requests, and the difference divided by N, so start-up, key loading and
# first-request warm-up cancel out. Prints "label case Ir/request" lines.
#
#   bench/nginx_callgrind.sh LABEL=BUILD [LABEL=BUILD ...]
#     BUILD: a build directory holding nginx/ngx_http_csrf_module.so and
#     csrf-key (make build; for an older revision: git worktree add, then
#     cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo and build those two targets);
#     LABEL=plain (no BUILD) is nginx without the module.
#   N=requests (default 40)  W=warm-up requests (default 5)
#   CASES="form real posth postb"  OUT=dir keeps the callgrind files
#   (callgrind.LABEL.CASE, of the W + N run) for callgrind_annotate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${N:-40}
w=${W:-5}
work=$(mktemp -d)
out=${OUT:-$work/out}
mkdir -p "$out" "$work/html" "$work/logs"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/lib.sh"

python3 "$here/page.py" >"$work/html/form.html"
cp "$here/pages/socat.html" "$work/html/real.html"
chmod -R a+rX "$work"
head="error_log $work/logs/error.log warn; events { worker_connections 1024; }"
nb=$(freeport)
printf '%s pid %s/backend.pid;\nhttp { access_log off; server { listen 127.0.0.1:%s; root %s/html; location = /submit { return 303 /form.html; } } }\n' \
  "$head" "$work" "$nb" "$work" >"$work/backend.conf"
/usr/sbin/nginx -p "$work" -c "$work/backend.conf" -g 'daemon off;' &
pids+=($!)
waitport "$nb"

# front LABEL BUILD: writes $work/LABEL.conf, sets port
front() {
  local lm="" directive=""
  port=$(freeport)
  if [ -n "$2" ]; then
    lm="load_module $2/nginx/ngx_http_csrf_module.so;"
    directive="csrf on; csrf_key_file $work/$1.keys;"
  fi
  printf '%s %s pid %s/%s.pid; master_process off; daemon off;\nhttp { access_log off; upstream b { server 127.0.0.1:%s; keepalive 16; } server { listen 127.0.0.1:%s; %s location / { proxy_pass http://b; proxy_http_version 1.1; proxy_set_header Connection ""; } } }\n' \
    "$lm" "$head" "$work" "$1" "$nb" "$port" "$directive" >"$work/$1.conf"
}

# count LABEL CASE K FILE: total Ir of a fresh process serving K requests
count() {
  trap - EXIT # a subshell's: the cleanup is the script's
  local label=$1 what=$2 k=$3 f=$4 vp
  valgrind --tool=callgrind --callgrind-out-file="$f" --dump-instr=no \
    /usr/sbin/nginx -p "$work" -c "$work/$label.conf" >/dev/null 2>"$work/logs/valgrind.log" &
  vp=$!
  pids+=("$vp")
  waitport "$port"
  local url="http://127.0.0.1:$port" args=()
  local -a urls=()
  case $what in
  form) args=(-H "Cookie: $cookie"); url+=/form.html ;;
  real) args=(-H "Cookie: $cookie"); url+=/real.html ;;
  posth) args=(-H "Cookie: $cookie" -H "X-CSRF-Token: $token" --data story=1); url+=/submit ;;
  postb) args=(-H "Cookie: $cookie" --data "story=1&$field=$token"); url+=/submit ;;
  esac
  for _ in $(seq 1 "$k"); do urls+=(-o /dev/null "$url"); done
  # one connection, keep-alive; every answer must be what the case expects
  local codes
  codes=$(curl -s -w '%{http_code}\n' "${args[@]}" "${urls[@]}" | sort -u | tr '\n' ' ')
  case $what in
  form | real) [ "$codes" = "200 " ] ;;
  *) [ "$codes" = "303 " ] ;;
  esac || { echo "nginx_callgrind: $label $what answered $codes" >&2
    kill "$vp"
    return 1
  }
  kill "$vp"
  wait "$vp" 2>/dev/null || true
  awk '/^(summary|totals):/ {print $2; exit}' "$f"
}

cookie="" token="" field=""
for spec in "$@"; do
  label=${spec%%=*}
  build=""
  [ "$spec" = "$label" ] || build=$(cd "${spec#*=}" && pwd)
  front "$label" "$build"
  # plain nginx gets the same request bytes as the module's server
  # before it (the cookie and token of the last build measured), as
  # run.sh's wrk rows do: its header parsing and proxying of them then
  # cancel out of the difference
  if [ -n "$build" ]; then
    cookie="" token="" field=""
    "$build/csrf-key" new "$work/$label.keys" >/dev/null
    /usr/sbin/nginx -p "$work" -c "$work/$label.conf" &
    pids+=($!)
    sp=$!
    waitport "$port"
    got=0
    client "http://127.0.0.1:$port/form.html" || got=$?
    kill "$sp"
    wait "$sp" 2>/dev/null || true
    if [ "$got" != 0 ]; then
      echo "nginx_callgrind: $label injected no token" >&2
      exit 1
    fi
  fi
  for what in ${CASES:-form real posth postb}; do
    a=$(count "$label" "$what" "$w" "$work/warm")
    b=$(count "$label" "$what" $((w + n)) "$out/callgrind.$label.$what")
    echo "$label $what $(((b - a) / n))"
  done
done
