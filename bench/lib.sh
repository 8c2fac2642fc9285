# SPDX-License-Identifier: BSD-2-Clause
# lib.sh - the helpers of the benchmark scripts (sourced): run.sh,
# apache.sh, apache_callgrind.sh, nginx_callgrind.sh, nginx_count.sh.
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# waitport PORT: until something listens there (waitport_seconds, 60 s
# unless the script sets it)
waitport() {
  for _ in $(seq 1 $((${waitport_seconds:-60} * 10))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listens on port $1" >&2
  return 1
}
# meta NAME FILE: the content of the page's <meta name=NAME>
meta() { sed -n "s/.*<meta name=\"$1\" content=\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n1; }
# jar_cookie JAR: the cookies of curl's cookie jar as a Cookie header
jar_cookie() { awk '!/^#/ && NF >= 7 {printf "%s%s=%s", sep, $6, $7; sep="; "} /^#HttpOnly_/ {sub(/^#HttpOnly_/, ""); printf "%s%s=%s", sep, $6, $7; sep="; "}' "$1"; }
# client URL: a client of the protected page at URL: its secret cookie
# and a token. Sets field and token (the page's meta tags) and cookie (the
# jar's cookies as a Cookie header); fails when one is missing.
client() {
  curl -s -c "$work/jar" -o "$work/page.html" "$1"
  field=$(meta csrf-param "$work/page.html")
  token=$(meta csrf-token "$work/page.html")
  cookie=$(jar_cookie "$work/jar")
  [ -n "$field" ] && [ -n "$token" ] && [ -n "$cookie" ]
}
# substitute_conf: mod_substitute doing the module's insertion (its two
# meta tags after <head>, the field after the POST form's start tag) with
# client's field and token; substitute_conf floor: on a pattern never
# found, what any filter that reads and rewrites the body costs
substitute_conf() {
  echo "LoadModule filter_module $mods/mod_filter.so
LoadModule substitute_module $mods/mod_substitute.so
AddOutputFilterByType SUBSTITUTE text/html"
  if [ "${1:-}" = floor ]; then
    echo "Substitute 's|<never-there>|x|n'"
    return
  fi
  local form_tag='<form method="post" action="/submit">'
  echo "Substitute 's|<head>|<head><meta name=\"csrf-param\" content=\"$field\"><meta name=\"csrf-token\" content=\"$token\">|n'
Substitute 's|$form_tag|$form_tag<input type=\"hidden\" name=\"$field\" value=\"$token\">|n'"
}
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
