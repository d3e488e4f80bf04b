# SPDX-License-Identifier: GPL-2.0-only
"""junit.xml of a fleet run, from fleet.json (docs/fleet.md "JUnit"): one
testsuite per host, one testcase per check: the GB/s checks (classname
tswap-fleet.ID: run, DIR_min_gbs, DIR_vs_fleet; a fail is an "outlier"
or "threshold" <failure>, anything but pass or fail a "host" <error>),
then the stack checks (classname tswap-check.ID, named by the check's id:
a fail is <failure type="check">, n/a and a host without metadata
<skipped>, a warn passes with its advice)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from ..jqjson import add, get, text

Doc = dict[str, Any]

_CONTROL = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f]')
_HTML = MappingProxyType({'<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;'})
_ATTR = MappingProxyType({'\t': '&#9;', '\n': '&#10;', '\r': '&#13;'})
_STATUS = MappingProxyType({'ok': 'pass', 'warn': 'pass', 'fail': 'fail', 'n/a': 'skipped'})


def x(v: Any) -> str:
    """v as XML text (jq: tostring, control characters but tab, newline
    and return as blanks, @html)."""
    return ''.join(_HTML.get(c, c) for c in _CONTROL.sub(' ', text(v)))


def xa(v: Any) -> str:
    """v as an XML attribute value: x(v) with tab, newline and return as
    character references (&#9; &#10; &#13;), which a parser keeps; it
    turns them into blanks when they are literal (XML 1.0, 3.3.3
    Attribute-Value Normalization)."""
    return ''.join(_ATTR.get(c, c) for c in x(v))


def _n(cases: list[Doc], status: str) -> int:
    return len([c for c in cases if c.get('status') == status])


def _or(v: Any, d: Any) -> Any:
    return d if v is None or v is False else v


def stack(h: Doc) -> list[Doc]:
    """A host's stack checks as testcases (tswap-check's verdicts as
    statuses); [] when the run judged no stacks."""
    if 'stack_checks' not in h:
        return []
    if h.get('stack') is None:
        return [{'name': 'checks', 'status': 'skipped', 'message': h.get('stack_note')}]
    out = []
    for c in h['stack_checks']:
        v = c.get('verdict')
        out.append({'name': c.get('id'), 'status': _STATUS.get(v) if isinstance(v, str) else None,
                    'message': '%svalue %s, expected %s: %s [%s]' % (
                        'warn: ' if v == 'warn' else '', text(_or(c.get('value'), '-')),
                        text(_or(c.get('expected'), '-')), text(c.get('advice')),
                        text(c.get('source'))),
                    'advice': c.get('advice')})
    return out


def junit(fleet: Doc, created: Any) -> str:
    """junit.xml's text (with its final newline); created: sweep.json's
    created, every testsuite's timestamp."""
    hosts = fleet.get('hosts') or []
    every = [c for h in hosts for c in (h.get('checks') or []) + stack(h)]
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<testsuites name="tswap-fleet" tests="%d" failures="%d" errors="%d" skipped="%d" '
             'time="%s">' % (len(every), _n(every, 'fail'), _n(every, 'error'),
                             _n(every, 'skipped'),
                             text(_or(add([h.get('wall_s') for h in hosts]), 0)))]
    for h in hosts:
        cases = (h.get('checks') or []) + stack(h)
        lines.append('  <testsuite name="%s" hostname="%s" tests="%d" failures="%d" errors="%d" '
                     'skipped="%d" time="%s" timestamp="%s">' % (
                         xa(h.get('label')), xa(h.get('address')), len(cases),
                         _n(cases, 'fail'), _n(cases, 'error'), _n(cases, 'skipped'),
                         text(h.get('wall_s')), xa(created)))
        lines.append('    <properties>')
        props = (('address', h.get('address')), ('target', h.get('target')),
                 ('engine', h.get('engine')), ('hostname', h.get('hostname')),
                 ('fio_version', h.get('fio_version')), ('verdict', h.get('verdict')),
                 ('read_gbs', get(h, 'best', 'read', 'gbs')),
                 ('write_gbs', get(h, 'best', 'write', 'gbs')), ('checks', h.get('stack_verdict')))
        lines += ['      <property name="%s" value="%s"/>' % (xa(k), xa(v))
                  for k, v in props if v is not None]
        lines.append('    </properties>')
        for c in h.get('checks') or []:
            msg = x(c.get('message'))
            if c.get('status') == 'pass':
                body = '<system-out>%s</system-out>' % msg
            elif c.get('status') == 'fail':
                kind = 'outlier' if str(c.get('name')).endswith('_vs_fleet') else 'threshold'
                body = '<failure type="%s" message="%s">%s</failure>' % (kind, xa(c.get('message')), msg)
            else:
                body = '<error type="host" message="%s">%s</error>' % (xa(c.get('message')), msg)
            lines.append('    <testcase classname="tswap-fleet.%s" name="%s" time="%s">%s</testcase>'
                         % (xa(h.get('id')), xa(c.get('name')),
                            text(h.get('wall_s') if c.get('name') == 'run' else 0), body))
        for c in stack(h):
            msg = x(c.get('message'))
            if c['status'] == 'pass':
                body = '<system-out>%s</system-out>' % msg
            elif c['status'] == 'fail':
                body = '<failure type="check" message="%s">%s</failure>' % (xa(c.get('advice')), msg)
            else:
                body = '<skipped message="%s"/>' % xa(_or(c.get('advice'), c.get('message')))
            lines.append('    <testcase classname="tswap-check.%s" name="%s" time="0">%s</testcase>'
                         % (xa(h.get('id')), xa(c.get('name')), body))
        lines.append('  </testsuite>')
    lines.append('</testsuites>')
    return ''.join(line + '\n' for line in lines)
