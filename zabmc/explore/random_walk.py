"""Seeded random walks: reach bugs deeper than BFS can afford. Each walk starts at the initial state
and takes up to `depth` uniformly chosen enabled events. Deterministic for a given seed."""

from __future__ import annotations

import random
import time

from .collector import collector_paused
from .env import Env
from .outcome import (INTERRUPTED, NULL_OBSERVER, TIME_LIMIT, VIOLATION, WALKS_DONE, Found,
                      Observer, Outcome, Progress)

PROGRESS_EVERY = 0.5


@collector_paused()
def random_walks(env: Env, *, seed: int = 0, walks: int = 1000, stop_at_first: bool = True,
                 observer: Observer = NULL_OBSERVER, time_limit: float | None = None) -> Outcome:
    cfg = env.config
    out = Outcome(strategy="random", engine="in-process", model=env.model.name, config=cfg,
                  invariants=env.checker.names)
    rng = random.Random(seed)
    t0 = last = time.perf_counter()
    seen: set[bytes] = set()
    best: dict[str, Found] = {}  # property -> shortest violation found
    init, v0 = env.initial()
    seen.add(env.fingerprint(init))
    out.generated = 1
    if v0 is not None:
        for x in v0.all():
            best[x.property] = Found(x, 0, ())
    stop = v0 is not None and stop_at_first
    done = 0
    try:
        while done < walks and not stop:
            s = init
            path: list[int] = []
            for _ in range(cfg.depth):
                succ = list(env.successors(s))
                if not succ:
                    break
                k = rng.randrange(len(succ))
                _, s, v = succ[k]
                path.append(k)
                out.generated += 1
                seen.add(env.fingerprint(s))
                out.depth_reached = max(out.depth_reached, len(path))
                if v is not None:
                    for x in v.all():
                        old = best.get(x.property)
                        if old is None or old.depth > len(path):
                            found = Found(x, len(path), tuple(path))
                            best[x.property] = found
                            observer.on_violation(found)
                    if stop_at_first:
                        stop = True
                    break
            done += 1
            now = time.perf_counter()
            if now - last >= PROGRESS_EVERY:
                last = now
                observer.on_progress(Progress(out.depth_reached, out.generated, len(seen), done,
                                              now - t0))
                if time_limit is not None and now - t0 >= time_limit:
                    out.stop_reason = TIME_LIMIT
                    break
    except KeyboardInterrupt:
        out.stop_reason = INTERRUPTED
    out.violations = sorted(best.values(), key=lambda f: (f.depth, f.violation.property))
    out.distinct = len(seen)
    out.elapsed = time.perf_counter() - t0
    out.extra["walks"] = done
    if out.stop_reason not in (INTERRUPTED, TIME_LIMIT):
        out.stop_reason = VIOLATION if (out.violations and stop_at_first) else WALKS_DONE
    observer.on_finish(out)
    return out
