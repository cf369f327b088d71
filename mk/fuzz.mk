# SPDX-License-Identifier: Apache-2.0
# libFuzzer over what parses a peer's bytes (not in `make test`, which replays the committed corpora).
.PHONY: fuzz fuzz-merge fuzz-cues

FUZZ_SECONDS ?= 60
# Coverage for every Swift module, not only the entry point's (SwiftPM's --sanitize=fuzzer alone left
# the libraries uninstrumented), as libFuzzer wants it: inline 8-bit counters and a PC table.
FUZZ_FLAGS := -c release --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz \
	-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
FUZZ_TARGETS := snapback-fuzz:Tests/Fuzz/corpus snapback-fuzz-daemon:Tests/Fuzz/daemon-corpus \
	snapback-fuzz-json:Tests/Fuzz/json-corpus snapback-fuzz-web:Tests/Fuzz/web-corpus \
	snapback-fuzz-fleet:Tests/Fuzz/fleet-corpus

# libsnapback's break sources (libsnapback/tests/fuzz): one target per format, the library's sources
# compiled in with libFuzzer's coverage, ASan and UBSan (clang: the Swift toolchain's has libFuzzer).
CUES_FUZZ_BUILD := .build-fuzz/cues
CUES_FUZZ_CC    ?= clang
$(CUES_FUZZ_BUILD)/fuzz_%: $(CUES_FUZZ_DIR)/fuzz_%.c $(CUES_FUZZ_DIR)/fuzz_cues.h $(CUES_FUZZ_DIR)/crc32_mpeg2.h $(C_LIB_SOURCES) $(C_LIB_HEADERS)
	@mkdir -p $(CUES_FUZZ_BUILD)
	$(CUES_FUZZ_CC) -std=c11 -g -O2 -fuse-ld=lld -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Ilibsnapback/include -ISources/CSnapbackProto/include -o $@ $< $(C_LIB_SOURCES) $(LIBSNAPBACK_DEPS)
# The same targets without ASan, for volume: the readers allocate for every item, and ASan's allocator
# (quarantine, a stack trace per allocation) makes a VMAP execution about 1.5 times slower. What such a run
# keeps is run again under ASan by `make fuzz-merge`, whose merge uses the build above.
$(CUES_FUZZ_BUILD)-ubsan/fuzz_%: $(CUES_FUZZ_DIR)/fuzz_%.c $(CUES_FUZZ_DIR)/fuzz_cues.h $(CUES_FUZZ_DIR)/crc32_mpeg2.h $(C_LIB_SOURCES) $(C_LIB_HEADERS)
	@mkdir -p $(CUES_FUZZ_BUILD)-ubsan
	$(CUES_FUZZ_CC) -std=c11 -g -O2 -fuse-ld=lld -fsanitize=fuzzer,undefined -fno-sanitize-recover=all \
		-Ilibsnapback/include -ISources/CSnapbackProto/include -o $@ $< $(C_LIB_SOURCES) $(LIBSNAPBACK_DEPS)

fuzz-cues: deps $(addprefix $(CUES_FUZZ_BUILD)/fuzz_,$(CUES_FUZZ)) ## Run each break-source fuzz target (HLS, DASH, VMAP, SCTE-35, DASH emsg) for FUZZ_SECONDS
	@mkdir -p fuzz-artifacts
	@for t in $(CUES_FUZZ); do \
		mkdir -p .build-fuzz/corpus/cues-$$t; echo "== cues $$t for $(FUZZ_SECONDS) s"; \
		$(CUES_FUZZ_BUILD)/fuzz_$$t .build-fuzz/corpus/cues-$$t $(CUES_FUZZ_DIR)/corpus/$$t \
			-max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 -print_coverage=0 \
			-artifact_prefix=fuzz-artifacts/cues-$$t- 2>&1 \
			| grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|ERROR|SUMMARY' || true; \
	done
	@if ls fuzz-artifacts/cues-* >/dev/null 2>&1; then \
		echo "crashes saved under fuzz-artifacts/: add each to its target's corpus with its fix"; exit 1; fi

fuzz: deps fuzz-cues ## Run each libFuzzer target (ASan) for FUZZ_SECONDS, then the wire-level mutation test as long
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
	@for t in $(CUES_FUZZ); do \
		scripts/fuzz-merge.sh $(CUES_FUZZ_BUILD)/fuzz_$$t $(CUES_FUZZ_DIR)/corpus/$$t .build-fuzz/corpus/cues-$$t || exit 1; \
	done

