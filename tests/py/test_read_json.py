# SPDX-License-Identifier: GPL-2.0-only
"""tswap.cli read_json: a document that cannot be read or is not JSON is
a StageError of one line naming what it is and its path, never a
traceback (the caller prints it as "tswap: LINE" and exits 3)."""
import pytest

from tswap.cli import StageError, read_json, read_json_opt


def test_unreadable_document_is_one_line_naming_it(tmp_path):
    with pytest.raises(StageError) as e:
        read_json(str(tmp_path / 'none.json'), 'result')
    assert str(e.value).startswith('result %s: ' % (tmp_path / 'none.json')) and '\n' not in str(e.value)
    bad = tmp_path / 'bad.json'
    bad.write_text('{"half":')
    with pytest.raises(StageError) as e:
        read_json(str(bad), 'result')
    assert str(e.value).startswith('result %s: ' % bad) and '\n' not in str(e.value)


def test_read_json_opt_a_missing_or_empty_file_is_none_a_bad_one_an_error(tmp_path):
    assert read_json_opt(str(tmp_path / 'none.json'), 'meta') is None
    assert read_json_opt(None, 'meta') is None
    (tmp_path / 'empty.json').write_text(' \n')
    assert read_json_opt(str(tmp_path / 'empty.json'), 'meta') is None
    (tmp_path / 'bad.json').write_text('[1,')
    with pytest.raises(StageError) as e:
        read_json_opt(str(tmp_path / 'bad.json'), 'meta')
    assert str(e.value).startswith('meta %s: ' % (tmp_path / 'bad.json'))
