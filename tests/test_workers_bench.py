"""benchmarks/workers_bench.py keeps measuring what it names: both trees' `--workers 2` runs of
its zk-fixed workload, with counts it checks equal and a table that gives every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import workers_bench  # noqa: E402
from benchmarks.common import check_json  # noqa: E402


def test_the_workers_benchmark_runs_both_trees_and_checks_their_counts():
    got = workers_bench.measure("HEAD", depth=8, rounds=1)
    assert set(got) == {"this tree", "HEAD"}
    assert [len(v) for v in got.values()] == [1, 1]
    # the one-process search of the same bounds, a second engine: the same counts
    assert workers_bench.FLAGS[-2:] == ["--workers", "2"]
    flags = workers_bench.FLAGS[:-2]
    one = check_json([sys.executable, "-m", "zabmc", "check", *flags, "--depth", "8", "--json",
                      "-q", "--trace-out", "/dev/null"], cwd=ROOT)
    want = (one["distinct_states"], one["states"], tuple(one["per_depth"]), one["stop_reason"], ())
    assert got["HEAD"][0]["counts"] == got["this tree"][0]["counts"] == want
    for d in got["HEAD"] + got["this tree"]:
        assert d["wall"] > 0 and d["cpu"] > 0 and d["rss"] > 10  # MiB: a Python process at least
    text = workers_bench.render(got, "HEAD", 8, 1)
    assert "| 1 | `HEAD` |" in text and "| 1 | this tree |" in text
    assert f"{one['distinct_states']:,} distinct states" in text


def test_the_workers_benchmark_refuses_a_bad_depth():
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "workers_bench.py"), "--against",
                        "HEAD", "--depth", "0", "--no-write"], capture_output=True, text=True)
    assert p.returncode == 2 and "must be at least 1" in p.stderr
