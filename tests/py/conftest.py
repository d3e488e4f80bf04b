# SPDX-License-Identifier: GPL-2.0-only
"""pytest: the sweep's Python package from this checkout (sweep/tswap)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'sweep'))
