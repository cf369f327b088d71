# SPDX-License-Identifier: Apache-2.0
# The mpv plugin (snapback.so), its unit tests and its end-to-end test with a real mpv. Included by
# the top-level Makefile after libsnapback/build.mk.
#
# libsnapback goes into the plugin statically: mpv loads a plugin by path from its scripts directory,
# so one self-contained file that needs no libsnapback.so on the loader's path is what a user copies
# there; the version script keeps every symbol but mpv_open_cplugin inside it. The plugin must not
# link libmpv: mpv's own binary provides the client API to the plugins it loads.

MPV_APT_PACKAGES := mpv libmpv-dev ffmpeg
MPV_BUILD       := $(C_BUILD)/mpv
MPV_SOURCES     := $(wildcard integrations/mpv/src/*.c) Sources/CSnapbackFetch/fetch.c
MPV_HEADERS     := $(wildcard integrations/mpv/src/*.h) Sources/CSnapbackFetch/include/snapback_fetch.h libsnapback/include/snapback/snapback.h \
	libsnapback/include/snapback/cues.h
MPV_CFLAGS      := $(C_WARNINGS) -fPIC -fvisibility=hidden -Ilibsnapback/include -ISources/CSnapbackFetch/include \
	$(shell pkg-config --cflags mpv 2>/dev/null)
# The end-to-end test's bound: it fails rather than hang.
MPV_TEST_SECONDS ?= 240

.PHONY: mpv-plugin deps-mpv test-mpv install-mpv-plugin

mpv-plugin: $(MPV_BUILD)/snapback.so ## Build the mpv plugin (mpv --script=.build-c/mpv/snapback.so)

$(MPV_BUILD)/snapback.so: $(MPV_SOURCES) $(MPV_HEADERS) integrations/mpv/plugin.map $(C_REL)/libsnapback.a
	@mkdir -p $(MPV_BUILD)
	$(CC) $(MPV_CFLAGS) -O2 -g -pthread -shared -Wl,--version-script=integrations/mpv/plugin.map -o $@ $(MPV_SOURCES) \
		$(C_REL)/libsnapback.a $(LIBSNAPBACK_DEPS) $(shell pkg-config --libs libcurl)

# Not part of `make install` (it needs mpv's headers): the Debian package's place, under PREFIX/lib, from
# which a user links it into a scripts directory or loads it with --script (`make deb` stages it).
MPV_PLUGINDIR   := $(PREFIX)/lib/mpv-snapback
STRIP           ?= strip

install-mpv-plugin: deps-mpv $(MPV_BUILD)/snapback.so ## Install the mpv plugin (stripped) as PREFIX/lib/mpv-snapback/snapback.so (DESTDIR)
	install -d $(DESTDIR)$(MPV_PLUGINDIR)
	install -m 0644 $(MPV_BUILD)/snapback.so $(DESTDIR)$(MPV_PLUGINDIR)/
	$(STRIP) --strip-unneeded $(DESTDIR)$(MPV_PLUGINDIR)/snapback.so

# The file-reading half (chapters, sidecar JSON, clock) without mpv, under ASan and UBSan.
$(MPV_BUILD)/test_media: integrations/mpv/tests/test_media.c integrations/mpv/src/media.c integrations/mpv/src/json.c \
		$(MPV_HEADERS)
	@mkdir -p $(MPV_BUILD)
	$(CC) $(C_WARNINGS) $(ASAN_FLAGS) -Ilibsnapback/include -Iintegrations/mpv/src -o $@ $< \
		integrations/mpv/src/media.c integrations/mpv/src/json.c -lm

# mpv, libmpv-dev (the client API header) and ffmpeg (the test media), installed when missing. Where they
# cannot be, the end-to-end test fails, saying so (skipped only as a part of make test,
# scripts/cannot-run.sh).
deps-mpv:
	@missing=""; for p in $(MPV_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } \
			|| echo "deps-mpv: could not install$$missing" >&2; \
	fi

test-mpv: deps lib deps-mpv ## mpv under snapback, end to end: the plugin in a real mpv against the real daemon
	@if ! command -v mpv >/dev/null || ! command -v ffmpeg >/dev/null || ! pkg-config --exists mpv; then \
		scripts/cannot-run.sh test-mpv "mpv, libmpv-dev or ffmpeg is not installed and could not be (make deps-mpv)"; \
		exit $$?; \
	fi; \
	$(SWIFT) build --product snapbackd && \
	$(MAKE) --no-print-directory $(MPV_BUILD)/snapback.so $(MPV_BUILD)/test_media && \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(MPV_BUILD)/test_media && \
	timeout -k 10 $(MPV_TEST_SECONDS) python3 integrations/mpv/tests/test_mpv.py \
		--plugin $(CURDIR)/$(MPV_BUILD)/snapback.so --snapbackd $(CURDIR)/$(DEBUG_BIN)/snapbackd
