# SPDX-License-Identifier: Apache-2.0
# snapback for aarch64, the boxes' CPU (scripts/test-arm64.sh). The daemon, the CLI and the tests are
# cross-compiled at native speed with Debian sid's Swift 6.2 (the tree of `make check-swift62`); libsnapback
# and the mpv plugin with the Swift toolchain's clang. `make test-arm64` builds against an arm64 Debian sid
# tree (ARM64_ROOT, made once by mmdebstrap and remade when its package list changes) and runs the tests
# there under qemu-user. `make cross-arm64 DESTDIR=DIR` builds for Debian 12, against an arm64 bookworm
# sysroot (ARM64_SYSROOT, made the same way), and installs into DIR as `make install` and `make
# install-mpv-plugin` lay them out (PREFIX, SYSCONFDIR as there; `make deb ARCH=arm64` packages that
# tree). Not in `make test`: docs/development.md says how long each takes. The trees' package lists, and
# the host's tools for them (cross), are mk/packages.list's.
ARM64_ROOT    ?= /var/cache/snapback/arm64-sid
ARM64_SYSROOT ?= /var/cache/snapback/arm64-bookworm

.PHONY: deps-arm64 cross-arm64 test-arm64

deps-arm64:
	@$(call apt_install,$(shell scripts/packages.sh cross),--no-install-recommends)

cross-arm64: deps-arm64 ## Cross-build snapback for aarch64 Debian 12 and install it into DESTDIR (as make install lays it out)
	ARM64_ROOT=$(ARM64_ROOT) ARM64_SYSROOT=$(ARM64_SYSROOT) SWIFT62_ROOT=$(SWIFT62_ROOT) PREFIX=$(PREFIX) \
		SYSCONFDIR=$(SYSCONFDIR) scripts/test-arm64.sh cross $(CURDIR) $(DESTDIR)

test-arm64: deps-arm64 ## Cross-build for aarch64 and run the tests there under qemu (trees made once under ARM64_ROOT, SWIFT62_ROOT)
	ARM64_ROOT=$(ARM64_ROOT) SWIFT62_ROOT=$(SWIFT62_ROOT) scripts/test-arm64.sh test $(CURDIR)
