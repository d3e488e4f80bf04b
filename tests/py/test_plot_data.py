# SPDX-License-Identifier: GPL-2.0-only
"""tswap.results.plot_data: the plots' data from aggregate.json (docs/sweep.md
"Outputs", plots/; tswap.report.plots draws them)."""
from tswap.results.plot_data import beats, heat_lines, latency_rows, records, threads_lines


def pt(rw, block, qd, gbs, p99=1000.0, trusted=True, threads=1, **kw):
    p = {'point': '%s-libaio-b%d-q%d-p%d' % (rw, block, qd, threads), 'rw': rw, 'block': block, 'qd': qd,
         'window': 'overlap', 'submit': 'block', 'threads': threads, 'gbs': gbs, 'clat_p99_us': p99,
         'trusted': trusted}
    p.update(kw)
    return p


def test_pareto_beats():
    a = {'gbs': 2.0, 'p99': 1.0}
    assert beats(a, {'gbs': 1.0, 'p99': 1.0}) and beats(a, {'gbs': 2.0, 'p99': 2.0})
    assert not beats(a, a) and not beats(a, {'gbs': 3.0, 'p99': 2.0})


def test_latency_classes_and_labels():
    agg = {'points': [pt('read', 1, 8, 2.0, 1000.0), pt('read', 1, 32, 1.0, 2000.0),
                      pt('read', 4, 8, 1.5, 500.0), pt('read', 4, 32, 3.0, 9000.0, trusted=False)],
           'best': {'read': {'point': 'read-libaio-b1-q8-p1', 'rw': 'read'}}}
    rows = {r['label']: r['class'] for r in latency_rows(agg, 'read')}
    # the shared parts (read, libaio, p1) are not in the labels
    assert rows == {'b1-q8': 'front', 'b1-q32': 'beaten', 'b4-q8': 'front', 'b4-q32': 'flagged'}


def test_heat_keeps_the_best_of_a_cell_and_dark_labels():
    pts = [pt('read', 1, 8, 1.0), pt('read', 1, 8, 2.0, threads=2), pt('read', 4, 8, 0.5)]
    # cells (block index, qd index): white labels below 0.55 of the map's best
    assert heat_lines(pts, 'read', 'overlap', 'block') == ['0 0 2 0', '1 0 0.5 16777215']


def test_threads_best_per_count():
    pts = [pt('read', 1, 8, 1.0), pt('write', 1, 8, 0.5, threads=2), pt('read', 1, 8, None, threads=4)]
    assert threads_lines(pts) == ['1 1 -', '2 - 0.5']


def test_records_and_bw_plots():
    agg = {'points': [pt('read', 1, 8, 2.0), pt('write', 1, 8, 1.0, drops=True, drop_pct=24.5)],
           'best': {'read': {'point': 'read-libaio-b1-q8-p1', 'rw': 'read'}, 'write': None}}
    heads = ['\t'.join(h) for h, _ in records(agg)]
    assert heads == ['heat\tread\toverlap\tblock\t1\t8', 'heat\twrite\toverlap\tblock\t1\t8', 'threads',
                     'latency\tread', 'latency\twrite', 'bw\tread-libaio-b1-q8-p1\tbest read',
                     'bw\twrite-libaio-b1-q8-p1\tdrops 25% during the run']
