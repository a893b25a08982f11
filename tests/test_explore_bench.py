"""benchmarks/explore_bench.py keeps running: its naive baseline (struct encoding, a plain set, no
kernel memo) and zabmc's BFS, with the collector paused and left on, must count the same states
(the benchmark asserts it for every round; a broken benchmark once went unnoticed)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import explore_bench  # noqa: E402


def test_the_explore_benchmark_measures_what_it_names():
    rows = explore_bench.measure(depth=5, rounds=2)
    assert [r["label"] for r in rows] == ["every default property", "no properties"]
    for r in rows:
        assert r["distinct"] > 100 and r["generated"] > r["distinct"]
        assert r["ours_rate"] > 0 and r["base_rate"] > 0 and r["on_rate"] > 0
