"""`zabmc check --engine spark`: the level-synchronous BFS of `zabmc.explore.bfs` on Apache Spark.

Pipeline (chosen by measurement; reports/spark.md has the numbers). One RDD `J` holds, per
partition, that fingerprint range's visited set (sorted numpy `S16` chunks) and its frontier
(compressed batches of encoded states with their order keys); `zabmc.spark.worker` lists the
records. One level is one Spark job:

1. map: `J.mapPartitions(expand)` runs `Env.successors` and `Env.fingerprint` over the frontier,
   deduplicates per chunk keeping the smallest order key, and sends each candidate, in batches,
   to the partition owning its fingerprint (`fp_partition`);
2. reduce: the union of `J` with the candidates is partition-aware (same partitioner, so no
   shuffle of the visited set); `mapPartitions(merge, preservesPartitioning=True)` drops the
   visited candidates with `searchsorted`, keeps the smallest key per fingerprint and inserts the
   rest. The result is the next `J`, persisted (memory and disk, so it may spill) and locally
   checkpointed every level, so lineage never grows.

The driver sees only per-partition counts and the smallest-key violation per property (an
accumulator keyed by partition). The order key is the event-index path itself, which makes the
result identical to the in-process BFS (same distinct and per-depth counts, same first violation,
same path; `zabmc.spark.worker` explains why) and carries each counterexample's path to the driver,
where `zabmc.explore.trace.rebuild` replays it like any other.

When BFS would stop at a violation in the middle of a level, the level is computed whole and then
two small jobs count what BFS had done by then (the new states and the successors before the
violating one), so even a stopped run reports the in-process engine's numbers.
"""

from __future__ import annotations

import statistics
import time
from functools import partial

from zabmc.errors import ZabmcError
from zabmc.explore.env import Env
from zabmc.explore.outcome import (
    DEPTH_BOUND,
    EXHAUSTED,
    INTERRUPTED,
    NULL_OBSERVER,
    TIME_LIMIT,
    VIOLATION,
    Observer,
    Outcome,
    Progress,
    recorder,
)

from .session import DEFAULT_MASTER, check_master, check_partitions
from .worker import (
    EnvSpec,
    StatsParam,
    choose_codec,
    count_before,
    expand,
    fp_partition,
    make_codec,
    merge,
    seed,
    successors_before,
)


def key_path(key: bytes) -> tuple:
    """The event-index path an order key spells."""
    return tuple(int.from_bytes(key[i:i + 2], "big") for i in range(0, len(key), 2))


def env_spec(env: Env) -> EnvSpec:
    return EnvSpec(env.model.name, tuple(env.config), tuple(env.checker.names), choose_codec(env))


def _merged(sc, keyed, J, nparts: int, acc):
    """The next level RDD: `keyed` (a map side yielding (partition id, pickled batch) byte pairs)
    shuffled to its partitions, next to `J`'s partitions, through `merge`.

    The shuffle is PySpark's own `partitionBy` minus its per-record Python loop (the map side
    buckets its output itself). Every level's partitioner is `PythonPartitioner(nparts,
    id(fp_partition))`, so J and the candidates are co-partitioned and the JVM unions them with a
    `PartitionerAwareUnionRDD`: partition i of J next to the candidates of partition i, and the
    visited set is never shuffled. Both sides are pickled batches, which one deserializer reads."""
    from pyspark import RDD
    from pyspark.serializers import BatchedSerializer

    keyed._bypass_serializer = True
    jvm = sc._jvm
    pairs = jvm.PairwiseRDD(keyed._jrdd.rdd()).asJavaPairRDD()
    shuffled = jvm.PythonRDD.valueOfPair(
        pairs.partitionBy(jvm.PythonPartitioner(nparts, id(fp_partition))))
    both = shuffled if J is None else J._jrdd.union(shuffled)
    rdd = RDD(both, sc, BatchedSerializer(sc._unbatched_serializer))
    if rdd.getNumPartitions() != nparts:
        raise ZabmcError("internal error: the visited set and the candidates are not "
                         "co-partitioned")
    return rdd.mapPartitionsWithIndex(partial(merge, acc), preservesPartitioning=True)


def spark_bfs(env: Env, *, stop_at_first: bool = True, observer: Observer = NULL_OBSERVER,
              master: str = DEFAULT_MASTER, partitions: int | None = None, verbose: bool = False,
              time_limit: float | None = None) -> Outcome:
    """Breadth-first search on Spark; the same `Outcome` as `zabmc.explore.bfs(env, ...)`.

    `partitions` defaults to the master's cores. Spark numbers go to `outcome.extra["spark"]`."""
    check_master(master)
    check_partitions(partitions)
    from .session import Cancelled, get_session, local_cores, require_pyspark, run_job

    require_pyspark()
    from pyspark import StorageLevel

    cfg = env.config
    out = Outcome(strategy="bfs", engine="spark", model=env.model.name, config=cfg,
                  invariants=env.checker.names)
    t0 = time.perf_counter()
    deadline = t0 + time_limit if time_limit is not None else None
    record = recorder(out, observer, stop_at_first)

    init, v0 = env.initial()
    out.generated = 1
    out.per_depth.append(1)
    stop = v0 is not None and record(v0, 0, ())
    spec = env_spec(env)

    sess = get_session(master, partitions=partitions, verbose=verbose)
    sc = sess.sc
    nparts = partitions or local_cores(master) or sc.defaultParallelism
    levels: list[dict] = []
    extra = {
        "master": sc.master, "partitions": nparts, "spark_version": sc.version,
        "codec": spec.codec, "startup_seconds": round(sess.startup, 3), "levels": levels,
    }
    out.extra["spark"] = extra
    mem_disk = StorageLevel.MEMORY_AND_DISK

    def materialize(rdd, what, tick=None):
        rdd.persist(mem_disk)
        rdd.localCheckpoint()
        run_job(sess, rdd._jrdd.count, tick=tick, deadline=deadline, what=what)

    distinct = 1
    frontier = 1
    depth = 0
    J = None
    try:
        ts = time.perf_counter()
        codec = make_codec(spec.codec, env)
        acc = sc.accumulator({}, StatsParam())
        J = _merged(sc, sc.parallelize([0], 1).mapPartitions(
            partial(seed, nparts, env.fingerprint(init), codec.encode(init))), None, nparts, acc)
        if not stop and cfg.depth > 0:
            materialize(J, "initial state")
        extra["setup_seconds"] = round(time.perf_counter() - ts, 3)

        while frontier and not stop and depth < cfg.depth:
            lt = time.perf_counter()
            if deadline is not None and lt >= deadline:
                out.stop_reason = TIME_LIMIT
                break
            acc = sc.accumulator({}, StatsParam())
            J2 = _merged(sc, J.mapPartitions(partial(expand, spec, stop_at_first, nparts)), J,
                         nparts, acc)

            def tick(lt=lt):
                observer.on_progress(Progress(depth + 1, out.generated, distinct, frontier,
                                              time.perf_counter() - t0))

            materialize(J2, f"level {depth + 1}", tick)
            parts = acc.value.values()
            new = sum(p[0] for p in parts)
            gen = sum(p[1] for p in parts)
            nbytes = sum(p[4] for p in parts)
            ncand = sum(p[5] for p in parts)
            # busy seconds of each task of the level's two stages: a stage lasts as long as its
            # slowest task, so max vs mean shows the time cores sat idle at the barriers
            expand_s = [round(x, 4) for x in sorted(x for p in parts for x in p[6])]
            merge_s = [round(x, 4) for x in sorted(p[7] for p in parts)]
            # per property, the smallest-key step violating it; in key order, these are the steps
            # at which the in-process scan records something
            steps: dict = {}
            reported = {f.violation.property for f in out.violations}
            for p in parts:
                for prop, (key, v) in p[3].items():
                    if prop not in reported:
                        steps[key] = v
            if steps:
                ordered = sorted(steps.items())
                if stop_at_first:
                    vkey, v = ordered[0]
                    vparent, vei = vkey[:-2], int.from_bytes(vkey[-2:], "big")
                    new = run_job(sess, J2.mapPartitions(partial(count_before, vkey)).sum,
                                  what="count before the violation")
                    gen = run_job(sess, J.mapPartitions(
                        partial(successors_before, spec, vparent)).sum,
                        what="count before the violation") + vei + 1
                    stop = record(v, depth + 1, key_path(vkey))
                else:
                    for vkey, v in ordered:
                        record(v, depth + 1, key_path(vkey))
            out.generated += gen
            J.unpersist()
            J = J2
            if new:
                depth += 1
                out.per_depth.append(new)
                distinct += new
            seconds = time.perf_counter() - lt
            levels.append({"depth": depth, "frontier": frontier, "new": new, "generated": gen,
                           "candidates": ncand, "frontier_bytes": nbytes,
                           "seconds": round(seconds, 4), "expand_task_seconds": expand_s,
                           "merge_task_seconds": merge_s})
            observer.on_level(depth, frontier, new, seconds)
            frontier = new
            observer.on_progress(Progress(depth, out.generated, distinct, frontier,
                                          time.perf_counter() - t0))
    except Cancelled:
        out.stop_reason = TIME_LIMIT
    except KeyboardInterrupt:
        out.stop_reason = INTERRUPTED
    finally:
        if J is not None:
            try:
                J.unpersist()
            except Exception:  # noqa: BLE001 - the session may be gone (Ctrl-C)
                pass

    out.distinct = distinct
    out.depth_reached = depth
    out.seen_bytes = 16 * distinct
    out.elapsed = time.perf_counter() - t0
    if out.stop_reason not in (INTERRUPTED, TIME_LIMIT):
        if out.violations and stop_at_first:
            out.stop_reason = VIOLATION
        elif frontier and depth >= cfg.depth:
            out.stop_reason = DEPTH_BOUND
        else:
            out.stop_reason = EXHAUSTED
    out.extra["frontier_left"] = frontier if out.stop_reason == DEPTH_BOUND else 0
    secs = [lv["seconds"] for lv in levels]
    extra["levels_count"] = len(levels)
    extra["level_seconds_total"] = round(sum(secs), 3)
    extra["level_seconds_median"] = round(statistics.median(secs), 4) if secs else 0.0
    # Python task time, summed and along the critical path (the slowest task of each stage)
    extra["task_seconds"] = {
        "expand": round(sum(sum(lv["expand_task_seconds"]) for lv in levels), 3),
        "expand_slowest": round(sum(max(lv["expand_task_seconds"], default=0.0)
                                    for lv in levels), 3),
        "merge": round(sum(sum(lv["merge_task_seconds"]) for lv in levels), 3),
        "merge_slowest": round(sum(max(lv["merge_task_seconds"], default=0.0)
                                   for lv in levels), 3),
    }
    extra["elapsed_seconds"] = round(out.elapsed, 3)
    observer.on_finish(out)
    return out
