"""What Spark executors run: the explorer's own functions, and the two per-partition steps of a
level.

Executors never receive an `Env`: they receive an `EnvSpec` (model name, `ExploreConfig`, property
names, state codec) and rebuild the very same `Env` with `zabmc.model.get_model`, `Env` and
`zabmc.invariants.Checker`, once per Python worker process (`context`). So every successor,
fingerprint and property verdict comes from the code the in-process engine runs.

Nothing here imports pyspark.

One task per fingerprint range (`fp_partition`) and level runs `step`: it merges the candidates
routed to its range into the range's visited set, then expands the range's new frontier and routes
the successors (and its visited set, to itself) through the next shuffle; the record formats are
listed above `expand`.

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

import marshal
import pickle
import struct
import time
from typing import NamedTuple

import numpy as np

from zabmc.explore.collector import collector_paused
from zabmc.explore.seen import insert_sorted, member, prefix64

FP_DTYPE = np.dtype("S16")
EMPTY = np.empty(0, FP_DTYPE)
CHUNK_MAP = 50_000  # candidates an expansion buffers before it emits them
SENT_LIMIT = 2_000_000  # fingerprints an expansion remembers having emitted (~100 B each)
SEEN_CHUNK = 1 << 20  # fingerprints per visited-set record (16 MiB)
EI = tuple(i.to_bytes(2, "big") for i in range(1 << 16))  # event index -> key bytes


class EnvSpec(NamedTuple):
    """A picklable description from which an executor rebuilds the driver's `Env`."""

    model: str
    config: tuple  # ExploreConfig fields
    invariants: tuple
    codec: str  # "marshal" or "pickle"


def fp_partition(key) -> int:
    """The partition function of every level: a fingerprint's first 8 bytes; ints route themselves.

    One module-level function, so every `partitionBy` carries an equal partitioner and the union of
    the visited set with the candidates needs no shuffle."""
    if key.__class__ is int:
        return key
    return int.from_bytes(key[:8], "little")


# Every task runs with the cyclic collector paused (`collector_paused`): it would walk the millions
# of tuples a task creates (measured: it doubles the cost of decoding a state). The objects that
# survive a task (the worker's caches) are frozen on the way out, so re-enabling the collector does
# not make it walk every one of them once per task.


# --- the state codec: zabmc.explore.codec (shared with the in-process BFS's checkpoints) -------

from zabmc.explore.codec import INTERN_LIMIT, Codec, _interning_decoder, choose_codec, make_codec  # noqa: E402,F401


# --- the executor-side environment ----------------------------------------------------------------


class Context(NamedTuple):
    env: object
    codec: Codec


_CONTEXTS: dict = {}


def context(spec: EnvSpec) -> Context:
    """The Env of `spec`, built once per worker process (Spark reuses Python workers)."""
    ctx = _CONTEXTS.get(spec)
    if ctx is None:
        from zabmc.explore.env import Env, ExploreConfig
        from zabmc.invariants import Checker
        from zabmc.model import get_model

        env = Env(get_model(spec.model), ExploreConfig(*spec.config), Checker(spec.invariants))
        ctx = _CONTEXTS[spec] = Context(env, make_codec(spec.codec, env))
    return ctx


# --- one level: merge, then expand (one task per partition: `step`) -------------------------------
#
# Records travel in batches, so that per-state work in Python is the explorer's own and the JVM
# moves a few large byte arrays instead of millions of small ones. A batch of states is one zstd
# frame (level 1) of their encodings (`pack_states`): states share most of their structure, so a
# batch compresses about 15x (870 -> 58 bytes a state on 3-node db19, depth 16) for 0.9 us a state
# (decompression 0.7 us), which more than pays for itself in the JVM (shuffle, block store,
# sockets) and lets far larger levels fit in memory. zlib level 1 compressed 9x at 3.3 us (1.7 us
# to decompress); lz4 4.4x at 0.8 us (reports/spark.md).
#   ("S", fps)                      a sorted numpy S16 chunk of a partition's visited set, which
#                                   its task sends to itself through the shuffle
#   ("C", fps, zkeys, lens, z)      candidates for one partition: fingerprints joined, keys
#                                   joined and zstd-compressed (keys have one length per level),
#                                   the states' encoded lengths (int32) and the zstd batch of
#                                   their encodings
#   ("F", keys, idx, lens, z)       frontier states (never shuffled: `merge` hands them to
#                                   `expand` in the same task): the candidate batch `lens, z` the
#                                   merge kept some states of, their indices (int32) and their
#                                   keys (joined, not compressed: they stay in the process)
# The merge never decompresses a state: it forwards each candidate batch with the indices it keeps.
# Candidate keys are compressed because they grow by two bytes a level (50 bytes at depth 25, as much as a
# compressed state) and share long prefixes (a batch's keys are siblings and cousins): every byte
# of a candidate crosses the JVM several times (shuffle write and read, block store).
# The expansion partitions its own output (`fp_partition`) and hands Spark (partition id, pickled
# batch) pairs, as PySpark's partitionBy does internally, minus its per-record Python loop.

_PACK = struct.Struct("!q").pack
_PROTO = pickle.HIGHEST_PROTOCOL
I32 = np.dtype("<i4")


_ZSTD: list = []


def _zstd():
    """This process's (compress, decompress) pair: zstd level 1 (imported on first use)."""
    if not _ZSTD:
        import zstandard

        _ZSTD.extend((zstandard.ZstdCompressor(level=1).compress,
                      zstandard.ZstdDecompressor().decompress))
    return _ZSTD


def pack_states(blobs: list) -> tuple[bytes, bytes]:
    """(lengths as int32 bytes, zstd level 1 of the concatenation)."""
    return (np.fromiter(map(len, blobs), I32, len(blobs)).tobytes(),
            _zstd()[0](b"".join(blobs)))


def pack_keys(keys: bytes) -> bytes:
    return _zstd()[0](keys)


def unpack_keys(zkeys: bytes) -> bytes:
    return _zstd()[1](zkeys)


def unpack_states(lens: bytes, z: bytes, idx=None) -> list:
    """The encoded states of a batch, or those at `idx`."""
    raw = _zstd()[1](z)
    ends = np.cumsum(np.frombuffer(lens, I32)).tolist()
    if idx is None:
        idx = range(len(ends))
    return [raw[(ends[i - 1] if i else 0):ends[i]] for i in idx]


def frontier_states(records):
    """(key, encoded state) of every frontier state in `records`."""
    for rec in records:
        if rec[0] == "F":
            _, keys, idx, lens, z = rec
            idx = np.frombuffer(idx, I32).tolist()
            if idx:
                kl = len(keys) // len(idx)
                for j, blob in enumerate(unpack_states(lens, z, idx)):
                    yield keys[j * kl:(j + 1) * kl], blob


def _emit(split: int, batch: list):
    yield _PACK(split)
    yield pickle.dumps(batch, _PROTO)


def expand(spec: EnvSpec, stop_first: bool, nparts: int, records, into: list):
    """Every frontier state's successors (the "F" records of `records`), deduplicated keeping the
    smallest key, bucketed by owning partition. Yields (partition id, pickled batch) as bytes
    pairs; appends to `into` the successors generated, {property: (smallest key, violation)} and
    the task's busy seconds.

    The task expands its frontier in key order, so the keys of the successors it meets only grow
    (a state's key is its parent's key and its event index) and the first candidate met for a
    fingerprint has the task's smallest key for it. The task remembers the fingerprints it met
    (`sent`, up to `SENT_LIMIT`) and drops later successors with those fingerprints. A kept
    candidate's fingerprint, key and encoding (bytes objects the loop made anyway) are appended to
    its owner's three lists, which are joined and emitted, one batch per owner, every `CHUNK_MAP`
    candidates. (Growing `bytearray`s instead copied each buffer again at every reallocation;
    with two owners taking turns at the top of the heap, a depth-15 search on 2 partitions spent
    287 M instructions in memcpy against the join's 91 M: reports/spark.md, row 18.)

    Every candidate a task emits is compressed, shuffled and merged, so `sent` matters: with
    fingerprint partitioning a new state's parents are spread over the partitions. On 3-node db19
    with 2 partitions, chunks alone shipped 2.2 candidates per new state, `sent` with unsorted
    frontiers 2.0, and `sent` with sorted ones 1.8 (1.1 with one partition).

    With `stop_first` a violating successor is not a candidate (BFS stops before inserting it)."""
    t0 = time.perf_counter()
    ctx = context(spec)
    successors = ctx.env.successors
    fp_blob, blob_of, decode = ctx.codec.fp_blob, ctx.codec.blob, ctx.codec.decode
    ei_key = EI
    from_bytes = int.from_bytes
    sent: set = set()  # fingerprints met (and kept as candidates) by this task
    # per owning partition: the kept candidates' fingerprints, keys and encodings
    fps: list = [[] for _ in range(nparts)]
    keys: list = [[] for _ in range(nparts)]
    blobs: list = [[] for _ in range(nparts)]
    viol: dict = {}
    gen = 0

    def flush():
        for split in range(nparts):
            if blobs[split]:
                yield from _emit(split, [("C", b"".join(fps[split]),
                                          pack_keys(b"".join(keys[split])),
                                          *pack_states(blobs[split]))])
                fps[split], keys[split], blobs[split] = [], [], []
        if len(sent) > SENT_LIMIT:
            sent.clear()  # forgetting only costs duplicate candidates, which merge drops

    pending = 0
    with collector_paused(freeze=True):
        for path, blob in sorted(frontier_states(records)):  # key order (see above)
            for ei, (_ev, s2, v) in enumerate(successors(decode(blob))):
                gen += 1
                key = path + ei_key[ei]
                if v is not None:
                    for x in v.all():  # every property the step violates
                        old = viol.get(x.property)
                        if old is None or key < old[0]:
                            viol[x.property] = (key, v)
                    if stop_first:
                        continue
                fp, payload = fp_blob(s2)  # Env.fingerprint (and the encoding, if the same)
                if fp not in sent:  # else an equal or smaller key has it
                    sent.add(fp)
                    split = from_bytes(fp[:8], "little") % nparts
                    fps[split].append(fp)
                    keys[split].append(key)
                    blobs[split].append(blob_of(payload))
                    pending += 1
            if pending >= CHUNK_MAP:
                yield from flush()
                pending = 0
        yield from flush()
    into.extend((gen, viol, time.perf_counter() - t0))


def seed(nparts: int, fp: bytes, blob: bytes, _records):
    """The initial state as a candidate batch for its partition (the map side of level 0)."""
    yield from _emit(fp_partition(fp) % nparts, [("C", fp, pack_keys(b""), *pack_states([blob]))])


def smallest_key_rows(fps: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """For each distinct fingerprint of `fps`, the row holding its smallest key (`keys` is an
    (n, key length) uint8 matrix: keys compare as bytes); rows in fingerprint order.

    The rows are sorted by the fingerprints' 64-bit prefixes (`prefix64`: integers, several times
    faster to sort than 16- or 66-byte strings). A prefix met once is a fingerprint met once. A
    prefix met twice is, but for a 2^-64 chance, one fingerprint reached from two map tasks (the
    common duplicate: a task sends each fingerprint once), and one vectorised comparison of the two
    keys picks the smaller. Every other group (three or more rows, or two fingerprints sharing a
    prefix) goes to `_smallest_key_rows_exact`. Equal (fingerprint, key) rows are one state reached
    by one path; the earliest row is chosen, so the result is exactly the stable sort's."""
    n = len(fps)
    if n < 2:
        return np.arange(n)
    p = prefix64(fps)
    order = np.argsort(p)
    ps = p[order]
    keep = np.ones(n, dtype=bool)  # positions in `order` that end up chosen
    keep[1:] = ps[1:] != ps[:-1]
    if keep.all():
        return order
    starts = np.flatnonzero(keep)  # groups of one prefix: order[starts[g]:starts[g] + size[g]]
    size = np.diff(np.append(starts, n))
    pairs = np.flatnonzero(size == 2)
    a, b = order[starts[pairs]], order[starts[pairs] + 1]
    low = np.ascontiguousarray(fps).view("<u8")[1::2]  # the other 8 bytes
    same = low[a] == low[b]
    kl = keys.shape[1]
    if kl:
        kv = np.ascontiguousarray(keys).view(f"S{kl}").ravel()
        kb, ka = kv[b], kv[a]
        b_first = same & ((kb < ka) | ((kb == ka) & (b < a)))  # ties: the earlier row
    else:
        b_first = same & (b < a)
    order[starts[pairs[b_first]]] = b[b_first]
    hard = np.flatnonzero(size > 2)
    if not same.all():
        hard = np.union1d(hard, pairs[~same])
    if len(hard):
        in_hard = np.zeros(len(starts), dtype=bool)
        in_hard[hard] = True
        pos = np.flatnonzero(np.repeat(in_hard, size))  # the hard groups' positions
        rows = np.sort(order[pos])  # original order: the exact sort keeps the earliest of equals
        chosen = rows[_smallest_key_rows_exact(fps[rows], keys[rows])]  # fingerprint order
        # the chosen rows of a group fill the group's first positions, in fingerprint order
        gs = starts[hard]
        g = np.searchsorted(ps[gs], prefix64(fps[chosen]))  # each one's group (non-decreasing)
        at = gs[g] + (np.arange(len(g)) - np.searchsorted(g, g))  # its rank in the group
        keep[pos] = False
        order[at] = chosen
        keep[at] = True
    return order[keep]


def _smallest_key_rows_exact(fps: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """`smallest_key_rows` by one sort of the rows as (fingerprint, key) byte strings: a
    fingerprint's first row has its smallest key."""
    n, kl = keys.shape
    if kl:
        rows = np.empty((n, 16 + kl), np.uint8)
        rows[:, :16] = np.ascontiguousarray(fps).view(np.uint8).reshape(n, 16)
        rows[:, 16:] = keys
        order = np.argsort(rows.view(f"S{16 + kl}").ravel(), kind="stable")
    else:
        order = np.argsort(fps, kind="stable")
    ordered = fps[order]
    first = np.ones(n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return order[first]


def merge(records, into: list | None = None):
    """One partition's visited set ("S" records) and the candidate batches routed to it ("C"):
    keeps the candidates not visited before, the smallest key per fingerprint. Yields the new
    visited set ("S" chunks) and then the new frontier ("F" records, in arrival order); appends to
    `into` the new states, the visited-set size, the frontier's compressed bytes and the
    candidates read.

    All per-candidate work is numpy: the candidates' fingerprints and keys are gathered into
    arrays, one sort of the fingerprints picks the smallest key of each (`smallest_key_rows`),
    one search against the visited set drops the visited ones (`member`), and the kept ones are
    grouped back by batch."""
    chunks: list = []
    fps_in: list = []  # per candidate batch: fingerprints, keys, count
    keys_in: list = []
    counts: list = []
    batches: list = []  # (lens, z) of the candidate batches
    with collector_paused(freeze=True):
        for rec in records:
            tag = rec[0]
            if tag == "C":
                _, fps, zkeys, lens, z = rec
                fps_in.append(fps)
                keys_in.append(unpack_keys(zkeys))
                counts.append(len(fps) // 16)
                batches.append((lens, z))
            elif tag == "S":
                chunks.append(rec[1])
        seen = np.concatenate(chunks) if chunks else EMPTY
        chunks.clear()
        ncand = sum(counts)
        fps = np.frombuffer(b"".join(fps_in), dtype=FP_DTYPE) if ncand else EMPTY
        allkeys = b"".join(keys_in)
        fps_in.clear()
        keys_in.clear()
        kl = len(allkeys) // ncand if ncand else 0
        if kl * ncand != len(allkeys):
            raise ValueError("internal error: candidate keys of different lengths in one level")
        keys = np.frombuffer(allkeys, np.uint8).reshape(ncand, kl)
        rows = smallest_key_rows(fps, keys)
        rows = rows[~member(seen, fps[rows])]  # fingerprint order, so `new` is sorted
        new = fps[rows]
        seen = insert_sorted(seen, new)
        # back to arrival order, which is (batch, index in the batch) order
        rows = np.sort(rows)
        starts = np.cumsum([0] + counts)
        bn = np.searchsorted(starts, rows, side="right") - 1
        cuts = np.flatnonzero(np.diff(bn)) + 1
        groups = [(int(b[0]), r) for b, r in zip(np.split(bn, cuts), np.split(rows, cuts))
                  if len(r)]
        nbytes = sum(len(batches[b][1]) for b, _ in groups)
        nseen = len(seen)
        for lo in range(0, nseen, SEEN_CHUNK):
            yield "S", seen[lo:lo + SEEN_CHUNK]
        del seen
        for b, r in groups:
            lens, z = batches[b]
            yield "F", keys[r].tobytes(), (r - starts[b]).astype(I32).tobytes(), lens, z
    if into is not None:
        into.extend((len(new), nseen, nbytes, ncand))


def step(acc, spec: EnvSpec, stop_first: bool, nparts: int, expand_it: bool, pid: int, records):
    """One task of a level: `merge` of partition `pid`'s candidates, then (if `expand_it`) `expand`
    of its new frontier, in the same Python process: the frontier never goes back to the JVM.
    Yields (partition id, pickled batch) byte pairs for the next shuffle: the new visited set to
    `pid` itself, the successors to their owners. Reports through the accumulator `acc` (keyed by
    partition, so a re-run task cannot count twice): the merge's counts and busy seconds, then
    the expansion's successors, violations and busy seconds."""
    t0 = time.perf_counter()
    m: list = []
    front = []
    for rec in merge(records, m):
        if rec[0] == "S":
            if expand_it:
                yield from _emit(pid, [rec])
        else:
            front.append(rec)
    m.append(time.perf_counter() - t0)
    e: list = []
    if expand_it:
        yield from expand(spec, stop_first, nparts, front, e)
    else:
        e.extend((0, {}, 0.0))  # nothing expanded
    # reported once the task's output is written (Spark drains this generator in the task)
    acc.add({pid: (*m, *e)})


def count_before(vkey: bytes, records):
    """New states of a level (the merge of its candidates, `records`) whose key is smaller than
    `vkey`, what BFS had inserted when it stopped, followed by the merge's counts (`merge`'s
    `into`) and busy seconds."""
    t0 = time.perf_counter()
    m: list = []
    n = sum(1 for key, _ in frontier_states(merge(records, m)) if key < vkey)
    yield (n, *m, time.perf_counter() - t0)


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


class StatsParam:
    """Accumulator parameter (duck-typed, so this module needs no pyspark import) of a level's
    statistics: {partition: stats}; a partition's update overwrites, so a re-run task cannot count
    twice."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a
