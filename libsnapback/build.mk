# SPDX-License-Identifier: Apache-2.0
# libsnapback: the C client library, its examples and its tests. Included by the top-level Makefile.
#
# Everything is built under .build-c/ (release/ with -O2, asan/ with AddressSanitizer and
# UndefinedBehaviorSanitizer): a few translation units, so each output is one compiler run.

#
# Versions: the soname (LIBSNAPBACK_SOVERSION) changes only when a player built against the previous
# header could break: a function removed or its parameters changed, a struct the player fills
# (snapback_options, snapback_session_params, snapback_break, ...) changed, an enum value renumbered.
# Additions keep it and raise LIBSNAPBACK_VERSION's minor number: new functions (0.2.0: the ad events
# with a position are new _at functions beside the old ones, not new parameters), new enum values, and
# fields appended to structs only the library fills (a reply's snapback_session_state, a push's union
# member no larger than the biggest). The header says "Since 0.x.0" beside each.

CC              ?= cc
LIBSNAPBACK_VERSION := 0.4.0
LIBSNAPBACK_SOVERSION := 0
C_BUILD         := .build-c
C_WARNINGS      := -std=c11 -Wall -Wextra -Werror
C_LIB_SOURCES   := $(wildcard libsnapback/src/*.c) $(wildcard Sources/CSnapbackProto/snapback/v1/*.c)
C_LIB_HEADERS   := libsnapback/include/snapback/snapback.h libsnapback/include/snapback/cues.h \
	libsnapback/src/internal.h libsnapback/src/cues_internal.h libsnapback/src/cues_wire.h libsnapback/src/break_flags.h \
	$(wildcard Sources/CSnapbackProto/include/snapback/v1/*.h)
C_LIB_CFLAGS    := $(C_WARNINGS) -fPIC -fvisibility=hidden -Ilibsnapback/include -ISources/CSnapbackProto/include \
	$(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
PROTOBUF_C_LIBS  = $(shell pkg-config --libs libprotobuf-c)
# What libsnapback links besides protobuf-c: expat (the break sources' XML) and libm. Whoever links the
# static archive links these too (the plugins; libsnapback.pc's Requires.private and Libs.private).
LIBSNAPBACK_DEPS = $(PROTOBUF_C_LIBS) $(shell pkg-config --libs expat) -lm
GLIB_CFLAGS      = $(shell pkg-config --cflags glib-2.0)
GLIB_LIBS        = $(shell pkg-config --libs glib-2.0)
ASAN_FLAGS      := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SONAME          := libsnapback.so.$(LIBSNAPBACK_SOVERSION)
C_REL           := $(C_BUILD)/release
C_ASAN          := $(C_BUILD)/asan
LIBDIR          := $(PREFIX)/lib
PKGCONFIGDIR    := $(LIBDIR)/pkgconfig

.PHONY: lib examples test-c

lib: $(C_REL)/libsnapback.so $(C_REL)/libsnapback.a ## Build libsnapback (shared and static) under .build-c/release

# $(1): output directory, $(2): extra compiler flags.
define c_library
$(1)/libsnapback.so.$(LIBSNAPBACK_VERSION): $(C_LIB_SOURCES) $(C_LIB_HEADERS) libsnapback/libsnapback.map
	@mkdir -p $(1)
	$(CC) $(C_LIB_CFLAGS) $(2) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=libsnapback/libsnapback.map \
		-Wl,--no-undefined -o $$@ $(C_LIB_SOURCES) $(LIBSNAPBACK_DEPS)
$(1)/$(SONAME): $(1)/libsnapback.so.$(LIBSNAPBACK_VERSION)
	ln -sf libsnapback.so.$(LIBSNAPBACK_VERSION) $$@
$(1)/libsnapback.so: $(1)/$(SONAME)
	ln -sf $(SONAME) $$@
endef
$(eval $(call c_library,$(C_REL),-O2 -g))
$(eval $(call c_library,$(C_ASAN),$(ASAN_FLAGS)))

# The static library: the same objects without the version script (only the archive's users link
# them); its symbols are the public snapback_ ones and the generated snapback__v1__ ones.
$(C_REL)/libsnapback.a: $(C_LIB_SOURCES) $(C_LIB_HEADERS)
	@rm -rf $(C_REL)/obj && mkdir -p $(C_REL)/obj
	for f in $(C_LIB_SOURCES); do \
		$(CC) $(C_LIB_CFLAGS) -O2 -g -c $$f -o $(C_REL)/obj/$$(basename $$f .c).o || exit 1; done
	rm -f $@ && ar rcs $@ $(C_REL)/obj/*.o

# $(1): output directory, $(2): extra flags. Test and example binaries find the library through rpath.
define c_programs
$(1)/test_client: libsnapback/tests/test_client.c libsnapback/tests/harness.h $(1)/libsnapback.so
	$(CC) $(C_WARNINGS) $(2) -D_GNU_SOURCE -Ilibsnapback/include -o $$@ $$< -L$(1) -lsnapback -Wl,-rpath,$(CURDIR)/$(1)
$(1)/test_cues: libsnapback/tests/test_cues.c libsnapback/tests/fuzz/crc32_mpeg2.h $(1)/libsnapback.so
	$(CC) $(C_WARNINGS) $(2) -Ilibsnapback/include -o $$@ $$< -L$(1) -lsnapback -lm -Wl,-rpath,$(CURDIR)/$(1)
$(1)/cues_cost: libsnapback/tests/cues_cost.c $(1)/libsnapback.so
	$(CC) $(C_WARNINGS) $(2) -Ilibsnapback/include -o $$@ $$< -L$(1) -lsnapback -Wl,-rpath,$(CURDIR)/$(1)
$(1)/player_poll: examples/player_poll.c examples/scripted_player.h $(1)/libsnapback.so
	$(CC) $(C_WARNINGS) $(2) -Ilibsnapback/include -o $$@ $$< -L$(1) -lsnapback -Wl,-rpath,$(CURDIR)/$(1)
$(1)/player_glib: examples/player_glib.c examples/scripted_player.h $(1)/libsnapback.so
	$(CC) $(C_WARNINGS) $(2) -Ilibsnapback/include $(GLIB_CFLAGS) -o $$@ $$< -L$(1) -lsnapback $(GLIB_LIBS) \
		-Wl,-rpath,$(CURDIR)/$(1)
endef
$(eval $(call c_programs,$(C_REL),-O2 -g))
$(eval $(call c_programs,$(C_ASAN),$(ASAN_FLAGS)))

examples: $(C_REL)/player_poll $(C_REL)/player_glib ## Build the example players (GLib main loop, plain poll)

# The plain run drives the library as `make install` lays it out: installed into a staging DESTDIR
# (PREFIX /usr), the tests and examples compiled with nothing but that tree's pkg-config file. The
# sanitizer run uses the ASan+UBSan build of the library in place.
C_STAGE         := $(C_BUILD)/stage
C_INSTALLED     := $(C_BUILD)/installed
STAGE_PKG_CONFIG = PKG_CONFIG_PATH=$(CURDIR)/$(C_STAGE)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(C_STAGE) \
	pkg-config
C_TEST_PROGRAMS = test_client test_cues player_poll player_glib
# The programs libsnapback/tests/run.sh runs, from the plain build (test-arm64 cross-builds them so).
.PHONY: c-test-programs
c-test-programs: $(addprefix $(C_REL)/,$(C_TEST_PROGRAMS))
# The break sources' fuzz targets (libsnapback/tests/fuzz, `make fuzz`); their committed corpora are
# replayed here under ASan and UBSan, each target's LLVMFuzzerTestOneInput built with a plain main.
CUES_FUZZ       := hls dash vmap scte35 emsg
CUES_FUZZ_DIR   := libsnapback/tests/fuzz
$(C_ASAN)/replay_%: $(CUES_FUZZ_DIR)/fuzz_%.c $(CUES_FUZZ_DIR)/fuzz_cues.h $(CUES_FUZZ_DIR)/crc32_mpeg2.h $(CUES_FUZZ_DIR)/replay.c $(C_ASAN)/libsnapback.so
	$(CC) $(C_WARNINGS) $(ASAN_FLAGS) -Ilibsnapback/include -o $@ $< $(CUES_FUZZ_DIR)/replay.c -L$(C_ASAN) -lsnapback -lm \
		-Wl,-rpath,$(CURDIR)/$(C_ASAN)
test-c: deps lib ## C tests: installed libsnapback against the real daemon, and under ASan+UBSan; exported symbols
	$(SWIFT) build --product snapbackd
	$(MAKE) --no-print-directory $(addprefix $(C_ASAN)/,$(C_TEST_PROGRAMS) $(addprefix replay_,$(CUES_FUZZ)))
	libsnapback/tests/check-symbols.sh $(C_REL)/libsnapback.so libsnapback/include/snapback/snapback.h \
		libsnapback/include/snapback/cues.h
	@# C++ players include the header too.
	$(CXX) -std=c++11 -Wall -Wextra -Werror -Ilibsnapback/include -fsyntax-only -x c++ libsnapback/include/snapback/snapback.h
	$(CXX) -std=c++11 -Wall -Wextra -Werror -Ilibsnapback/include -fsyntax-only -x c++ libsnapback/include/snapback/cues.h
	rm -rf $(C_STAGE) $(C_INSTALLED) && mkdir -p $(C_INSTALLED)
	$(MAKE) --no-print-directory -s install-lib DESTDIR=$(CURDIR)/$(C_STAGE) PREFIX=/usr
	flags="$$($(STAGE_PKG_CONFIG) --cflags --libs libsnapback) -Wl,-rpath,$(CURDIR)/$(C_STAGE)/usr/lib" && \
	$(CC) $(C_WARNINGS) -O2 -g -D_GNU_SOURCE -o $(C_INSTALLED)/test_client libsnapback/tests/test_client.c $$flags && \
	$(CC) $(C_WARNINGS) -O2 -g -o $(C_INSTALLED)/test_cues libsnapback/tests/test_cues.c $$flags -lm && \
	$(CC) $(C_WARNINGS) -O2 -g -o $(C_INSTALLED)/player_poll examples/player_poll.c $$flags && \
	$(CC) $(C_WARNINGS) -O2 -g $(GLIB_CFLAGS) -o $(C_INSTALLED)/player_glib examples/player_glib.c $$flags $(GLIB_LIBS)
	ldd $(C_INSTALLED)/test_client | grep -q "libsnapback.so.0 => $(CURDIR)/$(C_STAGE)/usr/lib/" \
		|| { echo "test-c: the tests do not load the installed libsnapback" >&2; exit 1; }
	libsnapback/tests/run.sh $(C_INSTALLED) $(CURDIR)/$(DEBUG_BIN)/snapbackd
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		libsnapback/tests/run.sh $(C_ASAN) $(CURDIR)/$(DEBUG_BIN)/snapbackd
	@for t in $(CUES_FUZZ); do \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			$(C_ASAN)/replay_$$t $(CUES_FUZZ_DIR)/corpus/$$t || exit 1; done
	$(MAKE) --no-print-directory $(C_REL)/cues_cost
	libsnapback/tests/cues-cost.sh $(C_REL)/cues_cost

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/snapback
	install -m 0644 libsnapback/include/snapback/snapback.h libsnapback/include/snapback/cues.h \
		$(DESTDIR)$(INCLUDEDIR)/snapback/
	install -m 0755 $(C_REL)/libsnapback.so.$(LIBSNAPBACK_VERSION) $(DESTDIR)$(LIBDIR)/
	strip --strip-unneeded $(DESTDIR)$(LIBDIR)/libsnapback.so.$(LIBSNAPBACK_VERSION)
	ln -sf libsnapback.so.$(LIBSNAPBACK_VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsnapback.so
	install -m 0644 $(C_REL)/libsnapback.a $(DESTDIR)$(LIBDIR)/
	sed -e 's#@PREFIX@#$(PREFIX)#' -e 's#@LIBDIR@#$(LIBDIR)#' -e 's#@INCLUDEDIR@#$(INCLUDEDIR)#' \
		-e 's#@VERSION@#$(LIBSNAPBACK_VERSION)#' libsnapback/libsnapback.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libsnapback.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libsnapback.pc
