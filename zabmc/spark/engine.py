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

With level snapshots (`--checkpoint DIR`), a stage started when one is due also writes, in each
task between its merge and its expansion, its partition's part of the level boundary, and the
driver seals the parts with a manifest once the level is counted; `--resume DIR` starts the level
loop at the checkpointed level from a shuffle of each partition's visited set and frontier (read
by the tasks from a Spark snapshot, or split by the driver from an in-process checkpoint), which
that level's merge passes through (`zabmc.spark.checkpoint`).

When BFS would stop at a violation in the middle of a level, two small jobs re-read the last two
shuffles and count what BFS had done by then (the new states and the successors before the
violating one), so even a stopped run reports the in-process engine's numbers.
"""

from __future__ import annotations

import os
import statistics
import time
from functools import partial
from typing import NamedTuple

from zabmc.core.errors import ZabmcError
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
    """What executors rebuild `env` from, with where they find its model when zabmc's entry
    points are not installed there (the package shipped as --py-files, docs/spark.md)."""
    from zabmc.core.model import MODELS
    from zabmc.core.model import where

    found = where(env.model.name) if MODELS.get(env.model.name, (None,))[0] is env.model else ()
    return EnvSpec(env.model.name, tuple(env.config), tuple(env.checker.names), choose_codec(env),
                   found)


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


class Expansion(NamedTuple):
    """A stage's expansion, as the driver keeps it until the next stage has merged its output."""

    successors: int  # generated, over all tasks
    violations: list  # per task: {property: (smallest order key, violation)}
    task_seconds: list  # per task, sorted
    wall: float  # the stage's seconds not spent merging


class SparkBFS(Search):
    """Breadth-first search on Spark; the same `Outcome` as the in-process `BFS`.

    Options: `master`, `partitions` (default: the master's cores), `verbose`, `checkpoint_dir`,
    `snapshots` (a `checkpoint.LevelSnapshots`: write level snapshots a later run resumes from)
    and `resume` (a checkpoint to continue from, in the in-process format or the Spark one:
    `zabmc.spark.checkpoint`). Spark numbers go to `outcome.extra["spark"]`.

    Every `CHECKPOINT_EVERY` levels the lineage is cut, so that a lost shuffle output is rebuilt
    from the cut rather than from level 0 (`lineage_cut` in the numbers): on a local master with
    `localCheckpoint` (executors live in the driver's JVM, so losing one is losing the run); on a
    cluster with `checkpoint_dir`, a reliable checkpoint written there, which must be storage
    every executor and the driver reach (HDFS, a shared file system); on a cluster without it not
    at all, since a local checkpoint dies with the executor that holds it and would fail the job.
    Without a cut, losing an executor costs the recomputation of its shuffle outputs back to
    level 0.

    `search` starts the session and runs `_levels`, the level loop: one Spark stage a level
    (`_run_stage`), counted when the next stage has merged its output (`_finish_level`); a
    violation in the middle of a level is accounted for by `_stop_in_level`. `finish` writes the
    summary."""

    name = "bfs"
    engine = "spark"

    def search(self) -> None:
        opts = self.options
        master = opts.get("master", DEFAULT_MASTER)
        partitions = opts.get("partitions")
        check_master(master)
        check_partitions(partitions)
        from .session import Cancelled, get_session, local_cores, require_pyspark

        require_pyspark()
        env, out = self.env, self.out
        self.levels = []
        self.distinct, self.frontier, self.depth = 1, 1, 0
        time_limit = self.time_limit
        self.deadline = self.t0 + time_limit if time_limit is not None else None

        snap = opts.get("resume")
        self.snapshots = opts.get("snapshots")  # a checkpoint.LevelSnapshots, or None
        self.elapsed_before = 0.0
        if snap is None:
            init, v0 = env.initial()
            out.generated = 1
            out.per_depth.append(1)
            if v0 is not None:
                self.record(v0, 0, ())
        else:
            self._restore(snap)
        self.spec = spec = env_spec(env)

        self.sess = sess = get_session(master, partitions=partitions,
                                       verbose=opts.get("verbose", False))
        sc = sess.sc
        self.nparts = partitions or local_cores(master) or sc.defaultParallelism
        checkpoint_dir = opts.get("checkpoint_dir")
        if checkpoint_dir:
            sc.setCheckpointDir(checkpoint_dir)
            self.cut = "reliable"
        else:
            self.cut = "local" if sc.master.startswith("local") else None
        self.extra = {
            "master": sc.master, "partitions": self.nparts, "spark_version": sc.version,
            "codec": spec.codec, "startup_seconds": round(sess.startup, 3), "levels": self.levels,
            "lineage_cut": self.cut or "none",
        }
        if self.snapshots is not None:
            self.extra["level_snapshots"] = self.snapshots.write_seconds
        out.extra["spark"] = self.extra
        self.held = []  # checkpointed shuffles still in memory, oldest first
        try:
            ts = time.perf_counter()
            if snap is None:
                codec = make_codec(spec.codec, env)
                # level 0's candidates: the initial state, routed to its partition
                Yin, _ = _shuffled(sc, sc.parallelize([0], 1).mapPartitions(
                    partial(seed, self.nparts, env.fingerprint(init), codec.encode(init))),
                    self.nparts)
                j0 = 0
            elif self.frontier and self.depth < self.config.depth:
                Yin, j0 = self._resumed_shuffle(snap), snap.depth
            else:  # the checkpoint is the end of the search (exhausted, or at the depth bound)
                return
            self.extra["setup_seconds"] = round(time.perf_counter() - ts, 3)
            self._levels(Yin, j0)
        except Cancelled:
            out.stop_reason = TIME_LIMIT
        finally:
            for rdd in self.held:
                try:
                    rdd.unpersist()
                except Exception:  # noqa: BLE001 - the session may be gone (Ctrl-C)
                    pass

    def _restore(self, snap) -> None:
        """The counters, violations and level of a checkpoint (either format) this run resumes
        from; its visited set and frontier are shipped to the partitions by `_resumed_shuffle`."""
        from zabmc.explore.checkpoint import restore_violations

        out, meta = self.out, snap.meta
        out.generated = meta["generated"]
        out.per_depth = list(meta["per_depth"])
        for f in restore_violations(self.env, meta):
            self._reported[f.violation.property] = len(out.violations)
            out.violations.append(f)
        self.elapsed_before = float(meta.get("extra", {}).get("elapsed", 0.0))
        out.extra["elapsed_before_resume"] = self.elapsed_before
        out.extra["distinct_before_resume"] = meta["distinct"]  # not counted in this run's rate
        self.depth = snap.depth
        self.distinct = meta["distinct"]
        self.frontier = meta["frontier_states"]
        if self.snapshots is not None and os.path.realpath(self.snapshots.dir) == \
                os.path.realpath(snap.directory):
            self.snapshots.level = snap.depth  # that checkpoint is this state

    def _resumed_shuffle(self, snap):
        """The shuffle a resumed run's first stage reads: each partition's share of the
        checkpoint's visited set and some of its frontier (with the states' order keys), as
        `Seen` and `Frontier` records, which that stage's merge passes through."""
        from . import checkpoint as sck

        sc, nparts = self.sess.sc, self.nparts
        if isinstance(snap, sck.SparkSnapshot):  # each task reads its part
            keyed = sc.parallelize(range(nparts), nparts).mapPartitionsWithIndex(
                lambda pid, it: sck.resume_part(snap.directory, snap.meta, nparts, pid, it))
        else:  # the in-process format: the driver splits it
            parts = sck.bfs_snapshot_parts(snap, nparts)
            keyed = sc.parallelize(list(enumerate(parts)), nparts).mapPartitions(sck.ship_parts)
        Yin, _ = _shuffled(sc, keyed, nparts)
        return Yin

    def _levels(self, Yin, j0: int = 0) -> None:
        """The level loop, from stage `j0` (0, or the level a resumed run starts from, whose
        merge only passes the checkpoint through). Stage j merges level j and expands it into
        level j+1's candidates; level j's record (as in the in-process engine: the expansion that
        generated it, then its merge) is complete when stage j is. With level snapshots, a stage
        started when one is due also writes its level's boundary, and the manifest follows once
        the level is counted."""
        cfg, out = self.config, self.out
        snaps = self.snapshots
        pend = None  # stage j-1's Expansion
        j = j0
        while cfg.depth > 0:
            lt = time.perf_counter()
            if self.deadline is not None and lt >= self.deadline:
                out.stop_reason = TIME_LIMIT
                break
            expand_it = j < cfg.depth
            save = None
            if snaps is not None and j > j0 and expand_it and snaps.due():
                save = (snaps.dir, snaps.begin())
            Yout, parts = self._run_stage(Yin, j, expand_it, save)
            wall = time.perf_counter() - lt
            # a level's time: the part of the stage before that expanded its parents (all of it
            # for level 1), and its own merge: the stage's slowest merge
            merge_wall = (min(max((p.merge.seconds for p in parts), default=0.0), wall)
                          if j > j0 else 0.0)
            new = sum(p.merge.new for p in parts)
            if j > j0:
                last = not expand_it or not new
                self._finish_level(new, [p.merge for p in parts], pend.successors,
                                   pend.task_seconds, pend.wall + (wall if last else merge_wall))
                if save is not None:
                    self._commit_snapshot(save[1], parts)
                self.progress(self.depth, self.distinct, self.frontier, check_time=False)
                if last:
                    break
            pend = Expansion(sum(p.expand.successors for p in parts),
                             [p.expand.violations for p in parts],
                             [round(x, 4) for x in sorted(p.expand.seconds for p in parts)],
                             wall - merge_wall)
            ordered = self._first_violations(pend)
            if ordered and self.stop_at_first:
                self._stop_in_level(Yin, Yout, ordered[0], pend, lt, wall)  # stops the search
            for vkey, v in ordered:
                self.record(v, self.depth + 1, key_path(vkey))
            Yin = Yout
            j += 1

    def _commit_snapshot(self, gen: int, parts: list) -> None:
        """The manifest of the level boundary the last stage's tasks wrote (generation `gen`):
        the counters of levels 0..depth, which `_finish_level` has just completed."""
        out = self.out
        entries = [p.saved for p in parts]
        if len(entries) != self.nparts or any(e is None for e in entries):
            raise ZabmcError("internal error: a task of a checkpointed level reported no part")
        self.snapshots.commit(
            gen, entries, depth=self.depth, generated=out.generated, per_depth=out.per_depth,
            distinct=self.distinct,
            violations=[f for f in out.violations if f.depth <= self.depth], nparts=self.nparts,
            elapsed=self.elapsed_before + time.perf_counter() - self.t0)

    def _run_stage(self, Yin, j: int, expand_it: bool, save: tuple | None = None):
        """Stage j: one `step` task per partition reading `Yin` and writing the next shuffle
        (checkpointing the shuffle it reads every `CHECKPOINT_EVERY` levels). Returns the next
        shuffle's RDD and each task's `TaskStats`."""
        from pyspark import StorageLevel

        from .session import run_job

        sess, nparts = self.sess, self.nparts
        sc = sess.sc
        acc = sc.accumulator({}, StatsParam())
        Yout, dep = _shuffled(sc, Yin.mapPartitionsWithIndex(
            partial(step, acc, self.spec, self.stop_at_first, nparts, expand_it, save=save)),
            nparts)
        if j and j % CHECKPOINT_EVERY == 0 and self.cut:
            Yin.persist(StorageLevel.MEMORY_AND_DISK)
            if self.cut == "local":
                Yin.localCheckpoint()
            else:
                Yin.checkpoint()  # written to checkpoint_dir by the job below
            run_job(sess, Yin._jrdd.count, deadline=self.deadline, what=f"level {j} checkpoint")
            for rdd in self.held:  # the new checkpoint is the one a lost shuffle is rebuilt from
                rdd.unpersist()
            self.held = [Yin]

        def tick():
            self.progress(self.depth + 1, self.distinct, self.frontier, check_time=False)

        submit_map_stage = sc._jsc.sc().submitMapStage
        run_job(sess, lambda: submit_map_stage(dep).get(), tick=tick, deadline=self.deadline,
                what=f"level {j}")
        return Yout, [v for _, v in sorted(acc.value.items())]

    def _finish_level(self, new: int, merges: list, gen: int, expand_s: list,
                      seconds: float) -> None:
        """Count a finished level: `new` states, its merges' `MergeStats` per task, the `gen`
        successors that generated it and the busy seconds of those expansions."""
        out = self.out
        out.generated += gen
        if new:
            self.depth += 1
            out.per_depth.append(new)
            self.distinct += new
        self.levels.append({
            "depth": self.depth, "frontier": self.frontier, "new": new, "generated": gen,
            "candidates": sum(m.candidates for m in merges),
            "frontier_bytes": sum(m.frontier_bytes for m in merges), "seconds": round(seconds, 4),
            "expand_task_seconds": expand_s,
            "merge_task_seconds": [round(x, 4) for x in sorted(m.seconds for m in merges)]})
        self.observer.on_level(self.depth, self.frontier, new, seconds)
        self.frontier = new

    def _first_violations(self, pend: Expansion) -> list:
        """Per property not reported yet, the smallest-key step of the expanded level violating
        it, in key order: the steps at which the in-process scan records something."""
        steps: dict = {}
        reported = {f.violation.property for f in self.out.violations}
        for viol in pend.violations:
            for prop, (key, v) in viol.items():
                if prop not in reported and (prop not in steps or key < steps[prop][0]):
                    steps[prop] = (key, v)
        return sorted(steps.values(), key=lambda kv: kv[0])

    def _stop_in_level(self, Yin, Yout, first, pend: Expansion, lt: float, wall: float) -> None:
        """BFS stops at `first`, in the middle of the level just expanded: count what it had done
        by then from the shuffles this stage read (`Yin`) and wrote (`Yout`), and record it."""
        from .session import run_job

        sess = self.sess
        vkey, v = first
        vparent, vei = vkey[:-2], int.from_bytes(vkey[-2:], "big")
        rows = run_job(sess, Yout.mapPartitions(partial(count_before, vkey)).collect,
                       what="count before the violation")
        gen = run_job(sess, Yin.mapPartitions(partial(successors_before, self.spec, vparent)).sum,
                      what="count before the violation") + vei + 1
        vdepth = self.depth + 1
        self._finish_level(sum(n for n, _ in rows), [m for _, m in rows], gen, pend.task_seconds,
                           pend.wall + time.perf_counter() - lt - wall)
        self.record(v, vdepth, key_path(vkey))  # stops the search

    def finish(self) -> None:
        out = self.out
        out.distinct = self.distinct
        out.depth_reached = self.depth
        out.seen_bytes = 16 * self.distinct
        if self.snapshots is not None:
            out.extra["checkpoint"] = self.snapshots.dir
            out.extra["checkpoint_level"] = self.snapshots.level
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
        self.levels, self.extra, self.held = [], None, []
        self.snapshots = self.options.get("snapshots")
        self.distinct, self.frontier, self.depth = 1, 1, 0
        self.out.extra["frontier_left"] = 0
        return super().run()


def spark_bfs(env: Env, **kw) -> Outcome:
    """Breadth-first search of `env` on Spark (see `SparkBFS` and `Search` for the arguments)."""
    return SparkBFS(env, **kw).run()
