# SPDX-License-Identifier: Apache-2.0
# libFuzzer over what parses a peer's bytes (not in `make test`, which replays the committed corpora).
.PHONY: fuzz fuzz-merge

FUZZ_SECONDS ?= 60
# Coverage for every Swift module, not only the entry point's (SwiftPM's --sanitize=fuzzer alone left
# the libraries uninstrumented), as libFuzzer wants it: inline 8-bit counters and a PC table.
FUZZ_FLAGS := -c release --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz \
	-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
FUZZ_TARGETS := snapback-fuzz:Tests/Fuzz/corpus snapback-fuzz-daemon:Tests/Fuzz/daemon-corpus \
	snapback-fuzz-web:Tests/Fuzz/web-corpus

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

