# SPDX-License-Identifier: Apache-2.0
# make deb and make check-deb: Debian binary packages for ARCH (amd64 or arm64), built by
# scripts/build-deb.sh from a staged install tree, and their install test in a clean Debian chroot
# (scripts/check-deb.sh). docs/operations.md tells how to use them.
#
# The packages' version is the project's, the one `snapbackd --version` prints (Daemon.version), with
# the Debian revision DEB_REVISION. The tree they are made from is staged in DEB_STAGE: for the build
# machine's architecture by `make install` and the mpv and GStreamer plugins' install rules (PREFIX=/usr);
# for arm64 by `make cross-arm64` (mk/arm64.mk), whose binaries are linked against the arm64 Debian 12
# sysroot ARM64_SYSROOT: DEB_SYSROOT, where dpkg-shlibdeps reads the libraries and symbols files. Both are
# for Debian 12, bookworm (DEB_SUITE), the release the boxes run. DEB_STAGE and DEB_SYSROOT given on the
# command line use a tree staged elsewhere (and DEB_SUITE names the Debian release of DEB_SYSROOT).
DEB_APT_PACKAGES := dpkg-dev debhelper lintian mmdebstrap
HOST_ARCH   := $(shell dpkg --print-architecture 2>/dev/null)
ARCH        ?= $(HOST_ARCH)
DEB_VERSION := $(shell sed -n 's/^ *public static let version = "\(.*\)"$$/\1/p' Sources/SnapbackDaemon/Daemon.swift)
DEB_REVISION ?= 1
DEB_BUILD   := .build-deb
DEB_OUT     ?= $(DEB_BUILD)/$(ARCH)
DEB_STAGE   ?= $(DEB_BUILD)/stage-$(ARCH)
DEB_SUITE   ?= bookworm
DEB_SYSROOT ?= $(if $(filter $(HOST_ARCH),$(ARCH)),/,$(ARM64_SYSROOT))
# The clean chroots of check-deb, made once per suite and architecture by mmdebstrap from the sources
# apt uses here, and reused (each run works on an overlay of its own).
DEB_CACHE   ?= /var/cache/snapback
DEB_MIRROR  ?= $(firstword $(wildcard /etc/apt/sources.list.d/debian.sources) http://deb.debian.org/debian)
# An arm64 chroot runs its programs under qemu-user; its maintainer scripts need that too
# (mk/packages.list's cross tools).
DEB_FOREIGN_PACKAGES = $(shell scripts/packages.sh cross)

# The C parts (libsnapback, the plugins) go into the packages built with Debian's hardening flags
# (dpkg-buildflags, hardening=+all: fortified functions, stack protector, read-only relocations bound at
# load), in a directory of their own so that the tests' builds are not mixed with them.
DEB_C_BUILD := $(DEB_BUILD)/c-$(ARCH)
deb_buildflags = $(shell DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $(1))
DEB_CC       = $(CC) $(call deb_buildflags,CPPFLAGS) $(call deb_buildflags,CFLAGS) $(call deb_buildflags,LDFLAGS)
DEB_STAGE_VARS = DESTDIR=$(CURDIR)/$(DEB_STAGE) PREFIX=/usr C_BUILD=$(DEB_C_BUILD) CC="$(DEB_CC)"

.PHONY: deb check-deb deps-deb

deps-deb:
	@$(call apt_install,$(DEB_APT_PACKAGES) $(if $(filter $(HOST_ARCH),$(ARCH)),,$(DEB_FOREIGN_PACKAGES)),--no-install-recommends)

deb: deps deps-deb ## Debian packages for ARCH (default the host's; arm64 cross-built), for Debian 12, in .build-deb/ARCH
ifeq ($(ARCH),$(HOST_ARCH))
	rm -rf $(DEB_STAGE)
	$(MAKE) --no-print-directory install install-mpv-plugin $(DEB_STAGE_VARS)
	@# Without GStreamer's headers (make deps-gstreamer could not install them) there is no GStreamer package.
	$(MAKE) --no-print-directory deps-gstreamer
	@if pkg-config --exists gstreamer-1.0 && $(MAKE) --no-print-directory -s $(GST_BAD_DEV)/.stamp; then \
		$(MAKE) --no-print-directory install-gst-plugin $(DEB_STAGE_VARS); \
	else echo "deb: GStreamer's headers are not installed and could not be: no gstreamer1.0-snapback"; fi
else ifneq ($(origin DEB_STAGE),command line)
	rm -rf $(DEB_STAGE)
	$(MAKE) --no-print-directory cross-$(ARCH) DESTDIR=$(CURDIR)/$(DEB_STAGE) PREFIX=/usr
endif
	rm -rf $(DEB_OUT)
	scripts/build-deb.sh --stage $(DEB_STAGE) --arch $(ARCH) --out $(DEB_OUT) --version $(DEB_VERSION) \
		--revision $(DEB_REVISION) --sysroot $(DEB_SYSROOT) --suite $(DEB_SUITE)

check-deb: deb ## Build the packages for ARCH, lintian them, install them in a clean Debian chroot and run the daemon there
	scripts/check-deb.sh --debs $(DEB_OUT) --arch $(ARCH) --suite $(DEB_SUITE) --version $(DEB_VERSION)-$(DEB_REVISION) \
		--cache $(DEB_CACHE) --mirror $(DEB_MIRROR)
