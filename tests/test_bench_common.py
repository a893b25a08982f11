"""benchmarks/common.py's `check_json`: the CPU seconds a report cell shows are its own child's,
even when other cells run at once (abstraction_matrix.py --jobs 2); and the side-by-side helpers
(`ref_tree`, `alternating`) of the scripts that run this tree against a commit."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import alternating, check_json, ref_tree, side_by_side  # noqa: E402

# burns about one CPU second, then prints an empty JSON document
BUSY = "import time\nt=time.process_time()\nwhile time.process_time()-t<1.0: pass\nprint('{}')"
# waits (asleep, no CPU to speak of) until the busy child has exited, then prints the same
IDLE = ("import os,sys,time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.02)\n"
        "print('{}')")


def test_a_childs_cpu_seconds_leave_out_a_sibling_that_ran_at_the_same_time(tmp_path):
    done = tmp_path / "busy-exited"
    got = {}

    def busy():
        got["busy"] = check_json([sys.executable, "-c", BUSY])
        done.touch()  # after the busy child was reaped: it ended inside the idle child's run

    def idle():
        got["idle"] = check_json([sys.executable, "-c", IDLE, str(done)])

    threads = [threading.Thread(target=idle), threading.Thread(target=busy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["busy"]["cpu_seconds"] >= 1.0
    # a difference of RUSAGE_CHILDREN around the idle child would include the busy second
    assert got["idle"]["cpu_seconds"] < 0.5
    assert got["idle"]["exit"] == got["busy"]["exit"] == 0


def test_a_report_cell_names_the_first_violation_or_how_far_the_search_went():
    from benchmarks.common import result_cell

    d = {"distinct_states": 22_681, "cpu_seconds": 1.46, "stop_reason": "violation",
         "violations": [{"property": "leader-unexpected-ack", "depth": 18}],
         "config": {"depth": 30}}
    assert result_cell(d, "`{property}` at {depth} events") == \
        "`leader-unexpected-ack` at 18 events (22,681 states, 1.5 CPU s)"
    d.update(violations=[], stop_reason="depth")
    assert result_cell(d, "unused", 0) == "none: clean to depth 30 (22,681 states, 1 CPU s)"
    d.update(stop_reason="exhausted")
    assert result_cell(d, "unused") == "none: exhausted (22,681 states, 1.5 CPU s)"


def test_cells_keep_each_result_with_its_commit_and_write_at_once(tmp_path):
    """benchmarks/common.Cells: a report's search results by key, written to the file on every
    `put` (a later failure loses no finished cell), read back by a later run, and the commits they
    ran at named for the report's heading."""
    import json

    from benchmarks.common import Cells

    path = tmp_path / "cells.json"
    a = Cells(path, write=True)
    assert a.get("zk|x") is None
    a.put("zk|x", {"commit": "abc1234", "n": 1})
    assert json.loads(path.read_text()) == {"zk|x": {"commit": "abc1234", "n": 1}}
    b = Cells(path, write=True)  # a later run keeps the cells it does not run again
    b.put("zk-fixed|x", {"commit": "def5678", "n": 2})
    assert Cells(path, write=False).get("zk|x") == {"commit": "abc1234", "n": 1}
    assert b.commits() == "commits `abc1234`, `def5678`"
    dry = Cells(path, write=False)
    dry.put("zk|x", {"commit": "0000000", "n": 3})  # without write: the file stays
    assert json.loads(path.read_text())["zk|x"]["n"] == 1
    assert Cells(tmp_path / "none.json", write=False).commits() == "no commit (no cell run yet)"


def test_a_commit_is_dirty_for_code_and_not_for_the_reports_a_benchmark_writes(tmp_path,
                                                                                monkeypatch):
    """benchmarks/common.commit: a report made of cells rewrites its file after each cell, so the
    reports a benchmark writes must not mark the cells after the first as run at a dirty tree;
    a change anywhere else must."""
    import subprocess

    import benchmarks.common as common

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.json").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(common, "ROOT", tmp_path)
    head = common.commit()
    assert head and not head.endswith("-dirty")
    (tmp_path / "reports" / "r.json").write_text('{"cell": 1}\n')
    assert common.commit() == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert common.commit() == head + "-dirty"


def test_the_cores_bench_rotates_its_runs_and_takes_tlcs_time_over_each_per_round(monkeypatch):
    """benchmarks/cores_bench.py: the order rotates each round, the ratio is per round (TLC's
    wall over the zabmc run's of that round), and runs that disagree on the count fail."""
    import benchmarks.cores_bench as cb

    walls = iter([10.0, 4.0, 5.0, 20.0,   # round 1: TLC, --workers 2, Spark, in-process
                  8.0, 4.0, 16.0, 12.0,   # round 2: --workers 2, Spark, in-process, TLC
                  6.0, 30.0, 10.0, 5.0])  # round 3: Spark, in-process, TLC, --workers 2
    order = []

    def fake(name):
        def run(space):
            order.append(name)
            return {"distinct": 7, "wall_seconds": next(walls)}
        return run

    monkeypatch.setattr(cb, "RUNS", {name: fake(name) for name in cb.RUNS})
    rows = cb.measure(cb.REFERENCE, 3, log=lambda *_: None)
    tlc, par, spark, inproc = cb.RUNS
    assert order == [tlc, par, spark, inproc, par, spark, inproc, tlc, spark, inproc, tlc, par]
    assert cb.ratios(rows, par) == [2.5, 1.5, 2.0]
    assert cb.ratios(rows, spark) == [2.0, 3.0, 10.0 / 6.0]
    assert cb.ratios(rows, inproc) == [0.5, 0.75, 10.0 / 30.0]
    text = cb.section(cb.REFERENCE, rows, "")
    assert "median **2.00x** (per round: 2.50x, 1.50x, 2.00x)" in text
    assert "median **2.00x** (per round: 2.00x, 3.00x, 1.67x)" in text
    assert "**7 distinct states**" in text and "3 rounds" in text

    counts = iter([7, 8, 7, 7])
    monkeypatch.setattr(cb, "RUNS", {name: (lambda space: {"distinct": next(counts),
                                                            "wall_seconds": 1.0})
                                     for name in cb.RUNS})
    with pytest.raises(AssertionError, match=r"disagree on the distinct states: \[7, 8\]"):
        cb.measure(cb.REFERENCE, 1, log=lambda *_: None)


def test_side_by_side_runs_alternate_which_tree_goes_first():
    assert list(alternating({"this tree": 1, "abc": 2}, 4)) == [
        "abc", "this tree", "this tree", "abc", "abc", "this tree", "this tree", "abc"]
    assert list(alternating(["a"], 0)) == []


def test_ref_tree_holds_the_commits_files_and_goes_away():
    """The tree of the first commit (of those cloned) that has benchmarks/common.py holds that
    file as git has it at that commit, and is gone after the block."""
    first = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H", "--",
                            "benchmarks/common.py"], capture_output=True, text=True,
                           check=True).stdout.split()[-1]
    want = subprocess.run(["git", "-C", str(ROOT), "show", f"{first}:benchmarks/common.py"],
                          capture_output=True, check=True).stdout
    with ref_tree(first) as tree:
        assert (tree / "benchmarks" / "common.py").read_bytes() == want
    assert not tree.exists()


def test_side_by_side_runs_each_tree_its_rounds_in_turn():
    order = []
    got = side_by_side("HEAD", 3, lambda tree: (tree / "benchmarks" / "common.py").read_bytes(),
                       lambda name, d: order.append(name))
    assert order == ["HEAD", "this tree", "this tree", "HEAD", "HEAD", "this tree"]
    head = subprocess.run(["git", "-C", str(ROOT), "show", "HEAD:benchmarks/common.py"],
                          capture_output=True, check=True).stdout
    assert got["HEAD"] == [head] * 3
    assert got["this tree"] == [(ROOT / "benchmarks" / "common.py").read_bytes()] * 3


def test_the_engines_bench_rotates_engines_takes_ratios_per_round_and_refuses_other_counts(
        monkeypatch):
    """benchmarks/engines_bench.py: the engines' order rotates each round, each ratio is one
    process's wall over the engine's in the same round, and a run with other counts fails."""
    import benchmarks.engines_bench as eb

    one, par, spark = eb.ENGINES
    walls = {1: {one: 10.0, par: 5.0, spark: 20.0}, 2: {one: 12.0, par: 4.0, spark: 6.0}}
    order, rnd = [], [1]

    def fake(flags, engine):
        name = next(n for n, f in eb.ENGINES.items() if f == engine)
        order.append(name)
        if len(order) == 4:
            rnd[0] = 2
        return {"distinct_states": 7, "states": 9, "per_depth": [1, 6], "stop_reason": "x",
                "violations": [], "wall_seconds": walls[rnd[0]][name], "cpu_seconds": 1.0}

    monkeypatch.setattr(eb, "run", fake)
    got = eb.measure(["zab"], 2)
    assert order == [one, par, spark, par, spark, one]
    assert eb.ratio(got["zab"], par) == (2.5, 2.0, 3.0)
    assert eb.ratio(got["zab"], spark) == (1.25, 0.5, 2.0)
    assert eb.best(got["zab"]) == par
    text = eb.section(got, 2, ["--rounds", "2"])
    assert "| zab, a gate run to depth 21 |" in text and "| 7 | --workers 2 | 5.0 / 4.0 |" in text
    assert "2.50x (2.00-3.00)" in text and "zab, a gate run to depth 21: **--workers 2**" in text

    def other(flags, engine):
        d = fake(flags, engine)
        return dict(d, states=10) if engine == eb.ENGINES[spark] else d

    order.clear()
    monkeypatch.setattr(eb, "run", other)
    with pytest.raises(SystemExit, match="spark local\\[2\\] reports other counts"):
        eb.measure(["zab"], 1)
