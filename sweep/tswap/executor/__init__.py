# SPDX-License-Identifier: GPL-2.0-only
"""The executor layer: what runs the points on a host, and the checks it
makes before anything is written (target_rules: the target rules of
docs/sweep.md "Targets: what the sweep writes to"; target_facts: what
they are decided on, read from the kernel and the tools). It imports only
from tswap.plan."""
