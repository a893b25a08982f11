"""`zabmc sweep`: the seeded simulator with property checking over seeds x configurations, on Spark.

Every run is exactly `zabmc simulate --seed S ... --check`: `zabmc.sim.Simulator` with a
`zabmc.invariants.Checker`, rebuilt on the executors from the model name and property names. The
(configuration, seed) grid is cut into a few tasks per core; each task yields one row per run:

    config, nodes, rounds, proposals, partition, seed, digest, violation, tick, message

(`violation` is the first violated property or null, `tick` its tick). The rows are written as a
Parquet table, which is then read back for the summary: per configuration and property, how many
runs violated it and the smallest such seed (to replay with `zabmc simulate --check`).
"""

from __future__ import annotations

import os
import re
import time
from typing import NamedTuple

from zabmc.core.errors import UsageError

MAX_SEED = (1 << 63) - 1  # Parquet/Spark LongType
COLUMNS = ("config", "nodes", "rounds", "proposals", "partition", "seed", "digest", "violation",
           "tick", "message")


class SweepConfig(NamedTuple):
    nodes: int
    rounds: int
    proposals: int
    partition: tuple = ()  # sorted directed links (src, dst) cut for the whole run

    @property
    def name(self) -> str:
        cut = "-cut" + "_".join(f"{s}{d}" for s, d in self.partition) if self.partition else ""
        return f"n{self.nodes}-r{self.rounds}-p{self.proposals}{cut}"

    @property
    def partition_text(self) -> str:
        return ",".join(f"{s},{d}" for s, d in self.partition)


class SweepResult(NamedTuple):
    out: str
    runs: int
    violating: int
    summary: list  # of dict(config, property, runs, first_seed, first_tick, ...): see sweep_report
    per_config: dict  # config -> runs
    elapsed: float
    spark: dict


# --- input --------------------------------------------------------------------------------------


def parse_ints(texts, option: str, minimum: int = 0) -> list[int]:
    """`("3,5", "7")` -> [3, 5, 7], in order, without repeats."""
    out: list[int] = []
    for text in texts:
        for part in str(text).split(","):
            part = part.strip()
            if not re.fullmatch(r"[0-9]+", part):
                raise UsageError(f"{option} takes comma-separated non-negative integers, "
                                 f"got {text!r}")
            v = int(part)
            if v < minimum:
                raise UsageError(f"{option} must be at least {minimum}, got {v}")
            if v not in out:
                out.append(v)
    return out


def parse_seeds(text: str) -> list[tuple[int, int]]:
    """`A..B` (half-open: A, A+1, ..., B-1), `N`, or a comma-separated mix -> [(lo, hi), ...]."""
    ranges = []
    for part in str(text).split(","):
        part = part.strip()
        m = re.fullmatch(r"([0-9]+)\.\.([0-9]+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi <= lo:
                raise UsageError(f"--seeds range {part!r} is empty (A..B runs A up to B-1)")
        elif re.fullmatch(r"[0-9]+", part):
            lo, hi = int(part), int(part) + 1
        else:
            raise UsageError(f"--seeds takes A..B (A up to B-1), N, or a comma-separated list of "
                             f"those; got {text!r}")
        if hi - 1 > MAX_SEED:
            raise UsageError(f"--seeds must be below 2^63 for the Parquet table, got {hi - 1}")
        ranges.append((lo, hi))
    return ranges


def parse_partitions(texts) -> list[tuple]:
    """Each `--partition` value is one partition set (`S,D[,S,D...]`, or `none`)."""
    from zabmc.sim.script import parse_partition

    out = []
    for text in texts or ("none",):
        t = str(text).strip()
        cut = () if t in ("", "none") else tuple(sorted(parse_partition(t)))
        if cut not in out:
            out.append(cut)
    return out


def configurations(nodes, rounds, proposals, partitions) -> list[SweepConfig]:
    """The product of the value lists, each validated as `zabmc simulate` validates it."""
    from zabmc.sim import SimConfig

    out = []
    for n in nodes:
        for r in rounds:
            for p in proposals:
                for cut in partitions:
                    SimConfig(0, n, r, p, frozenset(cut)).validate()
                    out.append(SweepConfig(n, r, p, cut))
    return out


def tasks(configs: list, seed_ranges: list, slots: int) -> list[tuple[int, int, int]]:
    """(config index, lo, hi) pieces, about `slots` of them, none empty."""
    total = len(configs) * sum(hi - lo for lo, hi in seed_ranges)
    size = max(1, -(-total // max(slots, 1)))
    out = []
    for ci in range(len(configs)):
        for lo, hi in seed_ranges:
            for a in range(lo, hi, size):
                out.append((ci, a, min(hi, a + size)))
    return out


# --- executors ----------------------------------------------------------------------------------

_SIM: dict = {}


def run_piece(model_name: str, invariants: tuple, configs: list, piece, where: tuple = ()):
    """Executor side: one row per seed of `piece`, each run exactly as `zabmc simulate --check`
    (`where`: how to find the model without zabmc's entry points, zabmc.core.model.where)."""
    from zabmc.core.model import get_model
    from zabmc.core.model import ensure
    from zabmc.invariants import Checker
    from zabmc.sim import SimConfig, Simulator

    key = (model_name, invariants)
    if key not in _SIM:
        if where:
            ensure(model_name, where)
        _SIM[key] = (get_model(model_name), Checker(invariants))
    model, checker = _SIM[key]
    ci, lo, hi = piece
    c = configs[ci]
    cut = frozenset(c.partition)
    for seed in range(lo, hi):
        r = Simulator(model, SimConfig(seed, c.nodes, c.rounds, c.proposals, cut),
                      checker=checker).run()
        v = r.violation
        yield (c.name, c.nodes, c.rounds, c.proposals, c.partition_text, seed, r.digest,
               v.property if v else None, r.violation_tick if v else None,
               v.message if v else None)


# --- the driver ---------------------------------------------------------------------------------


def check_output(out: str, overwrite: bool) -> str:
    out = os.path.abspath(out)
    if os.path.exists(out) and not overwrite:
        raise UsageError(f"{out} exists; pass --overwrite to replace it")
    parent = os.path.dirname(out)
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write {out}: directory {parent} does not exist")
    return out


def run_sweep(configs: list, seed_ranges: list, *, out: str, model: str = "db19",
              invariants: tuple = (), overwrite: bool = False, master: str = "local[*]",
              partitions: int | None = None, verbose: bool = False, progress=None) -> SweepResult:
    """Run the grid, write the Parquet table to `out`, summarise it.

    `progress(done_tasks, total_tasks, elapsed)` is called about every 0.25 s."""
    from functools import partial

    from zabmc.core.model import where

    from .session import (check_master, check_partitions, get_session, local_cores,
                          require_pyspark, run_job)

    check_master(master)
    check_partitions(partitions)
    require_pyspark()
    out = check_output(out, overwrite)
    t0 = time.perf_counter()
    sess = get_session(master, partitions=partitions, verbose=verbose)
    spark, sc = sess.spark, sess.sc
    cores = partitions or local_cores(master) or sc.defaultParallelism
    pieces = tasks(configs, seed_ranges, 4 * cores)
    from pyspark.sql.types import (IntegerType, LongType, StringType, StructField,
                                   StructType)

    schema = StructType([
        StructField("config", StringType(), False),
        StructField("nodes", IntegerType(), False),
        StructField("rounds", IntegerType(), False),
        StructField("proposals", IntegerType(), False),
        StructField("partition", StringType(), False),
        StructField("seed", LongType(), False),
        StructField("digest", StringType(), False),
        StructField("violation", StringType(), True),
        StructField("tick", IntegerType(), True),
        StructField("message", StringType(), True),
    ])
    rows = sc.parallelize(pieces, len(pieces)).flatMap(
        partial(run_piece, model, tuple(invariants), list(configs), where=where(model)))
    df = spark.createDataFrame(rows, schema)
    tracker = sc.statusTracker()

    def tick():
        if progress is None:
            return
        done = total = 0
        for sid in tracker.getActiveStageIds():
            info = tracker.getStageInfo(sid)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        progress(done, total or len(pieces), time.perf_counter() - t0)

    writer = df.write.mode("overwrite" if overwrite else "errorifexists")
    t_run = time.perf_counter()
    run_job(sess, lambda: writer.parquet(out), tick=tick, what="sweep")
    run_seconds = time.perf_counter() - t_run

    from .sweep_report import report_spark

    rep = report_spark(spark, out, order={c.name: i for i, c in enumerate(configs)})
    per_config = {c["config"]: c["runs"] for c in rep.configs}
    runs, violating, summary = rep.runs, rep.violating, rep.violations
    elapsed = time.perf_counter() - t0
    stats = {"master": sc.master, "tasks": len(pieces), "spark_version": sc.version,
             "startup_seconds": round(sess.startup, 3), "run_seconds": round(run_seconds, 3),
             "runs_per_second": round(runs / run_seconds, 1) if run_seconds > 0 else 0.0}
    return SweepResult(out, runs, violating, summary, per_config, elapsed, stats)
