"""A BFS level that may live on disk (`zabmc check --memory-limit`).

A `Level` holds its states in a list until it holds more than its spill's budget; then it writes
them, and every state appended after, to an append-only segment file: blocks of length-prefixed
encoded states (the state codec, `zabmc.explore.codec`), each block compressed and framed by its
compressed and raw lengths. The default is zstd level 1 (about 1.1 us a state to compress and
decompress, about 35x on db19's 3-node states); zlib level 1 (about 4 us, 14x) is the fallback
when `zstandard` is missing. `ZABMC_SPILL_COMPRESS` chooses: `zstd`, a zlib level (1-9), or 0 for
none. Iterating a level reads the blocks back in order and decodes each state, which is the same
value with the same fingerprint and
successors as the one appended (the codec guarantees it: `choose_codec` checks it, the tests pin
it). A level is written once and read back once or twice (its expansion, a checkpoint).
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import zlib

from zabmc.core.errors import UsageError

_LEN = struct.Struct("<I")
_BLOCK = struct.Struct("<II")  # compressed length, raw length
BLOCK_BYTES = 1 << 20  # raw bytes per block
#: estimated bytes an in-memory state costs (its tuples, shared in part with other states), until a
#: level is large enough to measure its own (`measured_bytes`); a level is kept in memory while
#: (states x that) stays within the spill's budget
MEM_BYTES_PER_STATE = 1500
#: states a level measures its bytes a state on: evenly spaced, once it outgrows the estimate
MEASURE_SAMPLE = 4096


def measured_bytes(states: list) -> int:
    """What an in-memory state of `states` costs, measured: the sizes of the distinct objects in
    an evenly spaced sample of `MEASURE_SAMPLE` states (objects shared within the sample counted
    once), per state, plus its slot in the level's list. States share more across a whole level
    than across a sample, and objects the sample shares with the rest of memory (node states of
    other levels, the kernel's memo tables) are counted too, so this overestimates."""
    from sys import getsizeof

    step = max(1, len(states) // MEASURE_SAMPLE)
    sample = states[::step][:MEASURE_SAMPLE]
    seen: set = set()
    total = 0
    stack = list(sample)
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        total += getsizeof(o)
        if isinstance(o, tuple):  # states, nodes, messages, the net and the ghost are tuples
            stack.extend(o)
    return total // len(sample) + 8
#: the most a level keeps in memory by default, whatever the memory limit
DEFAULT_LEVEL_BUDGET = 256 << 20


def _compressor(how):
    """(compress, decompress) for `how`: "zstd", a zlib level, or 0 / "none" (the identity)."""
    how = str(how).strip().lower()
    if how in ("0", "none", ""):
        return None, None
    if how == "zstd":
        try:
            import zstandard
        except ImportError:
            how = "1"
        else:
            return (zstandard.ZstdCompressor(level=1).compress,
                    zstandard.ZstdDecompressor().decompress)
    if not how.isdigit() or not 1 <= int(how) <= 9:
        raise UsageError(f"ZABMC_SPILL_COMPRESS: 'zstd', a zlib level 1-9, or 0; got {how!r}")
    level = int(how)
    return (lambda raw: zlib.compress(raw, level)), zlib.decompress


PREFIX = "zabmc-spill-"  # segment directories: zabmc-spill-<pid>-<random>


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale(parent: str | None) -> list:
    """Remove the segment directories under `parent` (default: the temporary directory) whose
    process is gone (a run killed with SIGKILL cannot clean up after itself); the paths removed."""
    parent = parent or tempfile.gettempdir()
    gone = []
    try:
        names = os.listdir(parent)
    except OSError:
        return gone
    for name in names:
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            path = os.path.join(parent, name)
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
    return gone


class Spill:
    """Where and when levels go to disk: `budget` bytes of in-memory states per level (estimated,
    `MEM_BYTES_PER_STATE` each), segment files in a private directory under `parent`."""

    def __init__(self, codec, budget: int, parent: str | None = None,
                 compress: int | str | None = None):
        if compress is None:
            compress = os.environ.get("ZABMC_SPILL_COMPRESS", "zstd")
        self.codec = codec
        self.budget = budget
        self.budget_states = max(1, budget // MEM_BYTES_PER_STATE)  # until a level measures
        self.compress = compress
        self.pack, self.unpack = _compressor(compress)
        self.parent = parent
        self.dir: str | None = None
        self.seq = 0
        self.disk_bytes = 0  # bytes on disk now
        self.peak_disk_bytes = 0
        self.spilled_levels = 0
        self.removed_stale: list = []  # directories of killed runs removed on the first spill

    def new_path(self) -> str:
        if self.dir is None:
            self.removed_stale = remove_stale(self.parent)
            self.dir = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=self.parent)
        self.seq += 1
        return os.path.join(self.dir, f"level-{self.seq}.seg")

    def grew(self, n: int) -> None:
        self.disk_bytes += n
        self.peak_disk_bytes = max(self.peak_disk_bytes, self.disk_bytes)

    def close(self) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            self.disk_bytes = 0


class Level:
    """The states of one BFS level, in order: a list, or a segment file once large."""

    def __init__(self, spill: Spill | None):
        self.spill = spill
        self.mem: list = []
        self.path: str | None = None
        self.f = None
        self.buf: list = []
        self.buf_bytes = 0
        self.n = 0
        self.raw_bytes = 0  # encoded bytes of the states on disk
        self.disk_bytes = 0
        self.limit = spill.budget_states if spill is not None else 0  # states held in memory
        self.measured = False

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    @property
    def on_disk(self) -> bool:
        return self.path is not None

    def append(self, s, blob: bytes | None = None) -> None:
        """Append state `s` (`blob`: its encoding, when the caller has it)."""
        self.n += 1
        if self.path is None:
            self.mem.append(s)
            if self.spill is not None and len(self.mem) > self.limit:
                if not self.measured and len(self.mem) >= MEASURE_SAMPLE:
                    # large enough to measure what its states cost, rather than go by the estimate
                    self.measured = True
                    self.limit = max(1, self.spill.budget // measured_bytes(self.mem))
                    if len(self.mem) <= self.limit:
                        return
                self._to_disk()
            return
        self.append_blob(self.spill.codec.encode(s) if blob is None else blob, count=False)

    def append_blob(self, b: bytes, count: bool = True) -> None:
        """Append an already encoded state (the level must be on disk, or have a spill)."""
        if count:
            self.n += 1
        if self.path is None:
            self._to_disk()
        self.raw_bytes += len(b)
        self.buf.append(_LEN.pack(len(b)))
        self.buf.append(b)
        self.buf_bytes += len(b) + 4
        if self.buf_bytes >= BLOCK_BYTES:
            self._flush()

    def _to_disk(self) -> None:
        sp = self.spill
        self.path = sp.new_path()
        self.f = open(self.path, "wb")
        sp.spilled_levels += 1
        mem, self.mem = self.mem, []
        encode = sp.codec.encode
        for s in mem:
            self.append_blob(encode(s), count=False)

    def _flush(self) -> None:
        if not self.buf:
            return
        raw = b"".join(self.buf)
        self.buf.clear()
        self.buf_bytes = 0
        pack = self.spill.pack
        data = pack(raw) if pack is not None else raw
        self.f.write(_BLOCK.pack(len(data), len(raw)))
        self.f.write(data)
        self.disk_bytes += len(data) + _BLOCK.size
        self.spill.grew(len(data) + _BLOCK.size)

    def finish(self) -> None:
        """No more appends: write what is buffered."""
        if self.f is not None:
            self._flush()
            self.f.close()
            self.f = None

    def blobs(self, encode=None):
        """The encoded states, in order (`encode` encodes those held in memory)."""
        if self.path is None:
            yield from map(encode or self.spill.codec.encode, self.mem)
            return
        self.finish()
        unpack_block, unpack_len = _BLOCK.unpack_from, _LEN.unpack_from
        unpack = self.spill.unpack
        with open(self.path, "rb") as f:
            while True:
                head = f.read(_BLOCK.size)
                if not head:
                    break
                clen, rlen = unpack_block(head)
                data = f.read(clen)
                raw = unpack(data) if unpack is not None else data
                if len(raw) != rlen:
                    raise OSError(f"spill file {self.path} is damaged")
                pos = 0
                while pos < rlen:
                    (k,) = unpack_len(raw, pos)
                    pos += 4
                    yield raw[pos:pos + k]
                    pos += k

    def __iter__(self):
        if self.path is None:
            return iter(self.mem)
        return map(self.spill.codec.decode, self.blobs())

    def drop(self) -> None:
        """Delete the level's file (the level is not read again)."""
        self.finish()
        if self.path is not None:
            try:
                os.remove(self.path)
            except OSError:
                pass
            self.spill.disk_bytes -= self.disk_bytes
            self.disk_bytes = 0
            self.path = None
            self.n = 0
