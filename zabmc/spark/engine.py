"""`zabmc check --engine spark`: the level-synchronous BFS of `zabmc.explore.bfs` on Apache Spark.

Pipeline (chosen by measurement; reports/spark.md has the numbers). Each fingerprint range
(`fp_partition`) is one partition, and each level is one Spark stage of one task per partition,
`zabmc.spark.worker.step`, which reads the shuffle the previous level wrote: that range's visited
set (sorted numpy `S16` chunks, which the range's task sent to itself) and the candidates the
previous level routed to it (compressed batches of encoded states with their order keys). The task

1. merges: drops the visited candidates with `searchsorted`, keeps the smallest key per
   fingerprint and inserts the rest into the visited set;
2. expands the new states it kept (its part of the level) in the same Python process with
   `Env.successors` and `Env.fingerprint`, deduplicates per chunk keeping the smallest order key,
   and writes the next shuffle: each candidate batch to the partition owning its fingerprint, and
   the new visited set to itself.

So the frontier never goes back to the JVM, the visited set crosses it once per level (one shuffle
write and read, between a task and itself; on a cluster, that is local disk), and a level has one
stage boundary. Each level is run with `SparkContext.submitMapStage` (the next level's stage finds
the shuffle written and skips it); every `CHECKPOINT_EVERY` levels the shuffle a level reads is
persisted (memory and disk, so it may spill) and locally checkpointed, which cuts the lineage and
lets Spark remove the older shuffles.

The driver sees only per-partition counts and the smallest-key violation per property (an
accumulator keyed by partition). The order key is the event-index path itself, which makes the
result identical to the in-process BFS (same distinct and per-depth counts, same first violation,
same path; `zabmc.spark.worker` explains why) and carries each counterexample's path to the driver,
where `zabmc.explore.trace.rebuild` replays it like any other.

When BFS would stop at a violation in the middle of a level, two small jobs re-read the last two
shuffles and count what BFS had done by then (the new states and the successors before the
violating one), so even a stopped run reports the in-process engine's numbers.
"""

from __future__ import annotations

import statistics
import time
from functools import partial

from zabmc.errors import ZabmcError
from zabmc.explore.env import Env
from zabmc.explore.outcome import DEPTH_BOUND, EXHAUSTED, TIME_LIMIT, Outcome, StopReason
from zabmc.explore.search import Search

from .session import DEFAULT_MASTER, check_master, check_partitions
from .worker import (
    EnvSpec,
    StatsParam,
    choose_codec,
    count_before,
    fp_partition,
    make_codec,
    seed,
    step,
    successors_before,
)


def key_path(key: bytes) -> tuple:
    """The event-index path an order key spells."""
    return tuple(int.from_bytes(key[i:i + 2], "big") for i in range(0, len(key), 2))


def env_spec(env: Env) -> EnvSpec:
    return EnvSpec(env.model.name, tuple(env.config), tuple(env.checker.names), choose_codec(env))


CHECKPOINT_EVERY = 10  # levels between two cuts of the lineage


def _shuffled(sc, keyed, nparts: int):
    """`keyed` (a map side yielding (partition id, pickled batch) byte pairs) shuffled to `nparts`
    partitions: (the RDD of the batches each partition receives, the shuffle's dependency, which
    `submitMapStage` runs).

    The shuffle is PySpark's own `partitionBy` minus its per-record Python loop (the map side
    buckets its output itself), with one partitioner, `PythonPartitioner(nparts,
    id(fp_partition))`, for every level."""
    from pyspark import RDD
    from pyspark.serializers import BatchedSerializer

    keyed._bypass_serializer = True
    jvm = sc._jvm
    pairs = jvm.PairwiseRDD(keyed._jrdd.rdd()).asJavaPairRDD()
    part = pairs.partitionBy(jvm.PythonPartitioner(nparts, id(fp_partition)))
    rdd = RDD(jvm.PythonRDD.valueOfPair(part), sc, BatchedSerializer(sc._unbatched_serializer))
    if rdd.getNumPartitions() != nparts:
        raise ZabmcError("internal error: a level's shuffle has the wrong partition count")
    return rdd, part.rdd().dependencies().head()


class SparkBFS(Search):
    """Breadth-first search on Spark; the same `Outcome` as the in-process `BFS`.

    Options: `master`, `partitions` (default: the master's cores), `verbose`. Spark numbers go to
    `outcome.extra["spark"]`."""

    name = "bfs"
    engine = "spark"

    def search(self) -> None:
        opts = self.options
        master = opts.get("master", DEFAULT_MASTER)
        partitions = opts.get("partitions")
        check_master(master)
        check_partitions(partitions)
        from .session import Cancelled, get_session, local_cores, require_pyspark, run_job

        require_pyspark()
        from pyspark import StorageLevel

        env, out, cfg = self.env, self.out, self.config
        self.levels = levels = []
        self.distinct = distinct = 1
        self.frontier = frontier = 1
        self.depth = depth = 0
        t0 = self.t0
        time_limit = self.time_limit
        deadline = t0 + time_limit if time_limit is not None else None
        record = self.record

        init, v0 = env.initial()
        out.generated = 1
        out.per_depth.append(1)
        if v0 is not None:
            record(v0, 0, ())
        spec = env_spec(env)

        sess = get_session(master, partitions=partitions, verbose=opts.get("verbose", False))
        sc = sess.sc
        nparts = partitions or local_cores(master) or sc.defaultParallelism
        self.extra = extra = {
            "master": sc.master, "partitions": nparts, "spark_version": sc.version,
            "codec": spec.codec, "startup_seconds": round(sess.startup, 3), "levels": levels,
        }
        out.extra["spark"] = extra
        mem_disk = StorageLevel.MEMORY_AND_DISK
        submit_map_stage = sc._jsc.sc().submitMapStage

        held: list = []  # checkpointed shuffles still in memory, oldest first
        try:
            ts = time.perf_counter()
            codec = make_codec(spec.codec, env)
            # level 0's candidates: the initial state, routed to its partition
            Yin, _ = _shuffled(sc, sc.parallelize([0], 1).mapPartitions(
                partial(seed, nparts, env.fingerprint(init), codec.encode(init))), nparts)
            extra["setup_seconds"] = round(time.perf_counter() - ts, 3)
            # Stage j merges level j and expands it into level j+1's candidates; level j's record
            # (as in the in-process engine: the expansion that generated it, then its merge) is
            # complete when stage j is.
            pend = None  # stage j-1's expansion: (successors, violations, busy seconds, wall seconds)

            def finish_level(new, merges, gen, expand_s, seconds):
                """Count a finished level: `new` states, its merges' (.., visited, frontier bytes,
                candidates, busy seconds) per task, the `gen` successors that generated it and the
                busy seconds of those expansions."""
                nonlocal depth, distinct, frontier
                out.generated += gen
                if new:
                    depth += 1
                    out.per_depth.append(new)
                    distinct += new
                levels.append({
                    "depth": depth, "frontier": frontier, "new": new, "generated": gen,
                    "candidates": sum(m[3] for m in merges),
                    "frontier_bytes": sum(m[2] for m in merges), "seconds": round(seconds, 4),
                    "expand_task_seconds": expand_s,
                    "merge_task_seconds": [round(x, 4) for x in sorted(m[4] for m in merges)]})
                self.observer.on_level(depth, frontier, new, seconds)
                frontier = new
            j = 0
            while cfg.depth > 0:
                lt = time.perf_counter()
                if deadline is not None and lt >= deadline:
                    out.stop_reason = TIME_LIMIT
                    break
                expand_it = j < cfg.depth
                acc = sc.accumulator({}, StatsParam())
                Yout, dep = _shuffled(sc, Yin.mapPartitionsWithIndex(
                    partial(step, acc, spec, self.stop_at_first, nparts, expand_it)), nparts)
                if j and j % CHECKPOINT_EVERY == 0:
                    Yin.persist(mem_disk)
                    Yin.localCheckpoint()
                    run_job(sess, Yin._jrdd.count, deadline=deadline, what=f"level {j} checkpoint")
                    for rdd in held:  # the new checkpoint is the one a lost shuffle is rebuilt from
                        rdd.unpersist()
                    held = [Yin]

                def tick():
                    self.progress(depth + 1, distinct, frontier, check_time=False)

                run_job(sess, lambda dep=dep: submit_map_stage(dep).get(), tick=tick,
                        deadline=deadline, what=f"level {j}")
                # per task: (new, visited, frontier bytes, candidates, merge seconds,
                #            successors, violations, expand seconds)
                parts = list(acc.value.values())
                wall = time.perf_counter() - lt
                # a level's time: the part of the stage before that expanded its parents (all of it
                # for level 1), and its own merge: the stage's slowest merge
                merge_wall = min(max((p[4] for p in parts), default=0.0), wall) if j else 0.0
                new = sum(p[0] for p in parts)
                if j:
                    last = not expand_it or not new
                    finish_level(new, parts, pend[0], pend[2],
                                 pend[3] + (wall if last else merge_wall))
                    self.progress(depth, distinct, frontier, check_time=False)
                    if last:
                        break
                pend = (sum(p[5] for p in parts), [p[6] for p in parts],
                        [round(x, 4) for x in sorted(p[7] for p in parts)], wall - merge_wall)
                # per property, the smallest-key step of level j+1 violating it; in key order, these
                # are the steps at which the in-process scan records something
                steps: dict = {}
                reported = {f.violation.property for f in out.violations}
                for viol in pend[1]:
                    for prop, (key, v) in viol.items():
                        if prop not in reported and (prop not in steps or key < steps[prop][0]):
                            steps[prop] = (key, v)
                ordered = sorted(steps.values(), key=lambda kv: kv[0])
                if ordered and self.stop_at_first:
                    # BFS stops at the first of them, in the middle of level j+1: count what it had
                    # done by then, from the shuffles this stage read and wrote
                    vkey, v = ordered[0]
                    vparent, vei = vkey[:-2], int.from_bytes(vkey[-2:], "big")
                    rows = run_job(sess, Yout.mapPartitions(partial(count_before, vkey)).collect,
                                   what="count before the violation")
                    gen = run_job(sess, Yin.mapPartitions(
                        partial(successors_before, spec, vparent)).sum,
                        what="count before the violation") + vei + 1
                    vdepth = depth + 1
                    finish_level(sum(r[0] for r in rows), [r[1:] for r in rows], gen, pend[2],
                                 pend[3] + time.perf_counter() - lt - wall)
                    record(v, vdepth, key_path(vkey))  # stops the search
                for vkey, v in ordered:
                    record(v, depth + 1, key_path(vkey))
                Yin = Yout
                j += 1
        except Cancelled:
            out.stop_reason = TIME_LIMIT
        finally:
            self.distinct, self.frontier, self.depth = distinct, frontier, depth
            for rdd in held:
                try:
                    rdd.unpersist()
                except Exception:  # noqa: BLE001 - the session may be gone (Ctrl-C)
                    pass

    def finish(self) -> None:
        out = self.out
        out.distinct = self.distinct
        out.depth_reached = self.depth
        out.seen_bytes = 16 * self.distinct
        extra, levels = self.extra, self.levels
        if extra is None:  # stopped before the session started
            return
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
        extra["elapsed_seconds"] = round(time.perf_counter() - self.t0, 3)

    def natural_stop(self) -> StopReason:
        if self.frontier and self.depth >= self.config.depth:
            self.out.extra["frontier_left"] = self.frontier
            return DEPTH_BOUND
        return EXHAUSTED

    def run(self) -> Outcome:
        self.levels, self.extra = [], None
        self.distinct, self.frontier, self.depth = 1, 1, 0
        self.out.extra["frontier_left"] = 0
        return super().run()


def spark_bfs(env: Env, **kw) -> Outcome:
    """Breadth-first search of `env` on Spark (see `SparkBFS` and `Search` for the arguments)."""
    return SparkBFS(env, **kw).run()
