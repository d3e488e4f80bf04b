# SPDX-License-Identifier: GPL-2.0-only
"""Files as the shell sweep found and wrote them: a glob in the shell's
order, a file replaced whole (written beside it, then renamed)."""

from __future__ import annotations

import glob
import locale
import os


def shell_glob(pattern: str) -> list[str]:
    """The regular files matching pattern, in the order bash's glob gives
    them (sorted by the collation of the environment's locale, LC_COLLATE:
    bw_bw.10.log before bw_bw.1.log in en_US, after it in C)."""
    try:
        locale.setlocale(locale.LC_COLLATE, '')
    except locale.Error:
        locale.setlocale(locale.LC_COLLATE, 'C')
    return sorted((f for f in glob.glob(glob.escape(os.path.dirname(pattern)) + '/' + os.path.basename(pattern))
                   if os.path.isfile(f)), key=locale.strxfrm)


def write_text(path: str, text: str) -> None:
    """path replaced by text (UTF-8) through path.tmp and a rename. When
    that fails (ENOSPC, EIO, path a directory) path is as it was and the
    path.tmp this wrote is gone (no half-written file left); the OSError
    names path."""
    tmp = path + '.tmp'
    f = open(tmp, 'w', encoding='utf-8')
    try:
        with f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if e.filename is None:
            raise OSError(e.errno, e.strerror, path) from None
        raise
