"""Depth-bounded depth-first search: memory is the path (a stack of successor iterators) plus the
fingerprint -> smallest-depth map, with no frontier of full states.

A state reached again at a smaller depth than before is expanded again, so under a depth bound DFS
reaches exactly the states BFS reaches. Counterexamples are not necessarily shortest.

`max_states=N` stops the search when it meets a distinct state beyond the first N (stop reason
`state-cap`): the N states are checked, the next is not. The successors' order is fixed, so a
capped search covers the same N states on every run: a deterministic partial search, unlike a time
limit, which a CI gate can rely on to reach deep paths (of a space whose complete search is too
long) the same way on every run and machine.
"""

from __future__ import annotations

import time

from .env import Env
from .outcome import DEPTH_BOUND, EXHAUSTED, STATE_CAP, Outcome, StopReason
from .search import Search, Stopped
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
        cap = self.options.get("max_states")
        if cap is not None and cap < 1:
            raise ValueError(f"max_states must be at least 1, got {cap}")

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
            fp = fingerprint(s2)
            if cap is not None and len(seen) >= cap and fp not in seen.depth:
                self.out.stop_reason = STATE_CAP  # s2 would be state cap + 1: neither checked
                raise Stopped                      # nor counted
            if v is not None:
                record(v, depth, tuple(path) + (ei,))
            if not seen.visit(fp, depth):
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
