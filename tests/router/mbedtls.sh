#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mbedtls.sh SRC DIR VECTORS - the router build on the mbedTLS backend
# (-DCSRF_CRYPTO=mbedtls, libmbedcrypto: OpenWrt's own crypto library),
# built for this machine in DIR: csrf-cgi links libc and libmbedcrypto only,
# and the SHA-256/HMAC vectors and the unit tests of tokens, key files,
# the key ring and cookies pass on it, and the NIST CAVP SHA-256 and
# RFC 4231 files of VECTORS (tests/unit/cavp.c: HMAC over libmbedcrypto).
set -euo pipefail
src=$1
dir=$2
log="$dir.log"
mkdir -p "$dir"
tests=(test_sha256 test_token test_keyfile test_keyring test_cookie)
vectors=$3
if ! { cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=MinSizeRel -DCSRF_ROUTER=ON -DCSRF_CRYPTO=mbedtls \
	-DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF -DCSRF_NGINX_MODULE=OFF -DCSRF_BUILD_TESTS=ON &&
	cmake --build "$dir" -j2 --target csrf-cgi cavp "${tests[@]}"; } >"$log" 2>&1; then
	tail -n 30 "$log"
	echo "mbedtls build: configure or build failed (log: $log)"
	exit 1
fi
libs=$(ldd "$dir/csrf-cgi" | awk '{print $1}' | sed 's|.*/||' | sort | tr '\n' ' ')
echo "csrf-cgi (mbedtls) loads: $libs"
for l in $libs; do
	case $l in linux-vdso.so.1 | libc.so.6 | ld-linux-x86-64.so.2 | libmbedcrypto.so.*) ;;
	*) echo "mbedtls build: csrf-cgi loads $l"; exit 1 ;;
	esac
done
case "$libs" in *libmbedcrypto*) ;; *) echo "mbedtls build: csrf-cgi does not load libmbedcrypto"; exit 1 ;; esac
for t in "${tests[@]}"; do
	echo "== $t"
	"$dir/$t"
done
echo "== cavp"
"$dir/cavp" "$vectors"
