# SPDX-License-Identifier: GPL-2.0-only
"""The child processes a sweep's set-up waits for (`fio --version`, git
describe of a checkout, the metadata collector), started in the
background so that they run while Python imports, parses and sets up
(Background). tswap-sweep's entry starts the first two before it imports
the front end (start); the front end kills and reaps them on every way
out but a run on this host, which reads them (tswap.cli.sweep_main,
tswap.cli.sweep_local). Each child gets SIGKILL when the front end dies
(PR_SET_PDEATHSIG): none outlives it. Standard library only, imported
first: nothing here may import a layer."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any, Callable, Optional

PR_SET_PDEATHSIG = 1


def checkout_root(script_dir: str) -> str:
    """The checkout of an entry in script_dir: script_dir/.. when its
    Makefile and engine/ exist; "" when installed."""
    if os.path.isfile(script_dir + '/../Makefile') and os.path.isdir(script_dir + '/../engine'):
        return os.path.normpath(script_dir + '/..')
    return ''


def _die_with_parent() -> Optional[Callable[[], None]]:
    """A preexec_fn: in the child before its exec, SIGKILL when the front
    end dies (PR_SET_PDEATHSIG), and SIGKILL at once when it already
    has; None when prctl cannot be reached."""
    try:
        import ctypes
        prctl: Any = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def pre() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return pre


class Background:
    """Child processes by name, started early and read when needed;
    stop() kills and reaps any still running (every way out of the front
    end)."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        self.root: Optional[str] = None
        self._pre: Any = False

    def start(self, name: str, argv: list[str], env: Optional[dict[str, str]] = None) -> None:
        """Run argv (stdout a pipe, stderr and stdin /dev/null); nothing
        when it cannot be started (read() then says None)."""
        if self._pre is False:
            self._pre = _die_with_parent()
        self.stop((name,))
        try:
            self.procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL,
                                                stdin=subprocess.DEVNULL, env=env,
                                                preexec_fn=self._pre)
        except OSError:
            pass

    def read(self, name: str) -> Optional[tuple[int, bytes]]:
        """(exit status, stdout) of name once it ends; None when it did
        not start."""
        p = self.procs.pop(name, None)
        if p is None:
            return None
        out, _ = p.communicate()
        return p.returncode, out

    def stop(self, names: Optional[tuple[str, ...]] = None) -> None:
        """Kill and reap whatever still runs (of names: all by default)."""
        for name in tuple(self.procs) if names is None else names:
            p = self.procs.pop(name, None)
            if p is None:
                continue
            try:
                p.kill()
            except OSError:
                pass
            if p.stdout is not None:
                p.stdout.close()
            p.wait()

    def start_git(self, root: str) -> None:
        """git describe of the checkout root (meta.sh tswap_version);
        nothing when installed (root "")."""
        self.root = root
        if root:
            self.start('git', ['git', '-C', root, 'describe', '--always', '--dirty', '--tags'])

    def fio_version(self) -> Optional[str]:
        """`fio --version`'s output, trailing newlines dropped; None when
        fio is missing or fails (started here when it was not)."""
        if 'fio' not in self.procs:
            self.start('fio', ['fio', '--version'])
        r = self.read('fio')
        if r is None or r[0] != 0:
            return None
        return r[1].decode('utf-8', 'surrogateescape').rstrip('\n')


def start(script: str) -> Background:
    """`fio --version` and git describe of the checkout of the entry
    script (its path, symlinks resolved), started."""
    bg = Background()
    bg.start('fio', ['fio', '--version'])
    bg.start_git(checkout_root(os.path.dirname(script)))
    return bg
