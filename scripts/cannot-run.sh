#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a target does when it cannot do what its name says (its packages could not be installed, it is
# not root, ...):
#
#   scripts/cannot-run.sh TARGET WHY...
#
# prints TARGET and WHY, and fails (exit 1). Only an optional part of `make test` (the make test target
# exports IN_MAKE_TEST=1) is skipped instead (exit 0, SKIPPED), and not under CI=true: a suite of `make
# test` that cannot run fails CI. A target run by name always fails.
set -eu
target=${1:?usage: cannot-run.sh TARGET WHY...}
shift
if [ "${IN_MAKE_TEST:-}" = 1 ] && [ "${CI:-}" != true ]; then
    echo "$target: SKIPPED: $* (a part of make test; under CI=true this fails)" >&2
    exit 0
fi
echo "$target: FAILED: $*" >&2
exit 1
