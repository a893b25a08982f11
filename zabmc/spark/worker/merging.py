"""Merge: the candidates routed to one partition, against its visited set, into its part of the
next frontier. All per-candidate work is numpy."""

from __future__ import annotations

import numpy as np

from zabmc.explore.collector import collector_paused
from zabmc.explore.seen import FP_DTYPE, insert_sorted, member, prefix64

from .batch import I32, unpack_keys
from .records import Candidates, Frontier, MergeStats, Seen

EMPTY = np.empty(0, FP_DTYPE)
SEEN_CHUNK = 1 << 20  # fingerprints per visited-set record (16 MiB)


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
    """One partition's visited set (`Seen` records) and the candidate batches routed to it
    (`Candidates`): keeps the candidates not visited before, the smallest key per fingerprint.
    Yields the new visited set (`Seen` chunks) and then the new frontier (`Frontier` records, in
    arrival order), followed by the `Frontier` records it was given (a resumed search starts from
    a visited set and a frontier: `zabmc.spark.checkpoint`); appends to `into` its `MergeStats` (without the busy time, which its caller
    measures).

    All per-candidate work is numpy: the candidates' fingerprints and keys are gathered into
    arrays, one sort of the fingerprints picks the smallest key of each (`smallest_key_rows`),
    one search against the visited set drops the visited ones (`member`), and the kept ones are
    grouped back by batch."""
    chunks: list = []
    fps_in: list = []  # per candidate batch: fingerprints, keys, count
    keys_in: list = []
    counts: list = []
    batches: list = []  # (lens, z) of the candidate batches
    carried: list = []  # frontier records a resumed run's first level starts from
    with collector_paused(freeze=True):
        for rec in records:
            cls = rec.__class__
            if cls is Candidates:
                fps_in.append(rec.fps)
                keys_in.append(unpack_keys(rec.zkeys))
                counts.append(len(rec.fps) // 16)
                batches.append((rec.lens, rec.z))
            elif cls is Seen:
                chunks.append(rec.fps)
            elif cls is Frontier:
                carried.append(rec)
            else:
                raise ValueError(f"internal error: a merge got a {cls.__name__} record")
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
            yield Seen(seen[lo:lo + SEEN_CHUNK])
        del seen
        for b, r in groups:
            lens, z = batches[b]
            yield Frontier(keys[r].tobytes(), (r - starts[b]).astype(I32).tobytes(), lens, z)
        yield from carried
    if into is not None:
        into.append(MergeStats(len(new), nseen, nbytes, ncand))
