# SPDX-License-Identifier: Apache-2.0
# snapback — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT       ?= swift
# Debian packages the build, the tests and the tools need (installed when missing): mk/packages.list
# declares them, and the Debian trees the tests also run in (check-swift62, test-arm64) get the tests'.
APT_PACKAGES := $(shell scripts/packages.sh host)
# Installs those of the Debian packages $(1) that are missing (apt-get options $(2)); fails, naming
# them, when it cannot.
apt_install = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) $$missing; } \
			|| { echo "$@: FAILED: could not install$$missing (apt-get install as root)" >&2; exit 1; }; \
	fi
SOCKET      ?= .run/snapbackd.sock
STATE_DIR   ?= .run/state
LOG_LEVEL   ?= info
RELEASE_FLAGS := -c release --static-swift-stdlib
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release

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

.PHONY: help deps build release run demo test clean

help: ## List the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build needs, if missing
	@$(call apt_install,$(APT_PACKAGES))

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

# A part of make test that cannot run is skipped, saying so, but not under CI=true (scripts/cannot-run.sh).
test: export IN_MAKE_TEST = 1
test: deps check-proto lint ## Lint, build, run unit, wire and daemon integration tests, mpv, GStreamer, household sync and fleet telemetry end to end, then the systemd, install, package, footprint and budget checks
	$(SWIFT) build
	$(MAKE) --no-print-directory $(UV_ECHO)
	SNAPBACKD_BIN=$(CURDIR)/$(DEBUG_BIN)/snapbackd SNAPBACK_SYNC_BIN=$(CURDIR)/$(DEBUG_BIN)/snapback-sync \
		SNAPBACK_UV_ECHO=$(CURDIR)/$(UV_ECHO) $(SWIFT) test --parallel \
		--skip MonthSoakTests
	@# Alone in its process: it checks the process's heap, which other suites running beside it add to.
	$(SWIFT) test --filter MonthSoakTests
	python3 Tests/clients/python/test_snapback_client.py $(DEBUG_BIN)/snapbackd
	python3 Tests/clients/python/wire_mutation.py $(DEBUG_BIN)/snapbackd --seconds 10
	$(MAKE) --no-print-directory test-web
	$(MAKE) --no-print-directory test-c
	$(MAKE) --no-print-directory test-mpv
	$(MAKE) --no-print-directory test-gstreamer
	$(MAKE) --no-print-directory test-sync
	$(MAKE) --no-print-directory test-telemetry
	$(MAKE) --no-print-directory check-systemd
	$(MAKE) --no-print-directory check-install
	$(MAKE) --no-print-directory check-deb
	$(MAKE) --no-print-directory check-footprint
	$(MAKE) --no-print-directory check-budget
	$(MAKE) --no-print-directory check-fleet-budget

clean: ## Remove build outputs and the development run directory
	rm -rf .build .build-c .build-profile .build-plain .run bench/grpc/.build

# Each area's variables and targets, in the order `make help` lists them.
# The checks make test runs after the tests: budgets, footprint, units, install tree, generated code, format.
include mk/checks.mk
# The release daemon's speed levers (PERF_ENV), their regeneration and `make check-plain`.
include perf/perf.mk
# libsnapback, the C client library: its build, examples, tests and install rules.
include libsnapback/build.mk
# The mpv plugin and its end-to-end test.
include integrations/mpv/build.mk
# The GStreamer plugin (tracer and element) and its end-to-end test.
include integrations/gstreamer/build.mk
# Household sync against a real nats-server.
include mk/sync.mk

include mk/telemetry.mk
# The web bridge (snapback-web) against the real daemon.
include mk/web.mk
# make install and make uninstall: the daemon, the CLI, units, configuration, man pages, libsnapback.
include mk/install.mk
# make deb and make check-deb: Debian packages of what make install puts in place, and their install test.
include mk/deb.mk
# Benchmarks and the long soak (not in make test).
include mk/bench.mk
# libFuzzer targets and their corpora (not in make test).
include mk/fuzz.mk
# The power-cut test on LazyFS (not in make test).
include mk/powercut.mk
# The build and the tests with Swift 6.2, the oldest supported (not in make test).
include mk/swift62.mk
# aarch64: the cross build (make cross-arm64) and the tests under qemu (make test-arm64; not in make test).
include mk/arm64.mk
