"""Level-synchronous breadth-first search: the default strategy, giving shortest counterexamples.

Memory: only the current and next frontier hold full states. Every visited state costs 16 bytes in
the fingerprint set plus 6 bytes of parent pointer (parent's index in the previous level, uint32, and
the event's index among the parent's successors, uint16); a trace is rebuilt by walking those
pointers back and replaying the events through the kernel (`trace.rebuild`).

Within a level, candidates are deduplicated in chunks by a small dict and then offered to the
fingerprint set in one batch; the set's answer is also its insertion.
"""

from __future__ import annotations

import time
from array import array

from .collector import collector_paused
from .env import Env
from .outcome import (
    DEPTH_BOUND,
    EXHAUSTED,
    INTERRUPTED,
    NULL_OBSERVER,
    TIME_LIMIT,
    VIOLATION,
    Observer,
    Outcome,
    Progress,
    recorder,
)
from .seen import SortedRunSet

CHUNK = 20_000  # candidate states per batch offered to the fingerprint set
PROGRESS_EVERY = 0.5  # seconds


class ParentTable:
    """Per level: parent index (uint32) and event index (uint16) of every state, in level order."""

    def __init__(self) -> None:
        self.parents: list[array] = [array("I", [0])]
        self.events: list[array] = [array("H", [0])]

    def new_level(self) -> None:
        self.parents.append(array("I"))
        self.events.append(array("H"))

    def add(self, parent: int, event: int) -> None:
        self.parents[-1].append(parent)
        self.events[-1].append(event)

    def path(self, depth: int, index: int) -> tuple:
        """Event indices from the initial state to state `index` of level `depth`."""
        out = []
        for d in range(depth, 0, -1):
            out.append(self.events[d][index])
            index = self.parents[d][index]
        return tuple(reversed(out))

    @property
    def nbytes(self) -> int:
        return sum(a.itemsize * len(a) for a in self.parents) + sum(
            a.itemsize * len(a) for a in self.events
        )


@collector_paused()
def bfs(env: Env, *, stop_at_first: bool = True, observer: Observer = NULL_OBSERVER,
        time_limit: float | None = None, engine: str = "in-process") -> Outcome:
    cfg = env.config
    out = Outcome(strategy="bfs", engine=engine, model=env.model.name, config=cfg,
                  invariants=env.checker.names)
    t0 = time.perf_counter()
    seen = SortedRunSet()
    table = ParentTable()

    record = recorder(out, observer, stop_at_first)

    init, v0 = env.initial()
    seen.add_batch([env.fingerprint(init)])
    out.generated = 1
    out.per_depth.append(1)
    stop = v0 is not None and record(v0, 0, ())
    frontier = [init]
    depth = 0
    last_progress = t0
    fingerprint = env.fingerprint
    successors = env.successors
    try:
        while frontier and not stop and depth < cfg.depth:
            lt = time.perf_counter()
            table.new_level()
            nxt: list = []
            cand: dict = {}  # fp -> (state, parent index, event index), this chunk only

            def flush() -> None:
                fps = list(cand)
                new = seen.add_batch(fps)
                for fp, is_new in zip(fps, new.tolist()):
                    if is_new:
                        s2, pi, ei = cand[fp]
                        nxt.append(s2)
                        table.add(pi, ei)
                cand.clear()

            def expand_level() -> None:
                nonlocal stop, last_progress
                for pi, s in enumerate(frontier):
                    for ei, (ev, s2, v) in enumerate(successors(s)):
                        out.generated += 1
                        if v is not None and record(v, depth + 1, table.path(depth, pi) + (ei,)):
                            stop = True
                            return
                        fp = fingerprint(s2)
                        if fp not in cand:
                            cand[fp] = (s2, pi, ei)
                    if len(cand) >= CHUNK:
                        flush()
                    now = time.perf_counter()
                    if now - last_progress >= PROGRESS_EVERY:
                        last_progress = now
                        observer.on_progress(Progress(
                            depth + 1, out.generated, len(seen) + len(cand),
                            len(frontier) - pi - 1 + len(nxt) + len(cand), now - t0))
                        if time_limit is not None and now - t0 >= time_limit:
                            out.stop_reason = TIME_LIMIT
                            stop = True
                            return

            try:
                expand_level()
            except KeyboardInterrupt:
                out.stop_reason = INTERRUPTED
                stop = True
            if cand:  # keep what the level found so far, also when stopping early
                flush()
            if nxt:
                depth += 1
                out.per_depth.append(len(nxt))
            observer.on_level(depth, len(frontier), len(nxt), time.perf_counter() - lt)
            frontier = nxt
    except KeyboardInterrupt:
        out.stop_reason = INTERRUPTED
        stop = True
    out.distinct = len(seen)
    out.depth_reached = depth
    out.seen_bytes = seen.nbytes + table.nbytes
    out.elapsed = time.perf_counter() - t0
    if out.stop_reason not in (INTERRUPTED, TIME_LIMIT):
        if out.violations and stop_at_first:
            out.stop_reason = VIOLATION
        elif frontier and depth >= cfg.depth:
            out.stop_reason = DEPTH_BOUND
        else:
            out.stop_reason = EXHAUSTED
    out.extra["frontier_left"] = len(frontier) if out.stop_reason == DEPTH_BOUND else 0
    out.extra["seen"] = seen
    observer.on_finish(out)
    return out
