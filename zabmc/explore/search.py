"""The search frame every strategy runs in (the registry of strategies is `zabmc.strategies`).

In the manner of DSLabs' `Search` template: a strategy only says how it walks the state space
(`search`) and what it holds at the end (`finish`); the frame owns everything around that: the
`Outcome`, recording violations, progress reports, the time limit, interruption, the cyclic
collector, and the reason the search stopped.

A strategy signals the end of its search in one of three ways: it returns (the frame then asks
`natural_stop()` whether the space was exhausted or a bound was hit), `record` or `progress` raise
`Stopped` (a violation with stop-at-first, or the time limit), the user interrupts
(KeyboardInterrupt, or `Terminated` for SIGTERM), or memory runs out (MemoryError). In every case
`finish()` runs, the outcome keeps what was found, and the observer sees `on_finish`.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import ClassVar

from zabmc.core.signals import Terminated  # noqa: F401 - its old home; the CLI raises it

from .collector import collector_paused
from .env import Env
from .outcome import (INTERRUPTED, NULL_OBSERVER, OUT_OF_MEMORY, TIME_LIMIT, VIOLATION, Found,
                      Observer, Outcome, Progress, StopReason)

PROGRESS_EVERY = 0.5  # seconds between two progress reports (and time-limit checks)


class Stopped(Exception):
    """Raised inside a search to end it; the frame has recorded why."""


class Search:
    """One run of one strategy over one `Env`. Subclasses set `name` and implement `search`."""

    name: ClassVar[str]
    engine: ClassVar[str] = "in-process"
    #: which violation of a property is kept: the first met ("first": with BFS, a shortest one),
    #: or the shortest met so far ("shortest": random walks meet them in any order)
    keep: ClassVar[str] = "first"

    def __init__(self, env: Env, *, stop_at_first: bool = True,
                 observer: Observer = NULL_OBSERVER, time_limit: float | None = None, **options):
        self.env = env
        self.config = env.search_config  # the bounds counted from the start (`Env.initial`)
        self.stop_at_first = stop_at_first
        self.observer = observer
        self.time_limit = time_limit
        self.options = options
        self.out = Outcome(strategy=self.name, engine=self.engine, model=env.model.name,
                           config=self.config, invariants=env.checker.names)
        if env.start is not None:  # a search from a trace's state (zabmc.explore.start)
            self.out.extra["start"] = env.start.to_json(env)
        if env.symmetry is not None:  # one state per orbit (zabmc.explore.symmetry)
            self.out.extra["symmetry"] = "payloads"
        self._reported: dict[str, int] = {}  # property -> index in out.violations
        self.t0 = 0.0
        self.next_progress = 0.0

    # --- what a strategy implements ----------------------------------------------------------------
    def search(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Fill in the outcome's figures (distinct, depth reached, memory); runs however the
        search ended."""

    def natural_stop(self) -> StopReason:
        """Why a search that returned by itself stopped."""
        raise NotImplementedError

    # --- services for strategies -------------------------------------------------------------------
    def record(self, v, depth: int, path: tuple) -> None:
        """Note every property that step `v` violates at `depth` (reached by `path`); tell the
        observer about each new (or, with keep="shortest", shorter) one, and raise `Stopped` when
        the search must stop at the first violation."""
        out, reported = self.out, self._reported
        new = False
        for x in v.all():
            k = reported.get(x.property)
            if k is not None and (self.keep == "first" or out.violations[k].depth <= depth):
                continue
            found = Found(x, depth, path)
            if k is None:
                reported[x.property] = len(out.violations)
                out.violations.append(found)
            else:
                out.violations[k] = found
            self.observer.on_violation(found)
            new = True
        if new and self.stop_at_first:
            out.stop_reason = VIOLATION
            raise Stopped

    def progress(self, depth: int, distinct: int, frontier: int, check_time: bool = True) -> None:
        """Report progress, and enforce the time limit (unless the engine enforces it itself).
        Strategies call this when `time.perf_counter() >= self.next_progress` (cheap to test in a
        hot loop)."""
        now = time.perf_counter()
        self.next_progress = now + PROGRESS_EVERY
        self.observer.on_progress(Progress(depth, self.out.generated, distinct, frontier,
                                           now - self.t0,
                                           self.out.extra.get("distinct_before_resume", 0)))
        if check_time and self.time_limit is not None and now - self.t0 >= self.time_limit:
            self.out.stop_reason = TIME_LIMIT
            raise Stopped

    # --- the frame ---------------------------------------------------------------------------------
    def run(self) -> Outcome:
        out = self.out
        out.stop_reason = None
        with collector_paused():
            self.t0 = time.perf_counter()
            self.next_progress = self.t0 + PROGRESS_EVERY
            try:
                self.search()
            except Stopped:
                pass
            except KeyboardInterrupt:
                out.stop_reason = INTERRUPTED
                out.extra["signal"] = "SIGINT"
            except Terminated as t:
                out.stop_reason = INTERRUPTED
                out.extra["signal"] = signal.Signals(t.signum).name
            except MemoryError:
                out.stop_reason = OUT_OF_MEMORY
            with _signals_held(out):
                self.finish()
                out.elapsed = time.perf_counter() - self.t0
                if out.stop_reason is None:
                    out.stop_reason = self.natural_stop()
                self.observer.on_finish(out)
        return out


class signals_noted:
    """Ctrl-C and SIGTERM wait for the block to end: where their handlers are Python's (Ctrl-C's
    KeyboardInterrupt, the CLI's SIGTERM), each is swapped for one that notes the signal in
    `got`, and put back as the block ends. With `then_raise`, the first signal noted is handled
    then as it would have been (its handler raises); without, it stays noted. Handlers are the
    main thread's to change: in any other thread, and for a signal with the default action or
    ignored, nothing changes."""

    def __init__(self, then_raise: bool = False):
        self.then_raise = then_raise
        self.saved: dict = {}
        self.got: list = []

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old = signal.getsignal(sig)
                if callable(old):
                    self.saved[sig] = old
                    signal.signal(sig, lambda signum, frame: self.got.append(signum))
        return self

    def __exit__(self, *exc):
        for sig, old in self.saved.items():
            signal.signal(sig, old)
        if self.then_raise and self.got and exc[0] is None:
            self.saved[self.got[0]](self.got[0], None)  # raises, as it would have
        return False


class _signals_held(signals_noted):
    """While a search hands over its result (`finish`, `on_finish`): raised there, a signal would
    lose a result already found. The first one noted goes into `out.extra["late_signal"]`, and
    the result stands (the CLI reports it, then exits as an interrupted run does)."""

    def __init__(self, out: Outcome):
        super().__init__()
        self.out = out

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self.got:
            self.out.extra.setdefault("late_signal", signal.Signals(self.got[0]).name)
        return False
