# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""python3 -m testbed: the testbed's command line (testbed/cli.py)."""
import sys

from .cli import main

sys.exit(main())
