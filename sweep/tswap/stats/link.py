# SPDX-License-Identifier: GPL-2.0-only
"""The PCIe link as a limit (docs/sweep.md "How the pick is made", the
flags; issue 38, item 4): no drive moves more data than its link carries,
so a point above the link's rate was served by a cache on the host (the
page cache), not the drive (DeepSpeed issue #998: 22-24 GB/s read on a
PCIe 3.1 x4 drive, whose link carries 3.94 GB/s).

The link's facts are meta.json's pcie (tswap.results.meta, from sysfs
current_link_speed and current_link_width, as tswap-check reads them).
"""

from __future__ import annotations

from typing import Any, Optional

from .sysfs import gts


def lane_gbs(speed_gts: float) -> tuple[float, str]:
    """(GB/s one lane carries after line encoding, the encoding) at
    speed_gts GT/s (one bit per transfer per lane): 2.5 and 5 GT/s
    (PCIe 1.x, 2.0) use 8b/10b; 8 GT/s and up (PCIe 3.0 to 5.0)
    128b/130b (PCIe Base Spec 3.0, 4.2.2). PCIe 6.0's 64 GT/s FLIT mode
    carries less than 128b/130b would (242 of 256 bytes a flit), so the
    figure there is an upper bound, which is what a limit needs."""
    if speed_gts <= 5:
        return speed_gts * 8 / 10 / 8, '8b/10b'
    return speed_gts * 128 / 130 / 8, '128b/130b'


def link_rate(meta: Any) -> Optional[dict[str, Any]]:
    """meta.json's PCIe link as a limit: {gbs (GB/s = 1e9 B/s, lanes x
    lane_gbs), width (lanes), speed_gts, encoding}; None when meta has no
    link (not PCIe, a virtio disk, a file on tmpfs) or its facts are not
    a speed and a width."""
    pcie = meta.get('pcie') if isinstance(meta, dict) else None
    if not isinstance(pcie, dict):
        return None
    s = pcie.get('current_link_speed')
    w = pcie.get('current_link_width')
    if not isinstance(s, str) or isinstance(w, bool) or not isinstance(w, (int, float)) or w < 1:
        return None
    g = gts(s, 'current_link_speed').value
    if g is None:
        return None
    per, enc = lane_gbs(g)
    return {'gbs': w * per, 'width': w, 'speed_gts': g, 'encoding': enc}


def fleet_link(metas: list[Any]) -> Optional[dict[str, Any]]:
    """The limit over several hosts' meta.json (a fleet's): the fastest
    link any of them has, so that a fleet-wide median above it is above
    every host's link (each host's own aggregate judges its points
    against its own link); None when none has a link."""
    links = [x for x in (link_rate(m) for m in metas) if x is not None]
    return max(links, key=lambda x: x['gbs']) if links else None


def ceiling_above_link(c: Optional[float], point: Any, link: Optional[dict[str, Any]]
                       ) -> Optional[dict[str, Any]]:
    """Why a device ceiling (median c GB/s of ceiling point `point`) is
    not the device's rate: it is above the link's (link_rate), so a cache
    on the host served it; None when it is not, or c or the link is not
    known. Such a ceiling flags no point "above ceiling", as one that
    does not repeat (tswap.stats.aggregate.ceiling_unrepeated): a
    point 10% below it may still be above the drive. The answer is what
    aggregate.json's ceiling_above_link holds per key: point, gbs (the
    ceiling's median) and link_gbs (GB/s)."""
    if c is None or link is None or not c > link['gbs']:
        return None
    return {'point': point, 'gbs': c, 'link_gbs': link['gbs']}
