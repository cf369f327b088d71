# SPDX-License-Identifier: Apache-2.0
# The checks `make test` runs after the tests: the budgets of the hot path and the footprint, the
# systemd units, the install tree, the generated code and the formatting.
.PHONY: check-systemd check-install check-footprint check-budget check-fleet-budget format lint check-proto proto grpc-proto

# The hot path's budget, checked by `make check-budget`: what one SeekEnded → snapback push + EventReply
# round trip may cost the release daemon process (Swift, static Swift runtime, libuv, libc, every thread),
# counted by callgrind as the difference of a 200 and a 2,200 round-trip run (x86-64, Swift 6.3, libuv
# 1.44, glibc 2.36, valgrind 3.19; the figure repeats to within two instructions from run to run). The
# budgets sit over what `make release` measures (perf/README.md): room for compiler and library updates,
# not for a lost lever or a regression. The round trip allocates nothing, and must not.
BUDGET_INSTRUCTIONS := 5320
BUDGET_ALLOCATIONS  := 0
# The 4 KiB pages of code every round trip runs (same runs): what a request that comes cold pays for in
# TLB misses and page walks (`snapback-bench daemon --spacing`). The link order keeps it low: a stale order (a
# hot function renamed) spreads the code back out (`make link-order`).
BUDGET_CODE_PAGES   := 36
# The 64-byte lines of code in those pages (same runs): what a cold request reads from memory. The profile
# keeps it low: a stale one (hot code changed since) lays that code out blind (`make profile`).
BUDGET_CODE_LINES   := 360
# The largest request at the default limits, as check-budget drives it: an OpenSession of 1,000 breaks (four
# ad durations each) and its CloseSession, per break: the instructions of the loop thread, what every other
# player waits for (the request is decoded on a worker thread: about as much again there), and the
# allocations of every thread, in hundredths (one per break is its ad durations' array).
BUDGET_BREAK_INSTRUCTIONS := 1240
BUDGET_BREAK_ALLOCATIONS  := 105
# A GetSessionState page of that session (1,000 breaks), instructions per break.
BUDGET_PAGE_INSTRUCTIONS  := 1950

# The release daemon's footprint, checked by `make check-footprint` (part of `make test`): its resident
# memory (VmRSS) once started and idle, read from disk as after a boot, and the size of its stripped
# binary, in KiB. The RSS budget is the 6 MiB the box allows. The binary's is a guard against a large
# library or generated module pulled in by mistake (Foundation alone adds megabytes), about 1 % above
# what the daemon's code and its static runtime take.
BUDGET_RSS_KIB      := 6144
BUDGET_BINARY_KIB   := 10480
# The operator's CLI: `snapback --help`'s peak RSS, in KiB. It measures 14.2 MiB: its binary's pages
# (4.6 MiB), libcurl and the libraries it loads (5.4 MiB, for `snapback cues URL`), libc and libstdc++;
# linking Foundation (FoundationEssentials, ICU) takes it to 17 MiB, over the budget.
BUDGET_CLI_RSS_KIB  := 16384

# snapback-fleet's batch path (decode, checks, fold, the batch's transaction, the changed totals' text),
# checked by `make check-fleet-budget` (part of `make test`): instructions a sparse report under
# callgrind. It measures 106,725 with the levers of perf/ (the exclusivity one on SnapbackFleet too:
# 120,394 without it); the 33,000 reports a second on one core of the issue are about 30 µs a report.
BUDGET_FLEET_INSTRUCTIONS := 110000

check-systemd: deps ## systemd-analyze verify the units and score their sandbox (exposure at most 1.0); lint the man pages
	$(SWIFT) build --product snapbackd
	$(SWIFT) build --product snapback-sync
	$(SWIFT) build --product snapback-web
	$(SWIFT) build --product snapback-fleet
	@scripts/check-systemd.sh $(CURDIR)/$(DEBUG_BIN)/snapbackd $(CURDIR)/$(DEBUG_BIN)/snapback-sync

check-install: release ## make install into a temporary DESTDIR, check the tree, then make uninstall
	@scripts/check-install.sh

check-footprint: release ## Fail if the idle release daemon's RSS or its stripped size is over budget, or it links a shared library; or an installed product links Foundation, or snapback --help's peak RSS is over budget
	@scripts/check-footprint.py $(RELEASE_BIN) $(BUDGET_RSS_KIB) $(BUDGET_BINARY_KIB) $(BUDGET_CLI_RSS_KIB)

check-fleet-budget: release ## Fail if a sparse report costs snapback-fleet's batch path over its instruction budget (callgrind)
	@scripts/check-fleet-budget.py $(RELEASE_BIN) $(BUDGET_FLEET_INSTRUCTIONS)

check-budget: release ## Fail if a snapback round trip costs the release daemon over its instruction, code page or code line budget, or allocates, or a connection cycle keeps an allocation (callgrind)
	@scripts/check-budget.py $(RELEASE_BIN) $(BUDGET_INSTRUCTIONS) $(BUDGET_ALLOCATIONS) $(BUDGET_CODE_PAGES) $(BUDGET_CODE_LINES) \
		$(BUDGET_BREAK_INSTRUCTIONS) $(BUDGET_BREAK_ALLOCATIONS) $(BUDGET_PAGE_INSTRUCTIONS)

# swift-format (bundled with the toolchain) with the committed .swift-format: `make format` rewrites,
# `make lint` (part of `make test`) fails on any file that `make format` would change.
SWIFT_SOURCES := Sources Tests Package.swift

format: ## Format the Swift sources (swift format, .swift-format)
	$(SWIFT) format format --in-place --recursive --parallel $(SWIFT_SOURCES)

lint: ## Fail if a Swift source is not formatted as `make format` would, or a source names no licence (SPDX)
	@scripts/check-spdx.sh
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

