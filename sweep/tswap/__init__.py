# SPDX-License-Identifier: GPL-2.0-only
"""tswap's tools in Python: tswap-sweep's stages, one layer a subpackage.

A run flows through the layers in this order::

    cli -> plan -> executor -> results -> stats -> report

cli, the command line, drives the others and may import any of them;
every other layer imports only from the layers before it (the documents
and types it consumes: report from stats, stats from results), never
from one after it; all may import ``jqjson`` (the JSON text the documents
on disk have always had, as jq 1.6 printed it). Frozen dataclasses pass
between the stages; no module keeps mutable state. tests/py/test_layers.py
holds the package to this; docs/design.md, "The sweep", shows what each
layer owns.
"""
