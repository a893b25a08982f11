"""Checkpoints of the level-synchronous BFS (`zabmc check --checkpoint DIR`, `--resume DIR`).

A checkpoint is taken at a level boundary, the only point where the search's state is consistent:
levels 0..d are in the visited set and the parent table, the frontier is level d (none of it
expanded), the counters and the violations are those of levels 0..d.

On disk, in DIR:
- `manifest.json`: `{"body": {...}, "xxh3": hex}`, the body's xxh3-128 over its canonical JSON
  (sorted keys, no spaces). The body holds the format version, the zabmc version, the model, the
  `ExploreConfig`, the properties, the strategy and whether the search stops at the first violation,
  the state codec's name, the level, the counters (`generated`, `per_depth`), the violations found
  (property, depth, event path; the messages are rebuilt by replay on resume) and, for each data file,
  its name, size and xxh3-128.
- `seen.<gen>.bin`: the visited set, sorted 16-byte fingerprints;
- `parents.<gen>.bin`: per level, the parent indices (uint32 LE) then the event indices (uint16 LE);
- `frontier.<gen>.bin`: the frontier's states, each a uint32 LE length then the codec's bytes, as
  one zstd stream (level 1) in format version 2 (the manifest's entry says `"compression":
  "zstd"`), plain in version 1 (still read).

Writing is atomic: the data files of a new generation are written and fsynced under new names, then
the manifest is written to a temporary file, fsynced and renamed over `manifest.json` (and the
directory fsynced); only then are the previous generation's files removed. A kill at any instant
leaves `manifest.json` naming a complete generation. Reading verifies every size and checksum, so a
truncated or altered checkpoint is a one-line `UsageError` (exit 2), never a wrong answer.
"""

from __future__ import annotations

import json
import os
import struct
import time
from array import array
from importlib.metadata import PackageNotFoundError, version
from typing import Iterable, Iterator

import numpy as np
from xxhash import xxh3_128

from zabmc.core import files
from zabmc.core.errors import UsageError

FORMAT = "zabmc-bfs-checkpoint"
#: 2: the frontier file is one zstd stream (level 1) of the records; 1 (still read): plain records
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
# the Spark engine's level snapshots (`zabmc.spark.checkpoint`): the same manifest discipline, one
# data file per partition instead of the parent table
SPARK_FORMAT = "zabmc-spark-checkpoint"
SPARK_FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: the largest manifest read: its violations' paths are bounded by the depth, its other fields small
MAX_MANIFEST_BYTES = 64 << 20
_LEN = struct.Struct("<I")
_BUF = 1 << 20


def zabmc_version() -> str:
    try:
        return version("zabmc")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _digest(body: dict) -> str:
    return xxh3_128(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_manifest(directory: str, body: dict) -> None:
    """`manifest.json`, naming a generation whose data files are written and fsynced: through the
    one writer (`zabmc.core.files.write`: a temporary file, fsynced, renamed over the old
    manifest, the directory fsynced), so that a kill or a full disk at any instant leaves the old
    manifest or the new one, whole."""
    files.write(os.path.join(directory, MANIFEST),
                json.dumps({"body": body, "xxh3": _digest(body)}, sort_keys=True) + "\n",
                "checkpoint manifest")


class _HashingWriter:
    """A binary file that counts and hashes what is written to it; fsynced on close."""

    def __init__(self, path: str):
        self.path = path
        self.f = open(path, "wb", buffering=_BUF)
        self.h = xxh3_128()
        self.size = 0

    def write(self, b) -> None:
        self.f.write(b)
        self.h.update(b)
        self.size += len(b)

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> dict:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        return {"name": os.path.basename(self.path), "size": self.size,
                "xxh3": self.h.hexdigest()}


class _HashingReader:
    """A binary file whose bytes read are hashed (the zstd stream reader reads through it)."""

    def __init__(self, f, h):
        self.f = f
        self.h = h

    def read(self, n: int = -1) -> bytes:
        b = self.f.read(n)
        self.h.update(b)
        return b


def write_records(w, blobs: Iterable[bytes]) -> int:
    """Length-prefixed records; the count."""
    pack = _LEN.pack
    n = 0
    buf: list = []
    size = 0
    for b in blobs:
        buf.append(pack(len(b)))
        buf.append(b)
        size += len(b) + 4
        n += 1
        if size >= _BUF:
            w.write(b"".join(buf))
            buf.clear()
            size = 0
    if buf:
        w.write(b"".join(buf))
    return n


def read_records(data: bytes | memoryview, count: int) -> Iterator[bytes]:
    unpack_from = _LEN.unpack_from
    pos = 0
    end = len(data)
    for _ in range(count):
        if pos + 4 > end:
            raise ValueError("record header past the end")
        (n,) = unpack_from(data, pos)
        pos += 4
        if pos + n > end:
            raise ValueError("record past the end")
        yield bytes(data[pos:pos + n])
        pos += n
    if pos != end:
        raise ValueError("trailing bytes")


def zstandard_error():
    import zstandard

    return zstandard.ZstdError


def _read_exactly(read, n: int) -> bytes:
    """`n` bytes from a stream whose reads may return fewer (a decompressor); fewer at its end."""
    b = read(n)
    if len(b) == n or not b:
        return b
    parts = [b]
    got = len(b)
    while got < n:
        more = read(n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class RecordFile:
    """The frontier of a checkpoint: `count` length-prefixed records, streamed from the file (never
    all in memory), checked against the manifest's size and checksum before and while reading."""

    def __init__(self, directory: str, entry: dict, count: int):
        self.directory = directory
        self.entry = entry
        self.path = os.path.join(directory, entry["name"])
        self.count = count

    def __len__(self) -> int:
        return self.count

    def _open(self):
        return open_part(self.directory, self.entry)

    def verify(self) -> None:
        """Size and checksum, and that the records fill the file exactly."""
        name, h, size = self.entry["name"], xxh3_128(), 0
        with self._open() as f:
            while chunk := f.read(_BUF):
                h.update(chunk)
                size += len(chunk)
        if size != self.entry["size"]:
            raise _bad(self.directory, f"{name} has {size:,} bytes, the manifest says "
                                       f"{self.entry['size']:,} (truncated?)")
        if h.hexdigest() != self.entry["xxh3"]:
            raise _bad(self.directory, f"{name} fails its checksum (corrupt)")
        n = 0
        for _ in self._records(check=False):
            n += 1
        if n != self.count:
            raise _bad(self.directory, f"{name} holds {n:,} states, the manifest says "
                                       f"{self.count:,}")

    def _records(self, check: bool = True) -> Iterator[bytes]:
        name = self.entry["name"]
        h = xxh3_128()
        with self._open() as f:
            raw = _HashingReader(f, h)
            stream = raw
            if self.entry.get("compression") == "zstd":
                import zstandard

                stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True,
                                                                    closefd=False)
            read = stream.read
            try:
                while True:
                    head = _read_exactly(read, 4)
                    if not head:
                        break
                    if len(head) < 4:
                        raise _bad(self.directory, f"{name} is malformed (a cut record)")
                    (k,) = _LEN.unpack(head)
                    b = _read_exactly(read, k)
                    if len(b) < k:
                        raise _bad(self.directory, f"{name} is malformed (a cut record)")
                    yield b
            except zstandard_error() as e:
                raise _bad(self.directory, f"{name} is not a valid zstd stream ({e})") from None
            while raw.read(_BUF):  # what the decompressor did not need still counts
                pass
        if check and h.hexdigest() != self.entry["xxh3"]:
            raise _bad(self.directory, f"{name} changed while it was read")

    def __iter__(self) -> Iterator[bytes]:
        return self._records()


class Snapshot:
    """What a checkpoint holds, in memory (the frontier still encoded)."""

    def __init__(self, directory: str, meta: dict, seen: np.ndarray, parents: list, events: list,
                 frontier: list[bytes]):
        self.directory = directory
        self.meta = meta
        self.seen = seen
        self.parents = parents
        self.events = events
        self.frontier = frontier

    @property
    def depth(self) -> int:
        return self.meta["depth"]


def identity(*, model: str, config, invariants, strategy: str, stop_at_first: bool,
             codec: str, reduction: str = "none", start: dict | None = None) -> dict:
    """What a resumed search must share with the checkpointed one; `start`, a search's start
    state other than the initial one (`zabmc check --from`): its fingerprint and event count."""
    out = {"zabmc_version": zabmc_version(), "model": model, "config": dict(config._asdict()),
           "invariants": list(invariants), "strategy": strategy,
           "stop_at_first": bool(stop_at_first), "codec": codec, "reduction": reduction}
    if start is not None:
        out["start"] = dict(start)
    return out


def remove_stale(directory: str, stale) -> None:
    """Remove the files of `directory` whose dot-separated name parts `stale(parts)` says belong
    to an older generation (after a new manifest has made them so); one already gone is fine."""
    for name in os.listdir(directory):
        if stale(name.split(".")):
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass


def newest_generation(directory: str, name_parts: tuple, formats: dict | None = None) -> int:
    """The greatest generation number in `directory`: of its files `NAME.GEN[.PART].bin` (with
    one of `name_parts` dot-separated parts) and of its manifest (of one of `formats`). New
    generations are numbered above it, so that the files the current manifest names stay
    untouched until the next manifest replaces it."""
    gen = 0
    for name in os.listdir(directory):
        parts = name.split(".")
        if len(parts) in name_parts and parts[-1] == "bin" and parts[1].isdigit():
            gen = max(gen, int(parts[1]))
    try:
        old = _read_manifest(directory, missing_ok=True, formats=formats)
        if old is not None:
            gen = max(gen, int(old["body"].get("generation", 0)))
    except (UsageError, ValueError, TypeError, OverflowError):
        pass
    return gen


class CheckpointWriteError(Exception):
    """A checkpoint could not be written (a full disk, an I/O error); the message says which and
    what stays. The search goes on without checkpoints, and says so at its end."""


class Writer:
    """What both checkpoint writers (this module's `Checkpointer`, the Spark engine's
    `LevelSnapshots`) share: the directory, the identity a resume must match, how often one is
    due (`every` seconds after the last; 0: at every level boundary), who is told (`log`), and
    the generation numbers they write under."""

    def __init__(self, directory: str, identity: dict, every: float, log, name_parts: tuple,
                 formats: dict | None = None):
        self.dir = directory
        self.identity = identity
        self.every = every
        self.log = log
        self.last = time.monotonic()
        self.written = 0  # checkpoints written by this process
        os.makedirs(directory, exist_ok=True)
        self.gen = newest_generation(directory, name_parts, formats)

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every


class Checkpointer(Writer):
    """Writes checkpoints of one search into `directory`: at a level boundary when one is due, and
    a last one when the search ends."""

    def __init__(self, directory: str, identity: dict, every: float = 300.0, log=None,
                 compress: bool = True):
        super().__init__(directory, identity, every, log, (3,))
        self.compress = compress  # False: format version 1, an uncompressed frontier (tests)

    def write(self, **kw) -> str:
        """Write one checkpoint (see `_write`); the manifest's path. A write that fails (a full
        disk, an I/O error) removes what it wrote of the new generation and raises
        `CheckpointWriteError`: the manifest still names the previous generation, whole."""
        gen = self.gen + 1
        try:
            return self._write(gen, **kw)
        except (OSError, UsageError) as e:  # UsageError: the manifest's writer (WriteError)
            remove_stale(self.dir, lambda parts: (len(parts) == 3 and parts[2] == "bin"
                                                  and parts[1] == str(gen)))
            why = e.strerror if isinstance(e, OSError) else str(e).rpartition(": ")[2]
            kept = ("no earlier checkpoint" if self.written == 0 and not os.path.exists(
                os.path.join(self.dir, MANIFEST)) else "the checkpoint already there stays")
            raise CheckpointWriteError(f"cannot write the checkpoint of level {kw['depth']} to "
                                       f"{self.dir}: {why}; {kept}") from None

    def _write(self, gen: int, *, depth: int, generated: int, per_depth: list, violations: list,
               seen: np.ndarray, parents: list, events: list, frontier_blobs: Iterable[bytes],
               extra: dict | None = None) -> str:
        t0 = time.perf_counter()
        d = self.dir
        files = {}
        w = _HashingWriter(os.path.join(d, f"seen.{gen}.bin"))
        seen = np.ascontiguousarray(seen)
        w.write(memoryview(seen.view(np.uint8)))
        files["seen"] = w.close()
        w = _HashingWriter(os.path.join(d, f"parents.{gen}.bin"))
        levels = []
        for p, e in zip(parents, events):
            p = array("I", p)
            e = array("H", e)
            if p.itemsize != 4 or e.itemsize != 2 or len(p) != len(e):
                raise ValueError("parent table arrays of unexpected shape")
            levels.append(len(p))
            w.write(p.tobytes())
            w.write(e.tobytes())
        files["parents"] = w.close()
        w = _HashingWriter(os.path.join(d, f"frontier.{gen}.bin"))
        if self.compress:
            import zstandard

            with zstandard.ZstdCompressor(level=1).stream_writer(w, closefd=False) as z:
                nfront = write_records(z, frontier_blobs)
            files["frontier"] = dict(w.close(), compression="zstd")
        else:
            nfront = write_records(w, frontier_blobs)
            files["frontier"] = w.close()
        body = dict(self.identity, format=FORMAT, format_version=FORMAT_VERSION if self.compress
                    else 1,
                    generation=gen, written_at=time.time(), depth=depth, generated=generated,
                    per_depth=list(per_depth), distinct=int(len(seen)), levels=levels,
                    frontier_states=nfront,
                    violations=[{"property": f.violation.property, "depth": f.depth,
                                 "path": list(f.path)} for f in violations],
                    files=files, extra=extra or {})
        write_manifest(d, body)
        # the new generation is the checkpoint now: the old one's files may go
        remove_stale(d, lambda parts: (len(parts) == 3 and parts[2] == "bin"
                                       and parts[0] in files and parts[1].isdigit()
                                       and int(parts[1]) != gen))
        self.gen = gen
        self.written += 1
        self.last = time.monotonic()
        if self.log is not None:
            size = sum(x["size"] for x in files.values())
            self.log(f"checkpoint: level {depth}, {body['distinct']:,} distinct, "
                     f"{nfront:,} frontier states, {size / 1e6:.1f} MB written to {d} in "
                     f"{time.perf_counter() - t0:.1f}s")
        return os.path.join(d, MANIFEST)


def refuse_overwrite(directory: str) -> None:
    """A one-line `UsageError` when `directory` already holds a checkpoint (a manifest of either
    engine, readable or not): a run that did not resume it must not replace it by mistake."""
    if not os.path.lexists(os.path.join(directory, MANIFEST)):
        return
    try:
        body = _read_manifest(directory, formats={FORMAT: READABLE_VERSIONS,
                                                  SPARK_FORMAT: SPARK_FORMAT_VERSION})["body"]
        what = f"model {body.get('model')!s:.40}, level {body.get('depth')!s:.20}"
    except UsageError:
        what = "unreadable"
    raise UsageError(f"--checkpoint {directory} already holds a checkpoint ({what}): continue it "
                     f"with --resume {directory}, or replace it with --force")


def _bad(directory: str, why: str) -> UsageError:
    return UsageError(f"checkpoint {directory} is unusable: {why}")


def open_part(directory: str, entry: dict):
    """A data file of a checkpoint (manifest `entry`), open for reading: a regular file (never a
    FIFO, which would hang the reader, nor a device: /dev/zero never ends) of exactly the size the
    manifest names, checked before a byte is read; else the checkpoint is unusable (one line)."""
    name = entry["name"]
    path = os.path.join(directory, name)
    if not os.path.lexists(path):
        raise _bad(directory, f"{name} is missing")
    try:
        f = files.open_input(path, "its file", limit=None)
    except UsageError as e:
        raise _bad(directory, str(e).replace(f"its file {path}", name)) from None
    size = os.fstat(f.fileno()).st_size
    if size != entry["size"]:
        f.close()
        raise _bad(directory, f"{name} has {size:,} bytes, the manifest says "
                              f"{entry['size']:,} (truncated?)")
    return f


def _read_manifest(directory: str, missing_ok: bool = False,
                   formats: dict | None = None) -> dict | None:
    """The verified manifest of `directory`, of one of `formats` ({format: version}; default:
    the in-process BFS's)."""
    formats = formats or {FORMAT: READABLE_VERSIONS}
    path = os.path.join(directory, MANIFEST)
    if not os.path.lexists(path) or (os.path.islink(path) and not os.path.exists(path)):
        if missing_ok:
            return None
        raise UsageError(f"no checkpoint in {directory} ({MANIFEST} not found)")
    try:  # a regular file of at most MAX_MANIFEST_BYTES (a FIFO or /dev/zero is refused)
        raw = files.read_bytes(path, "its file", MAX_MANIFEST_BYTES)
    except UsageError as e:
        raise _bad(directory, str(e).replace(f"its file {path}", MANIFEST)) from None
    try:
        doc = json.loads(raw.decode())
        body, digest = doc["body"], doc["xxh3"]
        if not isinstance(body, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        # RecursionError: nesting deeper than Python's reader goes (a forged manifest)
        raise _bad(directory, f"{MANIFEST} is truncated or corrupt") from None
    if _digest(body) != digest:
        raise _bad(directory, f"{MANIFEST} fails its checksum (corrupt)")
    fmt = body.get("format")
    if not isinstance(fmt, str):
        raise _bad(directory, f"{MANIFEST} is not what zabmc writes: no format name")
    if fmt == SPARK_FORMAT and fmt not in formats:
        raise _bad(directory, "it was written by the Spark engine (resume it with --engine spark)")
    versions = {f: v if isinstance(v, tuple) else (v,) for f, v in formats.items()}
    if fmt not in versions or body.get("format_version") not in versions[fmt]:
        want = " or ".join(f"{f} version {' or '.join(map(str, v))}" for f, v in versions.items())
        raise _bad(directory, f"not a {want}")
    problem = _body_problem(body)
    if problem:
        raise _bad(directory, f"{MANIFEST} is not what zabmc writes: {problem}")
    return doc


def _is_int(x, lo: int = 0, hi: int | None = None) -> bool:
    return (type(x) is int and x >= lo) and (hi is None or x <= hi)


def _file_problem(key: str, e) -> str | None:
    if not isinstance(e, dict):
        return f"{key} is not a file entry"
    name = e.get("name")
    if not (isinstance(name, str) and name and name == os.path.basename(name)
            and name not in (".", "..") and name != MANIFEST):
        return f"{key} names no file of the directory"
    if not _is_int(e.get("size")) or not isinstance(e.get("xxh3"), str):
        return f"{key}'s size or checksum is not one"
    if e.get("compression", "zstd") != "zstd":
        return f"{key}'s compression {e.get('compression')!r} is unknown"
    return None


def _body_problem(body: dict) -> str | None:
    """What is wrong with a manifest body whose checksum holds (it may still be forged): every
    field the readers use, of the right type and in range, checked before any is believed; None
    when nothing is."""
    cfg = body.get("config")
    if not isinstance(cfg, dict) or not _is_int(cfg.get("depth")):
        return "config"
    depth = body.get("depth")
    if not _is_int(depth, 0, cfg["depth"]):
        return f"depth {depth!r:.40} (the bound is {cfg['depth']})"
    distinct = body.get("distinct")
    per_depth = body.get("per_depth")
    if not _is_int(distinct, 1):
        return "distinct"
    if not _is_int(body.get("generated"), distinct):
        return "generated"
    if not _is_int(body.get("frontier_states"), 0, distinct):
        return "frontier_states"
    if not _is_int(body.get("generation", 0)):
        return "generation"
    if not (isinstance(per_depth, list) and len(per_depth) == depth + 1
            and all(_is_int(x) for x in per_depth)):
        return "per_depth"
    extra = body.get("extra", {})
    elapsed = extra.get("elapsed", 0.0) if isinstance(extra, dict) else None
    if type(elapsed) not in (int, float) or not 0 <= elapsed < 1e12:
        return "extra.elapsed"
    violations = body.get("violations")
    if not isinstance(violations, list):
        return "violations"
    for v in violations:
        if not (isinstance(v, dict) and isinstance(v.get("property"), str)
                and _is_int(v.get("depth"), 0, depth) and isinstance(v.get("path"), list)
                and len(v["path"]) == v["depth"]
                and all(_is_int(x, 0, 0xFFFF) for x in v["path"])):
            return "violations"
    if body.get("format") == FORMAT:
        return _bfs_body_problem(body, depth, distinct)
    parts = body.get("parts")
    if not (isinstance(parts, list) and parts and _is_int(body.get("partitions"), 1)):
        return "parts"
    for e in parts:
        problem = _file_problem("a part", e)
        if problem or not (_is_int(e.get("seen")) and _is_int(e.get("frontier"))):
            return problem or "a part's counts"
    return None


def _bfs_body_problem(body: dict, depth: int, distinct: int) -> str | None:
    levels = body.get("levels")
    if not (isinstance(levels, list) and len(levels) == depth + 1
            and all(_is_int(x, 1) for x in levels) and sum(levels) == distinct):
        return "levels"
    if body["frontier_states"] not in (0, levels[-1]):  # 0: the search exhausted its space
        return "frontier_states (not the last level's size)"
    if body["per_depth"] != levels:  # the new states of each depth are that level's states
        return "per_depth (not the levels' sizes)"
    files = body.get("files")
    if not isinstance(files, dict):
        return "files"
    for key in ("seen", "parents", "frontier"):
        problem = _file_problem(key, files.get(key))
        if problem:
            return problem
    if body.get("format_version") == 1 and "compression" in files["frontier"]:
        return "a compressed frontier in format version 1"
    return None


def read_manifest(directory: str, formats: dict) -> dict:
    """The verified manifest body of the checkpoint in `directory` (one of `formats`)."""
    return _read_manifest(directory, formats=formats)["body"]


def check_identity(directory: str, body: dict, expect: dict) -> None:
    """A one-line `UsageError` unless the checkpoint (manifest `body`) was written by a search with
    identity `expect` (`identity(...)`)."""
    for key, what in (("zabmc_version", "zabmc version"), ("model", "--model"),
                      ("strategy", "--strategy"), ("stop_at_first", "--all"),
                      ("invariants", "properties (--invariant, --no-invariants)"),
                      ("codec", "state codec"), ("reduction", "--reduction"),
                      ("start", "start state (--from, --scenario)")):
        default = "none" if key == "reduction" else None  # checkpoints from before --reduction
        there, here = body.get(key, default), expect.get(key, default)
        if there != here:
            if key == "stop_at_first":  # the flag is --all, the field its negation
                there, here = (("without --all" if stop else "with --all") for stop in (there, here))
                raise UsageError(f"checkpoint {directory} was written with a different --all: "
                                 f"{there} there, {here} here")
            raise UsageError(f"checkpoint {directory} was written with a different {what}: "
                             f"{there!r}, this run has {here!r}")
    got, want = body.get("config", {}), expect["config"]
    if got != want:
        diff = [k for k in want if got.get(k) != want[k]] or sorted(set(got) ^ set(want))
        k = diff[0]
        raise UsageError(f"checkpoint {directory} was written with a different configuration: "
                         f"--{k.replace('_', '-')} {got.get(k)} there, {want.get(k)} here")


def frontier_states(snap, codec, fingerprint, seen) -> Iterator[tuple]:
    """(blob, state) of each frontier record of `snap`, each decoded by `codec` (and encoding back
    to the same bytes) and found in the visited set `seen` (a level's states are visited), no two
    the same: a record that does not decode, or not exactly, or decodes to a state the checkpoint
    never visited or to one already read, makes the checkpoint
    unusable (one line), whatever its checksums say. (That a visited state belongs to the last
    level is not checked: it would take a replay of its path.)"""
    decode, encode = codec.decode, codec.encode
    fps = np.empty(len(snap.frontier), dtype=np.dtype("S16"))
    for k, b in enumerate(snap.frontier):
        try:
            s = decode(b)
            fp = fingerprint(s)
            ok = fp in seen and encode(s) == b
        except Exception:  # noqa: BLE001 - any failure of the decoder on a forged record
            ok = False
        if not ok:
            raise _bad(snap.directory, f"frontier state {k + 1:,} is not a state of the "
                                       "checkpointed search (corrupt or forged)")
        fps[k] = fp
        yield b, s
    fps.sort()
    if len(fps) > 1 and (fps[1:] == fps[:-1]).any():
        raise _bad(snap.directory, "the frontier holds a state twice (corrupt or forged)")


def restore_violations(env, body: dict) -> list:
    """The violations a checkpoint recorded (property, depth, event path), as `Found`s: each path
    is replayed through the kernel (`trace.rebuild`), which rebuilds the message and proves the
    violation is there."""
    from .outcome import Found
    from .trace import rebuild

    found = []
    for x in body["violations"]:
        path = tuple(x["path"])
        try:
            v = rebuild(env, path, x["property"]).violation
        except Exception:  # noqa: BLE001 - a path the model cannot replay: a bad checkpoint
            v = None
        if v is None or v.property != x["property"]:
            raise UsageError(f"checkpoint: the recorded violation of {x['property']} does not "
                             "replay (corrupt checkpoint, or a different model)")
        found.append(Found(v, x["depth"], path))
    return found


def _read_file(directory: str, entry: dict) -> bytes:
    name = entry["name"]
    with open_part(directory, entry) as f:
        try:
            data = f.read(entry["size"] + 1)  # never more than the manifest names
        except OSError as e:
            raise _bad(directory, f"cannot read {name}: {e.strerror}") from None
    if len(data) != entry["size"]:
        raise _bad(directory, f"{name} has {len(data):,} bytes, the manifest says "
                              f"{entry['size']:,} (truncated?)")
    if xxh3_128(data).hexdigest() != entry["xxh3"]:
        raise _bad(directory, f"{name} fails its checksum (corrupt)")
    return data


def parent_table_problem(directory: str, parents: list, levels: list) -> None:
    """A one-line `UsageError` unless every parent index points into the previous level (the
    initial state's, level 0's, is 0): checked before any search, for a forged table would send a
    path reconstruction out of its level (an IndexError deep in the search) or to a wrong
    state."""
    if len(parents) != len(levels) or levels[0] != 1 or len(parents[0]) != 1 or parents[0][0]:
        raise _bad(directory, "level 0 of the parent table is not the initial state's")
    for d in range(1, len(levels)):
        p = np.frombuffer(parents[d], dtype="<u4") if len(parents[d]) else None
        if len(parents[d]) != levels[d]:
            raise _bad(directory, f"level {d} of the parent table holds {len(parents[d]):,} "
                                  f"states, the manifest says {levels[d]:,}")
        if p is not None and int(p.max()) >= levels[d - 1]:
            raise _bad(directory, f"level {d} of the parent table names parent {int(p.max()):,}, "
                                  f"but level {d - 1} has {levels[d - 1]:,} states (corrupt or "
                                  "forged)")


def load(directory: str, expect: dict) -> Snapshot:
    """Read and verify the checkpoint in `directory`, which must have been written by a search
    with identity `expect` (`identity(...)`)."""
    body = _read_manifest(directory)["body"]
    check_identity(directory, body, expect)
    try:
        files = body["files"]
        seen_b = _read_file(directory, files["seen"])
        if len(seen_b) % 16 or len(seen_b) // 16 != body["distinct"]:
            raise _bad(directory, "the visited set's size disagrees with the manifest")
        seen = np.frombuffer(seen_b, dtype=np.dtype("S16"))
        par_b = _read_file(directory, files["parents"])
        parents, events, pos = [], [], 0
        for n in body["levels"]:
            p = array("I")
            e = array("H")
            p.frombytes(par_b[pos:pos + 4 * n])
            pos += 4 * n
            e.frombytes(par_b[pos:pos + 2 * n])
            pos += 2 * n
            if len(p) != n or len(e) != n:
                raise _bad(directory, "the parent table is shorter than the manifest says")
            parents.append(p)
            events.append(e)
        if pos != len(par_b):
            raise _bad(directory, "the parent table is longer than the manifest says")
        parent_table_problem(directory, parents, body["levels"])
        frontier = RecordFile(directory, files["frontier"], body["frontier_states"])
        frontier.verify()
    except (KeyError, TypeError) as e:
        raise _bad(directory, f"the manifest lacks {e}") from None
    return Snapshot(directory, body, seen, parents, events, frontier)
