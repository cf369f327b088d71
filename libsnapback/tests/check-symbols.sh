#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-symbols.sh LIBRARY.so HEADER... — the shared library exports exactly the functions its public
# headers declare (SNAPBACK_API), all named snapback_ followed by a letter: the protobuf-c code compiled
# into it (snapback__v1__...) and every internal helper stay hidden. Also checks the soname.
set -eu
lib=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-symbols: FAIL $*" >&2; exit 1; }

# Defined dynamic symbols, without the version node (an absolute symbol named after the version).
nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"
sed -n 's/^SNAPBACK_API [^(]*[ *]\(snapback_[a-z_0-9]*\)(.*/\1/p' "$@" | sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "no SNAPBACK_API declarations found in $*"
bad=$(grep -v '^snapback_[a-z]' "$tmp/exported" || true)
[ -z "$bad" ] || fail "exported symbols outside the snapback_ API: $bad"
diff -u "$tmp/declared" "$tmp/exported" || fail "the exported symbols differ from the header's SNAPBACK_API functions"
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libsnapback.so.0" ] || fail "soname is '$soname', expected libsnapback.so.0"
echo "check-symbols: ok   $(wc -l <"$tmp/exported" | tr -d ' ') symbols exported, all declared in the header; soname $soname"
