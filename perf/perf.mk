# SPDX-License-Identifier: Apache-2.0
# The release daemon's speed levers (perf/README.md: what each does, the figure that keeps it, and how to
# measure it again). `make release`, and so the budgets, the benchmarks and `make install`, builds with
# them; `swift build -c release` alone builds the same daemon without them.
PERF_DIR         := perf
PERF_PROFILE     := $(PERF_DIR)/snapbackd.profdata
PERF_LINK_ORDER  := $(PERF_DIR)/link-order.txt
PERF_STATIC_LIBS := $(PERF_DIR)/static-libs
# Neither SwiftPM nor the compiler driver tracks the files named in flags: the release build reads copies
# named by their digest, so that a regenerated profile or order changes the command line and SwiftPM
# recompiles or relinks.
PERF_INPUTS      := $(CURDIR)/.build/perf
perf_copy         = $(PERF_INPUTS)/$(firstword $(shell sha256sum $(1)))-$(notdir $(1))
# What Package.swift reads (SNAPBACK_PERF, comma-separated). `make release PERF_LEVERS=` builds the plain
# daemon through the Makefile; `make release PERF_LEVERS=exclusivity,static` some of the levers.
PERF_LEVERS      ?= exclusivity,static,profile=$(call perf_copy,$(PERF_PROFILE)),link-order=$(call perf_copy,$(PERF_LINK_ORDER))
PERF_ENV          = SNAPBACK_PERF=$(PERF_LEVERS)

comma := ,
empty :=
space := $(empty) $(empty)
# PERF_LEVERS without the lever $(1).
perf_without = $(subst $(space),$(comma),$(filter-out $(1) $(1)=%,$(subst $(comma),$(space),$(PERF_LEVERS))))

.PHONY: perf-inputs profile link-order

# Debian ships libuv's static archive as libuv_a.a, where a static link of -luv looks for libuv.a: then
# perf/static-libs/libuv.a, a linker script, names it. A packaging that ships libuv.a needs none.
perf-inputs:
	@mkdir -p $(PERF_INPUTS) $(PERF_STATIC_LIBS)
	@for f in $(PERF_PROFILE) $(PERF_LINK_ORDER); do \
		copy=$(PERF_INPUTS)/$$(sha256sum $$f | cut -d' ' -f1)-$$(basename $$f); [ -e $$copy ] || cp $$f $$copy; done
	@libdir=$$(pkg-config --variable=libdir libuv); \
	if [ ! -e $$libdir/libuv.a ] && [ -e $$libdir/libuv_a.a ]; then \
		echo 'INPUT(libuv_a.a)' > $(PERF_STATIC_LIBS)/libuv.a; else rm -f $(PERF_STATIC_LIBS)/libuv.a; fi

profile: release ## Rewrite perf/snapbackd.profdata from a training run of an instrumented build, then the link order
	SNAPBACK_PERF=$(call perf_without,profile) $(PERF_DIR)/gen-profile.sh $(RELEASE_BIN) $(PERF_PROFILE) $(RELEASE_FLAGS)
	$(MAKE) --no-print-directory link-order

link-order: release ## Rewrite perf/link-order.txt (the code the release daemon runs, placed together: the round trip's, then start-up's until idle) from callgrind runs
	$(PERF_DIR)/gen-link-order.py $(RELEASE_BIN) $(PERF_LINK_ORDER)
	$(MAKE) --no-print-directory release

# The product without its levers, as a fresh clone builds it: `swift build -c release` (no SNAPBACK_PERF,
# no Makefile flag) in a scratch directory of its own, and the daemon's socket tests against its snapbackd
# (and the snapback beside it, which the command-line tests run).
# Not in `make test` (a second release build); PLAIN_FLAGS=-Xswiftc\ -use-ld=bfd links with GNU ld.
PLAIN_BUILD := .build-plain
PLAIN_FLAGS ?=

.PHONY: check-plain

check-plain: deps ## Build the daemon as plain `swift build -c release` does, then run the socket tests against it
	env -u SNAPBACK_PERF $(SWIFT) build -c release --scratch-path $(PLAIN_BUILD) $(PLAIN_FLAGS)
	SNAPBACKD_BIN=$(CURDIR)/$(PLAIN_BUILD)/release/snapbackd $(SWIFT) test --filter SnapbackDaemonTests \
		--skip BenchCommandTests
