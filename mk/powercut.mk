# SPDX-License-Identifier: Apache-2.0
# `make test-powercut`: the power-cut durability test (Tests/clients/python/power_cut.py), the state
# directory on LazyFS, the FUSE filesystem that drops every write not fsynced when told to. Not part of
# `make test` nor CI: LazyFS is no Debian package and its source is not in this repository. LAZYFS is its
# executable: by default the one its own build leaves in LAZYFS_SRC (lazyfs/build/lazyfs, its libpcache
# beside it), else `lazyfs` on PATH. fuse3 brings fusermount3, which unmounts it.
LAZYFS_SRC     ?=
LAZYFS         ?= $(if $(LAZYFS_SRC),$(LAZYFS_SRC)/lazyfs/build/lazyfs,$(shell command -v lazyfs 2>/dev/null))
POWERCUT_CUTS  ?= 24
POWERCUT_APT   := fuse3

.PHONY: test-powercut

test-powercut: deps ## Power-cut durability test: the store on LazyFS, POWERCUT_CUTS cuts (LAZYFS=its executable or LAZYFS_SRC=its built source; not in make test)
	@if [ -z "$(LAZYFS)" ]; then \
		echo "test-powercut: FAILED: LazyFS cannot be installed here: LAZYFS and LAZYFS_SRC are not set and no lazyfs is on PATH." >&2; \
		echo "  LazyFS (dsrhaslab's FUSE filesystem that loses unsynced writes) is no Debian package and is not in this" >&2; \
		echo "  repository: build it from its source as its README says, then run" >&2; \
		echo "  make test-powercut LAZYFS=/path/to/lazyfs   or   make test-powercut LAZYFS_SRC=/path/to/its/source" >&2; \
		exit 2; \
	elif [ ! -x "$(LAZYFS)" ]; then \
		echo "test-powercut: FAILED: no LazyFS: $(LAZYFS) is not an executable$(if $(LAZYFS_SRC), (LAZYFS_SRC's build leaves it there: build LazyFS in $(LAZYFS_SRC) first))." >&2; \
		exit 2; \
	fi
	@$(call apt_install,$(POWERCUT_APT))
	$(MAKE) --no-print-directory release
	$(if $(LAZYFS_SRC),LD_LIBRARY_PATH=$(LAZYFS_SRC)/libs/libpcache/build$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}) \
		python3 Tests/clients/python/power_cut.py --lazyfs "$(LAZYFS)" --snapbackd $(RELEASE_BIN)/snapbackd --cuts $(POWERCUT_CUTS)

