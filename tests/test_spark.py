"""The Spark engine and `zabmc sweep` against the in-process engine and simulator.

Every Spark test shares one session-scoped SparkSession on local[2] (UI off, 2 shuffle
partitions), created only when the first of them runs. The Spark BFS must give the in-process
BFS's exact numbers: distinct and per-depth counts, transitions, stop reason, and the same first
violations at the same depth with the same event path (so the same trace).

The tests at the bottom need no JVM: input validation and the lazy-import rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from models.db19 import MODEL
from zabmc.cli import EXIT_USAGE, EXIT_VIOLATION, main
from zabmc.explore import Env, ExploreConfig, bfs
from zabmc.explore.trace import rebuild
from zabmc.invariants import DEFAULT_PROPERTIES, Checker

ALL = DEFAULT_PROPERTIES


def env_for(invariants=ALL, **kw) -> Env:
    return Env(MODEL, ExploreConfig(**kw), Checker(invariants))


def summary(o):
    return {
        "distinct": o.distinct,
        "generated": o.generated,
        "per_depth": list(o.per_depth),
        "depth_reached": o.depth_reached,
        "stop_reason": o.stop_reason,
        "violations": [(f.violation, f.depth, f.path) for f in o.violations],
        "frontier_left": o.extra.get("frontier_left"),
    }


def agree(env, stop_at_first=True, partitions=None):
    from zabmc.spark.engine import spark_bfs

    want = bfs(env, stop_at_first=stop_at_first)
    got = spark_bfs(env, stop_at_first=stop_at_first, master="local[2]", partitions=partitions)
    assert summary(got) == summary(want)
    assert got.engine == "spark" and got.extra["spark"]["levels_count"] >= 1
    return want, got


# (config, invariants, stop at first): exhaustive, depth-bound and stopped searches
CASES = [
    pytest.param(dict(nodes=2, network="bag", depth=40), ALL, True, id="n2-bag-stop"),
    pytest.param(dict(nodes=2, network="fifo", depth=40), ALL, True, id="n2-fifo-exhaustive"),
    pytest.param(dict(nodes=2, network="bag", proposals=1, depth=40), (), True,
                 id="n2-bag-p1-no-invariants"),
    pytest.param(dict(nodes=2, network="fifo", proposals=1, max_timeouts=1, depth=40), ALL,
                 False, id="n2-fifo-timeout-all"),
    pytest.param(dict(nodes=2, network="bag", max_drops=1, max_timeouts=1, depth=40), ALL,
                 True, id="n2-bag-drop-timeout-stop"),
    pytest.param(dict(nodes=3, network="fifo", depth=9), ALL, True, id="n3-fifo-depth9"),
    pytest.param(dict(nodes=2, network="fifo", proposals=2, max_crashes=1, depth=40), ALL, False,
                 id="n2-fifo-crash-all"),
    pytest.param(dict(nodes=2, network="bag", proposals=1, max_crashes=1, depth=40), (), True,
                 id="n2-bag-crash-no-invariants"),
]


@pytest.mark.spark
@pytest.mark.parametrize("cfg,invariants,stop", CASES)
def test_spark_bfs_matches_in_process(spark, cfg, invariants, stop):
    want, _ = agree(env_for(invariants, **cfg), stop_at_first=stop)
    assert want.distinct == sum(want.per_depth)


@pytest.mark.spark
def test_spark_bfs_reports_every_property_once_like_bfs(spark):
    """--all: each property's shortest violation, several per level, recorded in scan order."""
    env = env_for(ALL, nodes=2, network="bag", depth=14)
    want, got = agree(env, stop_at_first=False)
    assert len(want.violations) >= 3
    for f, g in zip(want.violations, got.violations):
        assert rebuild(env, f.path).to_json() == rebuild(env, g.path).to_json()


@pytest.mark.spark
@pytest.mark.parametrize("partitions", [1, 3])
def test_spark_bfs_does_not_depend_on_the_partitioning(spark, partitions):
    agree(env_for(ALL, nodes=2, network="bag", max_timeouts=1, depth=40), partitions=partitions)


@pytest.mark.spark
def test_spark_bfs_with_a_checkpoint_every_level(spark, monkeypatch):
    """Cutting the lineage (persisting and locally checkpointing the shuffle a level reads, and
    releasing the previous one) changes nothing, including the recount of the stopped level, which
    re-reads a checkpointed shuffle."""
    from zabmc.spark import engine

    monkeypatch.setattr(engine, "CHECKPOINT_EVERY", 1)
    agree(env_for(ALL, nodes=2, network="bag", max_timeouts=1, depth=40))
    agree(env_for(ALL, nodes=2, network="fifo", depth=40))


@pytest.mark.spark
def test_python_workers_get_the_malloc_settings(spark):
    """The workers run with `WORKER_ENV` (or the value this process's environment gives)."""
    from zabmc.spark.session import WORKER_ENV

    names = sorted(WORKER_ENV)
    got = spark.sc.parallelize([0], 1).map(lambda _: [os.environ.get(k) for k in names]).collect()
    assert got == [[os.environ.get(k, WORKER_ENV[k]) for k in names]]


@pytest.mark.spark
def test_spark_bfs_matches_on_3_nodes_fifo_deeper(spark):
    agree(env_for(ALL, nodes=3, network="fifo", depth=13), stop_at_first=False)


@pytest.mark.spark
def test_spark_bfs_matches_on_a_model_with_memory_apart_from_disk(spark):
    """zk-3.9.2-shutdown (models/zk/shutdown.py): nodes with a durable `disk` beside `history`,
    leaked queues and their `flush` action, over the same kernel on the executors."""
    from zabmc.core.model import get_model

    env = Env(get_model("zk-3.9.2-shutdown"),
              ExploreConfig(nodes=2, network="fifo", proposals=1, max_timeouts=1, max_crashes=1,
                            depth=100),
              Checker(ALL + ("ack-from-memory", "stale-log-write")))
    want, _ = agree(env, stop_at_first=False)
    assert want.stop_reason == "exhausted" and want.distinct == 1940


@pytest.mark.spark
def test_spark_bfs_time_limit_stops_with_a_partial_result(spark):
    """A space that cannot finish: 5 nodes, every budget at 5 and no depth bound to speak of
    (levels 1 to 3 hold 90, 4,100 and 128,890 states, growing some thirty-fold a level), and no
    property to stop at, so only the time limit can end the search. What it found is the
    in-process search's levels, the last one possibly cut short."""
    from zabmc.spark.engine import spark_bfs

    space = dict(nodes=5, network="bag", proposals=5, max_timeouts=5, max_drops=5,
                 max_heartbeats=5, max_crashes=5)
    o = spark_bfs(env_for((), depth=10_000, **space), master="local[2]", time_limit=0.5,
                  stop_at_first=False)
    assert o.stop_reason == "time-limit"
    assert o.distinct == sum(o.per_depth) and o.per_depth[0] == 1
    k = len(o.per_depth) - 1
    m = min(k, 3)  # level 4 would take minutes in process
    full = bfs(env_for((), depth=m, **space), stop_at_first=False)
    assert o.per_depth[:m] == full.per_depth[:m]
    assert k > 3 or o.per_depth[k] <= full.per_depth[k]


def _check_json(capsys, tmp_path, engine, *args):
    trace = tmp_path / f"{engine}.trace.json"
    with pytest.raises(SystemExit) as exc:
        main(["check", "--engine", engine, "--master", "local[2]", "--json", "--trace-out",
              str(trace), *args])
    out, _ = capsys.readouterr()
    return exc.value.code, json.loads(out), trace


@pytest.mark.spark
def test_cli_check_engine_spark_json_equals_in_process(spark, capsys, tmp_path):
    args = ["--nodes", "2", "--network", "bag"]
    code_a, a, trace_a = _check_json(capsys, tmp_path, "in-process", *args)
    code_b, b, trace_b = _check_json(capsys, tmp_path, "spark", *args)
    assert code_a == code_b == EXIT_VIOLATION
    spark_stats = b.pop("spark")
    assert spark_stats["master"] == "local[2]" and spark_stats["partitions"] == 2
    assert [lv["new"] for lv in spark_stats["levels"]] == a["per_depth"][1:]
    # every level reports the busy seconds of its 2 tasks' expansions (of its parents) and
    # merges, sorted; the totals are their sums, and the sums of each level's slowest (rounded
    # to 3 places; no comparison of one clock with another: they vary with the machine's load)
    levels = spark_stats["levels"]
    for lv in levels:
        for kind in ("expand_task_seconds", "merge_task_seconds"):
            assert len(lv[kind]) == 2 and lv[kind] == sorted(lv[kind]) and lv[kind][0] >= 0
    ts = spark_stats["task_seconds"]
    for kind in ("expand", "merge"):
        per = [lv[f"{kind}_task_seconds"] for lv in levels]
        assert ts[kind] == pytest.approx(sum(map(sum, per)), abs=1e-3)
        assert ts[f"{kind}_slowest"] == pytest.approx(sum(map(max, per)), abs=1e-3)
        assert 0 < ts[f"{kind}_slowest"] <= ts[kind]
    # the engine, the times and the memory figures (of the process that ran the search) differ;
    # everything else is the same
    for k in ("engine", "elapsed_seconds", "states_per_second", "memory"):
        a.pop(k, None), b.pop(k, None)
    for v in a["violations"] + b["violations"]:
        v.pop("trace")
    assert a == b
    # one trace file per property; same content, and `zabmc replay` confirms it
    assert len(a["violations"]) == 3
    for v in a["violations"]:
        stem = f"-{v['property']}.json"
        ta = json.loads(open(str(trace_a)[:-5] + stem).read())
        tb = json.loads(open(str(trace_b)[:-5] + stem).read())
        # each file's origin is the command that wrote it, which names its engine and path
        assert "--engine in-process" in ta.pop("origin") and "--engine spark" in tb.pop("origin")
        assert ta == tb
    with pytest.raises(SystemExit) as exc:
        main(["replay", "-q", str(trace_b)[:-5] + f"-{a['violations'][0]['property']}.json"])
    assert exc.value.code == EXIT_VIOLATION
    assert "confirmed" in capsys.readouterr().out


@pytest.mark.spark
def test_cli_check_engine_spark_exhaustive_no_violation(spark, capsys, tmp_path):
    code, b, _ = _check_json(capsys, tmp_path, "spark", "--nodes", "2", "--network", "fifo")
    assert code == 0
    assert (b["verdict"], b["stop_reason"], b["distinct_states"], b["states"]) == \
        ("ok", "exhausted", 73, 115)


# --- zabmc sweep ------------------------------------------------------------------------------


@pytest.mark.spark
def test_sweep_rows_are_the_simulators_results(spark, tmp_path):
    import pyarrow.parquet as pq

    from zabmc.invariants import resolve
    from zabmc.sim import SimConfig, Simulator
    from zabmc.spark.sweep import configurations, parse_partitions, run_sweep

    configs = configurations([3], [2000], [20], parse_partitions(["none", "0,1"]))
    out = tmp_path / "sweep.parquet"
    r = run_sweep(configs, [(40, 46)], out=str(out), invariants=resolve(()), master="local[2]")
    assert r.runs == 12
    rows = pq.read_table(str(out)).to_pylist()
    assert len(rows) == 12
    checker = Checker(resolve(()))
    for row in rows:
        cut = frozenset({(0, 1)}) if row["partition"] else frozenset()
        sim = Simulator(MODEL, SimConfig(row["seed"], 3, 2000, 20, cut), checker=checker).run()
        assert row["digest"] == sim.digest
        assert row["violation"] == (sim.violation.property if sim.violation else None)
        assert row["tick"] == sim.violation_tick
    expected = {}
    for row in rows:
        if row["violation"]:
            key = (row["config"], row["violation"])
            n, first = expected.get(key, (0, None))
            expected[key] = (n + 1, row["seed"] if first is None else min(first, row["seed"]))
    assert {(s["config"], s["property"]): (s["runs"], s["first_seed"]) for s in r.summary} \
        == expected
    assert r.violating == sum(n for n, _ in expected.values()) > 0


@pytest.mark.spark
def test_cli_sweep_json_and_exit_code(spark, capsys, tmp_path):
    out = tmp_path / "t[1].parquet"  # a name Spark would take for a glob pattern
    args = ["sweep", "--nodes", "3", "--rounds", "2000", "--proposals", "10", "--seeds", "42",
            "--out", str(out), "--master", "local[2]", "--json"]
    with pytest.raises(SystemExit) as exc:
        main(args)
    got = json.loads(capsys.readouterr().out)
    assert exc.value.code == EXIT_VIOLATION
    # the simulator's own golden result for this seed (tests/test_cli_simulate.py)
    assert got["violations"] == [{
        "config": "n3-r2000-p10", "property": "local-primary-order", "runs": 1,
        "first_seed": 42, "first_tick": 369, "earliest_tick": 369, "earliest_seed": 42,
        "latest_tick": 369,
        "first_message": "node 0 delivered 1.2:zab-1 as epoch 1's transaction number 1"}]
    with pytest.raises(SystemExit) as exc:  # the table exists now
        main(args)
    assert exc.value.code == EXIT_USAGE


# --- no JVM needed ----------------------------------------------------------------------------


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.mark.parametrize("args,message", [
    (["check", "--engine", "spark", "--partitions", "0"], "--partitions must be at least 1"),
    (["check", "--engine", "spark", "--master", "nowhere"], "--master must be"),
    (["check", "--engine", "spark", "--strategy", "dfs"], "breadth-first search only"),
    (["sweep", "--seeds", "9..3"], "is empty"),
    (["sweep", "--seeds", "x"], "--seeds takes"),
    (["sweep", "--seeds", f"{2**63}"], "below 2^63"),
    (["sweep", "--nodes", "0"], "--nodes must be at least 1"),
    (["sweep", "--nodes", "3", "--partition", "0,3"], "node ids are 0..2"),
    (["sweep", "--partition", "0,1,2"], "pairs"),
    (["sweep", "--rounds", "-5"], "--rounds takes"),
    (["sweep", "--invariant", "nope"], "unknown property"),
    (["sweep", "--master", "local[0]"], "--master must be"),
    (["sweep", "--partitions", "0"], "--partitions must be at least 1"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == EXIT_USAGE
    assert message in err and err.count("\n") == 1 and err.startswith("zabmc: error: ")


def test_sweep_refuses_an_existing_output_without_overwrite(capsys, tmp_path):
    out = tmp_path / "exists.parquet"
    out.mkdir()
    code, _, err = run(capsys, "sweep", "--out", str(out))
    assert code == EXIT_USAGE and "--overwrite" in err


def test_seed_ranges_are_half_open():
    from zabmc.spark.sweep import parse_seeds, tasks

    assert parse_seeds("0..3,7,10..12") == [(0, 3), (7, 8), (10, 12)]
    pieces = tasks(["a", "b"], [(0, 10)], 4)
    assert sum(hi - lo for _, lo, hi in pieces) == 20
    assert {ci for ci, _, _ in pieces} == {0, 1}


def test_importing_zabmc_never_imports_pyspark():
    code = ("import sys, zabmc.cli, zabmc.spark.engine, zabmc.spark.sweep, zabmc.spark.session, "
            "zabmc.cli.sweep; zabmc.cli._register(); "
            "assert not [m for m in sys.modules if m.startswith('pyspark')], 'pyspark imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    assert r.returncode == 0, r.stderr
