# SPDX-License-Identifier: GPL-2.0-only
"""tswap.jqjson: the documents' JSON text as jq 1.6 printed it (jq's
src/jv_dtoa.c jvp_dtoa_fmt, src/jv_print.c jvp_dump_string). The expected
strings are jq 1.6's own output for the same values (Debian 12's jq)."""
import pytest

from tswap import jqjson


@pytest.mark.parametrize('value, want', [
    (1.0, '1'), (1e17, '1e+17'), (1e6, '1000000'), (123456789012, '123456789012'),
    (0.1, '0.1'), (1e-5, '1e-05'), (3e-7, '3e-07'), (1e20, '1e+20'),
    (2.5e15, '2500000000000000'), (1e16, '1e+16'), (1.5e300, '1.5e+300'),
    (0.1 + 0.2, '0.30000000000000004'), (0.0001, '0.0001'), (-0.0, '-0'),
    (5e-324, '5e-324'), (float('inf'), '1.7976931348623157e+308'),
    (float('nan'), 'null'), (12345600.0, '12345600'), (-2.5e-7, '-2.5e-07'),
])
def test_number_as_jq_prints_it(value, want):
    assert jqjson.number(value) == want


def test_strings_escape_controls_and_del_keep_unicode():
    assert jqjson.string('a\x7fb\x01\x1f\t/é\u2028"\\') == '"a\\u007fb\\u0001\\u001f\\t/é\u2028\\"\\\\"'


def test_indented_like_jq():
    doc = {'a': [], 'b': {}, 'c': [1.0, {'d': None}]}
    assert jqjson.dumps(doc) == '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": null\n    }\n  ]\n}'
    assert jqjson.dumps(doc, compact=True) == '{"a":[],"b":{},"c":[1,{"d":null}]}'


def test_interpolation_text():
    assert jqjson.text(3.0) == '3'
    assert jqjson.text('x') == 'x'
    assert jqjson.text(None) == 'null'


@pytest.mark.parametrize('x, want', [(0.5, 1), (-0.5, -1), (2.5, 3), (1.4999, 1),
                                     (0.49999999999999994, 0)])
def test_round_half_away_from_zero_as_c_round(x, want):
    assert jqjson.jround(x) == want


def test_loads_reads_numbers_as_doubles():
    assert jqjson.dumps(jqjson.loads('{"n": 1.0, "m": 100000000000000000}'), compact=True) == '{"n":1,"m":1e+17}'
