#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make fuzz-merge: folds what `make fuzz` found into the corpus kept in the repository, minimised.
#
#   fuzz-merge.sh FUZZER REPO_CORPUS WORK_CORPUS
#
# The named files of REPO_CORPUS (the seeds, seed-N, which tests regenerate and compare, and the inputs
# that once failed, named for their bug) stay as they are. Of every other input — REPO_CORPUS's (libFuzzer
# names them by their SHA-1) and WORK_CORPUS's — only the fewest that reach every edge the whole set
# reaches are kept (libFuzzer's -set_cover_merge=1 on edges alone, -use_counters=0: hit counts would keep
# five times the files for the same code reached, and `make test` replays each); the rest of
# REPO_CORPUS's unnamed files are removed. Prints the corpus before and after.
set -euo pipefail
fuzzer=$1 repo=$2 work=$3
[[ -x $fuzzer ]] || { echo "fuzz-merge: $fuzzer is not built (make fuzz builds it)" >&2; exit 2; }
mkdir -p "$work"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/merged" "$tmp/unnamed"
hashed='^[0-9a-f]{40}$'
for f in "$repo"/*; do
    name=$(basename "$f")
    if [[ $name =~ $hashed ]]; then cp "$f" "$tmp/unnamed/"; else cp "$f" "$tmp/merged/"; fi
done
before=$(ls "$repo" | wc -l)
"$fuzzer" -set_cover_merge=1 -use_counters=0 -max_len=65536 "$tmp/merged" "$tmp/unnamed" "$work" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true
for f in "$repo"/*; do
    [[ $(basename "$f") =~ $hashed ]] && rm -f "$f"
done
for f in "$tmp/merged"/*; do
    [[ $(basename "$f") =~ $hashed ]] && cp "$f" "$repo/"
done
echo "fuzz-merge: $repo: $before files before, $(ls "$repo" | wc -l) after ($(du -sh "$repo" | cut -f1))"
