# SPDX-License-Identifier: Apache-2.0
# The oldest Swift the package supports, 6.2 (Debian sid's swiftlang), beside the 6.3 of every other target.
# `make check-swift62` makes a Debian sid tree with that toolchain, the build's -dev packages and what the
# tests run (mmdebstrap, once, in SWIFT62_ROOT; remade when its package list, mk/packages.list's,
# changes), then in a chroot of it builds the package plainly (no SNAPBACK_PERF lever), builds the tests,
# and runs the timeline, wire, store, CLI and daemon tests, the socket tests against the snapbackd Swift
# 6.2 built. Not in `make test`: on a fresh machine it
# pays for the tree and two builds from nothing, about six and a half minutes on two cores (about a minute
# once cached; docs/development.md).
SWIFT62_ROOT ?= /var/cache/snapback/swift62-sid

.PHONY: check-swift62

check-swift62: ## Build and test with Swift 6.2 (Debian sid's, in a chroot made once under SWIFT62_ROOT)
	@$(call apt_install,$(shell scripts/packages.sh trees),--no-install-recommends)
	SWIFT62_ROOT=$(SWIFT62_ROOT) scripts/check-swift62.sh $(CURDIR)
