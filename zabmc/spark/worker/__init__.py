"""What Spark executors run: the explorer's own functions, and the two per-partition steps of a
level.

Executors never receive an `Env`: they receive an `EnvSpec` (model name, `ExploreConfig`, property
names, state codec) and rebuild the very same `Env` with `zabmc.core.model.get_model`, `Env` and
`zabmc.invariants.Checker`, once per Python worker process (`context`). So every successor,
fingerprint and property verdict comes from the code the in-process engine runs.

Nothing here imports pyspark.

One task per fingerprint range (`fp_partition`) and level runs `step`: it merges the candidates
routed to its range into the range's visited set (`merge`), then expands the range's new frontier
and routes the successors (and its visited set, to itself) through the next shuffle (`expand`).
By concern:

- `records`: the named records a shuffle carries (`Seen`, `Candidates`, `Frontier`) and the
  statistics a task reports (`TaskStats`);
- `batch`: how records are compressed, partitioned and framed for Spark;
- `context`: the `Env` an executor rebuilds from an `EnvSpec`; the state codec itself is
  `zabmc.explore.codec`, shared with the in-process BFS's checkpoints;
- `merging` and `expansion`: the two halves of a level's task (`merge`, `expand`);
- this module: the task (`step`) and the two recounts a stop in mid-level needs.

A state's order key is its event-index path from the initial state, two big-endian bytes per event.
All keys of one level have the same length, so comparing the bytes compares the paths
lexicographically, and that is exactly the in-process BFS's level order: BFS appends a new state
when it first meets it while scanning (parent index, event index), and by induction a state's
position in its level is the rank of its lexicographically smallest shortest path. Keeping, for
every fingerprint, the candidate with the smallest key therefore picks the same parent, the same
path and the same first violation as `zabmc.explore.bfs`, whatever the partitioning. The key doubles
as the parent pointer: a counterexample's path travels with it.
"""

from __future__ import annotations

import time

from zabmc.explore.codec import INTERN_LIMIT, Codec, choose_codec, make_codec  # noqa: F401
from zabmc.explore.collector import collector_paused

from .batch import (  # noqa: F401
    I32,
    emit,
    fp_partition,
    frontier_states,
    pack_keys,
    pack_states,
    unpack_keys,
    unpack_states,
)
from .context import Context, EnvSpec, context  # noqa: F401
from .expansion import CHUNK_MAP, SENT_LIMIT, expand, seed  # noqa: F401
from .merging import SEEN_CHUNK, _smallest_key_rows_exact, merge, smallest_key_rows  # noqa: F401
from .records import (  # noqa: F401
    NO_EXPANSION,
    Candidates,
    ExpandStats,
    Frontier,
    MergeStats,
    Seen,
    StatsParam,
    TaskStats,
)

# Every task runs with the cyclic collector paused (`collector_paused`): it would walk the millions
# of tuples a task creates (measured: it doubles the cost of decoding a state). The objects that
# survive a task (the worker's caches) are frozen on the way out, so re-enabling the collector does
# not make it walk every one of them once per task.


def step(acc, spec: EnvSpec, stop_first: bool, nparts: int, expand_it: bool, pid: int, records,
         save: tuple | None = None):
    """One task of a level: `merge` of partition `pid`'s candidates, then (if `expand_it`) `expand`
    of its new frontier, in the same Python process: the frontier never goes back to the JVM.
    Yields (partition id, pickled batch) byte pairs for the next shuffle: the new visited set to
    `pid` itself, the successors to their owners. Reports through the accumulator `acc` (keyed by
    partition, so a re-run task cannot count twice): the merge's counts and busy seconds, then
    the expansion's successors, violations and busy seconds (`TaskStats`).

    With `save` = (directory, generation), the task also writes its partition's part of the level
    boundary between the merge and the expansion (`zabmc.spark.checkpoint.write_part`: the visited
    set and the frontier with its keys) and reports the part's manifest entry."""
    t0 = time.perf_counter()
    m: list = []
    front = []
    seen_chunks: list = []
    for rec in merge(records, m):
        if rec.__class__ is Seen:
            if save is not None:
                seen_chunks.append(rec.fps)
            if expand_it:
                yield from emit(pid, [rec])
        else:
            front.append(rec)
    merged = m[0]._replace(seconds=time.perf_counter() - t0)
    t1 = time.perf_counter()
    with collector_paused(freeze=True):
        states = sorted(frontier_states(front)) if expand_it or save is not None else []
    del front
    sort_s = time.perf_counter() - t1  # decoding the frontier's batches: part of the expansion
    saved = None
    if save is not None:
        from zabmc.spark.checkpoint import write_part

        saved = write_part(save[0], save[1], pid, seen_chunks, states)
        del seen_chunks
    e: list = []
    if expand_it:
        yield from expand(spec, stop_first, nparts, states, e)
        e[0] = e[0]._replace(seconds=e[0].seconds + sort_s)
    else:
        e.append(NO_EXPANSION)
    # reported once the task's output is written (Spark drains this generator in the task)
    acc.add({pid: TaskStats(merged, e[0], saved)})


def count_before(vkey: bytes, records):
    """New states of a level (the merge of its candidates, `records`) whose key is smaller than
    `vkey`, what BFS had inserted when it stopped, and the merge's `MergeStats`."""
    t0 = time.perf_counter()
    m: list = []
    n = sum(1 for key, _ in frontier_states(merge(records, m)) if key < vkey)
    yield n, m[0]._replace(seconds=time.perf_counter() - t0)


def successors_before(spec: EnvSpec, vparent: bytes, records):
    """Successors of a level's states (the merge of its candidates, `records`) ordered before
    `vparent`: BFS's count when it stopped."""
    ctx = context(spec)
    successors, decode = ctx.env.successors, ctx.codec.decode
    n = 0
    with collector_paused(freeze=True):
        for key, blob in frontier_states(merge(records)):
            if key < vparent:
                for _ in successors(decode(blob)):
                    n += 1
    yield n
