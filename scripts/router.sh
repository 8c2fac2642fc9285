#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/router.sh [ARCH...] - `make router`: csrf-cgi and csrf-key for
# routers, with the builtin crypto backend (no library but libc), without
# Redis or re-authentication, -Os, stripped, one folder per target a
# firmware builder takes as it is:
#   dist/router/<arch>/csrf-cgi, csrf-key
# ARCH: mips (big-endian) mipsel armhf aarch64 (Debian's cross compilers,
# cmake/toolchains) and x86_64-musl (musl-gcc, static); default all five.
# ROUTER_BUILD (default build-router) holds the CMake builds, ROUTER_OUT
# (default dist/router) the folders; ROUTER_TESTS=1 also builds the test
# programs that run on the target (tests/router), unstripped, in the builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ROUTER_BUILD:-$root/build-router}
out=${ROUTER_OUT:-$root/dist/router}
tests=${ROUTER_TESTS:-0}
jobs=${JOBS:-2}
arches=("$@")
[ "${#arches[@]}" -gt 0 ] || arches=(mips mipsel armhf aarch64 x86_64-musl)

toolchain() {
	case $1 in
	mips) echo mips-linux-gnu ;;
	mipsel) echo mipsel-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	aarch64) echo aarch64-linux-gnu ;;
	x86_64-musl) echo x86_64-linux-musl ;;
	*) echo "router.sh: unknown target $1 (mips mipsel armhf aarch64 x86_64-musl)" >&2; return 1 ;;
	esac
}

for arch in "${arches[@]}"; do
	tc=$(toolchain "$arch")
	dir=$build/$arch
	log=$dir.log
	mkdir -p "$dir"
	targets=(csrf-cgi csrf-key)
	[ "$tests" = 1 ] && targets+=(test_sha256 cavp test_token test_keyfile test_keyring test_cookie test_request test_inject_scan)
	if ! { cmake -S "$root" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$tc.cmake" \
		-DCMAKE_BUILD_TYPE=MinSizeRel -DCSRF_ROUTER=ON -DCSRF_CRYPTO=builtin -DCSRF_WITH_REDIS=OFF \
		-DCSRF_WITH_REAUTH=OFF -DCSRF_NGINX_MODULE=OFF -DCSRF_BUILD_TESTS="$([ "$tests" = 1 ] && echo ON || echo OFF)" &&
		cmake --build "$dir" -j "$jobs" --target "${targets[@]}"; } >"$log" 2>&1; then
		tail -n 30 "$log"
		echo "router.sh: the $arch build failed (log: $log)" >&2
		exit 1
	fi
	strip=strip
	[ "$arch" = x86_64-musl ] || strip=$tc-strip
	mkdir -p "$out/$arch"
	for p in csrf-cgi csrf-key; do
		"$strip" --strip-all -o "$out/$arch/$p" "$dir/$p"
	done
	printf '%-12s %s\n' "$arch" "$(stat -c '%s bytes' "$out/$arch/csrf-cgi") csrf-cgi ($out/$arch)"
done
