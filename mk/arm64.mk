# SPDX-License-Identifier: Apache-2.0
# snapback for aarch64, the boxes' CPU (scripts/test-arm64.sh). The daemon, the CLI and the tests are
# cross-compiled at native speed with Debian sid's Swift 6.2 (the tree of `make check-swift62`) against
# an arm64 Debian sid tree (ARM64_ROOT, made once by mmdebstrap and remade when its package list
# changes); libsnapback and the mpv plugin with the Swift toolchain's clang. `make cross-arm64
# DESTDIR=DIR` installs them into DIR as `make install` and `make install-mpv-plugin` lay them out (PREFIX,
# SYSCONFDIR as there; `make deb ARCH=arm64` packages that tree);
# `make test-arm64` runs the tests on aarch64 under qemu-user in the arm64 tree. Not in `make test`:
# docs/development.md says how long each takes.
ARM64_ROOT ?= /var/cache/snapback/arm64-sid
# The host's side: the tree maker, the emulator (registered with binfmt_misc), aarch64 ar and strip.
ARM64_APT_PACKAGES := mmdebstrap qemu-user-static binfmt-support binutils-aarch64-linux-gnu

.PHONY: deps-arm64 cross-arm64 test-arm64

deps-arm64:
	@missing=""; for p in $(ARM64_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

cross-arm64: deps-arm64 ## Cross-build snapback for aarch64 and install it into DESTDIR (as make install lays it out)
	ARM64_ROOT=$(ARM64_ROOT) SWIFT62_ROOT=$(SWIFT62_ROOT) PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) \
		scripts/test-arm64.sh cross $(CURDIR) $(DESTDIR)

test-arm64: deps-arm64 ## Cross-build for aarch64 and run the tests there under qemu (trees made once under ARM64_ROOT, SWIFT62_ROOT)
	ARM64_ROOT=$(ARM64_ROOT) SWIFT62_ROOT=$(SWIFT62_ROOT) scripts/test-arm64.sh test $(CURDIR)
