# SPDX-License-Identifier: Apache-2.0
# The GStreamer plugin (libgstsnapback.so: the "snapback" tracer and the "snapbacksink" element) and its
# end-to-end test with real playbin and playbin3 pipelines. Included by the top-level Makefile after
# libsnapback/build.mk and integrations/mpv/build.mk (it shares the mpv plugin's chapter, sidecar and JSON
# readers: integrations/mpv/src/media.c and json.c, pure C).
#
# libsnapback goes into the plugin statically, as into the mpv plugin: one file on GST_PLUGIN_PATH.
#
# Debian packages (deps-gstreamer, for this target only; measured on the development machine with
# apt-get's --no-install-recommends: 306 packages, 102 MB downloaded, 54 s): GStreamer's headers and
# core plugins, plugins-bad (tsdemux, mpegtsmux, the mpegts library), libav (H.264 decoding, MPEG-4
# video encoding and decoding for the MPEG-TS media), the command-line tools (gst-launch-1.0, and
# gst-play-1.0 in plugins-base-apps), the Python bindings the test drives playbin with, and ffmpeg (the
# Matroska test media, as for mpv). The gstreamer-mpegts headers come in
# libgstreamer-plugins-bad1.0-dev, whose dependencies pull OpenCV's development packages in (525
# packages, 219 MB with the above): it is fetched with `apt-get download` and only its headers are
# unpacked under the build directory; the library itself is in the runtime package.
GST_APT_PACKAGES := libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base \
	gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-tools \
	gstreamer1.0-plugins-base-apps python3-gst-1.0 gir1.2-gst-plugins-bad-1.0 ffmpeg
GST_BUILD       := $(C_BUILD)/gstreamer
GST_BAD_DEV     := $(GST_BUILD)/bad-dev
GST_SOURCES     := $(wildcard integrations/gstreamer/src/*.c) integrations/mpv/src/media.c integrations/mpv/src/json.c
GST_HEADERS     := $(wildcard integrations/gstreamer/src/*.h) integrations/mpv/src/media.h integrations/mpv/src/json.h \
	libsnapback/include/snapback/snapback.h libsnapback/include/snapback/cues.h
GST_CFLAGS       = $(C_WARNINGS) -fPIC -fvisibility=hidden -Ilibsnapback/include -Iintegrations/mpv/src \
	-I$(GST_BAD_DEV)/usr/include/gstreamer-1.0 $(shell pkg-config --cflags gstreamer-1.0 2>/dev/null) \
	-DSNAPBACK_GST_VERSION='"$(LIBSNAPBACK_VERSION)"' -DGST_USE_UNSTABLE_API
GST_LIBS         = $(shell pkg-config --libs gstreamer-1.0 2>/dev/null) -l:libgstmpegts-1.0.so.0
# The end-to-end test's bound: it fails rather than hang.
GST_TEST_SECONDS ?= 420
# python3-gst-1.0 is Debian's: the test runs under Debian's interpreter, whatever python3 is first on PATH.
GST_PYTHON      ?= /usr/bin/python3

.PHONY: gst-plugin deps-gstreamer test-gstreamer install-gst-plugin

gst-plugin: $(GST_BUILD)/libgstsnapback.so ## Build the GStreamer plugin (GST_PLUGIN_PATH=.build-c/gstreamer GST_TRACERS=snapback)

# (A machine with libgstreamer-plugins-bad1.0-dev installed uses its headers.)
$(GST_BAD_DEV)/.stamp:
	@rm -rf $(GST_BAD_DEV) && mkdir -p $(GST_BAD_DEV)
	@if pkg-config --exists gstreamer-mpegts-1.0; then touch $@; else \
		cd $(GST_BAD_DEV) && apt-get download -qq libgstreamer-plugins-bad1.0-dev 2>/dev/null && \
		dpkg-deb -x libgstreamer-plugins-bad1.0-dev_*.deb . && rm -f *.deb && \
		test -f usr/include/gstreamer-1.0/gst/mpegts/mpegts.h && touch .stamp; fi

$(GST_BUILD)/libgstsnapback.so: $(GST_SOURCES) $(GST_HEADERS) integrations/gstreamer/plugin.map $(C_REL)/libsnapback.a \
		$(GST_BAD_DEV)/.stamp
	@mkdir -p $(GST_BUILD)
	$(CC) $(GST_CFLAGS) -O2 -g -shared -Wl,--version-script=integrations/gstreamer/plugin.map -Wl,--no-undefined \
		-o $@ $(GST_SOURCES) $(C_REL)/libsnapback.a $(LIBSNAPBACK_DEPS) $(GST_LIBS)

# Not part of `make install` (it needs GStreamer's headers): PREFIX/lib/gstreamer-1.0, GStreamer's plugin
# directory for a PREFIX of its own (GST_PLUGIN_PATH); the Debian package moves it to the multiarch one.
GST_PLUGINDIR   := $(PREFIX)/lib/gstreamer-1.0

install-gst-plugin: deps-gstreamer $(GST_BUILD)/libgstsnapback.so ## Install the GStreamer plugin (stripped) into PREFIX/lib/gstreamer-1.0 (DESTDIR)
	install -d $(DESTDIR)$(GST_PLUGINDIR)
	install -m 0644 $(GST_BUILD)/libgstsnapback.so $(DESTDIR)$(GST_PLUGINDIR)/
	$(STRIP) --strip-unneeded $(DESTDIR)$(GST_PLUGINDIR)/libgstsnapback.so

# The SCTE-35 logic (sections, segmentation descriptors, cues into breaks) without a pipeline, under ASan
# and UBSan.
$(GST_BUILD)/test_scte: integrations/gstreamer/tests/test_scte.c integrations/gstreamer/src/scte.c \
		integrations/mpv/src/media.c integrations/mpv/src/json.c $(GST_HEADERS) $(GST_BAD_DEV)/.stamp $(C_REL)/libsnapback.a
	@mkdir -p $(GST_BUILD)
	$(CC) $(filter-out -fvisibility=hidden,$(GST_CFLAGS)) $(ASAN_FLAGS) -Iintegrations/gstreamer/src -o $@ $< \
		integrations/gstreamer/src/scte.c integrations/mpv/src/media.c integrations/mpv/src/json.c \
		$(C_REL)/libsnapback.a $(LIBSNAPBACK_DEPS) $(GST_LIBS)

# Installed when missing; where they cannot be, the end-to-end test fails, saying so (skipped only as a
# part of make test, scripts/cannot-run.sh).
deps-gstreamer:
	@missing=""; for p in $(GST_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; } \
			|| echo "deps-gstreamer: could not install$$missing" >&2; \
	fi

test-gstreamer: deps lib deps-gstreamer ## GStreamer under snapback, end to end: playbin and playbin3, through the tracer and the element
	@if ! pkg-config --exists gstreamer-1.0 || ! command -v ffmpeg >/dev/null || \
		! $(GST_PYTHON) -c 'import gi; gi.require_version("Gst", "1.0"); gi.require_version("GstMpegts", "1.0")' 2>/dev/null || \
		! $(MAKE) --no-print-directory -s $(GST_BAD_DEV)/.stamp; then \
		scripts/cannot-run.sh test-gstreamer "GStreamer, its Python bindings, the mpegts headers or ffmpeg is not" \
			"installed and could not be (make deps-gstreamer)"; \
		exit $$?; \
	fi; \
	$(SWIFT) build --product snapbackd && \
	$(MAKE) --no-print-directory $(GST_BUILD)/libgstsnapback.so $(GST_BUILD)/test_scte && \
	LSAN_OPTIONS=suppressions=$(CURDIR)/integrations/gstreamer/tests/lsan.supp \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(GST_BUILD)/test_scte && \
	timeout -k 10 $(GST_TEST_SECONDS) $(GST_PYTHON) integrations/gstreamer/tests/test_gstreamer.py \
		--plugin-dir $(CURDIR)/$(GST_BUILD) --snapbackd $(CURDIR)/$(DEBUG_BIN)/snapbackd
