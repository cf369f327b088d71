#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails when a committed source file (code, build files, units, configuration, man pages) has no
# `SPDX-License-Identifier: Apache-2.0` line among its first three: what LICENSE grants is said in
# every file, including those the generators write (scripts/gen-proto.sh, scripts/gen-wire.py).
# Data (fuzz corpora, profiles, package lists) and Markdown are not sources.
set -eu
cd "$(dirname "$0")/.."
missing=$(git ls-files -- '*.swift' '*.c' '*.h' '*.proto' '*.py' '*.sh' '*.mk' '*.js' '*.modulemap' \
    '*.conf' '*.service' '*.socket' '*.sysusers' '*.pc.in' '*.[158]' Makefile .ci/run |
    while IFS= read -r f; do
        [ -f "$f" ] || continue
        head -n 3 -- "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || echo "$f"
    done)
if [ -n "$missing" ]; then
    echo "error: these sources have no 'SPDX-License-Identifier: Apache-2.0' line in their first three:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    exit 1
fi
echo "every source names its licence (SPDX-License-Identifier: Apache-2.0)"
