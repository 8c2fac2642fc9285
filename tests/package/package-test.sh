#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# package-test.sh SRC WORK - the Debian packages, built and used as a user
# would (ctest "package"):
#  1. `make deb`'s build (scripts/deb.sh) into WORK/dist; lintian reports
#     no error; the nginx module's and the tools' packages depend, directly
#     or through ours, on neither libsodium nor hiredis;
#  2. a fresh Debian 12 root: debootstrap (minbase) plus what the checks
#     use (nginx, a C compiler, cmake, pkg-config and the -dev packages
#     libcsrf-dev depends on), made once and kept in WORK/bookworm; every
#     run works on an overlay of it, thrown away at the end;
#  3. there: `apt install ./*.deb` as the README says; the module enabled by
#     the package (the modules-enabled link); ldd of the module, csrf-key
#     and csrf-cgi names libcrypto and neither libsodium nor hiredis;
#     `nginx -t` with the README's Install lines in a site; the README's C
#     handler compiled and run with pkg-config, and with a CMake project
#     using find_package (shared and static targets); a store program
#     with pkg-config libcsrf-session; csrf-key new and list (csrf-cgi too
#     when the package has it);
#  4. purge the packages: every file outside dpkg's and apt's own state is
#     as it was before the install.
# Needs root (debootstrap, chroot, mounts); runs in its own mount
# namespace, so nothing stays mounted whatever happens.
set -euo pipefail

if [ -z "${CSRF_PKG_NS:-}" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		exec sudo -n env CSRF_PKG_NS= PATH="$PATH" "$0" "$@"
	fi
	exec unshare --mount --propagation private env CSRF_PKG_NS=1 "$0" "$@"
fi

src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
base=$work/bookworm
run=$work/run
root=$run/root
t0=$(date +%s)
step() { echo "package-test: [$(($(date +%s) - t0)) s] $*"; }
fail() {
	echo "package-test: FAIL: $*" >&2
	exit 1
}

# 1. The packages.
step "building the packages (scripts/deb.sh)"
mapfile -t debs < <("$src/scripts/deb.sh" "$work/dist" "$work/deb")
names=()
for d in "${debs[@]}"; do names+=("$(dpkg-deb -f "$d" Package)"); done
want="csrf-tools libapache2-mod-csrf-protect libcsrf-dev libcsrf-session0 libcsrf0 libnginx-mod-http-csrf"
[ "$(printf '%s\n' "${names[@]}" | sort | xargs)" = "$want" ] ||
	fail "packages built: ${names[*]}; expected: $want"
# The nginx module and the tools use the core only: neither they nor the
# packages of ours they depend on pull in libsodium or hiredis (the
# session part's libraries).
lean="libnginx-mod-http-csrf libapache2-mod-csrf-protect csrf-tools"
deps_of() {
	local d
	for d in "${debs[@]}"; do
		if [ "$(dpkg-deb -f "$d" Package)" = "$1" ]; then dpkg-deb -f "$d" Depends; fi
	done
}
for p in $lean; do
	# p, then each package of ours it depends on, directly or not.
	todo=("$p") seen=" $p "
	while [ ${#todo[@]} -gt 0 ]; do
		q=${todo[0]} todo=("${todo[@]:1}")
		dep=$(deps_of "$q")
		step "$q Depends: $dep"
		! grep -qiE 'sodium|hiredis' <<<"$dep" || fail "$p pulls in libsodium or hiredis through $q: $dep"
		for n in $(tr ',|' '\n\n' <<<"$dep" | awk '{print $1}'); do
			if [[ " ${names[*]} " == *" $n "* && "$seen" != *" $n "* ]]; then
				seen="$seen$n " todo+=("$n")
			fi
		done
	done
done
step "lintian"
lintian --fail-on error "$work"/deb/*.changes ||
	fail "lintian reports errors"

# 2. The Debian 12 root, made once.
base_pkgs="nginx apache2 gcc libc6-dev make cmake pkgconf libssl-dev libsodium-dev libhiredis-dev"
# The host's Debian mirror (the one apt uses here).
host_uri() {
	{ grep -rhoE "^(URIs:|deb)[[:space:]]+https?://[^[:space:]]+/$1/?([[:space:]]|$)" /etc/apt/ || true; } |
		head -n 1 | awk '{print $2}'
}
mirror=$(host_uri debian)
security=$(host_uri debian-security)
mirror=${mirror:-http://deb.debian.org/debian}
security=${security:-http://deb.debian.org/debian-security}
in_root() {
	chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "${@:2}"
}
if [ "$(cat "$base/.csrf-base" 2>/dev/null)" != "$base_pkgs" ]; then
	step "making the Debian 12 root (debootstrap from $mirror; once)"
	rm -rf "$base" "$base.tmp"
	debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$work/debootstrap.log" >&2; fail "debootstrap failed (log: $work/debootstrap.log)"; }
	cat >"$base.tmp/etc/apt/sources.list" <<-EOF
		deb $mirror bookworm main
		deb $mirror bookworm-updates main
		deb $security bookworm-security main
	EOF
	# Package scripts never start services in this root (nginx on port 80).
	printf '#!/bin/sh\nexit 101\n' >"$base.tmp/usr/sbin/policy-rc.d"
	chmod 755 "$base.tmp/usr/sbin/policy-rc.d"
	mount -t proc proc "$base.tmp/proc"
	# shellcheck disable=SC2086
	{ in_root "$base.tmp" apt-get update -qq &&
		in_root "$base.tmp" apt-get install -y -qq --no-install-recommends $base_pkgs; } >>"$work/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$work/debootstrap.log" >&2; fail "apt-get in the new root failed"; }
	in_root "$base.tmp" apt-get clean
	umount "$base.tmp/proc"
	echo "$base_pkgs" >"$base.tmp/.csrf-base"
	mv "$base.tmp" "$base"
fi

# Every run on a throwaway overlay of the root.
rm -rf "$run"
mkdir -p "$run/upper" "$run/ovl" "$root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/ovl" "$root"
mount -t proc proc "$root/proc"
# shellcheck disable=SC2317
cleanup() {
	umount "$root/proc" 2>/dev/null || true
	umount "$root" 2>/dev/null || true
	rm -rf "$run"
}
trap cleanup EXIT

# Every file but dpkg's and apt's state, logs, caches and scratch space:
# type, mode, owner, path, and the contents of regular files under /etc.
snapshot() {
	in_root "$root" find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /var/tmp -o -path /var/cache -o -path /var/log -o -path /var/lib/dpkg -o -path /var/lib/apt \) \
		-prune -o -printf '%y %m %u %p -> %l\n' | sort |
		# apache2-maintscript-helper's own bookkeeping directories, made
		# when a module package is removed and gone with apache2's purge
		# (a mark file of ours inside them would still show)
		grep -vE '^d 755 root /var/lib/apache2/module/(dis|en)abled_by_(admin|maint) -> $'
	in_root "$root" find /etc -xdev -type f ! -path /etc/ld.so.cache -exec md5sum {} + | sort -k2
}
# nginx makes its temp dirs (/var/lib/nginx/*) at its first start or test.
in_root "$root" nginx -t >"$run/nginx-stock.log" 2>&1 || { cat "$run/nginx-stock.log" >&2; fail "nginx -t in the new root"; }
in_root "$root" apache2ctl configtest >"$run/apache-stock.log" 2>&1 ||
	{ cat "$run/apache-stock.log" >&2; fail "apache2ctl configtest in the new root"; }
snapshot >"$run/before"

# 3. Install as the README says, and use what was installed.
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
step "apt install ./*.deb"
in_root "$root" sh -c 'cd /tmp/debs && apt-get install -y -q --no-install-recommends ./*.deb' >"$run/apt.log" 2>&1 ||
	{ cat "$run/apt.log" >&2; fail "apt install of the packages failed"; }
for p in $want; do
	[ "$(in_root "$root" dpkg-query -W -f '${db:Status-Status}' "$p")" = installed ] || fail "$p is not installed"
done

link=$(readlink "$root/etc/nginx/modules-enabled/50-mod-http-csrf.conf") ||
	fail "the package did not enable the module in /etc/nginx/modules-enabled"
[ "$link" = /usr/share/nginx/modules-available/mod-http-csrf.conf ] || fail "modules-enabled link points to $link"
grep -qx 'load_module modules/ngx_http_csrf_module.so;' "$root$link" || fail "unexpected snippet: $(cat "$root$link")"

# What the installed module and tools load: libcrypto and libc, never
# libsodium or hiredis (ldd follows libcsrf.so.0 too).
for f in /usr/lib/nginx/modules/ngx_http_csrf_module.so /usr/lib/apache2/modules/mod_csrf_protect.so /usr/bin/csrf-key \
	/usr/bin/csrf-cgi; do
	in_root "$root" test -e "$f" || fail "$f is not installed"
	ldd_out=$(in_root "$root" ldd "$f") || fail "ldd $f"
	! grep -qiE 'sodium|hiredis' <<<"$ldd_out" || fail "$f loads libsodium or hiredis: $ldd_out"
	grep -q 'libcrypto\.so' <<<"$ldd_out" || fail "$f does not load libcrypto: $ldd_out"
done
step "csrf-key, nginx -t with the README's Install lines"
in_root "$root" csrf-key new /etc/nginx/csrf.keys >"$run/key.log" 2>&1 || { cat "$run/key.log" >&2; fail "csrf-key new"; }
[ "$(stat -c %a "$root/etc/nginx/csrf.keys")" = 600 ] || fail "csrf-key new: the key file is not mode 0600"
in_root "$root" csrf-key list /etc/nginx/csrf.keys | grep -q 'sign' || fail "csrf-key list shows no signing key"
# The ```nginx block of the README's Install section, in a site.
lines=$(awk '/^## Install/ {s=1} s && /^```nginx$/ {on=1; next} on && /^```$/ {exit} on {print}' "$src/README.md")
[ -n "$lines" ] || fail "README.md has no nginx block in its Install section"
printf 'server {\n    listen 127.0.0.1:8080;\n    server_name csrf-test.example;\n%s\n    location / { return 200; }\n}\n' \
	"$lines" >"$root/etc/nginx/sites-enabled/csrf-test"
in_root "$root" nginx -t >"$run/nginx.log" 2>&1 || { cat "$run/nginx.log" >&2; fail "nginx -t with the module"; }
grep -q 'syntax is ok' "$run/nginx.log" || fail "nginx -t: $(cat "$run/nginx.log")"
# Without the module the same site is refused: the directives are the module's.
rm "$root/etc/nginx/modules-enabled/50-mod-http-csrf.conf"
! in_root "$root" nginx -t >"$run/nginx-off.log" 2>&1 || fail "nginx -t passed without the module loaded"
grep -q 'unknown directive "csrf' "$run/nginx-off.log" || fail "nginx -t without the module: $(cat "$run/nginx-off.log")"
ln -s "$link" "$root/etc/nginx/modules-enabled/50-mod-http-csrf.conf"
rm "$root/etc/nginx/sites-enabled/csrf-test" "$root/etc/nginx/csrf.keys"

step "a2enmod on install, apache2ctl configtest with the README's Apache lines"
[ "$(readlink "$root/etc/apache2/mods-enabled/csrf_protect.load")" = ../mods-available/csrf_protect.load ] ||
	fail "the package did not enable mod_csrf_protect in /etc/apache2/mods-enabled"
in_root "$root" csrf-key new /etc/apache2/csrf.keys >"$run/key.log" 2>&1 || { cat "$run/key.log" >&2; fail "csrf-key new"; }
# The ```apache block of the README's Install section, without the
# LoadModule line the package's a2enmod made unnecessary, in a site.
lines=$(awk '/^## Install/ {s=1} s && /^```apache$/ {on=1; next} on && /^```$/ {exit} on && !/^LoadModule/ {print}' \
	"$src/README.md")
[ -n "$lines" ] || fail "README.md has no apache block in its Install section"
printf '<VirtualHost 127.0.0.1:8081>\n    ServerName csrf-test.example\n%s\n</VirtualHost>\n' "$lines" \
	>"$root/etc/apache2/sites-enabled/csrf-test.conf"
in_root "$root" apache2ctl configtest >"$run/apache.log" 2>&1 || { cat "$run/apache.log" >&2; fail "apache2ctl configtest with the module"; }
grep -q 'Syntax OK' "$run/apache.log" || fail "apache2ctl configtest: $(cat "$run/apache.log")"
# Without the module the same site is refused: the directives are the module's.
rm "$root/etc/apache2/mods-enabled/csrf_protect.load"
! in_root "$root" apache2ctl configtest >"$run/apache-off.log" 2>&1 || fail "configtest passed without the module loaded"
grep -q "Invalid command 'CSRF'" "$run/apache-off.log" || fail "configtest without the module: $(cat "$run/apache-off.log")"
ln -s ../mods-available/csrf_protect.load "$root/etc/apache2/mods-enabled/csrf_protect.load"
rm "$root/etc/apache2/sites-enabled/csrf-test.conf" "$root/etc/apache2/csrf.keys"

step "the README's handler with pkg-config and with CMake find_package"
mkdir -p "$root/tmp/app"
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md" >"$root/tmp/app/handler.c"
[ -s "$root/tmp/app/handler.c" ] || fail "no C example in README.md"
expect='legitimate request: 303, forged request: 403'
in_root "$root" sh -c 'cd /tmp/app && cc -std=c11 -Wall -Wextra -Werror -o handler-pc handler.c $(pkg-config --cflags --libs libcsrf)' ||
	fail "the README example does not build with pkg-config"
out=$(in_root "$root" /tmp/app/handler-pc 2>/dev/null) || fail "handler (pkg-config) exited $?"
[ "$out" = "$expect" ] || fail "handler (pkg-config) printed: $out"
cp "$src/tests/lint/handler-project.cmake" "$root/tmp/app/CMakeLists.txt"
in_root "$root" sh -c 'cmake -S /tmp/app -B /tmp/app/build && cmake --build /tmp/app/build' >"$run/cmake.log" 2>&1 ||
	{ cat "$run/cmake.log" >&2; fail "the CMake project with find_package(libcsrf) does not build"; }
for h in handler handler-static; do
	out=$(in_root "$root" "/tmp/app/build/$h" 2>/dev/null) || fail "$h (CMake) exited $?"
	[ "$out" = "$expect" ] || fail "$h (CMake) printed: $out"
done
ldd_out=$(in_root "$root" ldd /tmp/app/build/handler)
grep -qE 'libcsrf\.so\.0 => (/usr)?/lib/[^ ]*/libcsrf\.so\.0 ' <<<"$ldd_out" ||
	fail "the CMake handler does not use the packaged libcsrf.so.0: $ldd_out"
ldd_out=$(in_root "$root" ldd /tmp/app/build/handler-static)
! grep -q libcsrf <<<"$ldd_out" || fail "the static CMake handler links libcsrf.so: $ldd_out"
# find_package refuses a version the package is not compatible with.
sed -i 's/find_package(libcsrf 0.1 /find_package(libcsrf 1.0 /' "$root/tmp/app/CMakeLists.txt"
! in_root "$root" cmake -S /tmp/app -B /tmp/app/build-v1 >/dev/null 2>&1 || fail "find_package(libcsrf 1.0) succeeded"

step "the session part with pkg-config (libcsrf-session)"
cp "$src/tests/package/session_store.c" "$root/tmp/app/"
in_root "$root" sh -c 'cd /tmp/app && cc -std=c11 -Wall -Wextra -Werror -o session session_store.c $(pkg-config --cflags --libs libcsrf-session)' ||
	fail "session_store.c does not build with pkg-config libcsrf-session"
in_root "$root" /tmp/app/session || fail "session (pkg-config) exited $?"
ldd_out=$(in_root "$root" ldd /tmp/app/session)
grep -qE 'libcsrf-session\.so\.0 => (/usr)?/lib/[^ ]*/libcsrf-session\.so\.0 ' <<<"$ldd_out" ||
	fail "the session program does not use the packaged libcsrf-session.so.0: $ldd_out"

if in_root "$root" test -x /usr/bin/csrf-cgi; then
	step "csrf-cgi against a config"
	mkdir -p "$root/tmp/cgi"
	printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\nran\\n"\ntouch /tmp/cgi/ran\n' >"$root/tmp/cgi/app.cgi"
	chmod 755 "$root/tmp/cgi/app.cgi"
	in_root "$root" csrf-key new /tmp/cgi/keys >/dev/null
	printf 'origin http://192.168.1.1\nkey_file /tmp/cgi/keys\n' >"$root/tmp/cgi/csrf-cgi.conf"
	cgi() { in_root "$root" env GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 SCRIPT_NAME=/app.cgi \
		HTTP_HOST=192.168.1.1 "$@" csrf-cgi --config /tmp/cgi/csrf-cgi.conf /tmp/cgi/app.cgi </dev/null; }
	out=$(cgi REQUEST_METHOD=GET) || fail "csrf-cgi GET exited $?"
	grep -q '^ran' <<<"$out" && [ -e "$root/tmp/cgi/ran" ] || fail "csrf-cgi GET did not run the program: $out"
	rm "$root/tmp/cgi/ran"
	out=$(cgi REQUEST_METHOD=POST HTTP_ORIGIN=https://evil.example CONTENT_TYPE=application/x-www-form-urlencoded \
		CONTENT_LENGTH=0 2>/dev/null) || true
	grep -q '^Status: 403' <<<"$out" || fail "csrf-cgi: a forged POST was not rejected: $out"
	[ ! -e "$root/tmp/cgi/ran" ] || fail "csrf-cgi ran the program for a forged POST"
fi

# 4. Purge: nothing left behind.
step "apt purge"
# shellcheck disable=SC2086
in_root "$root" apt-get purge -y -q $want >"$run/purge.log" 2>&1 || { cat "$run/purge.log" >&2; fail "apt purge"; }
in_root "$root" apt-get autoremove --purge -y -q >>"$run/purge.log" 2>&1 || { cat "$run/purge.log" >&2; fail "autoremove"; }
for p in $want; do
	st=$(in_root "$root" dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] || fail "$p is still known to dpkg after purge: $st"
done
snapshot >"$run/after"
if ! diff -u "$run/before" "$run/after" >"$run/leftover.diff"; then
	cat "$run/leftover.diff" >&2
	fail "the purge left files behind or changed files (diff above)"
fi
step "done: 6 packages built, lintian clean of errors, installed, used and purged without a trace"
