# SPDX-License-Identifier: Apache-2.0
"""The named checks the sync scripts run: a PASS or FAIL line each, the failures kept for the summary."""

import time

FAILURES = []


def check(name, fn, timed=False):
    """Runs `fn`; PASS with what it returned (and how long it took, when `timed`), or FAIL with why."""
    started = time.monotonic()
    try:
        detail = fn()
    except Exception as e:  # noqa: BLE001 - any exception is a failed check
        FAILURES.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        return
    took = f" ({time.monotonic() - started:.1f} s)" if timed else ""
    print(f"PASS {name}{': ' + detail if detail else ''}{took}", flush=True)
