# snapback — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT       ?= swift
# Debian packages the build, the tests and the tools need (installed when missing). systemd brings
# systemd-analyze and systemd-socket-activate (no running systemd needed), util-linux setpriv (the
# access tests), man-db and groff-base the man page checks, binutils strip for `make install`, valgrind
# (callgrind) the hot path's instruction and allocation budget; gcc, g++ and libglib2.0-dev libsnapback,
# the check that its header is valid C++, and the GLib example; python3-protobuf the Swift wire mapping's
# generator (scripts/gen-wire.py, `make proto` and `make check-proto`).
APT_PACKAGES := pkg-config libuv1-dev libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev python3 \
	python3-protobuf systemd util-linux man-db groff-base binutils valgrind gcc g++ libglib2.0-dev
SOCKET      ?= .run/snapbackd.sock
STATE_DIR   ?= .run/state
LOG_LEVEL   ?= info
RELEASE_FLAGS := -c release --static-swift-stdlib
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release

# The hot path's budget, checked by `make check-budget`: what one SeekEnded → snapback push + EventReply
# round trip may cost the release daemon process (Swift, static Swift runtime, libuv, libc, every thread),
# counted by callgrind as the difference of a 200 and a 2,200 round-trip run (x86-64, Swift 6.3, libuv
# 1.44, glibc 2.36, valgrind 3.19; the figure repeats to within two instructions from run to run). The
# budgets sit over what `make release` measures (perf/README.md): room for compiler and library updates,
# not for a lost lever or a regression. The round trip allocates nothing, and must not.
BUDGET_INSTRUCTIONS := 5650
BUDGET_ALLOCATIONS  := 0
# The 4 KiB pages of code every round trip runs (same runs): what a request that comes cold pays for in
# TLB misses and page walks (`snapback-bench daemon --spacing`). The link order keeps it low: a stale order (a
# hot function renamed) spreads the code back out (`make link-order`).
BUDGET_CODE_PAGES   := 36
# The 64-byte lines of code in those pages (same runs): what a cold request reads from memory. The profile
# keeps it low: a stale one (hot code changed since) lays that code out blind (`make profile`).
BUDGET_CODE_LINES   := 360

# The release daemon's footprint, checked by `make check-footprint` (part of `make test`): its resident
# memory (VmRSS) once started and idle, read from disk as after a boot, and the size of its stripped
# binary, in KiB. The RSS budget is the 6 MiB the box allows.
BUDGET_RSS_KIB      := 6144
BUDGET_BINARY_KIB   := 10240

# `make test-powercut`: the power-cut durability test (Tests/clients/python/power_cut.py), the state
# directory on LazyFS, the FUSE filesystem that drops every write not fsynced when told to. Not part of
# `make test` nor CI: LazyFS is no Debian package and its source is not in this repository. LAZYFS is its
# executable: by default the one its own build leaves in LAZYFS_SRC (lazyfs/build/lazyfs, its libpcache
# beside it), else `lazyfs` on PATH. fuse3 brings fusermount3, which unmounts it.
LAZYFS_SRC     ?=
LAZYFS         ?= $(if $(LAZYFS_SRC),$(LAZYFS_SRC)/lazyfs/build/lazyfs,$(shell command -v lazyfs 2>/dev/null))
POWERCUT_CUTS  ?= 24
POWERCUT_APT   := fuse3

# `make install`: PREFIX and DESTDIR as usual; the configuration goes to SYSCONFDIR (/etc) whatever
# the prefix, since snapbackd reads /etc/snapback/snapbackd.conf.
PREFIX      ?= /usr/local
DESTDIR     ?=
SYSCONFDIR  ?= /etc
BINDIR      := $(PREFIX)/bin
UNITDIR     := $(PREFIX)/lib/systemd/system
SYSUSERSDIR := $(PREFIX)/lib/sysusers.d
MANDIR      := $(PREFIX)/share/man
INCLUDEDIR  := $(PREFIX)/include
DOCDIR      := $(PREFIX)/share/doc/snapback
# Shell completions of snapback, where bash-completion, zsh and fish look for a package's own.
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR := $(PREFIX)/share/fish/vendor_completions.d

# The release daemon's speed levers (PERF_ENV), their regeneration and `make check-plain`.
include perf/perf.mk
# libsnapback, the C client library: its build, examples, tests and install rules.
include libsnapback/build.mk
# The mpv plugin and its end-to-end test.
include integrations/mpv/build.mk
# The GStreamer plugin (tracer and element) and its end-to-end test.
include integrations/gstreamer/build.mk

INSTALLED   := $(BINDIR)/snapbackd $(BINDIR)/snapback \
	$(UNITDIR)/snapbackd.service $(UNITDIR)/snapbackd.socket $(SYSUSERSDIR)/snapback.conf \
	$(MANDIR)/man8/snapbackd.8 $(MANDIR)/man5/snapbackd.conf.5 $(MANDIR)/man1/snapback.1 \
	$(BASHCOMPDIR)/snapback $(ZSHCOMPDIR)/_snapback $(FISHCOMPDIR)/snapback.fish \
	$(patsubst proto/%,$(INCLUDEDIR)/%,$(wildcard proto/snapback/v1/*.proto)) \
	$(DOCDIR)/PROTOCOL.md $(DOCDIR)/policy.md \
	$(INCLUDEDIR)/snapback/snapback.h $(PREFIX)/lib/libsnapback.so.$(LIBSNAPBACK_VERSION) \
	$(PREFIX)/lib/libsnapback.so.$(LIBSNAPBACK_SOVERSION) $(PREFIX)/lib/libsnapback.so $(PREFIX)/lib/libsnapback.a \
	$(PREFIX)/lib/pkgconfig/libsnapback.pc

.PHONY: help deps build release run demo test test-powercut format lint check-budget check-footprint check-proto check-systemd check-install proto \
	grpc-proto bench bench-grpc soak fuzz fuzz-merge install install-lib uninstall clean

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build needs, if missing
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps ## Debug build of every product
	$(SWIFT) build

release: deps perf-inputs ## Release build with the speed levers of perf/ (static Swift runtime, no Foundation)
	$(PERF_ENV) $(SWIFT) build $(RELEASE_FLAGS)

run: release ## Run snapbackd in the foreground on the development socket
	@mkdir -p $(dir $(SOCKET)) $(STATE_DIR)
	@echo "snapbackd on $(SOCKET): in another shell, export SNAPBACK_SOCKET=$(abspath $(SOCKET)) and run snapback status"
	$(RELEASE_BIN)/snapbackd --socket $(SOCKET) --state-dir $(STATE_DIR) --log-level $(LOG_LEVEL)

demo: release ## Start snapbackd and a scripted player that tells the seeds' story
	@scripts/demo.sh $(RELEASE_BIN)

test: deps check-proto lint ## Lint, build, run unit, wire and daemon integration tests, mpv and GStreamer end to end, then the systemd, install, footprint and budget checks
	$(SWIFT) build
	$(MAKE) --no-print-directory $(UV_ECHO)
	SNAPBACKD_BIN=$(CURDIR)/$(DEBUG_BIN)/snapbackd SNAPBACK_UV_ECHO=$(CURDIR)/$(UV_ECHO) $(SWIFT) test --parallel \
		--skip MonthSoakTests
	@# Alone in its process: it checks the process's heap, which other suites running beside it add to.
	$(SWIFT) test --filter MonthSoakTests
	python3 Tests/clients/python/test_snapback_client.py $(DEBUG_BIN)/snapbackd
	python3 Tests/clients/python/wire_mutation.py $(DEBUG_BIN)/snapbackd --seconds 10
	$(MAKE) --no-print-directory test-c
	$(MAKE) --no-print-directory test-mpv
	$(MAKE) --no-print-directory test-gstreamer
	$(MAKE) --no-print-directory check-systemd
	$(MAKE) --no-print-directory check-install
	$(MAKE) --no-print-directory check-footprint
	$(MAKE) --no-print-directory check-budget

check-systemd: deps ## systemd-analyze verify the units and score their sandbox (exposure at most 1.0); lint the man pages
	$(SWIFT) build --product snapbackd
	@scripts/check-systemd.sh $(CURDIR)/$(DEBUG_BIN)/snapbackd

check-install: release ## make install into a temporary DESTDIR, check the tree, then make uninstall
	@scripts/check-install.sh

check-footprint: release ## Fail if the idle release daemon's RSS or its stripped size is over budget, or it links a shared library
	@scripts/check-footprint.py $(RELEASE_BIN) $(BUDGET_RSS_KIB) $(BUDGET_BINARY_KIB)

check-budget: release ## Fail if a snapback round trip costs the release daemon over its instruction, code page or code line budget, or allocates, or a connection cycle keeps an allocation (callgrind)
	@scripts/check-budget.py $(RELEASE_BIN) $(BUDGET_INSTRUCTIONS) $(BUDGET_ALLOCATIONS) $(BUDGET_CODE_PAGES) $(BUDGET_CODE_LINES)

test-powercut: deps ## Power-cut durability test: the store on LazyFS, POWERCUT_CUTS cuts (LAZYFS=its executable or LAZYFS_SRC=its built source; not in make test)
	@if [ -z "$(LAZYFS)" ]; then \
		echo "test-powercut: no LazyFS: LAZYFS and LAZYFS_SRC are not set and no lazyfs is on PATH." >&2; \
		echo "  LazyFS (dsrhaslab's FUSE filesystem that loses unsynced writes) is no Debian package and is not in this" >&2; \
		echo "  repository: build it from its source as its README says, then run" >&2; \
		echo "  make test-powercut LAZYFS=/path/to/lazyfs   or   make test-powercut LAZYFS_SRC=/path/to/its/source" >&2; \
		exit 2; \
	elif [ ! -x "$(LAZYFS)" ]; then \
		echo "test-powercut: no LazyFS: $(LAZYFS) is not an executable$(if $(LAZYFS_SRC), (LAZYFS_SRC's build leaves it there: build LazyFS in $(LAZYFS_SRC) first))." >&2; \
		exit 2; \
	fi
	@command -v fusermount3 >/dev/null || { echo "installing: $(POWERCUT_APT)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(POWERCUT_APT); }
	$(MAKE) --no-print-directory release
	$(if $(LAZYFS_SRC),LD_LIBRARY_PATH=$(LAZYFS_SRC)/libs/libpcache/build$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}) \
		python3 Tests/clients/python/power_cut.py --lazyfs "$(LAZYFS)" --snapbackd $(RELEASE_BIN)/snapbackd --cuts $(POWERCUT_CUTS)

# swift-format (bundled with the toolchain) with the committed .swift-format: `make format` rewrites,
# `make lint` (part of `make test`) fails on any file that `make format` would change.
SWIFT_SOURCES := Sources Tests Package.swift

format: ## Format the Swift sources (swift format, .swift-format)
	$(SWIFT) format format --in-place --recursive --parallel $(SWIFT_SOURCES)

lint: ## Fail if a Swift source is not formatted as `make format` would
	$(SWIFT) format lint --strict --recursive --parallel $(SWIFT_SOURCES)

# The gRPC bench's Swift code is checked against its stamp only (the sha256 of its inputs): regenerating
# it needs protoc plugins that take minutes to build, too slow for every `make test`.
check-proto: deps ## Fail when the committed protobuf-c code, its Swift mapping, or the gRPC bench's Swift code, is older than proto/
	@scripts/gen-proto.sh --check
	@bench/grpc/generate.sh --check

proto: deps ## Regenerate the protobuf-c code and its Swift mapping (scripts/gen-wire.py) from proto/
	@scripts/gen-proto.sh

# protoc is needed only here (protoc-c brings its own front end), so `make deps` leaves it out.
grpc-proto: ## Regenerate the gRPC bench's Swift code (bench/grpc/generate.sh: builds protoc plugins, minutes)
	@dpkg -s protobuf-compiler >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler; }
	bench/grpc/generate.sh

# The libuv floor of `snapback-bench daemon --spacing` (--libuv-echo): the bench's echo behind uv_run, in C, linked
# with the same static libuv archive as the release daemon (static, as the daemon is; glibc's warning that
# a static program's getpwuid_r needs the system's NSS modules is libuv's, and this echo never calls it).
UV_ECHO := $(C_BUILD)/release/snapback-uv-echo

$(UV_ECHO): bench/uv-echo/snapback-uv-echo.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -o $@ $< -static -l:libuv_a.a -Wl,--no-warnings

# The benchmarks are snapback-bench's (Sources/snapback-bench), built with the release and never installed.
bench: release $(UV_ECHO) ## Benchmarks with their baselines: round trip vs raw socket, cold path, load, memory per session, timeline engine, store, loop stalls
	$(RELEASE_BIN)/snapback-bench daemon --snapbackd $(RELEASE_BIN)/snapbackd
	$(RELEASE_BIN)/snapback-bench daemon --snapbackd $(RELEASE_BIN)/snapbackd --spacing 5 --libuv-echo $(UV_ECHO) \
		--load --sessions 10000
	taskset -c 0 $(RELEASE_BIN)/snapback-bench timeline
	$(RELEASE_BIN)/snapback-bench store --snapbackd $(RELEASE_BIN)/snapbackd --seconds 3
	bench/loop_stall.py $(RELEASE_BIN)/snapbackd

# `make soak`: SOAK_PLAYERS players for SOAK_MINUTES minutes against the release daemon, each reconnecting
# every one to five minutes (half of the time without CloseSession, as a crashed player), with seeks,
# snapbacks, ad breaks, pauses and bookmarks; fails on any error or an RSS drift of 5% after warm-up.
SOAK_PLAYERS ?= 200
SOAK_MINUTES ?= 30

soak: release ## Long soak (not in make test): many players reconnecting for SOAK_MINUTES; RSS drift, errors, p99
	bench/soak.py $(RELEASE_BIN)/snapbackd --players $(SOAK_PLAYERS) --minutes $(SOAK_MINUTES)

# `make bench-grpc`: the usual alternative, a gRPC-Swift-2 server (bench/grpc, a package of its own that
# the daemon never depends on; its first build takes minutes) answering the same call, measured beside
# snapbackd in one run, everything pinned to GRPC_BENCH_CPU (GRPC_BENCH_TASKSET= leaves the gRPC server
# and client free to use every CPU; snapback-bench always pins). GRPC_BENCH_ARGS: --json, --calls N, --rounds N.
GRPC_BENCH_CPU  ?= 0
GRPC_BENCH_TASKSET ?= taskset -c $(GRPC_BENCH_CPU)
GRPC_BENCH_ARGS ?=
GRPC_BENCH_BIN  := bench/grpc/.build/release

bench-grpc: release ## snapbackd beside a gRPC-Swift-2 server answering the same call: p50/p99, idle RSS, ratios (slow build)
	$(SWIFT) build --package-path bench/grpc $(RELEASE_FLAGS)
	$(GRPC_BENCH_TASKSET) $(GRPC_BENCH_BIN)/snapback-grpc-bench --cpu $(GRPC_BENCH_CPU) \
		--snapback-bench $(RELEASE_BIN)/snapback-bench --snapbackd $(RELEASE_BIN)/snapbackd \
		--server $(GRPC_BENCH_BIN)/snapback-grpc-server $(GRPC_BENCH_ARGS)

FUZZ_SECONDS ?= 60
# Coverage for every Swift module, not only the entry point's (SwiftPM's --sanitize=fuzzer alone left
# the libraries uninstrumented), as libFuzzer wants it: inline 8-bit counters and a PC table.
FUZZ_FLAGS := -c release --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz \
	-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
FUZZ_TARGETS := snapback-fuzz:Tests/Fuzz/corpus snapback-fuzz-daemon:Tests/Fuzz/daemon-corpus

fuzz: deps ## Run each libFuzzer target (ASan) for FUZZ_SECONDS, then the wire-level mutation test as long
	@for t in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_FLAGS) --product $${t%%:*} || exit 1; done
	@mkdir -p fuzz-artifacts
	@for t in $(FUZZ_TARGETS); do \
		name=$${t%%:*}; corpus=$${t#*:}; mkdir -p .build-fuzz/corpus/$$name; \
		echo "== $$name for $(FUZZ_SECONDS) s"; \
		.build-fuzz/release/$$name .build-fuzz/corpus/$$name $$corpus -max_total_time=$(FUZZ_SECONDS) \
			-max_len=65536 -print_final_stats=1 -artifact_prefix=fuzz-artifacts/$$name- 2>&1 \
			| grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|ERROR|SUMMARY' || true; \
	done
	$(SWIFT) build --product snapbackd
	python3 Tests/clients/python/wire_mutation.py $(DEBUG_BIN)/snapbackd --seconds $(FUZZ_SECONDS)
	@if ls fuzz-artifacts/* >/dev/null 2>&1; then \
		echo "crashes saved under fuzz-artifacts/: add each to its target's corpus with its fix"; exit 1; fi

# The corpora in the repository (Tests/Fuzz) are replayed by `make test`: fold in what `make fuzz` found,
# minimised, and commit them.
fuzz-merge: ## Fold the inputs make fuzz found into the repository's corpora, minimised (libFuzzer -set_cover_merge=1)
	@for t in $(FUZZ_TARGETS); do \
		name=$${t%%:*}; scripts/fuzz-merge.sh .build-fuzz/release/$$name $${t#*:} .build-fuzz/corpus/$$name || exit 1; \
	done

install: release install-lib ## Install binaries (stripped), units, config, man pages, completions, .proto files, libsnapback (PREFIX, DESTDIR)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(INCLUDEDIR)/snapback/v1 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.d \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 -s $(RELEASE_BIN)/snapbackd $(RELEASE_BIN)/snapback $(DESTDIR)$(BINDIR)/
	sed 's#^ExecStart=/usr/local/bin/snapbackd #ExecStart=$(BINDIR)/snapbackd #' systemd/snapbackd.service \
		> $(DESTDIR)$(UNITDIR)/snapbackd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/snapbackd.service
	install -m 0644 systemd/snapbackd.socket $(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/snapback.sysusers $(DESTDIR)$(SYSUSERSDIR)/snapback.conf
	sed 's#PREFIX/#$(PREFIX)/#g' docs/man/snapbackd.8 > $(DESTDIR)$(MANDIR)/man8/snapbackd.8
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/snapbackd.8
	install -m 0644 docs/man/snapbackd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 docs/man/snapback.1 $(DESTDIR)$(MANDIR)/man1/
	@# The completions are argument-parser's, generated from the binary being installed: true to its commands.
	$(RELEASE_BIN)/snapback --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/snapback
	$(RELEASE_BIN)/snapback --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_snapback
	$(RELEASE_BIN)/snapback --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/snapback.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/snapback $(DESTDIR)$(ZSHCOMPDIR)/_snapback $(DESTDIR)$(FISHCOMPDIR)/snapback.fish
	install -m 0644 proto/snapback/v1/*.proto $(DESTDIR)$(INCLUDEDIR)/snapback/v1/
	install -m 0644 proto/PROTOCOL.md docs/policy.md $(DESTDIR)$(DOCDIR)/
	@# An operator's configuration is never overwritten: a changed one stays, the new default goes beside it.
	@conf=$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf; \
	if [ -e $$conf ] && ! cmp -s config/snapbackd.conf $$conf; then \
		install -m 0644 config/snapbackd.conf $$conf.default; \
		echo "kept $$conf (changed); the new default is $$conf.default"; \
	else \
		install -m 0644 config/snapbackd.conf $$conf; \
	fi

uninstall: ## Remove what make install put in place (a changed configuration is kept)
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) $(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.default
	@conf=$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf; \
	if cmp -s config/snapbackd.conf $$conf; then rm -f $$conf; \
	elif [ -e $$conf ]; then echo "kept $$conf (changed)"; fi
	-rmdir $(DESTDIR)$(INCLUDEDIR)/snapback/v1 $(DESTDIR)$(INCLUDEDIR)/snapback $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.d $(DESTDIR)$(SYSCONFDIR)/snapback 2>/dev/null

clean: ## Remove build outputs and the development run directory
	rm -rf .build .build-c .build-profile .build-plain .run bench/grpc/.build
