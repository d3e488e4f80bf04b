# SPDX-License-Identifier: GPL-2.0-only
"""The statistics layer: per-point medians and intervals over repeats, the
trust flags, the ceiling, and the pick (docs/sweep.md "How the pick is
made"). Pure functions over the result documents; no I/O."""
