# SPDX-License-Identifier: BSD-2-Clause
# apache_lib.sh - helpers of bench/apache.sh, bench/apache_callgrind.sh
# and bench/nginx_count.sh (sourced).
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# waitport PORT: until something listens there (60 s at most)
waitport() {
  for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listens on port $1" >&2
  return 1
}
# meta NAME FILE: the content of the page's <meta name=NAME>
meta() { sed -n "s/.*<meta name=\"$1\" content=\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n1; }
# site: the pages (form.html, 20 forms; real.html, pages/socat.html) in
# $work/html and a key file $work/keys; sets mods
site() {
  mkdir -p "$work/html"
  python3 "$here/page.py" >"$work/html/form.html"
  cp "$here/pages/socat.html" "$work/html/real.html"
  chmod 755 "$work" "$work/html"
  chmod 644 "$work/html/"*.html
  "$build/csrf-key" new "$work/keys" >/dev/null
  mods=/usr/lib/apache2/modules
}
# scratch: $work, a new temporary folder, and pids, the processes the
# script starts; at exit they are ended and the folder removed
scratch() {
  work=$(mktemp -d)
  pids=()
  trap scratch_end EXIT
}
scratch_end() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
