"""Typed results of a search and the observer interface engines report through.

Engines never print. They call an `Observer`; the CLI and report code decide what a person or a CI
log sees. Exit codes are derived from an `Outcome` in one place (`exit_code`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from zabmc.invariants import Violation

class StopReason(StrEnum):
    """Why a search stopped (the values are what `--json` prints as `stop_reason`)."""

    EXHAUSTED = "exhausted"  # every reachable state within the bounds was expanded
    DEPTH_BOUND = "depth-bound"  # states at the depth bound were not expanded
    VIOLATION = "violation"  # stopped at the first violation
    INTERRUPTED = "interrupted"  # SIGINT (Ctrl-C) or SIGTERM; the partial result is kept
    TIME_LIMIT = "time-limit"
    WALKS_DONE = "walks-done"  # random search ran every walk
    OUT_OF_MEMORY = "out-of-memory"  # MemoryError; the partial result is kept
    STATE_CAP = "state-cap"  # dfs --max-states: the first N distinct states, in the search's order


(EXHAUSTED, DEPTH_BOUND, VIOLATION, INTERRUPTED, TIME_LIMIT, WALKS_DONE, OUT_OF_MEMORY,
 STATE_CAP) = StopReason


@dataclass(frozen=True)
class Found:
    """A violated property with the event path (indices from the initial state) that reaches it."""

    violation: Violation
    depth: int
    path: tuple


@dataclass
class Progress:
    depth: int
    generated: int
    distinct: int
    frontier: int
    elapsed: float
    restored: int = 0  # distinct states a resumed search restored: not found in `elapsed`

    @property
    def rate(self) -> float:
        """Distinct states per second found by this run (restored states not counted)."""
        return (self.distinct - self.restored) / self.elapsed if self.elapsed > 0 else 0.0


@dataclass
class Outcome:
    strategy: str
    engine: str
    model: str
    config: Any  # ExploreConfig
    invariants: tuple
    stop_reason: StopReason | None = StopReason.EXHAUSTED
    generated: int = 0  # transitions taken (successor states computed)
    distinct: int = 0
    depth_reached: int = 0
    per_depth: list = field(default_factory=list)  # new distinct states first reached at each depth
    elapsed: float = 0.0
    violations: list = field(default_factory=list)  # of Found
    seen_bytes: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "violation" if self.violations else "ok"

    @property
    def states_per_second(self) -> float:
        """Distinct states per second of this run: after --resume, the states the checkpoint
        restored are in `distinct` but were not found in `elapsed`."""
        new = self.distinct - self.extra.get("distinct_before_resume", 0)
        return new / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        """TLC's optimistic estimate, for 128-bit fingerprints: distinct * (generated - distinct)
        / 2^128, the chance that some fingerprint collision made the search skip a state."""
        return self.distinct * max(self.generated - self.distinct, 0) / float(2**128)

    @property
    def complete(self) -> bool:
        return self.stop_reason == EXHAUSTED


def exit_code(outcome: Outcome) -> int:
    """0: no violation within the bounds; 10: a property violation."""
    return 10 if outcome.violations else 0


class Observer:
    """Receives what an engine does. Every method is optional."""

    def on_start(self, info: dict) -> None:
        pass

    def on_progress(self, p: Progress) -> None:
        pass

    def on_level(self, depth: int, frontier: int, new: int, seconds: float) -> None:
        pass

    def on_violation(self, found: Found) -> None:
        pass

    def on_finish(self, outcome: Outcome) -> None:
        pass


NULL_OBSERVER = Observer()
