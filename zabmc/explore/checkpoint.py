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
- `frontier.<gen>.bin`: the frontier's states, each a uint32 LE length then the codec's bytes.

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

from zabmc.errors import UsageError

FORMAT = "zabmc-bfs-checkpoint"
FORMAT_VERSION = 1
# the Spark engine's level snapshots (`zabmc.spark.checkpoint`): the same manifest discipline, one
# data file per partition instead of the parent table
SPARK_FORMAT = "zabmc-spark-checkpoint"
SPARK_FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_LEN = struct.Struct("<I")
_BUF = 1 << 20


def zabmc_version() -> str:
    try:
        return version("zabmc")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _digest(body: dict) -> str:
    return xxh3_128(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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

    def close(self) -> dict:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        return {"name": os.path.basename(self.path), "size": self.size,
                "xxh3": self.h.hexdigest()}


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
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise _bad(self.directory, f"{self.entry['name']} is missing") from None
        except OSError as e:
            raise _bad(self.directory, f"cannot read {self.entry['name']}: {e.strerror}") from None

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
            read = f.read
            while True:
                head = read(4)
                if not head:
                    break
                if len(head) < 4:
                    raise _bad(self.directory, f"{name} is malformed (a cut record)")
                (k,) = _LEN.unpack(head)
                b = read(k)
                if len(b) < k:
                    raise _bad(self.directory, f"{name} is malformed (a cut record)")
                if check:
                    h.update(head)
                    h.update(b)
                yield b
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
             codec: str, reduction: str = "none") -> dict:
    """What a resumed search must share with the checkpointed one."""
    return {"zabmc_version": zabmc_version(), "model": model, "config": dict(config._asdict()),
            "invariants": list(invariants), "strategy": strategy,
            "stop_at_first": bool(stop_at_first), "codec": codec, "reduction": reduction}


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
    except (UsageError, ValueError, TypeError):
        pass
    return gen


class Checkpointer:
    """Writes checkpoints of one search into `directory`: at a level boundary when `every` seconds
    have passed since the last one (0: at every level boundary), and a last one when the search
    ends. `log` (optional) is told about each one written."""

    def __init__(self, directory: str, identity: dict, every: float = 300.0, log=None):
        self.dir = directory
        self.identity = identity
        self.every = every
        self.log = log
        self.last = time.monotonic()
        self.written = 0  # checkpoints written by this process
        os.makedirs(directory, exist_ok=True)
        self.gen = newest_generation(directory, (3,))

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    def write(self, *, depth: int, generated: int, per_depth: list, violations: list,
              seen: np.ndarray, parents: list, events: list, frontier_blobs: Iterable[bytes],
              extra: dict | None = None) -> str:
        """Write one checkpoint; the manifest's path."""
        t0 = time.perf_counter()
        gen = self.gen + 1
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
        nfront = write_records(w, frontier_blobs)
        files["frontier"] = w.close()
        body = dict(self.identity, format=FORMAT, format_version=FORMAT_VERSION,
                    generation=gen, written_at=time.time(), depth=depth, generated=generated,
                    per_depth=list(per_depth), distinct=int(len(seen)), levels=levels,
                    frontier_states=nfront,
                    violations=[{"property": f.violation.property, "depth": f.depth,
                                 "path": list(f.path)} for f in violations],
                    files=files, extra=extra or {})
        tmp = os.path.join(d, f".{MANIFEST}.{os.getpid()}.tmp")
        with open(tmp, "w") as f:
            json.dump({"body": body, "xxh3": _digest(body)}, f, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(d, MANIFEST))
        _fsync_dir(d)
        # the new generation is the checkpoint now: the old one's files may go
        for name in os.listdir(d):
            parts = name.split(".")
            if (len(parts) == 3 and parts[2] == "bin" and parts[0] in files
                    and parts[1].isdigit() and int(parts[1]) != gen):
                try:
                    os.remove(os.path.join(d, name))
                except OSError:
                    pass
        self.gen = gen
        self.written += 1
        self.last = time.monotonic()
        if self.log is not None:
            size = sum(x["size"] for x in files.values())
            self.log(f"checkpoint: level {depth}, {body['distinct']:,} distinct, "
                     f"{nfront:,} frontier states, {size / 1e6:.1f} MB written to {d} in "
                     f"{time.perf_counter() - t0:.1f}s")
        return os.path.join(d, MANIFEST)


def _bad(directory: str, why: str) -> UsageError:
    return UsageError(f"checkpoint {directory} is unusable: {why}")


def _read_manifest(directory: str, missing_ok: bool = False,
                   formats: dict | None = None) -> dict | None:
    """The verified manifest of `directory`, of one of `formats` ({format: version}; default:
    the in-process BFS's)."""
    formats = formats or {FORMAT: FORMAT_VERSION}
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        if missing_ok:
            return None
        raise UsageError(f"no checkpoint in {directory} ({MANIFEST} not found)") from None
    except OSError as e:
        raise _bad(directory, f"cannot read {MANIFEST}: {e.strerror}") from None
    try:
        doc = json.loads(raw.decode())
        body, digest = doc["body"], doc["xxh3"]
        if not isinstance(body, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise _bad(directory, f"{MANIFEST} is truncated or corrupt") from None
    if _digest(body) != digest:
        raise _bad(directory, f"{MANIFEST} fails its checksum (corrupt)")
    fmt = body.get("format")
    if fmt == SPARK_FORMAT and fmt not in formats:
        raise _bad(directory, "it was written by the Spark engine (resume it with --engine spark)")
    if fmt not in formats or body.get("format_version") != formats[fmt]:
        want = " or ".join(f"{f} version {v}" for f, v in formats.items())
        raise _bad(directory, f"not a {want}")
    return doc


def read_manifest(directory: str, formats: dict) -> dict:
    """The verified manifest body of the checkpoint in `directory` (one of `formats`)."""
    return _read_manifest(directory, formats=formats)["body"]


def check_identity(directory: str, body: dict, expect: dict) -> None:
    """A one-line `UsageError` unless the checkpoint (manifest `body`) was written by a search with
    identity `expect` (`identity(...)`)."""
    for key, what in (("zabmc_version", "zabmc version"), ("model", "--model"),
                      ("strategy", "--strategy"), ("stop_at_first", "--all"),
                      ("invariants", "properties (--invariant, --no-invariants)"),
                      ("codec", "state codec"), ("reduction", "--reduction")):
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
    try:
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise _bad(directory, f"{name} is missing") from None
    except OSError as e:
        raise _bad(directory, f"cannot read {name}: {e.strerror}") from None
    if len(data) != entry["size"]:
        raise _bad(directory, f"{name} has {len(data):,} bytes, the manifest says "
                              f"{entry['size']:,} (truncated?)")
    if xxh3_128(data).hexdigest() != entry["xxh3"]:
        raise _bad(directory, f"{name} fails its checksum (corrupt)")
    return data


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
        frontier = RecordFile(directory, files["frontier"], body["frontier_states"])
        frontier.verify()
    except (KeyError, TypeError) as e:
        raise _bad(directory, f"the manifest lacks {e}") from None
    return Snapshot(directory, body, seen, parents, events, frontier)
