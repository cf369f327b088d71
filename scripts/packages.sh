#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian packages of mk/packages.list that go to one place:
#
#   scripts/packages.sh PLACE [SEPARATOR]
#
# PLACE is one of the list's places, or host (make deps: test and host); SEPARATOR joins them (default
# a space; mmdebstrap takes a comma). A test place (swift62, arm64) gets the test packages too.
set -eu
place=${1:?usage: packages.sh PLACE [SEPARATOR]}
separator=${2:- }
list="$(dirname "$0")/../mk/packages.list"
case $place in
    host | swift62 | arm64) places="test $place" ;;
    *) places=$place ;;
esac
awk -v places="$places" -v sep="$separator" '
    BEGIN { n = split(places, want, " ") }
    /^[ \t]*(#|$)/ { next }
    {
        split($2, where, ",")
        for (i in where) for (j = 1; j <= n; j++) if (where[i] == want[j]) { out = out (count++ ? sep : "") $1; next }
    }
    END { if (!count) { print "packages.sh: no package goes to " places > "/dev/stderr"; exit 1 } print out }
' "$list"
