"""Reading what a ZooKeeper server wrote to its data directory, from Python.

Formats, as ZooKeeper 3.8.0 writes them (all integers big-endian, jute's binary archive):

- `version-2/acceptedEpoch`, `version-2/currentEpoch`: one line, a decimal number
  (QuorumPeer.writeLongToFile / readLongFromFile).
- `version-2/log.<hex zxid of its first record>`: FileHeader (int magic "ZKLG", int version 2,
  long dbid), then per record (FileTxnLog.append, Util.writeTxnBytes): long Adler32 of the
  record bytes, int length, the record bytes (TxnHeader: long clientId, int cxid, long zxid,
  long time, int type; then the type's txn, e.g. CreateTxn; then maybe a TxnDigest), byte 'B'.
  Preallocation pads the file with zeros: a length of 0 ends it (Util.readTxnBytes).
- `version-2/snapshot.<hex zxid>`: FileHeader ("ZKSN"), sessions (int count, then long id +
  int timeout each), the ACL cache (int count, then long key + vector<ACL>), the nodes in
  pre-order (ustring path, DataNode: buffer data, long acl, StatPersisted), ended by path "/"
  (DataTree.serializeNodes, the root's path is ""), then long Adler32 of everything before it and
  the string "/" (SnapStream.sealStream); a digest may follow (FileSnap.serialize).

Jute strings and buffers are an int length (-1 for null) and the bytes; vectors an int count.
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

TXNLOG_MAGIC = 0x5A4B4C47  # "ZKLG"
SNAP_MAGIC = 0x5A4B534E  # "ZKSN"

# ZooDefs.OpCode: the transaction types a log holds
OPCODES = {
    1: "create", 2: "delete", 5: "setData", 7: "setACL", 13: "check", 14: "multi",
    15: "create2", 16: "reconfig", 19: "createContainer", 20: "deleteContainer", 21: "createTTL",
    -10: "createSession", -11: "closeSession", -1: "error",
}
_CREATES = {"create", "create2", "createContainer", "createTTL"}


# ---------------------------------------------------------------------------- zxids

def epoch_of(zxid: int) -> int:
    return zxid >> 32


def counter_of(zxid: int) -> int:
    return zxid & 0xFFFFFFFF


def make_zxid(epoch: int, counter: int) -> int:
    return (epoch << 32) | (counter & 0xFFFFFFFF)


def zxid_hex(zxid: int) -> str:
    """As ZooKeeper prints it: 0x100000001."""
    return f"0x{zxid:x}"


def zxid_str(zxid: int) -> str:
    """Epoch.counter: 1.1."""
    return f"{epoch_of(zxid)}.{counter_of(zxid)}"


def parse_zxid(text: str | int) -> int:
    """An int, "0x100000001" or "1.1"."""
    if isinstance(text, int):
        return text
    t = text.strip()
    if "." in t:
        e, c = t.split(".", 1)
        return make_zxid(int(e), int(c))
    return int(t, 0)


# ---------------------------------------------------------------------------- records

@dataclass(frozen=True)
class Txn:
    """One transaction: from a log record, or (source "snapshot") rebuilt from a snapshot's node."""

    zxid: int
    type: str
    path: str | None = None
    data: bytes | None = None
    client_id: int = 0
    cxid: int = 0
    source: str = "log"
    epoch: int = field(init=False)
    counter: int = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "epoch", epoch_of(self.zxid))
        object.__setattr__(self, "counter", counter_of(self.zxid))

    @property
    def op(self) -> str:
        """The type with the create variants (create2, createContainer, createTTL) as "create":
        a snapshot cannot tell them apart, so effective histories compare on this."""
        return "create" if self.type in _CREATES else self.type

    def __str__(self) -> str:
        return f"{zxid_str(self.zxid)} {self.type} {self.path or ''}".rstrip()


@dataclass(frozen=True)
class LogProblem:
    """Where reading a log stopped early: a torn tail, a bad checksum, a bad header."""

    file: str
    offset: int
    kind: str  # "torn", "checksum", "header"
    detail: str

    def __str__(self) -> str:
        return f"{os.path.basename(self.file)} at byte {self.offset}: {self.kind}: {self.detail}"


@dataclass
class LogScan:
    txns: list[Txn]
    problems: list[LogProblem]
    files: list[str]


@dataclass(frozen=True)
class Snapshot:
    zxid: int
    nodes: dict  # path -> (czxid, mzxid, data)
    path: str = ""


class _Reader:
    def __init__(self, buf: bytes, pos: int = 0):
        self.buf = buf
        self.pos = pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise EOFError(f"need {n} bytes at {self.pos}, have {len(self.buf) - self.pos}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def long(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def bool(self) -> bool:
        return self.take(1) != b"\0"

    def buffer(self) -> bytes | None:
        n = self.int()
        return None if n < 0 else self.take(n)

    def string(self) -> str | None:
        b = self.buffer()
        return None if b is None else b.decode("utf-8", "replace")

    def acls(self) -> None:
        n = self.int()
        for _ in range(max(n, 0)):
            self.int()
            self.string()
            self.string()


def _version_dir(data_dir: str | os.PathLike) -> Path:
    d = Path(data_dir)
    return d / "version-2" if (d / "version-2").is_dir() else d


def _files(vdir: Path, prefix: str) -> list[tuple[int, Path]]:
    out = []
    if not vdir.is_dir():
        return out
    for p in vdir.iterdir():
        name = p.name
        if not name.startswith(prefix + "."):
            continue
        tail = name[len(prefix) + 1:].split(".", 1)[0]  # snapshot.<zxid>[.gz|.snappy]
        try:
            out.append((int(tail, 16), p))
        except ValueError:
            continue
    out.sort(key=lambda t: t[0])
    return out


# ---------------------------------------------------------------------------- epochs

def _read_long_file(p: Path) -> int | None:
    try:
        text = p.read_text().strip()
    except FileNotFoundError:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def read_epochs(data_dir) -> tuple[int | None, int | None]:
    """(acceptedEpoch, currentEpoch), None for a file that is missing (or empty, half-written)."""
    v = _version_dir(data_dir)
    return _read_long_file(v / "acceptedEpoch"), _read_long_file(v / "currentEpoch")


# ---------------------------------------------------------------------------- the log

def _decode_txn(rec: bytes) -> Txn:
    r = _Reader(rec)
    client_id, cxid, zxid, _time, typ = r.long(), r.int(), r.long(), r.long(), r.int()
    name = OPCODES.get(typ, f"op{typ}")
    path = data = None
    try:
        if name in ("create", "create2", "createContainer", "createTTL", "setData"):
            path, data = r.string(), r.buffer()
        elif name in ("delete", "deleteContainer", "setACL", "check"):
            path = r.string()
    except EOFError:
        pass
    return Txn(zxid=zxid, type=name, path=path, data=data, client_id=client_id, cxid=cxid)


def read_log_file(path: str | os.PathLike, problems: list | None = None) -> list[Txn]:
    """The valid records of one log file; where it stops early is appended to `problems`."""
    p = str(path)
    buf = Path(p).read_bytes()
    out: list[Txn] = []

    def problem(off, kind, detail):
        if problems is not None:
            problems.append(LogProblem(p, off, kind, detail))

    if len(buf) < 16:
        problem(0, "header", f"file of {len(buf)} bytes has no complete header")
        return out
    magic, version, _dbid = struct.unpack(">iiq", buf[:16])
    if magic != TXNLOG_MAGIC:
        problem(0, "header", f"magic 0x{magic & 0xffffffff:08x} is not ZKLG")
        return out
    pos = 16
    while True:
        if pos + 12 > len(buf):
            if pos < len(buf) and any(buf[pos:]):
                problem(pos, "torn", "record header cut short")
            break
        crc, length = struct.unpack(">qi", buf[pos:pos + 12])
        if length == 0:
            break  # preallocated zeros: the end
        if length < 0 or pos + 12 + length > len(buf):
            problem(pos, "torn", f"record of {length} bytes runs past the end ({len(buf)})")
            break
        rec = buf[pos + 12:pos + 12 + length]
        if pos + 12 + length >= len(buf) or buf[pos + 12 + length] != 0x42:
            problem(pos, "torn", "record not ended by 'B'")
            break
        if zlib.adler32(rec) & 0xFFFFFFFF != crc & 0xFFFFFFFF:
            problem(pos, "checksum", f"Adler32 {zlib.adler32(rec):#x} != recorded {crc & 0xffffffff:#x}")
            break
        try:
            out.append(_decode_txn(rec))
        except EOFError as e:
            problem(pos, "torn", f"record too short for a TxnHeader: {e}")
            break
        pos += 12 + length + 1
    return out


def scan_txnlog(data_dir) -> LogScan:
    """Every log file's valid records, in the files' zxid order, and where each file stopped early."""
    files = [p for _, p in _files(_version_dir(data_dir), "log")]
    problems: list[LogProblem] = []
    txns: list[Txn] = []
    for f in files:
        txns.extend(read_log_file(f, problems))
    return LogScan(txns, problems, [str(f) for f in files])


def read_txnlog(data_dir, problems: list | None = None) -> list[Txn]:
    """The transactions of every log of `data_dir`; pass a list as `problems` to learn of torn tails."""
    scan = scan_txnlog(data_dir)
    if problems is not None:
        problems.extend(scan.problems)
    return scan.txns


# ---------------------------------------------------------------------------- snapshots

def read_snapshot(path: str | os.PathLike) -> Snapshot:
    """A snapshot's zxid (from its name) and nodes; ValueError when it is not a complete snapshot."""
    p = Path(path)
    raw = p.read_bytes()
    if p.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    elif p.name.endswith(".snappy"):
        raise ValueError(f"{p.name}: snappy-compressed snapshots are not supported")
    zxid = int(p.name.split(".")[1], 16)
    r = _Reader(raw)
    try:
        magic, _version, _dbid = r.int(), r.int(), r.long()
        if magic != SNAP_MAGIC:
            raise ValueError(f"{p.name}: magic 0x{magic & 0xffffffff:08x} is not ZKSN")
        for _ in range(r.int()):  # sessions
            r.long()
            r.int()
        for _ in range(r.int()):  # ACL cache
            r.long()
            r.acls()
        nodes = {}
        while True:
            node_path = r.string()
            if node_path == "/":
                break
            data = r.buffer()
            r.long()  # acl
            czxid, mzxid = r.long(), r.long()
            r.take(8 + 8 + 4 + 4 + 4 + 8 + 8)  # ctime mtime version cversion aversion ephemeralOwner pzxid
            nodes[node_path or "/"] = (czxid, mzxid, data)
        end = r.pos
        crc = r.long()
        if zlib.adler32(raw[:end]) & 0xFFFFFFFF != crc & 0xFFFFFFFF:
            raise ValueError(f"{p.name}: checksum mismatch")
    except EOFError as e:
        raise ValueError(f"{p.name}: cut short ({e})") from None
    return Snapshot(zxid=zxid, nodes=nodes, path=str(p))


def newest_snapshot(data_dir) -> Snapshot | None:
    """The newest snapshot that reads whole (ZooKeeper too falls back to an older one)."""
    for _, p in reversed(_files(_version_dir(data_dir), "snapshot")):
        try:
            return read_snapshot(p)
        except (ValueError, OSError):
            continue
    return None


def _is_system(path: str) -> bool:
    return path == "/" or path == "/zookeeper" or path.startswith("/zookeeper/")


def effective_history(data_dir) -> list[Txn]:
    """What the server would load: the newest snapshot, then the log records after its zxid.

    The snapshot's part is a `Txn` with source "snapshot" per node (type "create" at its czxid
    and, for a node changed since, "setData" at its mzxid, with the node's current data; a
    deleted node leaves no trace), sorted by zxid. ZooKeeper's own nodes (/zookeeper...) are left
    out. A log record at or below the snapshot's zxid is left out; where a (fuzzy) snapshot holds
    a change also logged after its zxid, the log's record wins.
    """
    snap = newest_snapshot(data_dir)
    log = read_txnlog(data_dir)
    out: list[Txn] = []
    base = -1
    if snap is not None:
        base = snap.zxid
        for path, (czxid, mzxid, data) in snap.nodes.items():
            if _is_system(path):
                continue
            same = mzxid == czxid
            out.append(Txn(zxid=czxid, type="create", path=path,
                           data=data if same else None, source="snapshot"))
            if not same:
                out.append(Txn(zxid=mzxid, type="setData", path=path, data=data, source="snapshot"))
    after = {}
    for t in log:
        if t.zxid > base:
            after.setdefault(t.zxid, t)
    # a fuzzy snapshot may already hold changes logged after its zxid: the log's record wins
    out = [t for t in out if t.zxid not in after] + list(after.values())
    out.sort(key=lambda t: t.zxid)
    return out


def last_logged_zxid(data_dir) -> int:
    """As ZooKeeper computes it on loading: the larger of the last log record's and the newest
    snapshot's zxid; 0 for an empty data directory. A snapshot named by the new epoch's zxid
    (e.g. 0x200000000, taken at NEWLEADER) counts, though no transaction has that zxid: see
    `last_txn_zxid` for the last transaction."""
    log = read_txnlog(data_dir)
    snap = newest_snapshot(data_dir)
    z = max((t.zxid for t in log), default=0)
    return max(z, snap.zxid if snap else 0)


def last_txn_zxid(data_dir) -> int:
    """The zxid of the last transaction of the effective history; 0 when there is none."""
    hist = effective_history(data_dir)
    return hist[-1].zxid if hist else 0
