"""Checkpoints of the Spark engine: level snapshots a later run resumes from (`--resume DIR`), so
that losing the driver loses only the levels since the last one.

A Spark run resumes from either of two formats, both with the manifest discipline of
`zabmc.explore.checkpoint` (a checksummed `manifest.json` naming every data file with its size and
xxh3-128, replaced atomically; a bad, truncated or mismatched checkpoint is a one-line
`UsageError`, never a wrong answer), and both taken at a level boundary: levels 0..d visited,
level d not expanded.

- The in-process BFS's checkpoint (`zabmc check --checkpoint DIR` without `--engine spark`): the
  driver reads it (it holds the whole visited set and the parent table, as the in-process engine
  did), rebuilds each frontier state's order key by walking the parent table back to the root
  (`level_keys`), splits the visited set by `fp_partition`, and ships each partition its share
  (`bfs_snapshot_parts`).
- The Spark engine's own snapshot (`SPARK_FORMAT`), written with `--checkpoint DIR` at the first
  level boundary after `--checkpoint-every` seconds: every task writes its partition's part of the
  boundary itself (`write_part`: its visited set, sorted, and its part of the frontier with the
  states' order keys, sorted by key, the states zstd-compressed) into `part.<gen>.<pid>.bin`, and
  reports the file's size and checksum to the driver, which writes the manifest once the level's
  stage has completed and every part is on disk. No process ever holds the whole visited set.
  DIR must therefore be a file system every executor and the driver see at the same path (the
  local disk for a local master, a shared mount on a cluster). On resume, task i reads its own
  part back (`resume_part`; with another partition count, the parts are re-split by
  `fp_partition`).

A part's content is a function of the level alone (the visited set is sorted, the frontier sorted
by key, and zstd is deterministic), so a task Spark re-runs rewrites the same bytes (to a
temporary name, then renamed).

Nothing here imports pyspark.
"""

from __future__ import annotations

import os
import time
import uuid

import numpy as np
from xxhash import xxh3_128

from zabmc.core.errors import UsageError
from zabmc.explore import checkpoint as ck

from .worker.batch import I32, pack_states, unpack_states
from .worker.merging import SEEN_CHUNK
from .worker.records import Frontier, Seen

FORMATS = {ck.FORMAT: ck.READABLE_VERSIONS, ck.SPARK_FORMAT: ck.SPARK_FORMAT_VERSION}
FRONTIER_CHUNK = 50_000  # frontier states per record shipped to a partition on resume
_FP = np.dtype("S16")


def _owner(fps: np.ndarray, nparts: int) -> np.ndarray:
    """`fp_partition(fp) % nparts` of every fingerprint (the first 8 bytes, little-endian)."""
    return np.ascontiguousarray(fps).view("<u8")[::2] % np.uint64(nparts)


def _frontier_records(keys: bytes, klen: int, blobs: list):
    """`Frontier` records of up to `FRONTIER_CHUNK` states (their keys joined, their encodings)."""
    for lo in range(0, len(blobs), FRONTIER_CHUNK):
        part = blobs[lo:lo + FRONTIER_CHUNK]
        yield Frontier(keys[lo * klen:(lo + len(part)) * klen],
                       np.arange(len(part), dtype=I32).tobytes(), *pack_states(part))


def _seen_records(seen: np.ndarray):
    for lo in range(0, len(seen), SEEN_CHUNK):
        yield Seen(seen[lo:lo + SEEN_CHUNK])


# --- the in-process format ------------------------------------------------------------------------
def level_keys(parents: list, events: list, depth: int) -> np.ndarray:
    """The order keys of level `depth`'s states, from the in-process parent table: an (n, 2 depth)
    uint8 matrix, row i the event-index path from the initial state to state i, two big-endian
    bytes an event (the rows are in level order, which is key order)."""
    n = len(parents[depth])
    cols = np.empty((n, depth), dtype=">u2")
    idx = np.arange(n, dtype=np.int64)
    for d in range(depth, 0, -1):
        cols[:, d - 1] = np.frombuffer(events[d], dtype=np.uint16)[idx]
        idx = np.frombuffer(parents[d], dtype=np.uint32)[idx].astype(np.int64)
    return cols.view(np.uint8).reshape(n, 2 * depth)


def bfs_snapshot_parts(snap, nparts: int) -> list:
    """An in-process checkpoint (`zabmc.explore.checkpoint.Snapshot`) as what each of `nparts`
    partitions starts from: its share of the visited set (`Seen`, by `fp_partition`) and a
    contiguous slice of the frontier with the states' order keys (`Frontier`; any partition may
    expand any state, since merging keeps the smallest key whoever sent it)."""
    d = snap.depth
    keys = level_keys(snap.parents, snap.events, d).tobytes()
    blobs = list(snap.frontier)
    seen = np.ascontiguousarray(snap.seen)
    owner = _owner(seen, nparts)
    parts = []
    bounds = np.linspace(0, len(blobs), nparts + 1).astype(int)
    for p in range(nparts):
        lo, hi = int(bounds[p]), int(bounds[p + 1])
        recs = list(_seen_records(seen[owner == p]))
        recs += _frontier_records(keys[lo * 2 * d:hi * 2 * d], 2 * d, blobs[lo:hi])
        parts.append(recs)
    return parts


# --- the Spark format: a task's part --------------------------------------------------------------
def part_name(gen: int, pid: int) -> str:
    return f"part.{gen}.{pid}.bin"


def write_part(directory: str, gen: int, pid: int, seen_chunks: list, states: list) -> dict:
    """Partition `pid`'s part of a level boundary (run by its task): the visited set (`Seen`
    chunks, in fingerprint order), then the frontier's keys, the states' encoded lengths (int32)
    and their zstd-compressed concatenation; written under a temporary name, fsynced and renamed.
    Its manifest entry."""
    t0 = time.perf_counter()
    name = part_name(gen, pid)
    tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    keys = b"".join(k for k, _ in states)
    lens, z = pack_states([b for _, b in states]) if states else (b"", b"")
    h, size, nseen = xxh3_128(), 0, 0
    with open(tmp, "wb") as f:
        for chunk in (*(memoryview(np.ascontiguousarray(c).view(np.uint8)) for c in seen_chunks),
                      keys, lens, z):
            f.write(chunk)
            h.update(chunk)
            size += len(chunk)
        for c in seen_chunks:
            nseen += len(c)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(directory, name))
    return {"name": name, "size": size, "xxh3": h.hexdigest(), "seen": nseen,
            "frontier": len(states), "seconds": round(time.perf_counter() - t0, 4)}


def _split_part(data: bytes, entry: dict, klen: int):
    """(visited set, keys, lengths, compressed states) of a part's bytes; ValueError if they do
    not fit the entry."""
    n, m = entry["seen"], entry["frontier"]
    a, b, c = 16 * n, 16 * n + klen * m, 16 * n + klen * m + 4 * m
    if len(data) < c or (m == 0 and len(data) != c):
        raise ValueError("sections do not fit the file")
    return np.frombuffer(data[:a], dtype=_FP), data[a:b], data[b:c], data[c:]


def _read_part(directory: str, entry: dict) -> bytes:
    with ck.open_part(directory, entry) as f:
        data = f.read(entry["size"] + 1)
    if len(data) != entry["size"] or xxh3_128(data).hexdigest() != entry["xxh3"]:
        raise ValueError(f"checkpoint {directory}: {entry['name']} changed since it was verified")
    return data


def resume_part(directory: str, body: dict, nparts: int, pid: int, _records=()):
    """What partition `pid` of `nparts` starts from, read from a Spark snapshot (run by its task):
    (partition id, pickled batch) byte pairs of `Seen` and `Frontier` records, all for `pid`."""
    from .worker.batch import emit

    parts, old = body["parts"], body["partitions"]
    klen = 2 * body["depth"]
    pieces, fronts = [], []
    for q, entry in enumerate(parts):
        # the same partitioning: part `pid` is this partition's; another one: every part may hold
        # some of its visited set, and part q's frontier goes to partition q mod nparts
        mine = q == pid if old == nparts else q % nparts == pid
        if not mine and (old == nparts or not entry["seen"]):
            continue
        seen, keys, lens, z = _split_part(_read_part(directory, entry), entry, klen)
        pieces.append(seen if old == nparts else seen[_owner(seen, nparts) == pid])
        if mine and entry["frontier"]:
            fronts.append((keys, lens, z))
    # one sorted visited set (a merge takes its `Seen` chunks in order as one sorted run)
    seen = pieces[0] if len(pieces) == 1 else np.sort(np.concatenate(pieces)) if pieces else \
        np.empty(0, _FP)
    del pieces
    for rec in _seen_records(seen):
        yield from emit(pid, [rec])
    for keys, lens, z in fronts:
        for rec in _frontier_records(keys, klen, unpack_states(lens, z)):
            yield from emit(pid, [rec])


def ship_parts(parts_of: list, _records=()):
    """The map side that ships driver-built records (`bfs_snapshot_parts`) to their partitions."""
    from .worker.batch import emit

    for pid, recs in parts_of:
        for rec in recs:
            yield from emit(pid, [rec])


# --- the Spark format: the driver -----------------------------------------------------------------
def is_url(directory: str) -> bool:
    return "://" in directory


class LevelSnapshots(ck.Writer):
    """The driver's side of the Spark snapshots in `directory`: when one is due, a new generation
    number for the tasks to write under, and the manifest once they have (`commit`)."""

    def __init__(self, directory: str, identity: dict, every: float = 300.0, log=None):
        super().__init__(directory, identity, every, log, (3, 4), FORMATS)
        self.level = None  # the level of the last snapshot committed (or resumed from)
        self.write_seconds = []  # per snapshot: (level, slowest task's write s, manifest s, bytes)

    def begin(self) -> int:
        self.gen += 1
        return self.gen

    def commit(self, gen: int, entries: list, *, depth: int, generated: int, per_depth: list,
               distinct: int, violations: list, nparts: int, elapsed: float) -> None:
        """Write the manifest naming the parts `entries` (one per partition, in partition order)
        of generation `gen`, after checking that the driver sees each of them."""
        t0 = time.perf_counter()
        d = self.dir
        for e in entries:
            try:
                size = os.stat(os.path.join(d, e["name"])).st_size
            except OSError:
                size = None
            if size != e["size"]:
                raise UsageError(f"--checkpoint {d}: the driver does not see the part "
                                 f"{e['name']} a task wrote there; with a cluster, DIR must be a "
                                 "file system every executor and the driver share")
        body = dict(self.identity, format=ck.SPARK_FORMAT, format_version=ck.SPARK_FORMAT_VERSION,
                    generation=gen, written_at=time.time(), depth=depth, generated=generated,
                    per_depth=list(per_depth), distinct=distinct, partitions=nparts,
                    frontier_states=sum(e["frontier"] for e in entries),
                    violations=[{"property": f.violation.property, "depth": f.depth,
                                 "path": list(f.path)} for f in violations],
                    parts=[{k: e[k] for k in ("name", "size", "xxh3", "seen", "frontier")}
                           for e in entries],
                    extra={"elapsed": round(elapsed, 3)})
        if sum(e["seen"] for e in entries) != distinct:
            raise ValueError("internal error: the parts' visited sets do not add up to the count")
        ck.write_manifest(d, body)
        # the new generation is the checkpoint now: older parts, and the data files of an
        # in-process checkpoint this run may have resumed from, may go
        ck.remove_stale(d, lambda parts: (
            (len(parts) == 4 and parts[0] == "part" and parts[1] != str(gen))  # older parts
            or (len(parts) == 3 and parts[0] in ("seen", "parents", "frontier")  # in-process
                and parts[2] == "bin")))
        self.level = depth
        self.written += 1
        self.last = time.monotonic()
        manifest_s = time.perf_counter() - t0
        size = sum(e["size"] for e in entries)
        task_s = max((e["seconds"] for e in entries), default=0.0)
        self.write_seconds.append({"level": depth, "bytes": size,
                                   "task_write_seconds": sorted(e["seconds"] for e in entries),
                                   "manifest_seconds": round(manifest_s, 4)})
        if self.log is not None:
            self.log(f"checkpoint: level {depth}, {distinct:,} distinct, "
                     f"{body['frontier_states']:,} frontier states, {size / 1e6:.1f} MB written to "
                     f"{d} by {nparts} tasks (slowest {task_s:.1f}s) and the manifest "
                     f"({manifest_s:.2f}s)")


class SparkSnapshot:
    """A verified Spark snapshot: its manifest body."""

    def __init__(self, directory: str, meta: dict):
        self.directory = directory
        self.meta = meta

    @property
    def depth(self) -> int:
        return self.meta["depth"]

    @property
    def frontier_states(self) -> int:
        return self.meta["frontier_states"]


def load(directory: str, expect: dict):
    """The checkpoint in `directory`, in either format, checked against this run's identity
    `expect` and verified (every size and checksum; the driver streams each part once, holding
    none): a `zabmc.explore.checkpoint.Snapshot` or a `SparkSnapshot`."""
    if is_url(directory):
        raise UsageError(f"--resume {directory}: a checkpoint is read from a file-system path, "
                         "not a URL")
    body = ck.read_manifest(directory, FORMATS)
    ck.check_identity(directory, body, expect)
    if body["format"] == ck.FORMAT:
        return ck.load(directory, expect)
    try:
        klen = 2 * int(body["depth"])
        parts = body["parts"]
        if len(parts) != body["partitions"] or not parts:
            raise ck._bad(directory, "the manifest's parts disagree with its partition count")
        if sum(e["seen"] for e in parts) != body["distinct"]:
            raise ck._bad(directory, "the parts' visited sets disagree with the distinct count")
        if sum(e["frontier"] for e in parts) != body["frontier_states"]:
            raise ck._bad(directory, "the parts' frontiers disagree with the manifest")
        for e in parts:
            _verify_part(directory, e, klen)
        body["per_depth"], body["generated"], body["violations"]  # noqa: B018 - present
    except (KeyError, TypeError, ValueError) as e:
        raise ck._bad(directory, f"the manifest lacks or garbles {e}") from None
    return SparkSnapshot(directory, body)


def _verify_part(directory: str, entry: dict, klen: int) -> None:
    name = entry["name"]
    h, size = xxh3_128(), 0
    try:
        with ck.open_part(directory, entry) as f:
            while size <= entry["size"] and (chunk := f.read(1 << 20)):
                h.update(chunk)
                size += len(chunk)
    except OSError as e:
        raise ck._bad(directory, f"cannot read {name}: {e.strerror}") from None
    if size != entry["size"]:
        raise ck._bad(directory, f"{name} has {size:,} bytes, the manifest says "
                                 f"{entry['size']:,} (truncated?)")
    if h.hexdigest() != entry["xxh3"]:
        raise ck._bad(directory, f"{name} fails its checksum (corrupt)")
    n, m = entry["seen"], entry["frontier"]
    if size < 16 * n + (klen + 4) * m or (m == 0 and size != 16 * n):
        raise ck._bad(directory, f"{name} does not hold the states the manifest says")
