# SPDX-License-Identifier: BSD-2-Clause
# libcsrf - top-level driver over CMake and CTest.
#   make          release build into build/ of what a user runs: libcsrf.a,
#                 libcsrf.so, csrf-key, csrf-demo, the nginx module
#   make check    ASan+UBSan build into build-check/ of everything (tests,
#                 fuzz harnesses, valgrind binaries, benchmarks) and every
#                 test through ctest, each run once
#   make check-unit  the library and its unit tests only (ASan+UBSan, build-unit/),
#                 in seconds; CTEST_ARGS='-R unit.test_check' picks one
#   make demo     build and run the demo (victim :8080, attacker :8081, and
#                 a router :8082: busybox httpd + csrf-cgi, builtin crypto)
#   make router   csrf-cgi and csrf-key for routers (builtin crypto, libc
#                 only, -Os, stripped) into dist/router/<arch>/: mips
#                 (big-endian), mipsel, armhf, aarch64 (Debian's cross
#                 compilers), x86_64-musl (static); ROUTER_ARCHES= for some
#   make install  PREFIX=/usr/local DESTDIR=
#   make deb      Debian packages into dist/ (dpkg-buildpackage in build-deb/)
#   make bench    benchmarks against the peers (bench/RESULTS.md)
#   make bench-ab BASE=rev   the nginx module now against itself at rev
#   make fuzz     libFuzzer harnesses, FUZZ_SECONDS each (default 300), then the
#                 injector against html5lib on HTML5LIB_PAGES pages (default 100000),
#                 and its output in Chromium's and Firefox's DOM (dom_oracle.mjs;
#                 Chromium's DOMParser too)
#   make scan-diff  the injector's block scanner: every path (CSRF_SCAN) and the
#                 injector before it on HTML5LIB_PAGES pages, the corpora at every
#                 split, and the html5lib oracle on each path (tests/html5lib/scan-diff.sh)

SHELL := /bin/bash
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 300
HTML5LIB_PAGES ?= 100000
HTML5LIB_SEED ?= $(shell date +%s)
CTEST_ARGS ?=

.PHONY: all deps build-deps build check check-unit demo router install deb bench bench-ab fuzz scan-diff format clean

all: build

# Everything the tests, benchmarks and fuzzing need; build-deps: only what
# the build needs.
deps:
	@./scripts/deps.sh

build-deps:
	@./scripts/deps.sh build

build: build-deps
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSRF_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build build -j $(JOBS)

# ctest's own summary, then one plain closing line with the counts.
check: deps
	@cmake -S . -B build-check -DCMAKE_BUILD_TYPE=Debug -DCSRF_SANITIZE=ON -DCSRF_BUILD_TESTS=ON >/dev/null
	@cmake --build build-check -j $(JOBS)
	@cd build-check && set -o pipefail && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS) 2>&1 | tee ctest.log; \
	status=$$?; \
	summary=$$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' ctest.log | tail -n 1); \
	failed=$$(echo "$$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/'); \
	total=$$(echo "$$summary" | sed -E 's/.* failed out of ([0-9]+).*/\1/'); \
	if [ -n "$$summary" ]; then echo "ctest: $$((total - failed)) passed, $$failed failed"; fi; \
	exit $$status

# What a developer runs between edits: the library and the unit tests.
check-unit: deps
	@cmake -S . -B build-unit -DCMAKE_BUILD_TYPE=Debug -DCSRF_SANITIZE=ON -DCSRF_BUILD_TESTS=ON -DCSRF_UNIT_ONLY=ON >/dev/null
	@cmake --build build-unit -j $(JOBS)
	@cd build-unit && ctest --output-on-failure -j $(JOBS) -L unit $(CTEST_ARGS)

demo: build
	./build/csrf-demo --router 127.0.0.1:8082 $(DEMO_ARGS)

router: deps
	@JOBS=$(JOBS) ./scripts/router.sh $(ROUTER_ARCHES)

install: build
	@cmake -S . -B build -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@DESTDIR=$(DESTDIR) cmake --install build

deb: build-deps
	@JOBS=$(JOBS) ./scripts/deb.sh dist build-deb

bench: deps build
	@cmake --build build -j $(JOBS) --target csrf-bench-micro csrf-bench-inject csrf-bench-store ngx_http_bench_copy_module
	@./bench/run.sh
	@JOBS=$(JOBS) ./bench/router.sh

# Did a change make the module slower? Alternating wrk pairs, this build
# against BASE's (bench/ab.py).
bench-ab: deps build
	@test -n "$(BASE)" || { echo 'make bench-ab BASE=<git revision>'; exit 2; }
	@JOBS=$(JOBS) python3 bench/ab.py $(BASE)

# The inject driver is a test target: a tree of its own (build/ has the tests off).
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh
	@cmake -S . -B build-fuzz/html5lib -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSRF_BUILD_TESTS=ON >/dev/null
	@cmake --build build-fuzz/html5lib -j $(JOBS) --target csrf-inject-driver
	@echo "html5lib differential: $(HTML5LIB_PAGES) pages, seed $(HTML5LIB_SEED)"
	@/usr/bin/python3 tests/html5lib/inject_diff.py build-fuzz/html5lib/tests/html5lib/csrf-inject-driver \
		--pages $(HTML5LIB_PAGES) --seed $(HTML5LIB_SEED) --report 10000
	@for run in chromium:write,domparser,innerhtml firefox:domparser,innerhtml; do \
		E2E_BROWSER=$${run%%:*} node tests/html5lib/dom_oracle.mjs build-fuzz/html5lib/tests/html5lib/csrf-inject-driver \
		--deep --parse $${run#*:} --seed $(HTML5LIB_SEED) --pages $(HTML5LIB_PAGES) --tables $(HTML5LIB_PAGES) \
		--attack $(HTML5LIB_PAGES) || exit 1; done

scan-diff: deps
	@./tests/html5lib/scan-diff.sh $(HTML5LIB_PAGES)

format:
	@clang-format -i $$(git ls-files 'include/*.h' 'src/*.[ch]' 'tests/*.[ch]' 'tools/*.[ch]' 'demo/*.[ch]' 'fuzz/*.[ch]' 'bench/*.[ch]' 'cgi/*.[ch]' 'nginx/*.[ch]' 'apache/*.[ch]')

clean:
	rm -rf build build-check build-unit build-fuzz build-deb build-router build-scan dist
