# SPDX-License-Identifier: GPL-2.0-only
"""tswap.results.meta: meta.json from lib/meta-collect.sh's lines
(docs/sweep.md "Outputs", meta.json)."""
import json

from tswap.results.meta import kv_lines, meta, num


def test_kv_lines_as_bash_read_them():
    assert kv_lines('tswap-meta\t1\nk\tv\tw\n\tlead\tx\t\nlast\tno newline') == \
        {'tswap-meta': '1', 'k': 'v\tw', 'lead': 'x'}
    assert kv_lines('k\tv\n') is None


def test_num_as_jq_tonumber():
    assert num('12') == 12 and num(' 012 ') == 12 and num('1e3') == 1000
    assert num('') is None and num('x') is None and num('1_0') is None and num('nan') is None
    assert num('NaN') != num('NaN')     # jq reads NaN, and prints it null


def test_file_on_a_virtio_disk():
    blk = {'blockdevices': [{'kname': 'vda', 'path': '/dev/vda', 'type': 'disk', 'model': None,
                             'rev': None, 'size': 1, 'sched': 'mq-deadline', 'rq-size': 256}]}
    m = {'tswap-meta': '1', 'kind': 'file', 'blk': json.dumps(blk),
         'fs': '{"filesystems": [{"target": "/", "source": "/dev/vda", "fstype": "ext4", "options": "rw"}]}',
         'pci.address': '0000:00:02.0', 'pci.numa_node': '-1', 'queue.max_sectors_kb': '4096'}
    d = meta('/x/t.swap', '', '0.1', m)
    assert d['device']['disk'] == 'vda' and d['queue']['max_sectors_kb'] == 4096
    assert d['pcie']['note'].startswith('0000:00:02.0 has no PCIe link attributes')
    assert d['numa'] == {'device_node': None, 'cpus_allowed': None, 'online_nodes': None,
                         'note': 'the device has no NUMA node (single node, or no PCI device)'}
    assert d['nvme'] == {'note': 'not an NVMe device'}
    assert d['versions'] == {'tswap': '0.1', 'fio': None, 'engine': None, 'nvme_cli': None}


def test_nvme_link_downgraded_and_trimmed_model():
    blk = {'blockdevices': [{'kname': 'nvme0n1', 'type': 'disk', 'model': 'M  '}]}
    nvme = {'mn': '  Samsung  ', 'fr': ' 1B ', 'vid': 1}
    m = {'tswap-meta': '1', 'kind': 'block', 'blk': json.dumps(blk), 'nvme': json.dumps(nvme),
         'pci.address': 'a', 'pci.current_link_speed': '8.0 GT/s PCIe', 'pci.max_link_speed': '16.0 GT/s PCIe',
         'pci.current_link_width': '4', 'pci.max_link_width': '4', 'pci.numa_node': '0'}
    d = meta('/dev/nvme0n1', '', '0.1', m)
    assert d['device']['model'] == 'Samsung' and d['nvme']['firmware'] == '1B'
    assert d['pcie']['downgraded'] is True and d['numa']['device_node'] == 0
    assert d['target']['filesystem'] is None
    m.pop('nvme')
    assert meta('/dev/nvme0n1', '', '', m)['nvme'] == {'note': 'nvme-cli is not installed (nvme id-ctrl)'}



def test_into_dir_writes_meta_json_and_sweep_json_meta(tmp_path):
    # meta.sh write_meta: meta.json as jq printed meta's document, and
    # sweep.json as jq --slurpfile m meta.json '.meta = $m[0]' wrote it
    # (a key replaced in place, else added last; numbers as jq prints them)
    from tswap import jqjson
    from tswap.cli.meta import write_into
    kv = 'tswap-meta\t1\nkind\tfile\nmemtotal\t1024\nkernel\t6.1\n'

    def into():
        return write_into(str(tmp_path), '/x/t.swap', 'e.so', '0.1', kv)
    printed = jqjson.dumps(meta('/x/t.swap', 'e.so', '0.1', kv_lines(kv))) + '\n'
    (tmp_path / 'sweep.json').write_text('{\n  "repeat": 3,\n  "cv": 1.10,\n  "meta": null,\n  "z": []\n}\n')
    assert into() is True
    assert (tmp_path / 'meta.json').read_text() == printed
    indented = '\n'.join('  ' + x for x in printed.rstrip('\n').split('\n')).lstrip()
    assert (tmp_path / 'sweep.json').read_text() == \
        '{\n  "repeat": 3,\n  "cv": 1.1,\n  "meta": %s,\n  "z": []\n}\n' % indented
    (tmp_path / 'sweep.json').write_text('{"repeat": 3}')
    into()
    assert (tmp_path / 'sweep.json').read_text() == '{\n  "repeat": 3,\n  "meta": %s\n}\n' % indented
    assert sorted(p.name for p in tmp_path.iterdir()) == ['meta.json', 'sweep.json']
    # not the collector's output: nothing written
    (tmp_path / 'meta.json').unlink()
    assert write_into(str(tmp_path), '/x/t.swap', 'e.so', '0.1', 'kind\tfile\n') is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ['sweep.json']
