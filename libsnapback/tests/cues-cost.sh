#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The break-source readers read a text in time linear in its items (make test-c): cues_cost under
# callgrind, each case at n = 1,000 and 4,000 items. The instructions the 3,000 items more cost, per
# item, must stay within RATIO of what an item costs at 1,000 (a reader that compares each item with
# every one before it: 2.6 to 3.7 times), and within the case's budget of instructions per item
# (twice what the reader costs on x86-64 with Debian 12's expat and glibc: room for their updates, not
# for a reader that does more per item). Callgrind's counts do not depend on the machine's load.
# Usage: cues-cost.sh CUES_COST_BINARY
set -eu
bin=$1
RATIO_PERCENT=125
command -v valgrind >/dev/null || { echo "cues-cost: valgrind is not installed (make deps)" >&2; exit 1; }
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
fail=0
for case in hls:52000 dash:64000 vmap:64000; do
    name=${case%%:*} budget=${case#*:}
    "$bin" "$name" 1000 >/dev/null || { echo "cues-cost: $name: the reader refused the text" >&2; exit 1; }
    small=$(instructions "$name" 1000)
    large=$(instructions "$name" 4000)
    [ -n "$small" ] && [ -n "$large" ] || { echo "cues-cost: $name: no count from callgrind" >&2; exit 1; }
    per=$((small / 1000))
    added=$(((large - small) / 3000))
    if [ $((added * 100)) -gt $((per * RATIO_PERCENT)) ] || [ "$added" -gt "$budget" ]; then
        echo "cues-cost: FAIL $name: an item costs $per instructions in a text of 1,000, $added more each of the next 3,000 (at most ${RATIO_PERCENT}% and $budget)" >&2
        fail=1
    else
        echo "cues-cost: ok $name: $per instructions an item at 1,000 items, $added each of the next 3,000 (at most ${RATIO_PERCENT}% and $budget)"
    fi
done
exit $fail
