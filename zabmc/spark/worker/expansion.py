"""Expansion: a partition's new frontier, stepped by the explorer's own `Env.successors`, into
candidate batches for the partitions that own the successors' fingerprints."""

from __future__ import annotations

import time

from zabmc.explore.collector import collector_paused

from .batch import emit, fp_partition, pack_keys, pack_states
from .context import EnvSpec, context
from .records import Candidates, ExpandStats

CHUNK_MAP = 50_000  # candidates an expansion buffers before it emits them
SENT_LIMIT = 2_000_000  # fingerprints an expansion remembers having emitted (~100 B each)
EI = tuple(i.to_bytes(2, "big") for i in range(1 << 16))  # event index -> key bytes


def expand(spec: EnvSpec, stop_first: bool, nparts: int, states: list, into: list):
    """Every frontier state's successors (`states`: (order key, encoded state) pairs sorted by key,
    `sorted(frontier_states(records))`), deduplicated
    keeping the smallest key, bucketed by owning partition. Yields (partition id, pickled batch) as bytes
    pairs; appends to `into` its `ExpandStats`.

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
                yield from emit(split, [Candidates(b"".join(fps[split]),
                                                   pack_keys(b"".join(keys[split])),
                                                   *pack_states(blobs[split]))])
                fps[split], keys[split], blobs[split] = [], [], []
        if len(sent) > SENT_LIMIT:
            sent.clear()  # forgetting only costs duplicate candidates, which merge drops

    pending = 0
    with collector_paused(freeze=True):
        for path, blob in states:  # key order (see above)
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
    into.append(ExpandStats(gen, viol, time.perf_counter() - t0))


def seed(nparts: int, fp: bytes, blob: bytes, _records):
    """The initial state as a candidate batch for its partition (the map side of level 0)."""
    yield from emit(fp_partition(fp) % nparts, [Candidates(fp, pack_keys(b""), *pack_states([blob]))])
