# SPDX-License-Identifier: GPL-2.0-only
"""report.md's first sections: the pick (report_pick), the header and
best-settings table (report_head) and "What was measured" (meta_report).

Each returns the section's lines (a line may hold newlines); docs/sweep.md
"Outputs" and "How the pick is made" describe them."""

from __future__ import annotations

from typing import Any, Optional

from ..jqjson import text, truthy
from ..stats.pick import none_why
from .fmt import alt, g, gib, p1, sz, v

Doc = dict[str, Any]

NO_TRUSTED = ('**No trustworthy pick**: every point with a result is flagged (Warnings: above '
              'the link or the ceiling, failed, CV or not steady); best-aio.json has no aio block and the '
              'sweep exits 4. Rerun on an idle machine, with more repeats (--repeat) or a longer '
              'runtime.')
NO_TRUSTED_LIBAIO = ('**No trustworthy libaio pick**: every libaio point with a result is '
                     'flagged (Warnings); best-aio.json has no aio block and the sweep exits 4.')
NO_PICK = '**No pick**: no libaio point with a result, so no DeepSpeed aio config.'
# a run with read points and no drop_caches (tswap.executor.point before_read)
PAGE_CACHE = ("- page cache: not dropped; sync before every read point (reads are O_DIRECT, and fio "
              "invalidates the target's cached pages before each job: invalidate=1)")


def _o(x: Any) -> Doc:
    return x if isinstance(x, dict) else {}


def cfgtext(p: Doc) -> str:
    """A point's settings in words."""
    return ('%s, block %s, queue depth %s, %s submit, %s window, %s thread(s), tensor %s' % (
        text(p.get('backend')), sz(p.get('block')), text(p.get('qd')), text(p.get('submit')),
        text(p.get('window')), text(p.get('threads')), sz(p.get('tensor'))))


def ival(p: Doc) -> str:
    """A point's median GB/s and min-max interval over repeats."""
    return '%s GB/s (min-max %s-%s)' % (g(p.get('gbs')), g(p.get('lo')), g(p.get('hi')))


def budget_caution(budget: Any) -> Optional[str]:
    """The caution of a budget run whose final round ran shorter than
    fio's steady-state window (tswap.plan.budget_start.plan_at): its pick ranks
    each point's first seconds; None otherwise."""
    if budget is None:
        return None
    b = _o(budget)
    rounds = b.get('rounds')
    last = _o(rounds[-1]) if isinstance(rounds, list) and rounds else {}
    w = b.get('steady_window_s')
    if w is None or not alt(last.get('runtime'), 0) < w:
        return None
    more = ('; --budget %s gives the final round the window' % text(b['steady_budget_s'])
            if truthy(b.get('steady_budget_s')) else '')
    return ('- caution: the budget\'s final round ran %s s per run, fixed: shorter than fio\'s '
            'steady-state window (%s s), so the pick ranks each point\'s first seconds (such as '
            'a write cache\'s burst) and no point could be flagged not steady%s' % (
                text(last.get('runtime')), text(w), more))


CEILING_ADVICE = ('measure it again with --precondition (the first writes into a new file '
                  'are slow), a longer --runtime, or on a block device')
LINK_CEILING_ADVICE = ('measure it on a block device, or with a target larger than memory '
                       '(--size)')


def ceiling_cautions(agg: Doc) -> list[str]:
    """A sentence per ceiling that does not repeat (aggregate.json's
    ceiling_unrepeated: tswap.stats.aggregate.ceiling_unrepeated): its
    repeats, why, that it flags no point and what to do; then one per
    ceiling above the PCIe link (ceiling_above_link: tswap.stats.link),
    with its GB/s and the link's; [] when every ceiling can be judged
    against."""
    out = []
    for k, c in sorted(_o(agg.get('ceiling_unrepeated')).items()):
        c = _o(c)
        why = []
        if 'cv' in (c.get('why') or []):
            why.append('CV %s%% over %s repeats (%s-%s GB/s) > %s%%' % (
                p1(alt(c.get('cv'), 0) * 100), text(c.get('ok_runs')), g(c.get('lo')), g(c.get('hi')),
                p1(alt(c.get('cv_limit'), 0) * 100)))
        if 'not steady' in (c.get('why') or []):
            why.append("fio's steady state not attained")
        out.append('the %s ceiling does not repeat (%s): its median, %s GB/s, is not the device\'s '
                   'rate, so no point is flagged above it; %s' % (
                       k, '; '.join(why), g(c.get('gbs')), CEILING_ADVICE))
    lk = _o(agg.get('link'))
    for k, c in sorted(_o(agg.get('ceiling_above_link')).items()):
        c = _o(c)
        out.append('the %s ceiling, %s GB/s, is above what the PCIe link carries, %s GB/s (x%s at '
                   '%s GT/s, %s): a cache on the host served it, so it is not the device\'s rate and '
                   'no point is flagged above it; %s' % (
                       k, g(c.get('gbs')), g(c.get('link_gbs')), text(lk.get('width')),
                       text(lk.get('speed_gts')), text(lk.get('encoding')), LINK_CEILING_ADVICE))
    return out


def report_pick(agg: Doc) -> list[str]:
    """report.md's first lines: the pick best-aio.json comes from, its
    interval and verdict (tswap.stats.pick), the caution of a short budget
    round, then the best read and write, or why a direction has none
    (none_why); or that no point is trustworthy."""
    b = _o(agg.get('best'))
    trust = _o(agg.get('trust'))
    src = b.get('aio_source')
    if truthy(src):
        out = ['**Pick** (best-aio.json): %s; %s: %s' % (cfgtext(src), text(src.get('why')), ival(src)),
               '- verdict: %s' % text(src.get('verdict'))]
    elif alt(trust.get('trusted'), 0) == 0 and alt(trust.get('flagged'), 0) > 0:
        out = [NO_TRUSTED]
    elif alt(trust.get('libaio_with_result'), 0) > 0:
        out = [NO_TRUSTED_LIBAIO]
    else:
        out = [NO_PICK]
    c = budget_caution(agg.get('budget'))
    if c is not None:
        out.append(c)
    for d in ('read', 'write'):
        if truthy(b.get(d)):
            out.append('- best %s: %s: %s' % (d, ival(b[d]), text(b[d].get('verdict'))))
        else:
            why = none_why(agg, d)
            if why is not None:
                out.append('- best %s: none: %s' % (d, why))
    out.append('')
    return out


def _pc(p: Doc) -> str:
    return p1(p.get('pct_ceiling')) + (' (above the ceiling: see Warnings)' if truthy(p.get('above_ceiling')) else '')


def _row(p: Doc) -> str:
    return '| %s | %s | %s | %s | %s | %s | %s | %s |' % (
        text(p.get('backend')), sz(p.get('tensor')), sz(p.get('block')), text(p.get('qd')),
        text(p.get('submit')), text(p.get('window')), text(p.get('threads')), text(p.get('iodepth')))


def _n(x: Any) -> int:
    return len(x) if isinstance(x, (list, dict, str)) else 0


def report_head(cfg: Doc, agg: Doc, notes: str, dropped: bool) -> list[str]:
    """report.md's header and best-settings table; cfg: sweep.json (a
    budget run's with its final round's runtime, ramp and repeat: md.
    head_cfg); notes: notes.txt's lines, sorted and unique ("" none);
    dropped: the page cache was dropped before read points (RUN/cache-
    dropped: a run as root before issue 36); else a run with read points
    says what kept them off the page cache (PAGE_CACHE)."""
    best = _o(agg.get('best'))
    ceil = _o(agg.get('ceiling'))
    t = text
    desc = cfg.get('grid_description')
    out = ['- host: `%s`, kernel %s, %s, run started %s' % (
               t(cfg.get('host')), t(cfg.get('kernel')), t(cfg.get('fio_version')), t(cfg.get('created'))),
           '- target: `%s` (%s), %s used' % (t(cfg.get('target')), t(cfg.get('target_kind')), t(cfg.get('size'))),
           '- grid: **%s**%s, %s points x %s repeat(s), ' % (
               t(cfg.get('grid')), ' (%s)' % t(desc) if desc != '' else '', _n(agg.get('points')),
               t(cfg.get('repeat')))
           + ('%s per point' % t(cfg.get('io_size')) if cfg.get('io_size') != ''
              else '%s s per point after a %s s ramp' % (t(cfg.get('runtime')), t(cfg.get('ramp')))),
           '- GB/s is 10^9 bytes/s, the median over repeats; op/s counts tensor-swap operations '
           '(fio IOPS at bs = tensor size)']
    jobs = alt(cfg.get('ceiling_jobs'), 1)
    split = (' in 1 job and split over %s jobs (as many as the most parallel point has threads), '
             'the faster' % t(cfg.get('ceiling_jobs')) if jobs > 1 else '')
    out.append('- device ceiling (fio\'s own libaio engine, bs=%s, iodepth=%s%s: as many bytes in '
               'flight as the deepest point, same target): ' % (
                   t(cfg.get('ceiling_bs')), t(cfg.get('ceiling_qd')), split)
               + ('read %s GB/s, write %s GB/s' % (g(ceil.get('read')), g(ceil.get('write')))
                  if truthy(cfg.get('ceiling')) else 'not measured (--no-ceiling)'))
    out += ['- caution: ' + c for c in ceiling_cautions(agg)]
    if dropped:
        out.append('- page cache: dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every read point')
    elif any(isinstance(p, dict) and p.get('rw') == 'read' for p in agg.get('points') or ()):
        out.append(PAGE_CACHE)
    if notes != '':
        out.append('\n'.join('- note: ' + n for n in notes.split('\n')))
    out += ['', '## Best settings', '',
            '| | GB/s | % of ceiling | backend | tensor | block | queue depth | submit | window | threads | ops queued |',
            '|---|---|---|---|---|---|---|---|---|---|---|']
    for d in ('read', 'write'):
        p = best.get(d)
        out.append('| best %s | %s | %s %s' % (d, g(p.get('gbs')), _pc(p), _row(p)) if truthy(p) else
                   '| best %s | no trustworthy %s point (none succeeded, or all are flagged: '
                   'Warnings) | | | | | | | | | |' % (d, d))
    c = best.get('combined')
    out.append('| best combined | %s = %s read + %s write | - %s' % (
        g(c.get('sum_gbs')), g(c.get('read_gbs')), g(c.get('write_gbs')), _row(c)) if truthy(c) else
        '| best combined | needs a read and a write of the same settings | | | | | | | | | |')
    out += ['', 'Best combined ranks settings by the **sum** of read and write GB/s, as DeepSpeed\'s '
            'ds_nvme_tune does; a job that mostly reads (inference weight streaming) should take '
            'the best read instead.', '']
    return out


def meta_report(m: Doc) -> list[str]:
    """report.md's "What was measured" from meta.json (meta-collect.sh)."""
    t = text
    tg, dev, q, pcie = _o(m.get('target')), _o(m.get('device')), m.get('queue'), _o(m.get('pcie'))
    numa, nvme, host, ver = _o(m.get('numa')), _o(m.get('nvme')), _o(m.get('host')), _o(m.get('versions'))
    out = ['## What was measured', '', '| | |', '|---|---|',
           '| target | `%s` (%s) |' % (t(tg.get('path')), t(tg.get('kind')))]
    fs = tg.get('filesystem')
    if truthy(fs):
        out.append('| filesystem | %s |' % t(fs.get('note')) if truthy(fs.get('note')) else
                   '| filesystem | %s on `%s`, mounted at `%s` (%s) |' % (
                       t(fs.get('type')), t(fs.get('source')), t(fs.get('mountpoint')), t(fs.get('options'))))
    if truthy(dev.get('note')):
        out.append('| device | %s |' % t(dev['note']))
    else:
        out += ['| device | `%s` (%s of %s): model %s, firmware %s, serial sha256 %s, %s, %s, transport %s |' % (
                    t(dev.get('path')), t(dev.get('type')), t(dev.get('disk')), v(dev.get('model')),
                    v(dev.get('firmware')), v(dev.get('serial_sha256_12')), gib(dev.get('capacity_bytes')),
                    'rotational' if truthy(dev.get('rotational')) else 'non-rotational', v(dev.get('transport'))),
                '| block sizes | logical %s B, physical %s B |' % (
                    t(dev.get('logical_block_size')), t(dev.get('physical_block_size')))]
    if truthy(q):
        out.append('| queue | scheduler %s, nr_requests %s, max_sectors_kb %s (hw %s), io_poll %s, nvme poll_queues %s |' % (
            v(q.get('scheduler')), v(q.get('nr_requests')), v(q.get('max_sectors_kb')),
            v(q.get('max_hw_sectors_kb')), v(q.get('io_poll')), v(q.get('nvme_poll_queues'))))
    if truthy(pcie.get('current_link_speed')):
        out.append('| PCIe | %s: %s x%s of max %s x%s%s |' % (
            t(pcie.get('address')), t(pcie['current_link_speed']), t(pcie.get('current_link_width')),
            t(pcie.get('max_link_speed')), t(pcie.get('max_link_width')),
            ' **(below the maximum)**' if truthy(pcie.get('downgraded')) else ''))
    else:
        out.append('| PCIe | %s |' % t(pcie.get('note')))
    out.append('| NUMA | device node %s%s; CPUs allowed %s; nodes online %s |' % (
        v(numa.get('device_node')), ' (%s)' % t(numa['note']) if truthy(numa.get('note')) else '',
        v(numa.get('cpus_allowed')), v(numa.get('online_nodes'))))
    out.append('| NVMe | %s |' % t(nvme['note']) if truthy(nvme.get('note')) else
               '| NVMe | %s firmware %s, MDTS %s |' % (t(nvme.get('model')), t(nvme.get('firmware')), v(nvme.get('mdts'))))
    out += ['| host | `%s`, kernel %s, %s x %s CPUs, %s memory, fs.aio-max-nr %s, kernel.io_uring_disabled %s |' % (
                t(host.get('name')), t(host.get('kernel')), v(host.get('cpu_model')), v(host.get('cpus')),
                gib(host.get('memory_bytes')), v(host.get('fs_aio_max_nr')), v(host.get('kernel_io_uring_disabled'))),
            '| versions | tswap %s, %s, engine `%s` |' % (t(ver.get('tswap')), v(ver.get('fio')), v(ver.get('engine'))),
            '', 'All of it is in meta.json (also sweep.json and aggregate.json, key `meta`).', '']
    return out
