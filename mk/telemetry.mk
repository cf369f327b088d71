# SPDX-License-Identifier: Apache-2.0
# `make test-telemetry`: fleet telemetry end to end (issue #40). Three boxes (snapbackd and snapback-sync
# each, telemetry only), one `nats-server -js`, snapback-fleet and a real VictoriaMetrics started on a
# free port with its data in a temporary directory (Tests/telemetry/test_fleet.py); the agents' textfile
# read with prometheus_client's parser. The stream is read and written with libnats itself
# (Tests/telemetry/stream_probe.c: a report re-published, the consumer's pending count). Before it, one
# box's agent against a report subject that never answers (Tests/telemetry/test_agent.py, a NATS client of
# its own in nats_wire.py): its other work goes on while the report waits for its ack. Then
# config/nats-server.conf's telemetry permissions with the example file as it is
# (Tests/telemetry/test_permissions.py): a box publishes its own report subject only, snapback-fleet
# consumes the stream.
# nats-server, victoria-metrics, libnats-dev and python3-prometheus-client are installed when missing;
# where they cannot be, the test fails, saying so (skipped only as a part of make test, scripts/cannot-run.sh).
TELEMETRY_APT_PACKAGES := nats-server libnats-dev victoria-metrics python3-prometheus-client
TELEMETRY_BUILD        := $(C_BUILD)/telemetry
TELEMETRY_TEST_SECONDS ?= 300
# Debian's python3, whose packages (python3-prometheus-client) the test imports; another python3 first
# on the PATH (a pyenv's) would not have them.
TELEMETRY_PYTHON       ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)

# `make fleet-plot`: the same run, then the story's snapbacks and skipped breaks per hour by preset read back
# from VictoriaMetrics (PromQL over its HTTP API) and drawn by matplotlib into TELEMETRY_PLOT
# (docs/telemetry.md "The plot"); python3-matplotlib is installed when missing. It fails when it cannot draw.
TELEMETRY_PLOT         ?= $(TELEMETRY_BUILD)/fleet.png
TELEMETRY_ARGS         ?=

.PHONY: deps-telemetry test-telemetry fleet-plot

deps-telemetry:
	@missing=""; for p in $(TELEMETRY_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } \
			|| echo "deps-telemetry: could not install$$missing" >&2; \
	fi

$(TELEMETRY_BUILD)/stream-probe: Tests/telemetry/stream_probe.c
	@mkdir -p $(TELEMETRY_BUILD)
	$(CC) $(C_WARNINGS) -D_POSIX_C_SOURCE=200809L -O1 -g -o $@ $< $$(pkg-config --cflags --libs libnats) -lpthread

test-telemetry: deps deps-telemetry ## Fleet telemetry end to end: three boxes, nats-server -js, snapback-fleet, VictoriaMetrics
	@missing=""; command -v nats-server >/dev/null || missing="$$missing nats-server"; \
	command -v victoria-metrics >/dev/null || missing="$$missing victoria-metrics"; \
	pkg-config --exists libnats || missing="$$missing libnats-dev (libnats.pc)"; \
	$(TELEMETRY_PYTHON) -c 'import prometheus_client' 2>/dev/null || missing="$$missing python3-prometheus-client"; \
	if [ -n "$$missing" ]; then \
		scripts/cannot-run.sh test-telemetry "not installed and could not be (make deps-telemetry):$$missing"; \
		exit $$?; \
	fi; \
	$(SWIFT) build --product snapbackd && $(SWIFT) build --product snapback-sync && \
	$(SWIFT) build --product snapback-fleet && \
	$(MAKE) --no-print-directory $(TELEMETRY_BUILD)/stream-probe && \
	timeout -k 10 $(TELEMETRY_TEST_SECONDS) $(TELEMETRY_PYTHON) Tests/telemetry/test_agent.py \
		--snapbackd $(DEBUG_BIN)/snapbackd --agent $(DEBUG_BIN)/snapback-sync \
		--stream-probe $(TELEMETRY_BUILD)/stream-probe && \
	timeout -k 10 $(TELEMETRY_TEST_SECONDS) $(TELEMETRY_PYTHON) Tests/telemetry/test_permissions.py \
		--snapbackd $(DEBUG_BIN)/snapbackd --agent $(DEBUG_BIN)/snapback-sync --fleet $(DEBUG_BIN)/snapback-fleet && \
	timeout -k 10 $(TELEMETRY_TEST_SECONDS) $(TELEMETRY_PYTHON) Tests/telemetry/test_fleet.py \
		--snapbackd $(DEBUG_BIN)/snapbackd --agent $(DEBUG_BIN)/snapback-sync --fleet $(DEBUG_BIN)/snapback-fleet \
		--stream-probe $(TELEMETRY_BUILD)/stream-probe $(TELEMETRY_ARGS)

fleet-plot: deps ## The three-box story into VictoriaMetrics, then snapbacks and skipped breaks per hour by preset drawn to TELEMETRY_PLOT
	@$(call apt_install,python3-matplotlib,--no-install-recommends)
	@$(TELEMETRY_PYTHON) -c 'import matplotlib' || { echo "fleet-plot: FAILED: $(TELEMETRY_PYTHON) cannot import matplotlib" >&2; exit 1; }
	@mkdir -p $(dir $(TELEMETRY_PLOT))
	$(MAKE) --no-print-directory test-telemetry TELEMETRY_ARGS="--plot $(abspath $(TELEMETRY_PLOT))"
	@test -s $(TELEMETRY_PLOT) || { echo "fleet-plot: FAILED: no $(TELEMETRY_PLOT)" >&2; exit 1; }
	@echo "fleet-plot: $(TELEMETRY_PLOT)"
