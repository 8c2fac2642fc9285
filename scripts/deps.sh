#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/deps.sh [build]
# Installs the Debian packages libcsrf needs: with "build", only what
# `make`, `make demo`, `make install` and `make deb` need (the library,
# csrf-key, the demo, the nginx module, the packages); without, also what
# the tests, benchmarks and fuzzing need, and the tests' npm packages.
# Idempotent: when everything is present it only runs dpkg-query.
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake pkg-config
  libssl-dev libsodium-dev libhiredis-dev
  libmicrohttpd-dev libsqlite3-dev
  nginx nginx-dev libpcre2-dev zlib1g-dev
  # the Apache httpd module (apache/): apxs and the headers
  apache2 apache2-dev
  dpkg-dev debhelper fakeroot
  # the demo's router: busybox httpd in front of csrf-cgi
  busybox
)
TEST_PKGS=(
  clang clang-format llvm libclang-rt-14-dev valgrind libcmocka-dev
  sqlite3 redis-server redis-sentinel
  chromium firefox-esr nodejs npm curl procps python3-html5lib
  # the browser tests' https mode: openssl makes the test CA, certutil puts
  # it into the browsers' test profiles (NSS databases)
  openssl libnss3-tools
  wrk hyperfine gnuplot-nox python3 python3-django
  lintian debootstrap
  # nginx.phpmyadmin: a real PHP application behind the module; the test
  # starts its own php-fpm and MariaDB (dbconfig-no-thanks: no database is
  # configured at install time).
  phpmyadmin dbconfig-no-thanks php-fpm mariadb-server
  # tests/apache: PHP through mod_php (prefork) beside php-fpm (proxy_fcgi)
  libapache2-mod-php
  # apache.dokuwiki.*: a real PHP application from the archive behind Apache
  # (mod_php) and the module; the test copies its configuration and data
  # into a temporary folder and starts its own apache2
  dokuwiki
  # csrf-cgi: the small servers of routers (busybox is a build package)
  lighttpd mini-httpd
  # the router builds (make router, tests/router): Debian's cross compilers
  # and their C libraries, musl for the static x86-64 build, qemu-user to
  # run the targets' programs
  gcc-mips-linux-gnu gcc-mipsel-linux-gnu gcc-arm-linux-gnueabihf gcc-aarch64-linux-gnu
  libc6-dev-mips-cross libc6-dev-mipsel-cross libc6-dev-armhf-cross libc6-dev-arm64-cross
  musl-tools qemu-user
  # the mbedTLS crypto backend's test (router.mbedtls)
  libmbedtls-dev
  # NIST's CAVP SHA-256 vectors (ShortMsg, LongMsg, Monte Carlo) and RFC
  # 4231's as files, for the built-in SHA-256 (unit.cavp, router.cavp.*)
  python3-cryptography-vectors
)

PKGS=("${BUILD_PKGS[@]}")
[ "${1:-}" = build ] || PKGS+=("${TEST_PKGS[@]}")

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# node and npm may come from outside Debian on some machines; accept them.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  keep=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) keep+=("$p") ;; esac
  done
  missing=("${keep[@]+"${keep[@]}"}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The packaged services must not hold the ports tests use.
  for svc in nginx redis-server redis-sentinel php8.2-fpm mariadb lighttpd mini-httpd; do
    if command -v systemctl >/dev/null 2>&1; then
      $SUDO systemctl stop "$svc" >/dev/null 2>&1 || true
      $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
    $SUDO service "$svc" stop >/dev/null 2>&1 || true
  done
fi

# npm packages of the browser tests (puppeteer-core and playwright-core; never a browser).
if [ "${1:-}" != build ]; then
  "$(dirname "$0")/npm-deps.sh"
fi
