# SPDX-License-Identifier: BSD-2-Clause
# apache_lib.sh - helpers of bench/apache.sh and bench/apache_callgrind.sh
# (sourced).
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
