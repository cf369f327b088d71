# SPDX-License-Identifier: Apache-2.0
# Benchmarks (not in `make test`): each against a baseline measured in the same run (docs/performance.md).
.PHONY: bench soak bench-grpc

# The libuv floor of `snapback-bench daemon --spacing` (--libuv-echo): the bench's echo behind uv_run, in C, linked
# with the same static libuv archive as the release daemon (found as perf.mk's `static` lever finds it) (static, as the daemon is; glibc's warning that
# a static program's getpwuid_r needs the system's NSS modules is libuv's, and this echo never calls it).
UV_ECHO := $(C_BUILD)/release/snapback-uv-echo

$(UV_ECHO): bench/uv-echo/snapback-uv-echo.c | perf-inputs
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -o $@ $< -static -L$(PERF_STATIC_LIBS) -luv -Wl,--no-warnings

# The benchmarks are snapback-bench's (Sources/snapback-bench), built with the release and never installed.
bench: release $(UV_ECHO) ## Benchmarks with their baselines: round trip vs raw socket, cold path, load, memory per session, timeline engine, store, fleet aggregator, loop stalls, web bridge, the agent's idle cost of telemetry
	$(RELEASE_BIN)/snapback-bench daemon --snapbackd $(RELEASE_BIN)/snapbackd
	$(RELEASE_BIN)/snapback-bench daemon --snapbackd $(RELEASE_BIN)/snapbackd --spacing 5 --libuv-echo $(UV_ECHO) \
		--load --sessions 10000
	taskset -c 0 $(RELEASE_BIN)/snapback-bench timeline
	$(RELEASE_BIN)/snapback-bench store --snapbackd $(RELEASE_BIN)/snapbackd --seconds 3
	@# snapback-fleet's batch path on one core, beside decoding alone and a bare SQLite upsert (docs/telemetry.md).
	taskset -c 0 $(RELEASE_BIN)/snapback-bench fleet
	bench/loop_stall.py $(RELEASE_BIN)/snapbackd
	bench/web_bench.py $(RELEASE_BIN)/snapbackd $(RELEASE_BIN)/snapback-web
	bench/agent_idle.py $(RELEASE_BIN)/snapbackd $(RELEASE_BIN)/snapback-sync

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

