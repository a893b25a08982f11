"""SIGINT and SIGTERM from a command's first instruction to its last: exit 130 and 143, never a
traceback, never the bare signal.

Three phases:
- `install_early()`, the first thing `python -m zabmc` and the `zabmc` console script do, before
  any heavy import: nothing has started yet, so a signal ends the process at once with one line
  and 128 + its number;
- `raising()`, around the command (`zabmc.cli.main`): SIGINT raises KeyboardInterrupt and SIGTERM
  `Terminated`, so that whatever the command started (servers, Spark, a search's partial result)
  is stopped or kept by the code that unwinds; `main` turns them into 130 and 143. Only the first
  signal raises: one that arrives while the first is being handled is noted, not raised again in
  the middle of the cleanup;
- after the command, the early handler again: the exit code is decided.

A signal the process inherited as ignored (`nohup`, a shell's background job) stays ignored.

Part of the core layer: imports nothing else of zabmc.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: what each signal's early exit says
_SAYS = {signal.SIGINT: b"zabmc: error: interrupted\n",
         signal.SIGTERM: b"zabmc: error: terminated (SIGTERM)\n"}


class Terminated(BaseException):
    """A termination signal (SIGTERM) turned into an exception, so that a search stops the way
    it stops at Ctrl-C (KeyboardInterrupt): cleanly, with its partial result. Whoever owns the
    process installs the handler that raises it (the CLI does)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def exit_code(signum: int) -> int:
    """As a shell reports a process ended by `signum`: 128 + its number (130, 143)."""
    return 128 + int(signum)


def _exit_now(signum, frame):
    try:
        os.write(2, _SAYS.get(signum, b"zabmc: error: stopped by a signal\n"))
    except OSError:
        pass
    os._exit(exit_code(signum))


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install_early() -> None:
    """SIGINT and SIGTERM end the process at once, with one line and 130 or 143 (nothing has
    started that would need stopping); each ignored one stays ignored."""
    if not _main_thread():
        return
    for sig in SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _exit_now)


class _Raiser:
    """The handler of `raising()`: the first signal raises, later ones are noted."""

    def __init__(self):
        self.got: list = []

    def __call__(self, signum, frame):
        self.got.append(signum)
        if len(self.got) > 1:
            return  # the first is being handled: its cleanup must not be cut short
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)


@contextmanager
def raising():
    """Within: SIGINT raises KeyboardInterrupt, SIGTERM `Terminated` (each only if not ignored);
    the handlers before are put back as the block ends. Yields the handler, whose `got` lists the
    signals that arrived."""
    handler = _Raiser()
    if not _main_thread():  # an embedding program's thread: its signals are its own
        yield handler
        return
    saved = {}
    for sig in SIGNALS:
        old = signal.getsignal(sig)
        if old != signal.SIG_IGN:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield handler
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
