"""A `zabmc` process without the interpreter's start: the adversary's cases (tests/support/
adversary.py) run in processes forked from one server that imported this module first.

Importing it does what `python -m zabmc` does before it reads its arguments (zabmc/__main__.py,
zabmc/cli `_register`, the model registry), so that each of the hundreds of cases costs a fork
instead of about half a CPU second of start-up (issue #65's cases: 606 of them). `run` is the rest
of `python -m zabmc ARGV` in the forked process: its own directory, environment and standard
files, the same early signal handlers, `main`, the exit functions, and the exit code.
"""

from __future__ import annotations

import atexit
import io
import os
import sys

from zabmc.core import registry
from zabmc.core.signals import install_early
from zabmc.cli import _register, main

_register()
registry.load()
#: the process that imported this module: the fork server, never a case's own process
SERVER = os.getpid()


def _std(fd: int, path: str, flags: int) -> None:
    f = os.open(path, flags, 0o600)
    if f != fd:
        os.dup2(f, fd)
        os.close(f)


def run(argv: list, cwd: str, env: dict, out: str, err: str) -> None:
    """In the forked process: `python -m zabmc ARGV` run in `cwd` with `env`, stdin on /dev/null
    and stdout and stderr into the files `out` and `err`; ends the process with zabmc's code. A
    process that had to import this module itself (the fork server had not) ends at once with
    99: the cases would pay the start-up they are forked to spare."""
    if SERVER == os.getpid():
        os._exit(99)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    _std(0, os.devnull, os.O_RDONLY)
    _std(1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    _std(2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), errors="backslashreplace",
                                  line_buffering=True)
    sys.argv = ["zabmc", *argv]
    code = 0
    try:
        install_early()
        main(list(argv))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - what the interpreter would print, and its exit code
        import traceback

        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()  # an interpreter's exit runs them; os._exit below does not
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed or full output: as at a real exit
                pass
        os._exit(code)
