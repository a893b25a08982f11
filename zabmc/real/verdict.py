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
  another ACK, which it discards and so never counts that follower (ZOOKEEPER-4685). The
  failure properties are judged on a fourth kind of evidence, the servers' own logs: the line
  each failure makes ZooKeeper 3.8.0 write (`FAILURES`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PROPERTIES = ("agreement", "prefix", "acknowledged-durable", "epoch-monotonic", "epoch-order",
              "leader-unexpected-ack")

#: failure states the models name, by the line ZooKeeper 3.8.0 logs in them
FAILURES = (
    # Leader.waitForNewLeaderAck (line 1576), called by LearnerHandler.run with the first ACK
    # it reads after NEWLEADER
    ("leader-unexpected-ack", re.compile(
        r"NEWLEADER ACK from sid: (\d+) is from a different epoch - current 0x([0-9a-f]+) "
        r"received 0x([0-9a-f]+)")),
)
_GAVE_UP = re.compile(r"Shutdown called\. For the reason (Waiting for a quorum of followers.*)")


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
    """The failure states the servers' logs report: `logs` maps a server to its log lines."""
    out = []
    for s in sorted(logs):
        for name, pat in FAILURES:
            for k, ln in enumerate(logs[s]):
                m = pat.search(ln)
                if not m:
                    continue
                sid, cur, got = m.groups()
                ev = [f"server {s}: {ln.strip()}"]
                after = next((x for x in logs[s][k + 1:] if _GAVE_UP.search(x)), None)
                gave_up = ""
                if after is not None:
                    ev.append(f"server {s}: {after.strip()}")
                    gave_up = (f"; it then gave up its leadership (\""
                               f"{_GAVE_UP.search(after).group(1)}\")")
                out.append(RealViolation(
                    name, f"server {s}, leading, read ACK 0x{got} from server {sid} where it "
                    f"waited for the ACK of NEWLEADER 0x{cur}, discarded it and never counted "
                    f"server {sid} (ZOOKEEPER-4685){gave_up}", sorted({s, int(sid)}), ev))
                break
    return out


def judge(deliveries: list, writes: list, epoch_samples: list, n: int,
          logs: dict | None = None) -> list:
    """Every property violated on the evidence, agreement and prefix first, failures last."""
    return (_order(deliveries) + _durable(deliveries, writes, n) + _epochs(epoch_samples)
            + failures(logs or {}))
