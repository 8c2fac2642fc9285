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
#  - time on x86-64 (bench/cgi_time.py): wall time (fastest and median
#    run) and CPU time (user + system of the process and its children) of
#    the bare program, of the same behind a wrapper that does nothing
#    (bench/spawn.c: what any second process costs on this machine), behind
#    csrf-cgi builtin (dynamic, and the static musl build) and OpenSSL; the
#    rows run in turn, one run each per round, so load during the run falls
#    on all of them; "added" is the median of the per-round differences to
#    the bare program; target: the builtin build adds at most 0.5 ms to a
#    page. Then the mipsel build under qemu-mipsel (an emulator on this
#    machine, not a router's CPU: callgrind cannot run there, so its
#    instruction count is the x86-64 one of the same code).
#   BUILD=dir  the release build (default build/)   BENCH_QUICK=1  few runs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD:-$root/build}
dist=${ROUTER_OUT:-$root/dist/router}
out=${BENCH_OUT:-$here}/ROUTER.md
if [ "${BENCH_QUICK:-0}" = 1 ]; then runs=5 warmup=1; else runs=${ROUTER_RUNS:-300} warmup=10; fi
for p in "$build/csrf-cgi" "$build/builtin/csrf-cgi" "$build/csrf-key"; do
	[ -x "$p" ] || { echo "bench/router.sh: $p is missing (make build)" >&2; exit 1; }
done
echo "bench: the router builds (scripts/router.sh)" >&2
ROUTER_OUT="$dist" "$root/scripts/router.sh" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
progs="$root/tests/cgi/www/cgi-bin"
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
timed() { # name, env... -- LABEL CMD...: bench/cgi_time.py in cgi-bin, the body on stdin, into $work/name.json
	local name=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$progs" && env "${envs[@]}" python3 "$here/cgi_time.py" --runs "${RUNS:-$runs}" --warmup "$warmup" \
		--stdin "$work/body" --json "$work/$name.json" "$@" >/dev/null)
}
row() { # name, label: | label | fastest | median | cpu | added wall | added cpu |
	python3 - "$work/$1.json" "$2" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    if r["label"] != sys.argv[2]:
        continue
    added = lambda k: f"{r[k]:+.2f} ms" if k in r else ""
    print(f"| {r['label']} | {r['wall_min_ms']:.2f} ms | {r['wall_median_ms']:.2f} ms | {r['cpu_median_ms']:.2f} ms "
          f"| {added('added_wall_median_ms')} | {added('added_cpu_median_ms')} |")
PY
}
added() { # name, label, key: the figure in ms
	python3 -c 'import json,sys; print("%.2f" % [r for r in json.load(open(sys.argv[1])) if r["label"] == sys.argv[2]][0][sys.argv[3]])' \
		"$work/$1.json" "$2" "$3"
}
kib() { python3 -c 'import os,sys; print("%.1f" % (os.path.getsize(sys.argv[1]) / 1024))' "$1"; }

libcrypto=$(ldd "$build/csrf-cgi" | awk '/libcrypto/ {print $3}')
strip -o "$work/cgi-openssl" "$build/csrf-cgi"
strip -o "$work/cgi-builtin" "$build/builtin/csrf-cgi"
qemu=(qemu-mipsel -L /usr/mipsel-linux-gnu)
# the do-nothing wrappers, linked as the csrf-cgi builds beside them are
cc -O2 -o "$work/spawn" "$here/spawn.c"
musl-gcc -static -O2 -o "$work/spawn-static" "$here/spawn.c"
# what each csrf-cgi answers is checked once: a page with the token field, a rejection
(cd "$progs" && env "${page_env[@]}" "$build/builtin/csrf-cgi" ./page.cgi | grep -q 'name="csrf-token"') ||
	{ echo "bench/router.sh: csrf-cgi gave no page with a token" >&2; exit 1; }
(cd "$progs" && env "${reject_env[@]}" "$build/builtin/csrf-cgi" ./echo.cgi <"$work/body" | grep -q '^Status: 403') ||
	{ echo "bench/router.sh: csrf-cgi did not reject the cross-site POST" >&2; exit 1; }
rows=(bare "./PROG" "do-nothing wrapper (dynamic, glibc)" "$work/spawn ./PROG"
	"csrf-cgi builtin" "$build/builtin/csrf-cgi ./PROG" "csrf-cgi OpenSSL" "$build/csrf-cgi ./PROG"
	"do-nothing wrapper (static, musl)" "$work/spawn-static ./PROG"
	"csrf-cgi builtin, static musl" "$dist/x86_64-musl/csrf-cgi ./PROG")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: csrf-cgi's time, $runs rounds" >&2
timed page "${page_env[@]}" -- "${rows[@]//PROG/page.cgi}"
timed reject "${reject_env[@]}" -- "${rows[@]//PROG/echo.cgi}"
RUNS=$(((runs + 9) / 10)) timed qemu-page "${page_env[@]}" -- bare ./page.cgi "csrf-cgi mipsel under qemu-mipsel" \
	"${qemu[*]} $dist/mipsel/csrf-cgi ./page.cgi"
RUNS=$(((runs + 9) / 10)) timed qemu-reject "${reject_env[@]}" -- bare ./echo.cgi "csrf-cgi mipsel under qemu-mipsel" \
	"${qemu[*]} $dist/mipsel/csrf-cgi ./echo.cgi"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
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
	for arch in mips mipsel armhf aarch64 x86_64-musl; do
		links="libc"
		[ "$arch" = x86_64-musl ] && links="nothing (static, musl)"
		echo "| $arch (dist/router/$arch) | $(kib "$dist/$arch/csrf-cgi") KiB | $(kib "$dist/$arch/csrf-key") KiB | $links |"
	done
	echo "| x86-64 builtin ($(basename "$build")/builtin/csrf-cgi, stripped) | $(kib "$work/cgi-builtin") KiB | | libc |"
	echo "| x86-64 OpenSSL ($(basename "$build")/csrf-cgi, stripped) | $(kib "$work/cgi-openssl") KiB | | libc, libcrypto |"
	echo "| libcrypto itself ($libcrypto) | $(kib "$(readlink -f "$libcrypto")") KiB | | |"
	echo
	m=$(stat -c %s "$dist/mipsel/csrf-cgi") b=$(stat -c %s "$dist/mips/csrf-cgi")
	s=$(stat -c %s "$dist/x86_64-musl/csrf-cgi")
	echo "Targets: mipsel csrf-cgi at most 192 KiB: $([ "$m" -le 196608 ] && echo met || echo MISSED)" \
		"(big-endian mips: $([ "$b" -le 196608 ] && echo met || echo MISSED));" \
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
	echo "## Time on x86-64 (bench/cgi_time.py, $runs rounds)"
	echo
	echo "Each request is started as a web server starts a CGI program (posix_spawn, the body on standard"
	echo "input, standard output to /dev/null). The rows run in turn, one run of each per round, so load on"
	echo "the machine during the measurement falls on every row alike. Wall: the fastest run (the closest to"
	echo "an idle machine) and the median; CPU: user + system time of the process and the children it"
	echo "waited for (the scheduler's accounting: no time spent waiting for a core), median; added: the"
	echo "median of the per-round differences to the bare program (two runs that saw the same load). Load"
	echo "average (1, 5, 15 min) $load0 before, $load1 after, on $(nproc) cores."
	echo
	echo "The do-nothing wrapper (bench/spawn.c) starts the program and waits, nothing else: what it adds is"
	echo "what a second process in front of a CGI program costs on this machine, the floor under csrf-cgi."
	echo
	for c in "page:HTML page (new secret cookie, token, injection)" "reject:rejection (cross-site POST; the program does not run)"; do
		name=${c%%:*}
		echo "### ${c#*:}"
		echo
		echo "| run | wall, fastest | wall, median | CPU, median | added wall | added CPU |"
		echo "|---|---:|---:|---:|---:|---:|"
		for label in bare "do-nothing wrapper (dynamic, glibc)" "csrf-cgi builtin" "csrf-cgi OpenSSL" \
			"do-nothing wrapper (static, musl)" "csrf-cgi builtin, static musl"; do
			row "$name" "$label"
		done
		echo
	done
	pw=$(added page "csrf-cgi builtin" added_wall_median_ms) pc=$(added page "csrf-cgi builtin" added_cpu_median_ms)
	sw=$(added page "do-nothing wrapper (dynamic, glibc)" added_wall_median_ms)
	sc=$(added page "do-nothing wrapper (dynamic, glibc)" added_cpu_median_ms)
	ow=$(added page "csrf-cgi OpenSSL" added_wall_median_ms)
	mw=$(added page "csrf-cgi builtin, static musl" added_wall_median_ms)
	echo "Target (builtin, x86-64): a page adds at most 0.5 ms: with musl (the C library of OpenWrt and"
	echo "most router firmware; the static build) $mw ms," \
		"$(python3 -c "import sys; print('met' if float(sys.argv[1]) <= 0.5 else 'MISSED')" "$mw");" \
		"with glibc (dynamic) $pw ms," \
		"$(python3 -c "import sys; print('met' if float(sys.argv[1]) <= 0.5 else 'MISSED')" "$pw") on this machine:"
	echo "csrf-cgi builtin adds $pw ms wall ($pc ms CPU) to the page, OpenSSL $ow ms; a wrapper that does"
	echo "nothing adds $sw ms ($sc ms CPU), so csrf-cgi's own work is" \
		"$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$pw" "$sw") ms of wall time" \
		"($(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$pc" "$sc") ms CPU) above that floor."
	machine="$(nproc) shared cores of a virtual machine, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1)"
	if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.5 else 1)" "$sc"; then
		echo "On this machine ($machine)"
		echo "starting a second, dynamically linked process that does nothing already costs more than 0.5 ms,"
		echo "so the wall-time target cannot be met here by any CGI wrapper; the static musl build comes"
		echo "closest."
	else
		echo "On this machine ($machine) a second process that does nothing costs $sc ms of CPU."
	fi
	echo "csrf-cgi's own user-space work is the instruction count above (builtin: about 0.3 M"
	echo "for the page); the rest of what it adds is the kernel's: starting and loading a process, the"
	echo "pipe it reads the program's answer through. The OpenSSL build adds the loading of libcrypto."
	echo
	echo "## The mipsel build under qemu-mipsel ($(((runs + 9) / 10)) rounds)"
	echo
	echo "| request | run | wall, fastest | wall, median | CPU, median | added wall | added CPU |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for name in qemu-page qemu-reject; do
		for label in bare "csrf-cgi mipsel under qemu-mipsel"; do
			echo "| ${name#qemu-} $(row "$name" "$label")"
		done
	done
	echo
	echo "Under qemu-mipsel every MIPS instruction is translated on this x86-64 machine: the time is the"
	echo "emulator's, not a router's. A router's cost is the x86-64 instruction count above for the same"
	echo "code (callgrind cannot run under qemu-user), at the router core's rate."
} >"$out"
cat "$out"
