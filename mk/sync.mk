# SPDX-License-Identifier: Apache-2.0
# `make test-sync`: household sync against a real nats-server (issue #27). config/nats-server.conf's
# permissions checked with libnats itself (Tests/sync/kv_probe.c, Tests/sync/test_permissions.py), then
# two households' boxes — snapbackd and snapback-sync each — through the players' protocol
# (Tests/sync/test_household.py; faketime sets a box's clock off); then one box whose bucket requests a
# proxy holds unanswered (Tests/sync/test_unanswered.py): the agent's loop goes on meanwhile.
# nats-server, libnats-dev and faketime are installed when missing; where they cannot be, the test fails,
# saying so (skipped only as a part of make test, scripts/cannot-run.sh).
SYNC_APT_PACKAGES := nats-server libnats-dev faketime
SYNC_BUILD        := $(C_BUILD)/sync
# Each script's bound: it fails rather than hang.
SYNC_TEST_SECONDS ?= 600

.PHONY: deps-sync test-sync

deps-sync:
	@missing=""; for p in $(SYNC_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } \
			|| echo "deps-sync: could not install$$missing" >&2; \
	fi

$(SYNC_BUILD)/kv-probe: Tests/sync/kv_probe.c
	@mkdir -p $(SYNC_BUILD)
	$(CC) $(C_WARNINGS) -D_POSIX_C_SOURCE=200809L -O1 -g -o $@ $< $$(pkg-config --cflags --libs libnats) -lpthread

test-sync: deps deps-sync ## Household sync end to end: nats-server, config/nats-server.conf's permissions, boxes of two households
	@missing=""; command -v nats-server >/dev/null || missing="$$missing nats-server"; \
	pkg-config --exists libnats || missing="$$missing libnats-dev (libnats.pc)"; \
	command -v faketime >/dev/null || missing="$$missing faketime"; \
	if [ -n "$$missing" ]; then \
		scripts/cannot-run.sh test-sync "not installed and could not be (make deps-sync):$$missing"; \
		exit $$?; \
	fi; \
	$(SWIFT) build --product snapbackd && $(SWIFT) build --product snapback-sync && \
	$(MAKE) --no-print-directory $(SYNC_BUILD)/kv-probe && \
	timeout -k 10 $(SYNC_TEST_SECONDS) python3 Tests/sync/test_permissions.py $(SYNC_BUILD)/kv-probe && \
	timeout -k 10 $(SYNC_TEST_SECONDS) python3 Tests/sync/test_household.py --snapbackd $(DEBUG_BIN)/snapbackd \
		--agent $(DEBUG_BIN)/snapback-sync --kv-probe $(SYNC_BUILD)/kv-probe && \
	timeout -k 10 $(SYNC_TEST_SECONDS) python3 Tests/sync/test_unanswered.py --snapbackd $(DEBUG_BIN)/snapbackd \
		--agent $(DEBUG_BIN)/snapback-sync
