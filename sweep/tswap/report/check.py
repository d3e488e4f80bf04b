# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's table and JUnit XML, from its checks object
(tswap.stats.check.checks; docs/sweep.md "Checking a host: tswap-check").
"""

from __future__ import annotations

from typing import Any

from ..jqjson import text
from .junit import x

Doc = dict[str, Any]


def cell(v: Any, w: int) -> str:
    """v in a column of w characters and a blank ("-" for None); "~" ends
    a value cut short."""
    s = text('-' if v is None or v is False else v)
    return (s[:w - 1] + '~' if len(s) > w else s + ' ' * (w - len(s))) + ' '


def table(c: Doc) -> list[str]:
    """The table's lines: a heading (target, stack, settings), one line
    per check (verdict, id, value, expected), the advice and source under
    each warn and fail (the advice alone under n/a), and the counts."""
    st, se = c['stack'], c['settings']
    head = 'tswap-check: %s' % text(c['target'])
    if st.get('filesystem') not in (None, False):
        head += ' (%s at %s)' % (text(st['filesystem']), text(st.get('mountpoint')))
    if st.get('device') not in (None, False):
        head += ' on %s' % text(st['device'])
    if c.get('sysroot') not in (None, False):
        head += ', sysroot %s' % text(c['sysroot'])
    out = [head,
           'settings: block_size %s B, queue_depth %s, threads %s, backend %s'
           % (text(se['block_size']), text(se['queue_depth']), text(se['threads']), text(se['backend'])),
           '', cell('VERDICT', 7) + cell('CHECK', 24) + cell('VALUE', 27) + 'EXPECTED']
    for k in c['checks']:
        e = k.get('expected')
        out.append(cell(k['verdict'], 7) + cell(k['id'], 24) + cell(k.get('value'), 27)
                   + text('-' if e is None or e is False else e))
        if k['verdict'] in ('warn', 'fail'):
            out += ['         advice: ' + text(k['advice']), '         source: ' + text(k['source'])]
        if k['verdict'] == 'n/a':
            out.append('         not applicable: ' + text(k['advice']))
    n = c['counts']
    out += ['', '%s ok, %s warn, %s fail, %s n/a: %s' % (text(n['ok']), text(n['warn']), text(n['fail']),
                                                         text(n['n/a']), text(c['verdict']))]
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
           '  <testsuite name="tswap-check.%s" hostname="%s" %s>' % (x(host), x(host), counts),
           '    <properties>']
    props = (('target', c['target']), ('device', st.get('device')), ('filesystem', st.get('filesystem')),
             ('kernel', st.get('kernel')), ('block_size', se['block_size']), ('queue_depth', se['queue_depth']),
             ('threads', se['threads']), ('backend', se['backend']), ('verdict', c['verdict']))
    out += ['      <property name="%s" value="%s"/>' % (n, x(v)) for n, v in props if v is not None]
    out.append('    </properties>')
    for k in cs:
        v, e = k.get('value'), k.get('expected')
        m = 'value %s, expected %s: %s [%s]' % (text('-' if v is None or v is False else v),
                                                 text('-' if e is None or e is False else e),
                                                 text(k['advice']), text(k['source']))
        if k['verdict'] == 'fail':
            body = '<failure type="check" message="%s">%s</failure>' % (x(k['advice']), x(m))
        elif k['verdict'] == 'n/a':
            body = '<skipped message="%s"/>' % x(k['advice'])
        elif k['verdict'] == 'warn':
            body = '<system-out>warn: %s</system-out>' % x(m)
        else:
            body = '<system-out>%s</system-out>' % x(m)
        out.append('    <testcase classname="tswap-check.%s" name="%s" time="0">%s</testcase>'
                   % (x(host), x(k['id']), body))
    out += ['  </testsuite>', '</testsuites>']
    return out
