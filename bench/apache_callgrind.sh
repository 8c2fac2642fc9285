#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# apache_callgrind.sh - instructions per request of one Apache child
# (apache2 -X under callgrind), load-independent beside apache.sh's wrk
# figures: Apache alone, with mod_csrf_protect, with mod_substitute doing
# the comparable insertion, and with mod_substitute on a pattern that
# never matches (the floor: what any filter that reads and rewrites the
# body costs). N keep-alive GETs per page after a warm-up; counted
# inside ap_run_process_connection (reading, handler, filters, write). Prints "page variant Ir/request" lines;
# OUT=dir keeps the callgrind files for callgrind_annotate.
#   BUILD=dir  the build (default build/)   N=requests (default 200)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${BUILD:-$root/build}" && pwd)
module="$build/apache/mod_csrf_protect.so"
n=${N:-200}
work=$(mktemp -d)
out=${OUT:-$work/out}
mkdir -p "$out"
pid=""
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/lib.sh"
site
# as root, apache2 -X runs as nobody from the start (callgrind writes
# its file as the user the process ends as)
as=()
[ "$(id -u)" != 0 ] || as=(runuser -u nobody --)

conf() { # NAME EXTRA
  local d="$work/$1"
  mkdir -p "$d/run"
  [ "$(id -u)" != 0 ] || chown -R nobody:nogroup "$work" "$out"
  port=$(freeport)
  cat >"$d/httpd.conf" <<CONF
ServerRoot $d
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $d/httpd.pid
DefaultRuntimeDir $d/run
Mutex file:$d/run default
ErrorLog $d/error.log
LogLevel warn
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
TypesConfig /etc/mime.types
KeepAlive On
MaxKeepAliveRequests 0
DocumentRoot $work/html
<Directory $work/html>
    Require all granted
</Directory>
$2
CONF
}
# run NAME PAGE COOKIE: Ir per request of PAGE
run() {
  local d="$work/$1" f="$out/callgrind.$1.$2"
  "${as[@]}" valgrind --tool=callgrind --callgrind-out-file="$f" --dump-instr=no --collect-atstart=no --toggle-collect=ap_run_process_connection \
    /usr/sbin/apache2 -X -f "$d/httpd.conf" 2>"$d/valgrind.log" &
  pid=$!
  waitport "$port" || { cat "$d/valgrind.log" "$d/error.log" >&2; exit 1; }
  local urls=()
  for _ in $(seq 1 20); do urls+=("http://127.0.0.1:$port/$2.html"); done
  for _ in $(seq 21 "$n"); do urls+=("http://127.0.0.1:$port/$2.html"); done
  curl -s -H "Cookie: $3" "${urls[@]}" >/dev/null
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  local ir
  ir=$(awk '/^totals:/ {print $2; exit}' "$f")
  echo "$2 $1 $((ir / n))"
}

declare -A extra=()
extra[plain]=""
extra[module]="LoadModule csrf_protect_module $module
CSRF On
CSRFKeyFile $work/keys"
conf module "${extra[module]}"
mport=$port
# the module's client: its secret cookie and token
"${as[@]}" /usr/sbin/apache2 -f "$work/module/httpd.conf" -DFOREGROUND 2>/dev/null &
pid=$!
waitport "$mport"
got=0
client "http://127.0.0.1:$mport/form.html" || got=$?
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
[ "$got" = 0 ] || { echo "no token" >&2; exit 1; }
extra[substitute]=$(substitute_conf)
extra[floor]=$(substitute_conf floor)
for page in ${PAGES:-form real}; do
  for v in ${VARIANTS:-plain module substitute floor}; do
    conf "$v" "${extra[$v]}"
    run "$v" "$page" "$cookie"
  done
done
