#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The VM checks that need one boot of the default kernel and no scenario
run: trace_check.py (the tracer's measured sojourn) and pacing_check.py
(the sender's departure time kept), one after the other, each into OUT.
Exit status: 0 when both wrote their results, else 1 (each one's own
errors on stderr).

  sender_checks.py OUT_DIR
"""
import sys
import traceback

import pacing_check
import trace_check


def main():
    rc = 0
    for check in (trace_check, pacing_check):
        try:
            rc |= check.main() or 0
        except Exception:                   # the other check still runs
            traceback.print_exc()
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
