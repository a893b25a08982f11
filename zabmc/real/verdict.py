"""The properties, judged on what real servers wrote and served.

zabmc reads three kinds of evidence during a run (zabmc.real.runner):
- *deliveries*: after each schedule entry, every serving server's data tree (after a client
  `sync`), as the sequence of the transactions it applied, ordered by zxid;
- *writes*: each client write and its outcome (acknowledged with a zxid, failed, or unknown);
- *epochs*: each server's acceptedEpoch and currentEpoch files, read at every poll.

The properties carry the names `zabmc check` gives them where the meaning is the same:
- `agreement`: two deliveries never hold different transactions at the same position;
- `prefix`: of any two deliveries (two servers, or one server at two times), one is a prefix of
  the other: nothing delivered is retracted or reordered;
- `acknowledged-durable` (real runs only): a write that a client saw acknowledged, or that a
  server delivered, is in every delivery observed after that, on every server;
- `epoch-monotonic` (real runs only): a server's acceptedEpoch and currentEpoch never decrease,
  across restarts included;
- `epoch-order` (real runs only): currentEpoch <= acceptedEpoch;
- `leader-unexpected-ack`: no leader reads, where it waits for a follower's ACK of NEWLEADER,
  another ACK, which it discards and so never counts that follower (ZOOKEEPER-4685);
- `sync-exception`: no follower's synchronisation throws (ZOOKEEPER-4394's NullPointerException
  in `Learner.syncWithLeader`);
- `load-exception`: no server refuses to start because its disk is of a later epoch than its
  currentEpoch file (ZOOKEEPER-2354, `QuorumPeer.loadDataBase`).
The failure properties are judged on a fourth kind of evidence, the servers' own logs: the lines
each failure makes ZooKeeper 3.8.0 write (`FAILURES`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PROPERTIES = ("agreement", "prefix", "acknowledged-durable", "epoch-monotonic", "epoch-order",
              "leader-unexpected-ack", "sync-exception", "load-exception")

_UNEXPECTED_ACK = re.compile(r"NEWLEADER ACK from sid: (\d+) is from a different epoch - "
                             r"current 0x([0-9a-f]+) received 0x([0-9a-f]+)")
_GAVE_UP = re.compile(r"Shutdown called\. For the reason (Waiting for a quorum of followers.*)")
_FOLLOW_FAILED = "Exception when following the leader"


def _unexpected_ack(s: int, lines: list, k: int):
    """Leader.waitForNewLeaderAck (3.8.0 line 1576), called by LearnerHandler.run with the first
    ACK it reads after NEWLEADER."""
    m = _UNEXPECTED_ACK.search(lines[k])
    if not m:
        return None
    sid, cur, got = m.groups()
    ev = [f"server {s}: {lines[k].strip()}"]
    after = next((x for x in lines[k + 1:] if _GAVE_UP.search(x)), None)
    gave_up = ""
    if after is not None:
        ev.append(f"server {s}: {after.strip()}")
        gave_up = (f"; it then gave up its leadership (\"{_GAVE_UP.search(after).group(1)}\")")
    return (f"server {s}, leading, read ACK 0x{got} from server {sid} where it waited for the ACK "
            f"of NEWLEADER 0x{cur}, discarded it and never counted server {sid} (ZOOKEEPER-4685)"
            f"{gave_up}", sorted({s, int(sid)}), ev)


def _sync_exception(s: int, lines: list, k: int):
    """Follower.followLeader's catch (3.8.0: LOG.warn("Exception when following the leader", e))
    of a NullPointerException thrown in Learner.syncWithLeader: a COMMIT found
    packetsNotCommitted empty (ZOOKEEPER-4394)."""
    if _FOLLOW_FAILED not in lines[k]:
        return None
    trace = []
    for x in lines[k + 1:k + 40]:
        if not (x.startswith(("\t", " ", "java.", "Caused by")) or x.strip().startswith("at ")):
            break
        trace.append(x.strip())
    if not (trace and trace[0].startswith("java.lang.NullPointerException")
            and any("Learner.syncWithLeader" in x for x in trace[:4])):
        return None
    at = next(x for x in trace if "Learner.syncWithLeader" in x)
    return (f"server {s}, following, threw a NullPointerException in Learner.syncWithLeader "
            "(ZOOKEEPER-4394: a COMMIT after NEWLEADER found packetsNotCommitted empty) and left "
            "its leader", [s], [f"server {s}: {lines[k].strip()}", f"server {s}: {trace[0]}",
                                f"server {s}: {at}"])


_LOAD_FAILED = re.compile(r"The current epoch, (\S+), is older than the last zxid, (\d+)")


def _load_exception(s: int, lines: list, k: int):
    """QuorumPeer.loadDataBase (3.8.0 lines 1165-1176) at a start: the disk's last zxid is of a
    later epoch than the currentEpoch file, and no currentEpoch.tmp is left; QuorumPeer.start
    logs "Unable to load database on disk" with the IOException and the server exits
    (ZOOKEEPER-2354)."""
    m = _LOAD_FAILED.search(lines[k])
    if not m:
        return None
    cur, last = m.group(1), int(m.group(2))
    return (f"server {s} refused to start: its disk ends at 0x{last:x} (epoch {last >> 32}) and "
            f"its currentEpoch is {cur}; QuorumPeer.loadDataBase threw \"The current epoch is "
            "older than the last zxid\" (ZOOKEEPER-2354)", [s], [f"server {s}: {lines[k].strip()}"])


#: failure states the models name, and how the lines ZooKeeper 3.8.0 logs in them are read
FAILURES = (("leader-unexpected-ack", _unexpected_ack), ("sync-exception", _sync_exception),
            ("load-exception", _load_exception))


def zx(zxid: int) -> str:
    return f"{zxid >> 32}.{zxid & 0xffffffff}"


@dataclass(frozen=True)
class Delivery:
    seq: int  # order of observation in the run
    step: int  # the model step (schedule entry's `upto`) it was read after
    server: int
    txns: tuple  # ((zxid, path), ...) by zxid

    def show(self) -> str:
        return "[" + ", ".join(f"{zx(z)} {p}" for z, p in self.txns) + "]"


@dataclass
class WriteRecord:
    path: str
    server: int
    step: int
    outcome: str = "pending"  # acknowledged | failed | unknown | pending
    zxid: int | None = None
    error: str | None = None
    seq: int | None = None  # the observation counter when the outcome was known


@dataclass
class RealViolation:
    property: str
    message: str
    servers: list = field(default_factory=list)
    evidence: list = field(default_factory=list)  # lines: deliveries, log lines

    def to_json(self) -> dict:
        return {"property": self.property, "message": self.message, "servers": self.servers,
                "evidence": self.evidence}


def _order(deliveries: list) -> list:
    out, seen = [], set()
    for a in deliveries:
        for b in deliveries:
            if a.seq >= b.seq or (a.server, b.server, a.txns, b.txns) in seen:
                continue
            seen.add((a.server, b.server, a.txns, b.txns))
            m = min(len(a.txns), len(b.txns))
            k = next((i for i in range(m) if a.txns[i] != b.txns[i]), None)
            if k is None:
                continue
            who = (f"server {a.server} after step {a.step}", f"server {b.server} after step "
                   f"{b.step}")
            ev = [f"{who[0]}: {a.show()}", f"{who[1]}: {b.show()}"]
            (za, pa), (zb, pb) = a.txns[k], b.txns[k]
            out.append(RealViolation(
                "agreement", f"{who[0]} and {who[1]} delivered different transactions at "
                f"position {k + 1}: {zx(za)} {pa} vs {zx(zb)} {pb}",
                sorted({a.server, b.server}), ev))
            out.append(RealViolation(
                "prefix", f"{who[0]} delivered {a.show()}, which is not a prefix of {who[1]}'s "
                f"{b.show()} nor the other way round", sorted({a.server, b.server}), ev))
            return out
    return out


def _durable(deliveries: list, writes: list, n: int) -> list:
    known: dict = {}  # (zxid, path) -> [seq from which it must stay, how we know, ...]
    for w in writes:
        if w.outcome == "acknowledged" and w.zxid is not None:
            known[(w.zxid, w.path)] = [w.seq if w.seq is not None else -1,
                                       f"acknowledged to the client by server {w.server} "
                                       f"(written at step {w.step})"]
    for d in sorted(deliveries, key=lambda d: d.seq):
        for t in d.txns:
            if t not in known:
                known[t] = [d.seq, f"delivered by server {d.server} after step {d.step}"]
            elif known[t][0] > d.seq:  # delivered before the client's answer was read
                known[t][0] = d.seq
                if len(known[t]) == 2:
                    known[t].append(f"delivered by server {d.server} after step {d.step}")
    out = []
    for t, (seq, *hows) in sorted(known.items(), key=lambda kv: kv[0][0]):
        lacking = [d for d in deliveries if d.seq > seq and t not in d.txns]
        if not lacking:
            continue
        last = {}  # the last observation of each server that lacks it
        for d in lacking:
            last[d.server] = d
        servers = sorted(last)
        how = " and ".join(hows)
        ev = [f"{t[1]} (zxid {zx(t[0])}, 0x{t[0]:x}) {how}"]
        ev += [f"server {d.server} after step {d.step}: {d.show()}" for d in last.values()]
        out.append(RealViolation(
            "acknowledged-durable",
            f"the write {t[1]} (zxid 0x{t[0]:x}), {how}, is missing from server"
            f"{'s' if len(servers) > 1 else ''} {', '.join(map(str, servers))} afterwards",
            servers, ev))
    return out


def _epochs(samples: list) -> list:
    out = []
    last: dict = {}
    for server, step, acc, cur in samples:
        if acc is not None and cur is not None and cur > acc:
            out.append(RealViolation("epoch-order", f"server {server} has currentEpoch {cur} "
                                     f"> acceptedEpoch {acc} after step {step}", [server]))
            break
        prev = last.get(server)
        if prev is not None:
            for name, a, b in (("acceptedEpoch", prev[1], acc), ("currentEpoch", prev[2], cur)):
                if a is not None and (b is None or b < a):
                    out.append(RealViolation(
                        "epoch-monotonic", f"server {server}'s {name} went from {a} (after step "
                        f"{prev[0]}) to {b} (after step {step})", [server]))
                    return out
        last[server] = (step, acc, cur)
    return out


def failures(logs: dict) -> list:
    """The failure states the servers' logs report: `logs` maps a server to its log lines. One
    violation per property and server (the first time it logs it)."""
    out = []
    for s in sorted(logs):
        for name, read in FAILURES:
            for k in range(len(logs[s])):
                found = read(s, logs[s], k)
                if found:
                    message, servers, evidence = found
                    out.append(RealViolation(name, message, servers, evidence))
                    break
    return out


def judge(deliveries: list, writes: list, epoch_samples: list, n: int,
          logs: dict | None = None) -> list:
    """Every property violated on the evidence, agreement and prefix first, failures last."""
    return (_order(deliveries) + _durable(deliveries, writes, n) + _epochs(epoch_samples)
            + failures(logs or {}))
