# SPDX-License-Identifier: GPL-2.0-only
"""tswap.stats.check, check_rules and sysfs: tswap-check's rules
(docs/sweep.md "Checking a host: tswap-check"; sources as each check
names them), the range-checked values, and tswap.report.check's table and
JUnit."""
import json

from tswap.cli.check_main import dirname, size_to_bytes
from tswap.report.check import cell, esc, junit, table
from tswap.stats import sysfs
from tswap.stats.check import Settings, checks, pieces, settings_for

S = Settings(1048576.0, 8.0, 1.0, 'libaio')
FS = json.dumps({'filesystems': [{'target': '/data', 'source': '/dev/nvme0n1', 'fstype': 'xfs',
                                  'options': 'rw,noatime'}]})
BASE = {'kind': 'file', 'dev': '/dev/nvme0n1', 'disk': 'nvme0n1', 'fs': FS,
        'queue.scheduler': '[none] mq-deadline', 'queue.nr_requests': '1023',
        'queue.max_sectors_kb': '1024', 'queue.max_hw_sectors_kb': '2048',
        'pci.address': '0000:01:00.0', 'pci.current_link_speed': '16.0 GT/s PCIe',
        'pci.max_link_speed': '16.0 GT/s PCIe', 'pci.current_link_width': '4', 'pci.max_link_width': '4',
        'pci.numa_node': '0', 'cpus_allowed': '0-3', 'numa.cpulist': '0-3', 'aio_max_nr': '1048576',
        'aio_nr': '0', 'io_uring_disabled': '0', 'memlock': '67108864', 'cap_eff': '0000000000000000',
        'host': 'h1', 'kernel': '6.1.0'}


def run(s=S, **kw):
    k = dict(BASE)
    k.update({key.replace('__', '.'): v for key, v in kw.items()})
    lines = 'tswap-meta\t1\n' + ''.join('%s\t%s\n' % kv for kv in k.items())
    return checks(lines, s, '/data/swap', '')


def one(doc, id_):
    return next(c for c in doc['checks'] if c['id'] == id_)


def test_values_are_range_checked_and_garbage_has_a_note():
    # sysfs prints integers in decimal: anything else present is garbage
    assert sysfs.uint('16', 'w', 1, 32).value == 16.0
    assert sysfs.uint('', 'w', 1, 32) == sysfs.Num()
    for bad in ('1e+23', '33', '0', 'x4', ' 4', '4.0', '-1'):
        n = sysfs.uint(bad, 'current_link_width', 1, 32)
        assert n.value is None and "current_link_width '%s' is not an integer 1 to 32" % bad in n.note
    assert sysfs.uint('-1', 'numa_node', -1, 1023).value == -1.0
    assert sysfs.gts('8.0 GT/s PCIe', 's').value == 8.0
    assert sysfs.gts('Unknown', 's').note and sysfs.gts('1e3 GT/s', 's').note


def test_cpu_lists_stay_ranges():
    # Documentation/admin-guide/cgroup-v2.rst cpuset list format
    c = sysfs.cpus('0-1000000,8', 'l')
    assert c.ranges == ((0, 1000000), (8, 8)) and sysfs.count(c.ranges) == 1000002
    assert sysfs.minus(((0, 1000000),), ((0, 3), (2, 9))) == ((10, 1000000),)
    assert sysfs.minus(((0, 3), (8, 8), (2, 2)), ((2, 2),)) == ((0, 1), (3, 3), (8, 8))
    # runs of consecutive CPUs join, in the order listed
    assert sysfs.ranges(((0, 1), (2, 3), (8, 8), (2, 2))) == '0-3,8,2'
    for bad in ('0-3,zz', '1-2-3', '5-1', '-1', '0-2000000'):
        assert sysfs.cpus(bad, 'Cpus_allowed_list').note


def test_pcie_width_below_or_above_max_fails_and_speed_below_warns():
    # PCIe Base Spec: Link Status against Link Capabilities
    assert one(run(), 'pcie.link_width')['verdict'] == 'ok'
    d = run(pci__current_link_width='2', pci__current_link_speed='8.0 GT/s PCIe')
    assert one(d, 'pcie.link_width')['verdict'] == 'fail' and one(d, 'pcie.link_speed')['verdict'] == 'warn'
    w = one(run(pci__current_link_width='16'), 'pcie.link_width')
    assert w['verdict'] == 'fail' and 'reports x16 on a link of at most x4' in w['advice']
    g = run(pci__current_link_width='1e+23')
    assert [one(g, i)['verdict'] for i in ('pcie.link_width', 'pcie.link_speed')] == ['n/a', 'n/a']
    assert "'1e+23'" in one(g, 'pcie.link_width')['advice']
    assert one(run(pci__address=''), 'pcie.link_width')['advice'].startswith('no PCI device above nvme0n1')


def test_numa_local_remote_partly_and_garbage():
    # kernel sysfs numa_node and node*/cpulist
    assert one(run(), 'numa.node')['verdict'] == 'ok'
    assert one(run(cpus_allowed='4-7'), 'numa.node')['advice'].startswith('remote: no allowed CPU is on node 0')
    p = one(run(cpus_allowed='0-7'), 'numa.node')
    assert p['verdict'] == 'warn' and p['advice'].startswith('partly remote: CPUs 4-7 are off node 0')
    g = one(run(cpus_allowed='zz'), 'numa.node')
    assert g['verdict'] == 'n/a' and "Cpus_allowed_list 'zz'" in g['advice']
    assert one(run(pci__numa_node='-1'), 'numa.node')['verdict'] == 'n/a'
    assert one(run(pci__numa_node='x'), 'numa.node')['verdict'] == 'n/a'
    assert run(pci__numa_node='x')['stack']['numa_node'] is None


def test_queue_scheduler_max_sectors_and_nr_requests():
    # Documentation/block/switching-sched.rst; sysfs-block; DeepSpeed
    # deepspeed_aio_common.cpp _do_io_submit_block (one iocb per block)
    assert one(run(queue__scheduler='[mq-deadline] none'), 'queue.scheduler')['verdict'] == 'warn'
    assert one(run(disk='sda', queue__scheduler='[mq-deadline] none'), 'queue.scheduler')['verdict'] == 'n/a'
    assert pieces(4194304.0, 1024.0) == 4.0 and pieces(1048576.0, None) == 1.0
    d = run(Settings(4194304.0, 8.0, 2.0, 'libaio'), queue__nr_requests='32')
    assert one(d, 'queue.max_sectors_kb')['verdict'] == 'warn'
    nr = one(d, 'queue.nr_requests')
    assert nr['verdict'] == 'warn' and nr['expected'] == '>= 64'
    assert one(run(queue__nr_requests='1e+23'), 'queue.nr_requests')['verdict'] == 'n/a'


def test_filesystem_type_and_mount_options():
    # DeepSpeed deepspeed_aio_common.cpp open_file: O_DIRECT; mount(8)
    def fs(t, o):
        return json.dumps({'filesystems': [{'target': '/d', 'source': 's', 'fstype': t, 'options': o}]})
    assert one(run(fs=fs('ramfs', 'rw')), 'fs.type')['verdict'] == 'fail'
    assert one(run(fs=fs('fuse.sshfs', 'rw')), 'fs.type')['verdict'] == 'warn'
    assert one(run(fs=fs('xfs', 'ro,noatime')), 'fs.mount_options')['verdict'] == 'fail'
    assert one(run(fs=fs('ext4', 'rw,data=journal')), 'fs.mount_options')['verdict'] == 'warn'
    assert one(run(fs=''), 'fs.type')['verdict'] == 'warn'
    assert one(run(kind='block'), 'fs.type')['verdict'] == 'n/a'


def test_aio_io_uring_and_memlock_limits():
    # sysctl/fs.rst aio-max-nr; sysctl/kernel.rst io_uring_disabled;
    # DeepSpeed deepspeed_aio_utils.cpp ds_page_aligned_alloc (mlock)
    assert one(run(aio_max_nr='8'), 'sysctl.aio_max_nr')['verdict'] == 'fail'
    assert one(run(aio_nr='1048570'), 'sysctl.aio_max_nr')['verdict'] == 'warn'
    io = Settings(1048576.0, 8.0, 1.0, 'io_uring')
    assert [one(run(io, io_uring_disabled=v), 'sysctl.io_uring_disabled')['verdict']
            for v in ('0', '1', '2', '7')] == ['ok', 'warn', 'fail', 'n/a']
    assert one(run(memlock='4096'), 'limits.memlock')['verdict'] == 'fail'
    assert one(run(memlock='4096', cap_eff='0000000000004000'), 'limits.memlock')['verdict'] == 'ok'
    assert one(run(memlock='lots'), 'limits.memlock')['verdict'] == 'n/a'


def test_nvmf_paths_and_iopolicy():
    # NVMe Base Specification ANA states; Documentation/admin-guide/nvme-multipath.rst
    d = run(**{'nvmf__iopolicy': 'numa', 'nvmf__path__nvme1__transport': 'tcp', 'nvmf__path__nvme1__state': 'live',
               'nvmf__path__nvme1__ana_state': 'optimized', 'nvmf__path__nvme2__transport': 'tcp',
               'nvmf__path__nvme2__state': 'live', 'nvmf__path__nvme2__ana_state': 'optimized'})
    assert one(d, 'nvmf.transport')['verdict'] == 'ok'
    assert one(d, 'nvmf.iopolicy')['verdict'] == 'warn'
    d = run(**{'nvmf__path__nvme1__transport': 'tcp', 'nvmf__path__nvme1__state': 'connecting'})
    assert one(d, 'nvmf.path.nvme1')['verdict'] == 'fail'
    assert one(run(), 'nvmf.transport')['verdict'] == 'n/a'


def test_verdict_counts_and_settings_for_a_fleet():
    d = run(aio_max_nr='8')
    assert d['verdict'] == 'fail' and d['counts']['fail'] == 1
    # DeepSpeed's aio defaults (aio_config.py) without a pick; io_uring
    # from the plan
    assert settings_for({}, None) == {'block_size': 1048576.0, 'queue_depth': 8.0, 'threads': 1.0,
                                      'backend': 'libaio', 'from': "DeepSpeed's defaults"}
    s = settings_for({'aio': {'block_size': 4096.0, 'thread_count': 2.0}}, [{'backend': 'io_uring'}])
    assert (s['block_size'], s['threads'], s['backend'], s['from']) == (4096.0, 2.0, 'io_uring', 'best-aio.json')


def test_table_and_junit():
    d = run(pci__current_link_width='2')
    assert cell('abcdefghij', 5) == 'abcd~ ' and cell(None, 3) == '-   '
    t = table(d)
    assert t[0] == 'tswap-check: /data/swap (xfs at /data) on /dev/nvme0n1'
    assert any(line.startswith('fail    pcie.link_width') for line in t)
    assert t[-1].endswith(': fail')
    j = junit(d)
    assert '<failure type="check" message="0000:01:00.0 trained at x2 of x4' in ''.join(j)
    assert j[1] == '<testsuites name="tswap-check" tests="12" failures="1" errors="0" skipped="2">'


def test_command_line_sizes():
    # util.sh size_to_bytes: fio notation, binary units
    assert size_to_bytes('1m') == 1048576 and size_to_bytes('4KiB') == 4096
    assert size_to_bytes('1x') is None and size_to_bytes('99999999999999999') is None
    assert dirname('f') == '.' and dirname('/a/b/') == '/a' and dirname('/f') == '/'


def test_table_escapes_control_characters():
    # a --target with ESC, BEL, a newline and a backslash reaches the
    # terminal escaped, as ls -b shows a name
    assert esc('a\x1b[31mb\x07\n\\\x9b') == 'a\\033[31mb\\a\\n\\\\\\233'
    d = run()
    d['target'] = '/data/\x1b]0;pwned\x07\nsw\tap'
    t = table(d)
    assert t[0].startswith('tswap-check: /data/\\033]0;pwned\\a\\nsw\\tap (')
    assert not any(c in line for line in t for c in '\x1b\x07\n\t')
    j = ''.join(junit(d))
    # an attribute keeps its newline and tab as references; XML has no ESC
    assert '<property name="target" value="/data/ ]0;pwned &#10;sw&#9;ap"/>' in j
    assert '\x1b' not in j
