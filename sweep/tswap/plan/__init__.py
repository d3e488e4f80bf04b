# SPDX-License-Identifier: GPL-2.0-only
"""The plan layer: the points a run measures and, with --budget, the
rounds it measures them in (docs/sweep.md "Budget")."""
