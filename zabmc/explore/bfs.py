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

from .env import Env
from .outcome import DEPTH_BOUND, EXHAUSTED, Outcome, StopReason
from .search import Search
from .seen import SortedRunSet

CHUNK = 20_000  # candidate states per batch offered to the fingerprint set


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


class BFS(Search):
    name = "bfs"

    def search(self) -> None:
        env, out, cfg = self.env, self.out, self.config
        self.seen = seen = SortedRunSet()
        self.table = table = ParentTable()
        self.depth = depth = 0
        self.frontier = frontier = []

        init, v0 = env.initial()
        seen.add_batch([env.fingerprint(init)])
        out.generated = 1
        out.per_depth.append(1)
        if v0 is not None:
            self.record(v0, 0, ())
        self.frontier = frontier = [init]
        fingerprint = env.fingerprint
        successors = env.successors
        record = self.record
        while frontier and depth < cfg.depth:
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

            try:
                for pi, s in enumerate(frontier):
                    for ei, (ev, s2, v) in enumerate(successors(s)):
                        out.generated += 1
                        if v is not None:
                            record(v, depth + 1, table.path(depth, pi) + (ei,))
                        fp = fingerprint(s2)
                        if fp not in cand:
                            cand[fp] = (s2, pi, ei)
                    if len(cand) >= CHUNK:
                        flush()
                    if time.perf_counter() >= self.next_progress:
                        self.progress(depth + 1, len(seen) + len(cand),
                                      len(frontier) - pi - 1 + len(nxt) + len(cand))
            except MemoryError:
                cand.clear()  # free what can be freed; the level's count stays what was merged
                raise
            finally:
                # keep what the level found so far, also when the search stops in its middle
                if cand:
                    flush()
                if nxt:
                    depth += 1
                    out.per_depth.append(len(nxt))
                self.observer.on_level(depth, len(frontier), len(nxt), time.perf_counter() - lt)
                self.frontier = frontier = nxt
                self.depth = depth

    def finish(self) -> None:
        out = self.out
        out.distinct = len(self.seen)
        out.depth_reached = self.depth
        out.seen_bytes = self.seen.nbytes + self.table.nbytes
        out.extra["seen"] = self.seen

    def natural_stop(self) -> StopReason:
        if self.frontier and self.depth >= self.config.depth:
            self.out.extra["frontier_left"] = len(self.frontier)
            return DEPTH_BOUND
        return EXHAUSTED

    def run(self) -> Outcome:
        self.out.extra["frontier_left"] = 0
        return super().run()


def bfs(env: Env, **kw) -> Outcome:
    """Breadth-first search of `env` (see `Search` for the keyword arguments)."""
    return BFS(env, **kw).run()
