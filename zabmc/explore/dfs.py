"""Depth-bounded depth-first search: memory is the path (a stack of successor iterators) plus the
fingerprint -> smallest-depth map, with no frontier of full states.

A state reached again at a smaller depth than before is expanded again, so under a depth bound DFS
reaches exactly the states BFS reaches. Counterexamples are not necessarily shortest.
"""

from __future__ import annotations

import time

from .collector import collector_paused
from .env import Env
from .outcome import (DEPTH_BOUND, EXHAUSTED, INTERRUPTED, NULL_OBSERVER, TIME_LIMIT, VIOLATION,
                      Observer, Outcome, Progress, recorder)
from .seen import DictSeenSet

PROGRESS_EVERY = 0.5


@collector_paused()
def dfs(env: Env, *, stop_at_first: bool = True, observer: Observer = NULL_OBSERVER,
        time_limit: float | None = None) -> Outcome:
    cfg = env.config
    out = Outcome(strategy="dfs", engine="in-process", model=env.model.name, config=cfg,
                  invariants=env.checker.names)
    t0 = last = time.perf_counter()
    seen = DictSeenSet()
    fingerprint = env.fingerprint

    record = recorder(out, observer, stop_at_first)

    init, v0 = env.initial()
    seen.visit(fingerprint(init), 0)
    out.generated = 1
    stop = v0 is not None and record(v0, 0, ())
    # stack of (successor iterator, index of the next successor); path[k] = event index at depth k+1
    stack = [] if stop else [[enumerate(env.successors(init)), 0]]
    path: list[int] = []
    max_depth = 0
    cut = False  # some state at the depth bound had successors we did not look at
    try:
        while stack and not stop:
            it = stack[-1][0]
            item = next(it, None)
            if item is None:
                stack.pop()
                if path:
                    path.pop()
                continue
            ei, (ev, s2, v) = item
            out.generated += 1
            depth = len(stack)
            if v is not None and record(v, depth, tuple(path) + (ei,)):
                stop = True
                break
            if not seen.visit(fingerprint(s2), depth):
                continue
            max_depth = max(max_depth, depth)
            if depth < cfg.depth:
                stack.append([enumerate(env.successors(s2)), 0])
                path.append(ei)
            elif not cut and next(iter(env.successors(s2)), None) is not None:
                cut = True
            now = time.perf_counter()
            if now - last >= PROGRESS_EVERY:
                last = now
                observer.on_progress(Progress(depth, out.generated, len(seen), len(stack), now - t0))
                if time_limit is not None and now - t0 >= time_limit:
                    out.stop_reason = TIME_LIMIT
                    stop = True
    except KeyboardInterrupt:
        out.stop_reason = INTERRUPTED
    out.distinct = len(seen)
    out.depth_reached = max_depth
    out.elapsed = time.perf_counter() - t0
    out.seen_bytes = len(seen) * 16
    if out.stop_reason not in (INTERRUPTED, TIME_LIMIT):
        if out.violations and stop_at_first:
            out.stop_reason = VIOLATION
        else:
            out.stop_reason = DEPTH_BOUND if cut else EXHAUSTED
    out.extra["seen"] = seen
    observer.on_finish(out)
    return out
