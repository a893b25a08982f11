"""Seeded random walks: reach bugs deeper than BFS can afford. Each walk starts at the initial state
and takes up to `depth` uniformly chosen enabled events. Deterministic for a given seed."""

from __future__ import annotations

import random
import time

from .env import Env
from .outcome import WALKS_DONE, Outcome, StopReason
from .search import Search


class RandomWalks(Search):
    name = "random"
    keep = "shortest"

    def search(self) -> None:
        env, out, cfg = self.env, self.out, self.config
        rng = random.Random(self.options.get("seed", 0))
        walks = self.options.get("walks", 1000)
        self.seen = seen = set()
        self.done = 0
        init, v0 = env.initial()
        seen.add(env.fingerprint(init))
        out.generated = 1
        if v0 is not None:
            self.record(v0, 0, ())
        while self.done < walks:
            s = init
            path: list[int] = []
            for _ in range(cfg.depth):
                succ = env.successors(s)
                if not succ:
                    break
                k = rng.randrange(len(succ))
                _, s, v = succ[k]
                path.append(k)
                out.generated += 1
                seen.add(env.fingerprint(s))
                out.depth_reached = max(out.depth_reached, len(path))
                if v is not None:
                    self.record(v, len(path), tuple(path))
                    break
            self.done += 1
            if time.perf_counter() >= self.next_progress:
                self.progress(out.depth_reached, len(seen), self.done)

    def finish(self) -> None:
        out = self.out
        out.violations.sort(key=lambda f: (f.depth, f.violation.property))
        out.distinct = len(self.seen)
        out.extra["walks"] = self.done

    def natural_stop(self) -> StopReason:
        return WALKS_DONE


def random_walks(env: Env, *, seed: int = 0, walks: int = 1000, **kw) -> Outcome:
    """`walks` seeded random walks of up to the depth bound (see `Search` for the keyword
    arguments)."""
    return RandomWalks(env, seed=seed, walks=walks, **kw).run()
