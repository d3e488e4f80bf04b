# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's table and JUnit XML, from its checks object
(tswap.stats.check.checks; docs/sweep.md "Checking a host: tswap-check").
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..jqjson import text
from .junit import x, xa

Doc = dict[str, Any]

_NAMED = MappingProxyType({'\a': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\v': '\\v', '\f': '\\f',
                           '\r': '\\r', '\\': '\\\\'})


def esc(v: Any) -> str:
    """text(v) safe for a terminal, as ls -b shows a name: C escapes
    (\\n, \\t, \\\\, ...) and \\OOO (octal) for the other control
    characters, C0, DEL and C1 (ESC is \\033)."""
    return ''.join(_NAMED.get(c) or ('\\%03o' % ord(c) if ord(c) < 32 or 127 <= ord(c) < 160 else c)
                   for c in text(v))


def cell(v: Any, w: int) -> str:
    """v in a column of w characters and a blank ("-" for None), escaped
    (esc); "~" ends a value cut short."""
    s = esc('-' if v is None or v is False else v)
    return (s[:w - 1] + '~' if len(s) > w else s + ' ' * (w - len(s))) + ' '


def table(c: Doc) -> list[str]:
    """The table's lines: a heading (target, stack, settings), one line
    per check (verdict, id, value, expected), the advice and source under
    each warn and fail (the advice alone under n/a), and the counts;
    every value escaped (esc): a target or sysfs value cannot send a
    control sequence to the terminal."""
    st, se = c['stack'], c['settings']
    head = 'tswap-check: %s' % esc(c['target'])
    if st.get('filesystem') not in (None, False):
        head += ' (%s at %s)' % (esc(st['filesystem']), esc(st.get('mountpoint')))
    if st.get('device') not in (None, False):
        head += ' on %s' % esc(st['device'])
    if c.get('sysroot') not in (None, False):
        head += ', sysroot %s' % esc(c['sysroot'])
    out = [head,
           'settings: block_size %s B, queue_depth %s, threads %s, backend %s'
           % (esc(se['block_size']), esc(se['queue_depth']), esc(se['threads']), esc(se['backend'])),
           '', cell('VERDICT', 7) + cell('CHECK', 24) + cell('VALUE', 27) + 'EXPECTED']
    for k in c['checks']:
        e = k.get('expected')
        out.append(cell(k['verdict'], 7) + cell(k['id'], 24) + cell(k.get('value'), 27)
                   + esc('-' if e is None or e is False else e))
        if k['verdict'] in ('warn', 'fail'):
            out += ['         advice: ' + esc(k['advice']), '         source: ' + esc(k['source'])]
        if k['verdict'] == 'n/a':
            out.append('         not applicable: ' + esc(k['advice']))
    n = c['counts']
    out += ['', '%s ok, %s warn, %s fail, %s n/a: %s' % (esc(n['ok']), esc(n['warn']), esc(n['fail']),
                                                         esc(n['n/a']), esc(c['verdict']))]
    return out


def junit(c: Doc) -> list[str]:
    """The JUnit XML's lines: one testsuite, one testcase per check named
    by its id (fail: <failure>; n/a: <skipped>; ok and warn pass, the
    advice in <system-out>, a warn's prefixed "warn: ")."""
    st, se, cs = c['stack'], c['settings'], c['checks']
    host = st.get('host') if st.get('host') not in (None, False) else 'host'
    fails = len([k for k in cs if k['verdict'] == 'fail'])
    skips = len([k for k in cs if k['verdict'] == 'n/a'])
    counts = 'tests="%d" failures="%d" errors="0" skipped="%d"' % (len(cs), fails, skips)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<testsuites name="tswap-check" %s>' % counts,
           '  <testsuite name="tswap-check.%s" hostname="%s" %s>' % (xa(host), xa(host), counts),
           '    <properties>']
    props = (('target', c['target']), ('device', st.get('device')), ('filesystem', st.get('filesystem')),
             ('kernel', st.get('kernel')), ('block_size', se['block_size']), ('queue_depth', se['queue_depth']),
             ('threads', se['threads']), ('backend', se['backend']), ('verdict', c['verdict']))
    out += ['      <property name="%s" value="%s"/>' % (n, xa(v)) for n, v in props if v is not None]
    out.append('    </properties>')
    for k in cs:
        v, e = k.get('value'), k.get('expected')
        m = 'value %s, expected %s: %s [%s]' % (text('-' if v is None or v is False else v),
                                                 text('-' if e is None or e is False else e),
                                                 text(k['advice']), text(k['source']))
        if k['verdict'] == 'fail':
            body = '<failure type="check" message="%s">%s</failure>' % (xa(k['advice']), x(m))
        elif k['verdict'] == 'n/a':
            body = '<skipped message="%s"/>' % xa(k['advice'])
        elif k['verdict'] == 'warn':
            body = '<system-out>warn: %s</system-out>' % x(m)
        else:
            body = '<system-out>%s</system-out>' % x(m)
        out.append('    <testcase classname="tswap-check.%s" name="%s" time="0">%s</testcase>'
                   % (xa(host), xa(k['id']), body))
    out += ['  </testsuite>', '</testsuites>']
    return out
