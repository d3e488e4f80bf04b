# SPDX-License-Identifier: GPL-2.0-only
"""tswap.report.junit: a fleet's junit.xml (docs/fleet.md "JUnit"): one
testsuite per host, the GB/s checks then the stack checks, each status
mapped to JUnit's elements."""
from tswap.report.junit import junit, x, xa


def host(**kw):
    h = {'id': 'h01', 'label': 'a', 'address': '10.0.0.1', 'wall_s': 12, 'checks': []}
    h.update(kw)
    return h


def test_gb_checks_pass_fail_and_host_errors():
    h = host(checks=[{'name': 'run', 'status': 'pass', 'message': 'ok'},
                     {'name': 'read_vs_fleet', 'status': 'fail', 'message': '30% below'},
                     {'name': 'read_min_gbs', 'status': 'fail', 'message': 'below 2'},
                     {'name': 'write_min_gbs', 'status': 'error', 'message': 'host failed'}])
    out = junit({'hosts': [h]}, 'T')
    assert 'tests="4" failures="2" errors="1" skipped="0" time="12"' in out
    # the run's testcase carries the host's time, the others 0
    assert '<testcase classname="tswap-fleet.h01" name="run" time="12"><system-out>ok</system-out>' in out
    assert '<failure type="outlier" message="30% below">' in out
    assert '<failure type="threshold" message="below 2">' in out
    assert '<error type="host" message="host failed">' in out


def test_stack_checks_fail_skip_and_warn_passes_with_its_advice():
    h = host(stack={'x': 1}, stack_checks=[
        {'id': 'pcie', 'verdict': 'fail', 'value': 'x4', 'expected': 'x16', 'advice': 'reseat', 'source': 'sysfs'},
        {'id': 'sched', 'verdict': 'warn', 'value': None, 'expected': 'none', 'advice': 'set none', 'source': 'q'},
        {'id': 'numa', 'verdict': 'n/a', 'advice': None, 'source': 's'}])
    out = junit({'hosts': [h]}, 'T')
    assert ('<failure type="check" message="reseat">value x4, expected x16: reseat [sysfs]</failure>'
            in out)
    assert '<system-out>warn: value -, expected none: set none [q]</system-out>' in out
    assert '<skipped message="value -, expected -: null [s]"/>' in out
    # a host whose metadata could not be read: one skipped "checks" case
    out = junit({'hosts': [host(stack_checks=[], stack_note='no meta')]}, 'T')
    assert '<testcase classname="tswap-check.h01" name="checks" time="0"><skipped message="no meta"/>' in out


def test_text_is_escaped_and_control_characters_blanked():
    assert x('a<b & "c" \'d\'\x01\t') == 'a&lt;b &amp; &quot;c&quot; &apos;d&apos; \t'
    assert x(None) == 'null' and x(1.0) == '1'


def test_attributes_keep_newlines_as_references():
    # XML parsers turn a literal newline in an attribute into a blank;
    # &#10; survives (XML 1.0, 3.3.3)
    assert xa('a\nb\tc\rd\x01<') == 'a&#10;b&#9;c&#13;d &lt;'
    h = host(target='/t/a\nb')
    out = junit({'hosts': [h]}, 'T')
    assert '<property name="target" value="/t/a&#10;b"/>' in out
