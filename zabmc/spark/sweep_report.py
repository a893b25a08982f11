"""What a sweep's Parquet table says: runs per configuration, and per configuration and property
the runs that violated it first, the smallest such seed (with its tick) and the earliest tick
(with its seed).

Two readers give the same `Report`:
- `arrow`: pyarrow, in this process, streaming the table a record batch at a time (memory: one
  batch and the groups, whatever the table's size); no JVM;
- `spark`: Spark SQL aggregations, for tables too big to read in one process in good time, or on
  storage only Spark reaches.
`auto` takes arrow for tables of up to `ARROW_MAX_ROWS` rows on a local file system, Spark above.
`zabmc sweep` summarises the table it just wrote with the Spark reader (its session is up).
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from zabmc.core.errors import UsageError

ARROW_MAX_ROWS = 20_000_000
CONFIG_COLUMNS = ("config", "nodes", "rounds", "proposals", "partition")
NEEDED = (*CONFIG_COLUMNS, "seed", "violation", "tick", "message")
ENGINES = ("auto", "arrow", "spark")


class Report(NamedTuple):
    table: str
    runs: int
    violating: int
    configs: list  # of dict(config, nodes, rounds, proposals, partition, runs, violating)
    violations: list  # of dict(config, property, runs, first_seed, first_tick, first_message,
    #                          earliest_tick, earliest_seed, latest_tick)
    engine: str


def _merge_violation(acc: dict, key, runs, first, earliest, latest) -> None:
    """Fold one partial aggregate: `first` = (seed, tick, message), `earliest` = (tick, seed)."""
    old = acc.get(key)
    if old is None:
        acc[key] = [runs, first, earliest, latest]
        return
    old[0] += runs
    old[1] = min(old[1], first, key=lambda t: t[0])
    old[2] = min(old[2], earliest)
    old[3] = max(old[3], latest)


def _assemble(table: str, per_config: dict, viol: dict, engine: str, order=None) -> Report:
    """`per_config`: config -> [nodes, rounds, proposals, partition, runs];
    `viol`: (config, property) -> [runs, (seed, tick, message), (tick, seed), latest tick]."""
    def config_key(name):
        if order is not None and name in order:
            return (0, order[name], "")
        n, r, p, cut, _ = per_config[name]
        return (1, (n, r, p, cut), name)

    configs = []
    for name in sorted(per_config, key=config_key):
        n, r, p, cut, runs = per_config[name]
        bad = sum(v[0] for (c, _), v in viol.items() if c == name)
        configs.append(dict(config=name, nodes=n, rounds=r, proposals=p, partition=cut,
                            runs=runs, violating=bad))
    rank = {c["config"]: i for i, c in enumerate(configs)}
    rows = []
    for (name, prop), (runs, first, earliest, latest) in viol.items():
        rows.append(dict(config=name, property=prop, runs=runs, first_seed=first[0],
                         first_tick=first[1], first_message=first[2], earliest_tick=earliest[0],
                         earliest_seed=earliest[1], latest_tick=latest))
    rows.sort(key=lambda d: (rank.get(d["config"], len(rank)), -d["runs"], d["property"]))
    return Report(table, sum(c["runs"] for c in configs), sum(d["runs"] for d in rows), configs,
                  rows, engine)


# --- arrow --------------------------------------------------------------------------------------
def require_pyarrow() -> None:
    """A one-line UsageError saying how to install pyarrow, which reads a local table (and checks
    it before Spark starts), when it is missing."""
    try:
        import pyarrow.dataset  # noqa: F401
    except ImportError:
        raise UsageError("the sweep report needs pyarrow, which is missing: "
                         "pip install 'zabmc[spark]'") from None



def _dataset(path: str):
    import pyarrow.dataset as ds

    try:
        d = ds.dataset(path, format="parquet")
        names = set(d.schema.names)
    except (OSError, ValueError) as e:  # ArrowInvalid is a ValueError
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"cannot read {path} as a Parquet table: {first[:200]}") from None
    missing = [c for c in NEEDED if c not in names]
    if missing:
        raise UsageError(f"{path} is not a zabmc sweep table (no column {', '.join(missing)})")
    return d


def count_rows(path: str) -> int:
    try:
        return _dataset(path).count_rows()
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {str(e).strip().splitlines()[0][:200]}") from None


def report_arrow(path: str, order=None, batch_rows: int = 1 << 20) -> Report:
    import pyarrow as pa
    import pyarrow.compute as pc

    d = _dataset(path)
    per_config: dict = {}
    viol: dict = {}
    try:
        for batch in d.to_batches(columns=list(NEEDED), batch_size=batch_rows):
            if not batch.num_rows:
                continue
            t = pa.Table.from_batches([batch])
            for r in t.group_by(list(CONFIG_COLUMNS)).aggregate([("seed", "count")]).to_pylist():
                k = r["config"]
                if k in per_config:
                    per_config[k][4] += r["seed_count"]
                else:
                    per_config[k] = [r["nodes"], r["rounds"], r["proposals"], r["partition"],
                                     r["seed_count"]]
            v = t.filter(pc.is_valid(t["violation"]))
            if not v.num_rows:
                continue
            keys = ["config", "violation"]
            by_seed = v.sort_by([("seed", "ascending")]).group_by(keys, use_threads=False) \
                .aggregate([("seed", "count"), ("seed", "first"), ("tick", "first"),
                            ("message", "first"), ("tick", "max")])
            by_tick = v.sort_by([("tick", "ascending"), ("seed", "ascending")]) \
                .group_by(keys, use_threads=False).aggregate([("tick", "first"), ("seed", "first")])
            earliest = {(r["config"], r["violation"]): (r["tick_first"], r["seed_first"])
                        for r in by_tick.to_pylist()}
            for r in by_seed.to_pylist():
                key = (r["config"], r["violation"])
                _merge_violation(viol, key, r["seed_count"],
                                 (r["seed_first"], r["tick_first"], r["message_first"]),
                                 earliest[key], r["tick_max"])
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {str(e).strip().splitlines()[0][:200]}") from None
    return _assemble(path, per_config, viol, "arrow", order)


def literal(path: str) -> str:
    """`path` with Hadoop's glob characters escaped, so that Spark reads that one table: a
    directory named `runs[1]` is not the pattern `runs1`."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", path)


# --- spark --------------------------------------------------------------------------------------


def report_spark(spark, path: str, order=None) -> Report:
    """The same aggregates with Spark SQL (`spark`: a live SparkSession)."""
    from pyspark.sql import functions as F

    table = spark.read.parquet(literal(path))
    missing = [c for c in NEEDED if c not in table.columns]
    if missing:
        raise UsageError(f"{path} is not a zabmc sweep table (no column {', '.join(missing)})")
    per_config = {r["config"]: [r["nodes"], r["rounds"], r["proposals"], r["partition"], r["n"]]
                  for r in table.groupBy(*CONFIG_COLUMNS).agg(F.count("*").alias("n")).collect()}
    rows = (table.where(F.col("violation").isNotNull())
            .groupBy("config", "violation")
            .agg(F.count("*").alias("runs"),
                 F.min(F.struct("seed", "tick", "message")).alias("first"),
                 F.min(F.struct("tick", "seed")).alias("earliest"),
                 F.max("tick").alias("latest"))
            .collect())
    viol: dict = {}
    for r in rows:
        f, e = r["first"], r["earliest"]
        _merge_violation(viol, (r["config"], r["violation"]), r["runs"],
                         (f["seed"], f["tick"], f["message"]), (e["tick"], e["seed"]), r["latest"])
    return _assemble(path, per_config, viol, "spark", order)


def report(path: str, engine: str = "auto", master: str = "local[*]",
           verbose: bool = False) -> Report:
    """Summarise the sweep table at `path` with the chosen reader (see the module's text)."""
    if engine not in ENGINES:
        raise UsageError(f"--report-engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    remote = "://" in path and not path.startswith("file://")
    if not remote:
        path = os.path.abspath(path.removeprefix("file://"))
        if not os.path.exists(path):
            raise UsageError(f"no sweep table at {path}")
    if not remote:
        require_pyarrow()
        _dataset(path)  # a one-line error for what is not a sweep table, before any JVM starts
    if engine == "auto":
        engine = "spark" if remote or count_rows(path) > ARROW_MAX_ROWS else "arrow"
    if engine == "arrow":
        if remote:
            raise UsageError(f"the arrow reader reads local tables only; {path} needs "
                             "--report-engine spark")
        return report_arrow(path)
    from .session import get_session, require_pyspark, run_job

    require_pyspark()
    sess = get_session(master, verbose=verbose)
    return run_job(sess, lambda: report_spark(sess.spark, path), what="sweep report")
