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
- after the command, the early handler again: the exit code is decided; and for the
  interpreter's teardown, after the last exit function, the two signals are ignored (the
  teardown would otherwise meet them with their default action).

A signal the process inherited as ignored (`nohup`, a shell's background job) stays ignored.

Part of the core layer: imports nothing else of zabmc.
"""

from __future__ import annotations

import _thread
import atexit
import os
import signal
import sys
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


#: whether `install_early` ran: this process is the command line's own
_EARLY = [False]


def install_early() -> None:
    """SIGINT and SIGTERM end the process at once, with one line and 130 or 143 (nothing has
    started that would need stopping); each ignored one stays ignored."""
    if not _main_thread():
        return
    _EARLY[0] = True
    for sig in SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _exit_now)
    # the first exit function registered runs last: when every other one (threads joined, servers
    # killed) is done, the interpreter's own teardown resets Python's handlers to the default
    # action, and a signal then would end the process by the signal itself; the command is over
    # by then, and exits with its code
    atexit.register(_ignore_for_the_teardown)


def _ignore_for_the_teardown() -> None:
    # ignored, not blocked: a blocked signal would go to another thread (numpy's, a daemon's),
    # whose default action ends the process all the same; the teardown keeps SIG_IGN as it is
    for sig in SIGNALS:
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):  # pragma: no cover - not the main thread
            pass


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

    def swallowed(self, unraisable) -> bool:
        """Whether the exception Python could not raise (`sys.unraisablehook`) is the first
        signal's: a handler runs between any two instructions, and one that runs inside a
        `__del__`, a weakref callback or a garbage collector's callback (the import system's
        module locks have one) has its exception printed and dropped, and the command would go
        on as if no signal had come. Then the signal is delivered again, to the main thread, a
        moment later, when that callback has returned (`_thread.interrupt_main`)."""
        exc = unraisable.exc_value
        if len(self.got) != 1 or not isinstance(exc, (KeyboardInterrupt, Terminated)):
            return False
        signum = self.got.pop()
        again = threading.Timer(0.01, _thread.interrupt_main, (signum,))
        again.daemon = True
        again.start()
        return True


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
    before = sys.unraisablehook

    def unraisable(u):
        if not handler.swallowed(u):
            before(u)

    sys.unraisablehook = unraisable
    for sig in SIGNALS:
        old = signal.getsignal(sig)
        if old != signal.SIG_IGN:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield handler
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        sys.unraisablehook = before


def end_interrupted(code: int, handler: _Raiser) -> None:
    """In the command line's own process, after a signal raised (`handler.got`): flush, run the
    exit functions, and end with `code` at once. A KeyboardInterrupt that was raised inside
    `exec` of a string (dataclasses and namedtuple make their methods so, while a module is
    imported) leaves CPython 3.11 believing it went unhandled: its ordinary exit would then kill
    the process with SIGINT itself (-2), whatever code the command returned."""
    if not (_EARLY[0] and handler.got):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    atexit._run_exitfuncs()
    os._exit(code)
