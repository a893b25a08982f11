"""Depth-bounded depth-first search: memory is the path (a stack of successor iterators) plus the
fingerprint -> smallest-depth map, with no frontier of full states.

A state reached again at a smaller depth than before is expanded again, so under a depth bound DFS
reaches exactly the states BFS reaches. Counterexamples are not necessarily shortest.
"""

from __future__ import annotations

import time

from .env import Env
from .outcome import DEPTH_BOUND, EXHAUSTED, Outcome, StopReason
from .search import Search
from .seen import DictSeenSet


class DFS(Search):
    name = "dfs"

    def search(self) -> None:
        env, out, cfg = self.env, self.out, self.config
        self.seen = seen = DictSeenSet()
        self.max_depth = 0
        self.cut = False  # some state at the depth bound had successors we did not look at
        fingerprint = env.fingerprint
        record = self.record

        init, v0 = env.initial()
        seen.visit(fingerprint(init), 0)
        out.generated = 1
        if v0 is not None:
            record(v0, 0, ())
        # stack of successor iterators; path[k] = event index at depth k+1
        stack = [enumerate(env.successors(init))]
        path: list[int] = []
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                if path:
                    path.pop()
                continue
            ei, (ev, s2, v) = item
            out.generated += 1
            depth = len(stack)
            if v is not None:
                record(v, depth, tuple(path) + (ei,))
            if not seen.visit(fingerprint(s2), depth):
                continue
            if depth > self.max_depth:
                self.max_depth = depth
            if depth < cfg.depth:
                stack.append(enumerate(env.successors(s2)))
                path.append(ei)
            elif not self.cut and env.successors(s2):
                self.cut = True
            if time.perf_counter() >= self.next_progress:
                self.progress(depth, len(seen), len(stack))

    def finish(self) -> None:
        out = self.out
        out.distinct = len(self.seen)
        out.depth_reached = self.max_depth
        out.seen_bytes = len(self.seen) * 16
        out.extra["seen"] = self.seen

    def natural_stop(self) -> StopReason:
        return DEPTH_BOUND if self.cut else EXHAUSTED


def dfs(env: Env, **kw) -> Outcome:
    """Depth-bounded depth-first search of `env` (see `Search` for the keyword arguments)."""
    return DFS(env, **kw).run()
