"""Compact sets of 128-bit fingerprints.

`SortedRunSet` keeps fingerprints as sorted runs (an LSM of runs merged geometrically), each run as
two numpy arrays of 64-bit integers, a fingerprint's first 8 bytes and its last 8: 16 bytes per
fingerprint at rest, and searchable with no conversion of the run, however small the batch. Membership is asked in batches, which is how the
level-synchronous BFS and the Spark engine use it: `add_batch(fps)` answers which of a batch were new
and inserts them, a check and its insertion in one call (as TLC's `put`).

`DictSeenSet` maps fingerprint -> the smallest depth it was reached at, for depth-bounded DFS, which
must re-expand a state reached again at a smaller depth.
"""

from __future__ import annotations

import numpy as np

FP_DTYPE = np.dtype("S16")


def as_array(fps) -> np.ndarray:
    """A list of 16-byte fingerprints as a numpy S16 array."""
    if isinstance(fps, np.ndarray):
        return fps
    return np.frombuffer(b"".join(fps), dtype=FP_DTYPE) if fps else np.empty(0, FP_DTYPE)


def prefix64(a: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each S16 fingerprint as a native unsigned integer: the same order as the
    bytes (big-endian), and searchable several times faster than 16-byte strings."""
    return np.ascontiguousarray(a).view(">u8")[::2].astype(np.uint64)


def member(run: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Which of `cand` are in `run` (sorted, distinct), exactly.

    The search runs on the 64-bit prefixes; the answer compares all 16 bytes. That is exact unless
    two fingerprints of `run` share their prefix (then the search may land on the wrong one of
    them), and in that case the 16-byte search runs instead."""
    if len(run) == 0 or len(cand) == 0:
        return np.zeros(len(cand), dtype=bool)
    rp = prefix64(run)
    if len(rp) > 1 and not (rp[1:] != rp[:-1]).all():
        idx = np.searchsorted(run, cand)
    else:
        idx = np.searchsorted(rp, prefix64(cand))
    idx[idx == len(run)] = len(run) - 1
    return run[idx] == cand


def insert_sorted(run: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`run` and `new` (both sorted, distinct, disjoint) merged into one sorted array.

    Insertion points come from the 64-bit prefixes unless a prefix of `new` occurs in `run` (then
    the prefix alone cannot order them, and the 16-byte search runs)."""
    if len(run) == 0:
        return new
    if len(new) == 0:
        return run
    rp, newp = prefix64(run), prefix64(new)
    pos = np.searchsorted(rp, newp)
    if (rp[np.minimum(pos, len(rp) - 1)] == newp).any():
        pos = np.searchsorted(run, new)
    return np.insert(run, pos, new)


def split64(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An S16 array's fingerprints as two native unsigned integer arrays, their first 8 bytes and
    their last 8, each read big-endian: (first, last) orders as the 16 bytes do."""
    v = np.ascontiguousarray(a).view(">u8")
    return v[::2].astype(np.uint64), v[1::2].astype(np.uint64)


def join64(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """`split64`'s inverse: the fingerprints as an S16 array."""
    out = np.empty(2 * len(hi), dtype=">u8")
    out[::2] = hi
    out[1::2] = lo
    return out.view(FP_DTYPE)


class _Run:
    """A sorted run of distinct fingerprints, held as `split64`'s two arrays (16 bytes a
    fingerprint, as before) so that a search needs no conversion of the run; `dup`: whether two
    of them share their first 8 bytes (then a search looks at every one with that prefix)."""

    __slots__ = ("hi", "lo", "dup")

    def __init__(self, hi: np.ndarray, lo: np.ndarray, dup: bool | None = None):
        self.hi, self.lo = hi, lo
        self.dup = bool(len(hi) > 1 and (hi[1:] == hi[:-1]).any()) if dup is None else dup

    def __len__(self) -> int:
        return len(self.hi)

    @classmethod
    def of(cls, hi: np.ndarray, lo: np.ndarray) -> "_Run":
        """A run of distinct fingerprints given in any order."""
        order = np.lexsort((lo, hi))
        return cls(hi[order], lo[order])

    def member(self, chi: np.ndarray, clo: np.ndarray) -> np.ndarray:
        """Which of the fingerprints (`chi`, `clo`) are in the run, exactly."""
        hi, lo = self.hi, self.lo
        idx = np.searchsorted(hi, chi)
        at = np.minimum(idx, len(hi) - 1)
        found = (hi[at] == chi) & (lo[at] == clo)
        if self.dup:  # a prefix the run holds more than once: look at all of them
            right = np.searchsorted(hi, chi, side="right")
            for i in np.nonzero(right - idx > 1)[0].tolist():
                found[i] = bool((lo[idx[i]:right[i]] == clo[i]).any())
        return found

    def merged(self, other: "_Run") -> "_Run":
        """The union of two disjoint runs."""
        if len(self) == 0:
            return other
        if len(other) == 0:
            return self
        pos = np.searchsorted(self.hi, other.hi)
        if self.dup or other.dup or (self.hi[np.minimum(pos, len(self) - 1)] == other.hi).any():
            # a shared prefix: the prefix alone cannot place them
            return _Run.of(np.concatenate((self.hi, other.hi)), np.concatenate((self.lo, other.lo)))
        return _Run(np.insert(self.hi, pos, other.hi), np.insert(self.lo, pos, other.lo), False)


class SortedRunSet:
    """A set of fingerprints as a few sorted runs; runs of similar size are merged."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self._len = 0

    def __len__(self) -> int:
        return self._len

    @property
    def nbytes(self) -> int:
        return sum(r.hi.nbytes + r.lo.nbytes for r in self.runs)

    def contains_batch(self, fps) -> np.ndarray:
        cand = as_array(fps)
        found = np.zeros(len(cand), dtype=bool)
        if len(cand) == 0 or not self.runs:
            return found
        return self._contains(*split64(cand))

    def _contains(self, chi: np.ndarray, clo: np.ndarray) -> np.ndarray:
        # search the candidates in prefix order: consecutive searches then walk a run forwards
        # instead of jumping all over it (a third less time on a 4-million run)
        order = np.argsort(chi)
        ohi, olo = chi[order], clo[order]
        got = np.zeros(len(chi), dtype=bool)
        for run in self.runs:
            got |= run.member(ohi, olo)
        found = np.empty(len(chi), dtype=bool)
        found[order] = got
        return found

    def add_batch(self, fps) -> np.ndarray:
        """Insert a batch (duplicates within it allowed); return a mask of the ones that were new.

        Among equal fingerprints inside the batch only the first occurrence counts as new: the
        set is searched for the batch, and what it does not hold goes to `add_unseen`.
        """
        cand = as_array(fps)
        if len(cand) == 0:
            return np.zeros(0, dtype=bool)
        if not self.runs:
            return self.add_unseen(cand)
        new = ~self._contains(*split64(cand))
        idx = np.flatnonzero(new)
        if len(idx):
            new[idx] = self.add_unseen(cand[idx])
        return new

    def add_unseen(self, fps) -> np.ndarray:
        """Insert a batch none of whose fingerprints is in the set yet (duplicates within it
        allowed): `add_batch`'s answer, the mask of each fingerprint's first occurrence, without
        searching the set. `add_batch` gives it what the set does not hold; the parallel search's
        merge offers it its candidates directly: its workers checked each against a copy of the
        set as the level began, which is this set.

        A stable sort on the 64-bit prefixes finds the repeats, and its order is the new run's,
        unless two different fingerprints of the batch share a prefix (then the 16-byte order,
        as `add_batch`)."""
        cand = as_array(fps)
        n = len(cand)
        if n == 0:
            return np.zeros(0, dtype=bool)
        chi, clo = split64(cand)
        order = np.argsort(chi, kind="stable")
        hi, lo = chi[order], clo[order]
        same_hi = hi[1:] == hi[:-1]
        if not same_hi.any():
            self._add(_Run(hi, lo, False))
            return np.ones(n, dtype=bool)
        same = same_hi & (lo[1:] == lo[:-1])
        if (same != same_hi).any():  # a prefix two fingerprints share
            _, first = np.unique(cand, return_index=True)
            new = np.zeros(n, dtype=bool)
            new[first] = True
            self._add(_Run.of(chi[new], clo[new]))
            return new
        # each prefix's fingerprints are one value, together, the first occurrence first
        kept = np.ones(n, dtype=bool)
        kept[1:] = ~same
        new = np.zeros(n, dtype=bool)
        new[order[kept]] = True
        self._add(_Run(hi[kept], lo[kept], False))
        return new

    def __contains__(self, fp: bytes) -> bool:
        return bool(self.contains_batch([fp])[0])

    def _push(self, run: np.ndarray) -> None:
        """Add a sorted run of distinct fingerprints (an S16 array), none of them in the set."""
        if len(run):
            self._add(_Run(*split64(run)))

    def _add(self, run: _Run) -> None:
        self._len += len(run)
        self.runs.append(run)
        # keep run sizes decreasing by at least half: O(log n) runs, amortised O(n log n) merging
        while len(self.runs) > 1 and len(self.runs[-2]) <= 2 * len(self.runs[-1]):
            b = self.runs.pop()
            a = self.runs.pop()
            self.runs.append(a.merged(b))

    def to_array(self) -> np.ndarray:
        """Every fingerprint, sorted, as an S16 array."""
        if not self.runs:
            return np.empty(0, FP_DTYPE)
        run = self.runs[0]
        for r in self.runs[1:]:
            run = run.merged(r)
        return join64(run.hi, run.lo)


class DictSeenSet:
    """fingerprint -> smallest depth seen (DFS)."""

    def __init__(self) -> None:
        self.depth: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.depth)

    def visit(self, fp: bytes, depth: int) -> bool:
        """Record `fp` at `depth`; True when it is new or now reached at a smaller depth."""
        old = self.depth.get(fp)
        if old is not None and old <= depth:
            return False
        self.depth[fp] = depth
        return True

    def to_array(self) -> np.ndarray:
        return np.sort(as_array(list(self.depth)))
