# SPDX-License-Identifier: GPL-2.0-only
"""tswap's tools in Python: tswap-sweep's stages, one layer a subpackage.

The layers import one way, each only from the ones after it::

    cli -> plan -> executor -> results -> stats -> report

and all of them from ``jqjson`` (the JSON text the documents on disk have
always had, as jq 1.6 printed it). Frozen dataclasses pass between the
stages; no module keeps mutable state. docs/design.md, "The sweep", shows
what each layer owns.
"""
