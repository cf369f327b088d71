# snapback — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT       ?= swift
# Debian packages the build, the tests and the tools need (installed when missing).
APT_PACKAGES := pkg-config libuv1-dev libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev python3
SOCKET      ?= .run/snapbackd.sock
STATE_DIR   ?= .run/state
LOG_LEVEL   ?= info
RELEASE_FLAGS := -c release --static-swift-stdlib
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release

.PHONY: help deps build release run demo test check-proto proto bench fuzz clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build needs, if missing
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps ## Debug build of every product
	$(SWIFT) build

release: deps ## Release build (static Swift runtime, no Foundation)
	$(SWIFT) build $(RELEASE_FLAGS)

run: release ## Run snapbackd in the foreground on the development socket
	@mkdir -p $(dir $(SOCKET)) $(STATE_DIR)
	$(RELEASE_BIN)/snapbackd --socket $(SOCKET) --state-dir $(STATE_DIR) --log-level $(LOG_LEVEL)

demo: release ## Start snapbackd and a scripted player that tells the seeds' story
	@scripts/demo.sh $(RELEASE_BIN)

test: deps check-proto ## Build, then run unit, wire and daemon integration tests
	$(SWIFT) build
	SNAPBACKD_BIN=$(CURDIR)/$(DEBUG_BIN)/snapbackd $(SWIFT) test --parallel
	python3 Tests/clients/python/test_snapback_client.py $(DEBUG_BIN)/snapbackd

check-proto: deps ## Fail when the committed protobuf-c code does not match proto/
	@scripts/gen-proto.sh --check

proto: deps ## Regenerate the protobuf-c code from proto/
	@scripts/gen-proto.sh

bench: release ## Benchmarks: snapbackd round trip vs a raw Unix-socket ping-pong (prints ratios)
	$(RELEASE_BIN)/snapback bench --snapbackd $(RELEASE_BIN)/snapbackd

FUZZ_SECONDS ?= 60
fuzz: deps ## Run libFuzzer (ASan) over decoder + request decoding + timeline for FUZZ_SECONDS
	$(SWIFT) build --sanitize=fuzzer --sanitize=address --product snapback-fuzz --scratch-path .build-fuzz
	@mkdir -p .build-fuzz/corpus fuzz-artifacts
	.build-fuzz/debug/snapback-fuzz .build-fuzz/corpus Tests/Fuzz/corpus -max_total_time=$(FUZZ_SECONDS) \
		-max_len=65536 -artifact_prefix=fuzz-artifacts/
	@if ls fuzz-artifacts/* >/dev/null 2>&1; then \
		echo "crashes saved under fuzz-artifacts/: add each to Tests/Fuzz/corpus with its fix"; exit 1; fi

clean: ## Remove build outputs and the development run directory
	rm -rf .build .run
