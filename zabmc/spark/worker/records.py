"""The records a level's shuffle carries, and what its tasks report to the driver.

Records travel in batches, so that per-state work in Python is the explorer's own and the JVM
moves a few large byte arrays instead of millions of small ones (`batch` has the framing). Three
kinds:

- `Seen`: a sorted chunk of a partition's visited set, which its task sends to itself through the
  shuffle;
- `Candidates`: successors routed to the partition that owns their fingerprints, with their order
  keys and encoded states, compressed (`batch.pack_states`, `batch.pack_keys`);
- `Frontier`: the states a merge kept out of one candidate batch; never shuffled (`merge` hands
  them to `expand` in the same task), so the batch is not decompressed in between.

The merge never decompresses a state: it forwards each candidate batch with the indices it keeps.
Candidate keys are compressed because they grow by two bytes a level (50 bytes at depth 25, as much
as a compressed state) and share long prefixes (a batch's keys are siblings and cousins): every
byte of a candidate crosses the JVM several times (shuffle write and read, block store).

A record pickles as its class reference and its fields: a few dozen bytes more than a tagged tuple
per batch of up to `expansion.CHUNK_MAP` states.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Seen(NamedTuple):
    """A chunk of a partition's visited set, in fingerprint order."""

    fps: np.ndarray  # numpy S16


class Candidates(NamedTuple):
    """Candidates for one partition."""

    fps: bytes  # their 16-byte fingerprints, joined
    zkeys: bytes  # their order keys (one length per level), joined and zstd-compressed
    lens: bytes  # their encodings' lengths, int32
    z: bytes  # their encodings, joined and zstd-compressed


class Frontier(NamedTuple):
    """The new states a merge kept out of one candidate batch (`lens`, `z`)."""

    keys: bytes  # their order keys, joined (not compressed: they stay in the process)
    idx: bytes  # their indices in the batch, int32
    lens: bytes
    z: bytes


class MergeStats(NamedTuple):
    """What one partition's merge did."""

    new: int  # states kept (the partition's part of the level)
    visited: int  # the partition's visited set afterwards
    frontier_bytes: int  # compressed bytes of the candidate batches it kept states of
    candidates: int  # candidates read
    seconds: float = 0.0  # busy time


class ExpandStats(NamedTuple):
    """What one partition's expansion did."""

    successors: int  # successors generated
    violations: dict  # {property: (smallest order key, violation)}
    seconds: float  # busy time


NO_EXPANSION = ExpandStats(0, {}, 0.0)


class TaskStats(NamedTuple):
    """One task of a level, as it reports to the driver's accumulator."""

    merge: MergeStats
    expand: ExpandStats
    saved: dict | None = None  # the manifest entry of the level snapshot part it wrote, if any


class StatsParam:
    """Accumulator parameter (duck-typed, so this module needs no pyspark import) of a level's
    statistics: {partition: TaskStats}; a partition's update overwrites, so a re-run task cannot
    count twice."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a
