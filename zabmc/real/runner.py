"""Run a fault schedule on a real ensemble: the ops of each entry, then conformance, then the
evidence for the verdict (zabmc.real.verdict). Nothing here prints: an observer is told."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from zabmc.core.errors import UsageError

from . import hooks
from .errors import RealError, RealTimeout, ServerFailed
from .verdict import Delivery, WriteRecord, judge

CONFORM_TIMEOUT = 30.0  # seconds a schedule entry may take to show the model's state
_PEER_STATE = re.compile(r"Peer state changed: following - (\w+)(?: - (\w+))?")


def sync_modes(ens, s: int) -> list:
    """How server s was synchronised, each time, as its QuorumPeer logs it: the mode
    `setSyncMode` sets (the line "following - synchronization - MODE"). The mode is set back
    to NONE only at NEWLEADER (3.8.0 Learner.syncWithLeader, line 759), so after a
    synchronisation that never got there (ZOOKEEPER-5094's interrupted TRUNC) the next one's
    `setZabState(SYNCHRONIZATION)` logs the old mode first, right after "following - discovery
    - MODE": that line is no synchronisation of its own."""
    out, prev = [], None
    for ln in ens.log_lines(s, _PEER_STATE.pattern):
        m = _PEER_STATE.search(ln)
        if m is None:
            continue
        if (m.group(1) == "synchronization" and m.group(2) in ("diff", "snap", "trunc")
                and prev != ("discovery", m.group(2))):
            out.append(m.group(2))
        prev = (m.group(1), m.group(2))
    return out
#: log lines that show what a server committed, synchronised or truncated (ZooKeeper 3.8.0:
#: Leader.lead, Learner.syncWithLeader, LearnerHandler.syncFollower)
_EVIDENCE = re.compile(r"Have quorum of supporters|Truncating log|Getting a (diff|snapshot)|"
                       r"Sending (TRUNC|DIFF|snapshot)|Synchronizing with Learner|"
                       # a write below the log's last zxid (FileTxnLog.append only warns), and
                       # its load (FileTxnSnapLog.fastForwardFromEdits logs it and applies it)
                       r"Current zxid \d+ is <= |\(highestZxid\) > |"
                       # what a load found on disk (ZKDatabase.loadDataBase), a truncation's too
                       r"Snapshot loaded in .*highest zxid is ")
WRITE_TIMEOUT = 20.0


def _held(point: str) -> str:
    """The pattern of the line a hook prints when it holds a thread at `point`."""
    return re.escape(hooks.HELD + point) + "$"


class Observer:
    """What a run reports; every method may be overridden (the CLI prints)."""

    def entry(self, index: int, entry: dict) -> None: ...

    def op(self, op: dict) -> None: ...

    def conformed(self, index: int, entry: dict, seconds: float) -> None: ...

    def note(self, text: str) -> None: ...


@dataclass
class RealOutcome:
    entries_total: int
    entries_done: int = 0
    realised_to: int = -1  # the last model step shown by the servers (-1: none)
    steps_total: int | None = None
    mismatch: dict | None = None  # {"entry", "step", "server", "field", "model", "real", "text"}
    violations: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    deliveries: list = field(default_factory=list)
    servers: dict = field(default_factory=dict)  # final per-server facts
    seconds: float = 0.0
    zookeeper: str = ""
    workdir: str | None = None
    notes: list = field(default_factory=list)
    log_evidence: list = field(default_factory=list)  # server log lines about sync and commits
    #: the entries as they ran, every server a nemesis names by a letter replaced by the one it
    #: was bound to (zabmc.real.nemesis): an ordinary schedule's entries
    ran: list = field(default_factory=list)
    bound: dict = field(default_factory=dict)  # name -> server

    @property
    def realised(self) -> bool:
        return self.mismatch is None and self.entries_done == self.entries_total

    def to_json(self) -> dict:
        return {
            "realised": self.realised, "realised_to_step": self.realised_to,
            "model_steps": self.steps_total, "entries": self.entries_total,
            "entries_done": self.entries_done, "not_realised": self.mismatch,
            "verdict": "violation" if self.violations else "ok",
            "violations": [v.to_json() for v in self.violations],
            "writes": [{"path": w.path, "server": w.server, "step": w.step,
                        "outcome": w.outcome, "zxid": None if w.zxid is None else f"0x{w.zxid:x}",
                        "error": w.error} for w in self.writes],
            "deliveries": [{"step": d.step, "server": d.server,
                            "txns": [f"0x{z:x} {p}" for z, p in d.txns]} for d in self.deliveries],
            "servers": self.servers, "wall_seconds": round(self.seconds, 2),
            "zookeeper": self.zookeeper, "workdir": self.workdir, "notes": self.notes,
            "log_evidence": self.log_evidence,
        }


def _quiet_kazoo() -> None:
    import logging
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # its reconnect chatter; outcomes
    #                                                         are recorded per write instead


class _Writer:
    """One kazoo client per write, connected to one server only (no failover)."""

    def __init__(self, ens, rec: WriteRecord, data: bytes):
        from kazoo.client import KazooClient
        self.rec = rec
        self.zk = KazooClient(hosts=ens.connect_string(rec.server), timeout=10.0,
                              connection_retry={"max_tries": 0}, command_retry={"max_tries": 0})
        self.result = None
        try:
            self.zk.start(timeout=5.0)
        except Exception as e:  # the server did not take the session: nothing was sent
            rec.outcome, rec.error = "failed", f"no session: {type(e).__name__}"
            self.close()
            return
        # create2 (ZooKeeper 3.5+): the answer carries the new znode's stat, so an acknowledged
        # write has its zxid without a second request that a server may no longer answer
        self.result = self.zk.create_async(rec.path, data, include_data=True)

    def poll(self, seq: int, final: bool = False) -> bool:
        """Settle the outcome when it is known (or, with final, as unknown); True once settled."""
        rec = self.rec
        if rec.outcome != "pending":
            return True
        if not self.result.ready() and not final:
            return False
        from kazoo.exceptions import (ConnectionLoss, NodeExistsError, OperationTimeoutError,
                                      SessionExpiredError)
        if not self.result.ready():
            rec.outcome, rec.error = "unknown", "no answer before the run ended"
        else:
            try:
                _, stat = self.result.get(timeout=0)
                rec.outcome, rec.zxid = "acknowledged", stat.czxid
            except NodeExistsError:
                rec.outcome, rec.error = "failed", "NodeExists"
            except (ConnectionLoss, SessionExpiredError, OperationTimeoutError) as e:
                rec.outcome, rec.error = "unknown", type(e).__name__
            except Exception as e:
                rec.outcome, rec.error = "unknown", f"{type(e).__name__}: {e}"
        rec.seq = seq
        self.close()
        return True

    def close(self) -> None:
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:
            pass


def read_tree(ens, s: int) -> tuple | None:
    """What server s delivered: its znodes (other than /zookeeper) by creating zxid, after a
    client sync; None when it does not serve."""
    from kazoo.client import KazooClient
    if not ens.srvr(s).get("mode"):
        return None
    zk = KazooClient(hosts=ens.connect_string(s), timeout=5.0,
                     connection_retry={"max_tries": 0}, command_retry={"max_tries": 0})
    try:
        zk.start(timeout=3.0)
        zk.sync_async("/").get(timeout=3.0)  # every call bounded: a server may stop answering
        out = []
        for c in zk.get_children_async("/").get(timeout=3.0):
            if c == "zookeeper":
                continue
            st = zk.exists_async("/" + c).get(timeout=3.0)
            if st is not None:
                out.append((st.czxid, "/" + c))
        return tuple(sorted(out))
    except Exception:
        return None
    finally:
        try:
            zk.stop()
            zk.close()
        except Exception:
            pass


def _synced(ens) -> bool:
    states = [ens.peer_state(s) for s in ens.ids if ens.is_running(s)]
    return (sum(st.startswith("leading - broadcast") for st in states) == 1
            and all(st.endswith("broadcast") for st in states))


def _disk(ens, s: int) -> list:
    return [[t.zxid >> 32, t.zxid & 0xffffffff, t.path] for t in ens.effective_history(s)]


def _diffs(ens, expect: dict, held: set) -> list:
    out = []
    for key, x in expect.items():
        if x.get("unchecked"):  # the implementation's failure, which the model does not follow
            continue
        s = int(key)
        role = ens.role(s)
        if role in ("following", "leading") and ens.peer_state(s).endswith(" - discovery"):
            role = f"{role}-discovery" if role not in x["role"] else role
        if role not in x["role"]:
            out.append((s, "role", " or ".join(x["role"]), role))
        elif x.get("phase") == "broadcast" and not ens.peer_state(s).endswith("broadcast"):
            out.append((s, "phase", f"{role} - broadcast", ens.peer_state(s)))
        acc, cur = ens.epochs(s)
        acc, cur = acc or 0, cur or 0
        if acc != x["accepted_epoch"]:
            out.append((s, "acceptedEpoch", x["accepted_epoch"], acc))
        if cur != x["current_epoch"]:
            out.append((s, "currentEpoch", x["current_epoch"], cur))
        got = _disk(ens, s)
        want, ahead = x["disk"], x.get("disk_ahead", [])
        if not any(got == want + ahead[:k] for k in range(len(ahead) + 1)):
            show = lambda d: "[" + ", ".join(f"{e}.{c} {p}" for e, c, p in d) + "]"  # noqa: E731
            w = show(want) + (f" (or up to {show(want + ahead)})" if ahead else "")
            out.append((s, "transactions on disk", w, show(got)))
        if "syncs" in x:  # how the server was synchronised, each time: as the model was
            modes = sync_modes(ens, s)
            if modes != x["syncs"]:
                out.append((s, "synchronisations", ", ".join(x["syncs"]) or "none",
                            ", ".join(modes) or "none"))
        if s in held and x.get("held") and not ens.log_lines(s, hooks.HELD, current=True):
            out.append((s, "SyncThread", "held by the sync-commit hook", "not held"))
    return out


def _mismatch_text(step, entry: dict, diffs: list) -> str:
    s, what, model, real = diffs[0]
    k = step - entry["step"] if isinstance(step, int) and isinstance(entry.get("step"), int) \
        else -1
    ev = entry["events"][k] if 0 <= k < len(entry["events"]) else entry["events"][-1]
    return (f"not realised at step {step} ({ev}): the model says "
            f"{what} {model}, server {s} says {real}")


def _set_links(ens, n: int, cut: set, expect: dict | None, timeout: float) -> None:
    """Cut the links of `cut`, heal every other one. When the entry expects a server to lead
    that is still looking, its links heal first, and the others once it has left its election
    (or after `timeout`): Fast Leader Election then hears that server's vote before any two
    others can agree on a lesser one. Healed at once, the servers' notification back-off
    (FastLeaderElection.lookForLeader doubles it up to 60 s while cut off) decided the
    outcome: on a loaded machine two servers could agree on the second-greatest id within
    finalizeWait (200 ms) before the greatest one spoke. The order only chooses which
    notifications come first, as a model trace does; FLE still elects (a schedule expecting
    the wrong leader is still not realised)."""
    for a in range(1, n + 1):
        for b in range(a + 1, n + 1):
            if (a, b) in cut and not ens.proxy.is_cut(a, b):
                ens.cut(a, b)
    heal = [(a, b) for a in range(1, n + 1) for b in range(a + 1, n + 1)
            if (a, b) not in cut and ens.proxy.is_cut(a, b)]
    # a server the entry expects to lead a later epoch that still leads an earlier one (the
    # model's leader timed out) must give it up first: healed at once, it would take the others
    # into its old epoch as late followers
    stale = {s for s in range(1, n + 1)
             if (expect or {}).get(str(s), {}).get("role") == ["leading"]
             and ens.role(s) == "leading"
             and (ens.epochs(s)[1] or 0) < expect[str(s)]["current_epoch"]}
    if stale and any(stale & set(p) for p in heal):
        try:
            ens.wait_for(lambda: all(ens.role(s) != "leading" for s in stale), timeout,
                         "the timed-out leader out of its epoch")
        except RealTimeout:  # conformance reports what the servers did instead
            pass
    first = {s for s in range(1, n + 1)
             if (expect or {}).get(str(s), {}).get("role") == ["leading"]
             and ens.role(s) == "looking"}
    early = [p for p in heal if first & set(p)]
    for a, b in early:
        ens.heal(a, b)
    if early and len(early) < len(heal):
        try:
            ens.wait_for(lambda: all(ens.role(s) != "looking" for s in first), timeout,
                         "the expected leader out of its election")
        except RealTimeout:  # conformance reports what the servers did instead
            pass
    for a, b in heal:
        if ens.proxy.is_cut(a, b):
            ens.heal(a, b)


def run(schedule: dict, *, zookeeper=None, byteman: str | None = None, observer=None,
        keep: bool = False, conform: bool = True, tick_ms: int = 200,
        conform_timeout: float = CONFORM_TIMEOUT, extra_cfg: dict | None = None) -> RealOutcome:
    """Execute `schedule` (already validated) on a fresh ensemble; always stops every server."""
    from .ensemble import Ensemble
    obs = observer or Observer()
    _quiet_kazoo()
    entries = schedule["entries"]
    n = schedule["servers"]
    needs_hooks = any(op["op"] in ("hold", "release") for e in entries for op in e.get("ops", ()))
    if needs_hooks and byteman is None:
        raise UsageError("this schedule holds a thread with Byteman, whose jar was not found: "
                         "apt-get install libbyteman-java, or set ZABMC_BYTEMAN_JAR")
    src = schedule.get("source") or {}
    out = RealOutcome(len(entries), steps_total=src.get("steps"))
    t0 = time.monotonic()
    limits = schedule.get("limits", {})
    with Ensemble(n, zookeeper=zookeeper, keep=keep, tick_ms=tick_ms, extra_cfg=extra_cfg,
                  sync_limit=limits.get("syncLimit", 5),
                  init_limit=limits.get("initLimit", 10)) as ens:
        out.zookeeper = ens.zookeeper.version or "?"
        out.workdir = str(ens.workdir) if keep else None
        r = _Run(ens, out, obs, n, byteman, conform, conform_timeout)
        for idx, e in enumerate(entries):
            if not r.entry(idx, e):
                break
        r.finish()
    out.seconds = time.monotonic() - t0
    return out


class _Run:
    """One schedule on one ensemble: its entries' operations, the conformance of the servers'
    state to the model's after each, the writes in flight, and the verdict at the end."""

    def __init__(self, ens, out: RealOutcome, obs, n: int, byteman, conform: bool,
                 conform_timeout: float):
        self.ens, self.out, self.obs, self.n = ens, out, obs, n
        self.byteman, self.conform, self.conform_timeout = byteman, conform, conform_timeout
        self.writers: list = []
        self.seq = 0
        self.epoch_samples: list = []
        self.held: set = set()
        self.marks: dict = {}  # (server, point) -> how many holds there its log showed when armed
        self.jvm = {}
        if byteman is not None:
            for s in range(1, n + 1):
                ctl = ens.workdir / f"control-{s}"
                ctl.mkdir(exist_ok=True)
                (ctl / "rules.btm").write_text(hooks.script(ctl))
                self.jvm[s] = [f"-javaagent:{byteman}=script:{ctl / 'rules.btm'}"]

    def sample(self, step) -> None:
        for s in range(1, self.n + 1):
            acc, cur = self.ens.epochs(s)
            self.epoch_samples.append((s, step, acc, cur))

    def await_state(self, expect: dict) -> list:
        """Poll until the servers show `expect`; the differences left at the time-out."""
        last = []
        deadline = time.monotonic() + self.conform_timeout
        while True:
            for w in self.writers:
                w.poll(self.seq)
            last = _diffs(self.ens, expect, self.held)
            if not last or time.monotonic() > deadline:
                return last
            time.sleep(0.1)

    def fail(self, idx: int, e: dict, step, last: list) -> None:
        ens, out = self.ens, self.out
        s = last[0][0]
        for r in range(1, self.n + 1):  # most models have no SNAP (models/zk D3; S12 has)
            modes = sync_modes(ens, r)
            want = (e.get("expect", {}).get(str(r)) or {}).get("syncs") or ["none"]
            if modes and modes[-1] == "snap" and want[-1] != "snap":
                out.notes.append(f"server {r} was synchronised by SNAP (its log: 'Getting a "
                                 "snapshot from leader'): the model's leader sent DIFF or "
                                 "TRUNC")
        out.mismatch = {"entry": idx, "step": step, "server": s,
                        "field": last[0][1], "model": str(last[0][2]), "real": str(last[0][3]),
                        "text": _mismatch_text(step, e, last),
                        "all": [f"server {d[0]}: {d[1]}: model {d[2]}, real {d[3]}"
                                for d in last],
                        "log_tail": ens.log_tail(s, 15)}
        self.sample(step)

    def entry(self, idx: int, e: dict) -> bool:
        """Entry `idx` run and conformed; False when the run stops there (a mismatch)."""
        e = self._bind(idx, e)
        self.obs.entry(idx, e)
        if self.conform and e.get("before"):
            last = self.await_state(e["before"])
            if last:
                self.fail(idx, e, e.get("step"), last)
                return False
        for op in e.get("ops", ()):
            self.obs.op(op)
            if not self.op(idx, e, op):
                return False
        t1 = time.monotonic()
        self._pause_and_sync(idx, e)
        expect = e.get("expect")
        if self.conform and expect:
            last = self.await_state(expect)
            if last:
                self.fail(idx, e, e.get("upto"), last)
                return False
        self._conformed(idx, e, t1)
        return True

    def _bind(self, idx: int, e: dict) -> dict:
        """The entry with the servers a nemesis names by letters (zabmc.real.nemesis) bound:
        those its `bind` names now, from the running servers' roles (after waiting up to the
        conformance timeout for one to lead), and those bound before."""
        from . import nemesis
        if e.get("bind"):
            ens = self.ens
            running = lambda: [s for s in ens.ids if ens.is_running(s)]  # noqa: E731
            try:
                ens.wait_for(lambda: any(ens.role(s) == "leading" for s in running()),
                             self.conform_timeout, "a server that leads")
            except RealTimeout:
                pass  # bind says which server it took instead
            note = nemesis.bind(e["bind"], self.out.bound,
                                {s: ens.role(s) for s in running()}, self.n)
            if note:
                self.out.notes.append(f"entry {idx}: {note}")
        e = nemesis.concrete(e, self.out.bound)
        self.out.ran.append(e)
        return e

    def _pause_and_sync(self, idx: int, e: dict) -> None:
        """The schedule's own timing (random schedules), and a wait for a synchronised
        ensemble where the entry asks for one."""
        if e.get("pause_ms"):
            end = time.monotonic() + e["pause_ms"] / 1000
            while time.monotonic() < end:
                for w in self.writers:
                    w.poll(self.seq)
                time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        if e.get("await") == "synced":
            try:
                self.ens.wait_for(lambda: _synced(self.ens), self.conform_timeout,
                                  "one leader in broadcast and every running server synchronised")
            except Exception as ex:  # a finding to report, not a crash of the run
                self.out.notes.append(f"after entry {idx}: {str(ex).splitlines()[0]}")

    def _conformed(self, idx: int, e: dict, t1: float) -> None:
        """Entry `idx` done: its progress, the proxy's word that the cuts held, the epochs and
        every server's data tree after it."""
        ens, out = self.ens, self.out
        out.entries_done = idx + 1
        out.realised_to = e.get("upto", idx)
        self.obs.conformed(idx, e, time.monotonic() - t1)
        leaks = ens.bypasses()
        if leaks:  # the schedule's cuts did not hold: nothing this run says can be trusted
            raise RealError(f"after entry {idx} (step {e.get('upto', idx)}): "
                            + "; ".join(leaks) + " (a fault of zabmc's link proxy)")
        self.sample(e.get("upto"))
        for s in range(1, self.n + 1):
            tree = read_tree(ens, s)
            if tree is not None:
                self.seq += 1
                out.deliveries.append(Delivery(self.seq, e.get("upto", idx), s, tree))

    def op(self, idx: int, e: dict, op: dict) -> bool:
        """One operation of entry `idx`; False when the run stops (a start that the model says
        fails did not fail)."""
        ens, kind, s = self.ens, op["op"], op.get("server")
        if kind == "hold":
            if op.get("after_held"):  # a one-thread point armed again once it holds its thread
                self._wait_held(op["after_held"], op["point"])
            hooks.arm(ens.workdir / f"control-{s}", op["point"], op.get("zxid"))
            self.marks[(s, op["point"])] = len(ens.log_lines(s, _held(op["point"])))
            if op["point"] not in hooks.NOT_SYNC_THREAD:  # a SyncThread conformance expects held
                self.held.add(s)
        elif kind == "release":
            self._release(s, op)
        elif kind == "kill":
            ens.kill(s)
            for p in hooks.POINTS:
                if self.byteman is not None:
                    hooks.disarm(ens.workdir / f"control-{s}", p)
            self.held.discard(s)
        elif kind == "links":
            _set_links(ens, self.n, {tuple(sorted(p)) for p in op["cut"]}, e.get("expect"),
                       self.conform_timeout)
        elif kind == "start":  # cut off until it is in its election (the links op)
            return self._start(idx, e, s, op)
        elif kind == "write":
            rec = WriteRecord(op["path"], s, e["upto"] if e.get("step") is None else e["step"])
            self.out.writes.append(rec)
            self.writers.append(_Writer(ens, rec, op.get("data", "").encode()))
        return True

    def _wait_held(self, servers: list, pt: str) -> None:
        """Until each of `servers` has held a thread at `pt` since it was last armed there."""
        ens = self.ens
        try:
            ens.wait_for(lambda: all(
                len(ens.log_lines(x, _held(pt))) > self.marks.get((x, pt), 0)
                for x in servers), self.conform_timeout, f"servers {servers} held at {pt}")
        except RealTimeout:  # conformance reports what the servers did instead
            pass

    def _release(self, s: int, op: dict) -> None:
        ens = self.ens
        if op.get("after_held"):  # once every one of them holds a thread there
            self._wait_held(op["after_held"], op["point"])
        hooks.disarm(ens.workdir / f"control-{s}", op["point"])
        self.held.discard(s)
        ens.four_letter(s, "ruok")

    def _start(self, idx: int, e: dict, s: int, op: dict) -> bool:
        ens = self.ens
        if ens.is_running(s):
            return True
        ens.isolate(s)
        try:
            ens.start(s, jvm_args=self.jvm.get(s), wait=True)
        except ServerFailed as ex:
            if not op.get("fails"):
                raise
            # the model's failure at this start (its log says which; the verdict reads it): the
            # server stays down
            self.out.notes.append(f"server {s} did not start, as the model's {op['fails']} "
                                  f"says: {str(ex).splitlines()[0]}")
            return True
        if op.get("fails"):  # the model's failure did not happen
            self.fail(idx, e, e.get("step"), [(s, "start:", f"fails ({op['fails']})", "started")])
            return False
        return True

    def finish(self) -> None:
        """Settle the writes still open, record every server's end state, and judge."""
        ens, out, n = self.ens, self.out, self.n
        deadline = time.monotonic() + WRITE_TIMEOUT
        while any(not w.poll(self.seq) for w in self.writers) and time.monotonic() < deadline:
            time.sleep(0.1)
        for w in self.writers:
            w.poll(self.seq, final=True)
        for s in range(1, n + 1):
            acc, cur = ens.epochs(s)
            out.servers[str(s)] = {
                "role": ens.role(s), "accepted_epoch": acc, "current_epoch": cur,
                "effective_history": [f"0x{t.zxid:x} {t.path}" for t in ens.effective_history(s)]}
        out.violations = judge(out.deliveries, out.writes, self.epoch_samples, n,
                               {s: ens.log_lines(s) for s in range(1, n + 1)})
        if out.violations:  # the servers' own log lines about synchronisation, once
            for s in range(1, n + 1):
                for ln in ens.log_lines(s):
                    if _EVIDENCE.search(ln):
                        out.log_evidence.append(f"server {s}: {ln.strip()[:300]}")
