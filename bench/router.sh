#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# router.sh - the router builds' figures for `make bench` (issue 27's
# targets), into bench/ROUTER.md (BENCH_OUT=dir elsewhere) and on stdout:
#  - sizes: csrf-cgi and csrf-key of each dist/router/<arch> folder
#    (scripts/router.sh: -Os, stripped, builtin crypto) beside libcrypto,
#    which the default build needs; targets: mipsel csrf-cgi at most
#    192 KiB, the static musl one at most 256 KiB;
#  - instructions (callgrind) csrf-cgi's own process executes for an HTML
#    page and for a rejection, on x86-64, builtin (build/builtin/csrf-cgi,
#    and the static musl build) and OpenSSL (build/csrf-cgi); the CGI
#    program runs in a process of its own, untraced, so this is what
#    csrf-cgi adds over the bare program; targets: page at most 0.5 M,
#    rejection at most 0.3 M;
#  - wall time (hyperfine medians) of the same requests on x86-64 and of the
#    mipsel build under qemu-mipsel (an emulator on this machine, not a
#    router's CPU: callgrind cannot run there, so its instruction count is
#    the x86-64 one of the same code).
#   BUILD=dir  the release build (default build/)   BENCH_QUICK=1  few runs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD:-$root/build}
dist=${ROUTER_OUT:-$root/dist/router}
out=${BENCH_OUT:-$here}/ROUTER.md
if [ "${BENCH_QUICK:-0}" = 1 ]; then runs=5 warmup=1; else runs=${ROUTER_RUNS:-100} warmup=10; fi
for p in "$build/csrf-cgi" "$build/builtin/csrf-cgi" "$build/csrf-key"; do
	[ -x "$p" ] || { echo "bench/router.sh: $p is missing (make build)" >&2; exit 1; }
done
echo "bench: the router builds (scripts/router.sh)" >&2
ROUTER_OUT="$dist" "$root/scripts/router.sh" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
progs="$root/cgi/tests/www/cgi-bin"
"$build/csrf-key" new "$work/keys" >/dev/null
printf 'origin http://192.168.1.1\nkey_file %s\n' "$work/keys" >"$work/conf"
export CSRF_CGI_CONFIG="$work/conf" CGI_TEST_DIR="$work" HTTP_HOST=192.168.1.1 REMOTE_USER=admin
printf 'dns1=9.9.9.9&dns2=149.112.112.112' >"$work/body"
len=$(stat -c %s "$work/body")
page_env=(REQUEST_METHOD=GET SCRIPT_NAME=/cgi-bin/page.cgi)
reject_env=(REQUEST_METHOD=POST SCRIPT_NAME=/cgi-bin/echo.cgi CONTENT_TYPE=application/x-www-form-urlencoded
	CONTENT_LENGTH="$len" HTTP_ORIGIN=http://evil.example)

ir() { # cgi, program, env...: csrf-cgi's own instructions
	local cgi=$1 prog=$2
	shift 2
	(cd "$progs" && env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$cgi" "$prog" <"$work/body" 2>&1 \
		>/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
}
wall() { # env... -- command: hyperfine median in ms, the body on stdin (through sh, for every row alike)
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$progs" && env "${envs[@]}" hyperfine -N --style none --warmup "$warmup" --runs "$runs" \
		--export-json "$work/h.json" "sh -c '$1 <$work/body'" >/dev/null 2>&1)
	python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$work/h.json"
}
kib() { python3 -c 'import os,sys; print("%.1f" % (os.path.getsize(sys.argv[1]) / 1024))' "$1"; }

libcrypto=$(ldd "$build/csrf-cgi" | awk '/libcrypto/ {print $3}')
strip -o "$work/cgi-openssl" "$build/csrf-cgi"
strip -o "$work/cgi-builtin" "$build/builtin/csrf-cgi"
qemu=(qemu-mipsel -L /usr/mipsel-linux-gnu)
{
	echo "# csrf-cgi for routers: sizes, instructions, time"
	echo
	echo "Written by \`bench/router.sh\` (\`make bench\`) on $(date -u +%Y-%m-%d), $(nproc) cores, load average"
	echo "$(cut -d' ' -f1 /proc/loadavg) at the start. The builds: \`scripts/router.sh\` (\`make router\`), -Os,"
	echo "stripped, builtin crypto, no Redis or re-authentication; x86-64 rows from \`$(basename "$build")/\`."
	echo
	echo "## Sizes"
	echo
	echo "| build | csrf-cgi | csrf-key | links |"
	echo "|---|---:|---:|---|"
	for arch in mipsel armhf aarch64 x86_64-musl; do
		links="libc"
		[ "$arch" = x86_64-musl ] && links="nothing (static, musl)"
		echo "| $arch (dist/router/$arch) | $(kib "$dist/$arch/csrf-cgi") KiB | $(kib "$dist/$arch/csrf-key") KiB | $links |"
	done
	echo "| x86-64 builtin ($(basename "$build")/builtin/csrf-cgi, stripped) | $(kib "$work/cgi-builtin") KiB | | libc |"
	echo "| x86-64 OpenSSL ($(basename "$build")/csrf-cgi, stripped) | $(kib "$work/cgi-openssl") KiB | | libc, libcrypto |"
	echo "| libcrypto itself ($libcrypto) | $(kib "$(readlink -f "$libcrypto")") KiB | | |"
	echo
	m=$(stat -c %s "$dist/mipsel/csrf-cgi") s=$(stat -c %s "$dist/x86_64-musl/csrf-cgi")
	echo "Targets: mipsel csrf-cgi at most 192 KiB: $([ "$m" -le 196608 ] && echo met || echo MISSED);" \
		"static musl csrf-cgi at most 256 KiB: $([ "$s" -le 262144 ] && echo met || echo MISSED)."
	echo
	echo "## Instructions (callgrind, x86-64, csrf-cgi's own process)"
	echo
	echo "| csrf-cgi | HTML page (new secret cookie, token, injection) | rejection (cross-site POST) |"
	echo "|---|---:|---:|"
	for c in "builtin:$build/builtin/csrf-cgi" "builtin, static musl:$dist/x86_64-musl/csrf-cgi" "OpenSSL:$build/csrf-cgi"; do
		name=${c%%:*} cgi=${c#*:}
		p=$(ir "$cgi" ./page.cgi "${page_env[@]}") r=$(ir "$cgi" ./echo.cgi "${reject_env[@]}")
		printf '| %s | %.3f M | %.3f M |\n' "$name" "$(echo "$p / 1000000" | bc -l)" "$(echo "$r / 1000000" | bc -l)"
		if [ "$name" = builtin ]; then bp=$p br=$r; fi
	done
	echo
	echo "Targets (builtin): page at most 0.5 M: $([ "$bp" -le 500000 ] && echo met || echo MISSED);" \
		"rejection at most 0.3 M: $([ "$br" -le 300000 ] && echo met || echo MISSED)."
	echo
	echo "## Wall time (hyperfine median of $runs runs, each through \`sh -c\` with the body on stdin)"
	echo
	echo "| run | HTML page | rejection |"
	echo "|---|---:|---:|"
	echo "| the bare program (x86-64 sh) | $(wall "${page_env[@]}" -- ./page.cgi) ms | $(wall "${reject_env[@]}" -- ./echo.cgi) ms |"
	for c in "builtin:$build/builtin/csrf-cgi" "OpenSSL:$build/csrf-cgi"; do
		name=${c%%:*} cgi=${c#*:}
		echo "| csrf-cgi x86-64 $name | $(wall "${page_env[@]}" -- "$cgi ./page.cgi") ms |" \
			"$(wall "${reject_env[@]}" -- "$cgi ./echo.cgi") ms |"
	done
	echo "| csrf-cgi mipsel under qemu-mipsel | $(wall "${page_env[@]}" -- "${qemu[*]} $dist/mipsel/csrf-cgi ./page.cgi") ms |" \
		"$(wall "${reject_env[@]}" -- "${qemu[*]} $dist/mipsel/csrf-cgi ./echo.cgi") ms |"
	echo
	echo "With the load average above the number of cores the medians are mostly time spent waiting for a"
	echo "core (see the bare program's row); the instruction counts above are what no load changes."
	echo "Under qemu-mipsel every MIPS instruction is translated on this x86-64 machine: the time is the"
	echo "emulator's, not a router's. A router's cost is the x86-64 instruction count above for the same"
	echo "code (callgrind cannot run under qemu-user), at the router core's rate."
} >"$out"
cat "$out"
