#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# core-link.sh SRC BUILD [CFLAGS] - the core links with libcrypto alone
# (ctest package.core_link). Installs the build into a temporary DESTDIR
# (as `make install DESTDIR=...` does), then:
#  - core_only.c, which uses csrf.h only, is linked against libcsrf.so
#    with -lcsrf -lcrypto and nothing else, and against every object of
#    libcsrf.a (--whole-archive) with -lcrypto -lpthread; both run, and
#    neither the program nor libcsrf.so loads libsodium or hiredis;
#  - libcsrf.pc requires libcrypto only; where pkg-config knows libcrypto
#    alone, pkg-config libcsrf and find_package(libcsrf) find the core,
#    and neither finds the session part;
#  - the build's nginx module, csrf-key and csrf-cgi need neither
#    libsodium nor hiredis;
#  - with -DCSRF_CRYPTO=builtin (a nested build in BUILD/core-builtin)
#    libcsrf.so needs libc alone;
#  - the optional part is there on its own: session_store.c, which uses
#    csrf_session.h, builds with pkg-config's libcsrf-session (shared and
#    static) and with find_package(libcsrf COMPONENTS session), and runs.
set -euo pipefail
src=$1 build=$2 extra=${3:-}
here=$src/tests/package
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "core-link: FAIL: $*" >&2
	exit 1
}

DESTDIR="$tmp/dest" cmake --install "$build" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
root=$tmp/dest$prefix
pc=$(find "$root" -name libcsrf.pc | head -n 1)
[ -n "$pc" ] || fail "libcsrf.pc was not installed"
lib=$(dirname "$(dirname "$pc")")
inc=$root/include
export PKG_CONFIG_PATH=$lib/pkgconfig

# The core, shared: -lcsrf -lcrypto, nothing else.
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $extra -I"$inc" -o "$tmp/core" "$here/core_only.c" -L"$lib" -lcsrf -lcrypto ||
	fail "core_only.c does not link with -lcsrf -lcrypto"
needed=$(readelf -d "$lib/libcsrf.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | xargs)
echo "libcsrf.so needs: $needed"
! grep -qiE 'sodium|hiredis' <<<"$needed" || fail "libcsrf.so needs libsodium or hiredis: $needed"
loaded=$(LD_LIBRARY_PATH=$lib ldd "$tmp/core")
! grep -qiE 'sodium|hiredis' <<<"$loaded" || fail "the core program loads libsodium or hiredis: $loaded"
LD_LIBRARY_PATH=$lib "$tmp/core" || fail "the core program (shared) exited $?"

# The core, static: every object of libcsrf.a, with libcrypto alone.
# shellcheck disable=SC2086
cc -std=c11 $extra -I"$inc" -o "$tmp/core-static" "$here/core_only.c" -Wl,--whole-archive "$lib/libcsrf.a" \
	-Wl,--no-whole-archive -lcrypto -lpthread || fail "libcsrf.a does not link with -lcrypto alone"
"$tmp/core-static" || fail "the core program (static) exited $?"

requires=$(pkg-config --print-requires-private libcsrf | xargs)
echo "libcsrf.pc Requires.private: $requires"
[ "$requires" = libcrypto ] || fail "libcsrf.pc requires $requires"

# What the build made for servers links the core only: the nginx module,
# csrf-key and csrf-cgi need neither libsodium nor hiredis.
for f in "$build/nginx/ngx_http_csrf_module.so" "$build/csrf-key" "$build/csrf-cgi"; do
	[ -e "$f" ] || fail "$f was not built"
	needed=$(readelf -d "$f" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | xargs)
	echo "$(basename "$f") needs: $needed"
	! grep -qiE 'sodium|hiredis' <<<"$needed" || fail "$f needs libsodium or hiredis: $needed"
done

# The optional part: its own header, library and .pc.
[ -f "$inc/csrf_session.h" ] || fail "csrf_session.h was not installed"
pkg-config --exists libcsrf-session || fail "libcsrf-session.pc was not installed"
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror $extra -o "$tmp/session" "$here/session_store.c" \
	$(pkg-config --cflags --libs libcsrf-session) || fail "session_store.c does not build with libcsrf-session.pc"
LD_LIBRARY_PATH=$lib "$tmp/session" || fail "the session program (shared) exited $?"
# shellcheck disable=SC2046,SC2086
cc -std=c11 $extra -o "$tmp/session-static" "$here/session_store.c" -I"$inc" "$lib/libcsrf-session.a" \
	"$lib/libcsrf.a" $(pkg-config --libs --static libcsrf-session | sed 's/-lcsrf-session//; s/-lcsrf//') ||
	fail "session_store.c does not build with libcsrf-session.a"
"$tmp/session-static" || fail "the session program (static) exited $?"

mkdir -p "$tmp/app"
cp "$here/session_store.c" "$tmp/app/"
cat >"$tmp/app/CMakeLists.txt" <<-'CMAKE'
	cmake_minimum_required(VERSION 3.18)
	project(session_store C)
	find_package(libcsrf 0.1 CONFIG REQUIRED COMPONENTS session)
	add_executable(session session_store.c)
	target_link_libraries(session PRIVATE libcsrf::csrf_session)
	add_executable(session-static session_store.c)
	target_link_libraries(session-static PRIVATE libcsrf::csrf_session_static)
CMAKE
{ cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_C_FLAGS="$extra" \
	-DCMAKE_EXE_LINKER_FLAGS="$extra" && cmake --build "$tmp/app/build"; } >"$tmp/cmake.log" 2>&1 ||
	{ cat "$tmp/cmake.log"; fail "find_package(libcsrf COMPONENTS session) does not build"; }
for p in session session-static; do
	"$tmp/app/build/$p" || fail "$p (CMake) exited $?"
done
# Where pkg-config knows libcrypto and nothing of the session part's
# libraries, the core is found (pkg-config libcsrf, find_package(libcsrf))
# and the session component is not.
mkdir -p "$tmp/pc" "$tmp/core-app"
cp "$(pkg-config --variable=pcfiledir libcrypto)/libcrypto.pc" "$tmp/pc/"
only_crypto="PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH=$lib/pkgconfig"
env $only_crypto pkg-config --cflags --libs libcsrf >/dev/null || fail "pkg-config libcsrf needs more than libcrypto"
! env $only_crypto pkg-config --cflags --libs libcsrf-session >/dev/null 2>&1 || fail "pkg-config found libcsrf-session without libsodium"
cp "$here/core_only.c" "$tmp/core-app/"
cat >"$tmp/core-app/CMakeLists.txt" <<-'CMAKE'
	cmake_minimum_required(VERSION 3.18)
	project(core_only C)
	find_package(libcsrf 0.1 CONFIG REQUIRED OPTIONAL_COMPONENTS session)
	if(libcsrf_session_FOUND)
	  message(FATAL_ERROR "the session component was found without libsodium and hiredis")
	endif()
	add_executable(core core_only.c)
	target_link_libraries(core PRIVATE libcsrf::csrf_static)
CMAKE
{ env $only_crypto cmake -S "$tmp/core-app" -B "$tmp/core-app/build" -DCMAKE_PREFIX_PATH="$root" \
	-DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" && cmake --build "$tmp/core-app/build"; } \
	>"$tmp/core-cmake.log" 2>&1 || { cat "$tmp/core-cmake.log"; fail "find_package(libcsrf) for the core alone"; }
"$tmp/core-app/build/core" || fail "the core program (CMake, static) exited $?"

# With the builtin SHA-256 the core needs nothing but libc (a nested
# configure of the same sources, the two libraries only).
bi=$build/core-builtin
{ cmake -S "$src" -B "$bi" -DCMAKE_BUILD_TYPE=Debug -DCSRF_CRYPTO=builtin -DCSRF_BUILD_TESTS=OFF \
	-DCSRF_NGINX_MODULE=OFF && cmake --build "$bi" -j2 --target csrf_shared csrf_session_shared; } >"$bi.log" 2>&1 ||
	{ tail -n 30 "$bi.log"; fail "the builtin build failed (log: $bi.log)"; }
needed=$(readelf -d "$bi/libcsrf.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | xargs)
echo "libcsrf.so (builtin) needs: $needed"
for n in $needed; do
	case "$n" in libc.so.* | ld-linux*) ;; *) fail "libcsrf.so (builtin) needs $n: $needed" ;; esac
done
needed=$(readelf -d "$bi/libcsrf-session.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | xargs)
echo "libcsrf-session.so (builtin) needs: $needed"
echo "core-link: the core links with libcrypto alone (builtin: libc alone); the session part builds on its own"
