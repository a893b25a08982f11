"""Fault schedules for a real ZooKeeper ensemble, and their translation from `zk` traces.

A schedule is a JSON file (`"format": "zabmc-zookeeper-schedule"`) of *entries*. Each entry is
what zabmc does to the real servers at one model step (its `ops`: hold or release a thread, kill,
cut and heal links, start, write) followed by the model steps the servers take by themselves
(deliveries of protocol messages, elections, a follower noticing its leader is gone); its
`expect` is the model's state after those steps, projected on what can be read off a real server:
its role, its two epoch files and the transactions on its disk. `zabmc real` runs the entries in
order and, after each, waits until the servers show that state (conformance).

The translation (docs/real-zookeeper.md has the table):
- model node i is server i + 1; proposal `zab-k` is a client write creating znode `/zab-k`;
- crash is SIGKILL, restart starts the same data directory again;
- links follow the model's groups: two up servers are connected when their nodes are in the same
  leader's epoch now, or will be next (a looking node's group is the leadership it joins next, so
  elections happen between exactly the servers the model elects with, and Fast Leader Election
  picks the same winner: the greatest (currentEpoch, last zxid, id) among them, D1); every other
  link is cut. A model timeout or lost connection becomes a cut link, which the real servers
  notice by themselves within syncLimit ticks;
- a crash that loses transactions the model had queued for the SyncThread (or, before the fix
  of ZOOKEEPER-3911, held until UPTODATE) needs them kept inside the JVM: the `sync-commit` hook
  is armed from the step that queued them to the crash (zabmc.real.hooks);
- in a trace of a model with `leaked-sync-thread` (`zk-3.7.0-shutdown`, 3.8.0's code: a
  follower's shutdown leaves its SyncThread running, ZOOKEEPER-4712), the SyncThread whose queue
  leaks is held by the `sync-append` hook instead, before it appends, from the step that queued
  it; `flush i` releases it, a crash loses what it held. The hook holds that one thread: the
  server's next role writes freely;
- in a trace of a model with `newleader-ack-step` (`zk-3.7.0-threads` and its variants, 3.8.0's
  follower threads: NEWLEADER's ACK is a step of its own, `ack-newleader i`), a follower whose
  trace takes other steps between its NEWLEADER and that ACK has its QuorumPeer thread held by
  the `newleader-ack` hook, from the entry that delivers NEWLEADER to `ack-newleader i` (or to
  the end), so that its SyncThread's ACKs go first as they do in the trace;
- in a trace of a model with `epoch-step` (`zk-3.7.0-epoch`: currentEpoch written a step after
  NEWLEADER's snapshot, `epoch i`), the `set-epoch` hook holds the QuorumPeer thread there;
- everything else (deliveries, elections, the SyncThread's writes) the servers do themselves.

Which of these a trace needs is the model's to say, not the states' keys': its
`real_translation` (zabmc.core.model), read through `get_model` of the model the trace names; a
model without one has no real schedule. This package does not replay (it imports the core, not
the explorer): `from_trace` takes the trace as read (`zabmc.core.trace.TraceFile`) and the run
its replay confirmed (`zabmc.core.trace.Replayed`); zabmc.cli.real.trace_schedule does both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from zabmc.core.errors import UsageError
from zabmc.core.model import (EPOCH_STEP, LEAKED_SYNC_THREAD, MODELS, NEWLEADER_ACK_STEP,
                              get_model, real_translation)
from zabmc.core.trace import Replayed, TraceFile

from .hooks import WAIT_HELD
from .verdict import FAILURES as _VERDICT_FAILURES

FORMAT = "zabmc-zookeeper-schedule"
VERSION = 1
OPS = ("hold", "release", "kill", "links", "start", "write")
ROLES = ("down", "looking", "following", "leading", "following-discovery", "leading-discovery")
#: syncLimit or initLimit (ticks of 200 ms: 15 s) for a schedule that holds a connected
#: follower's thread across entries (its SyncThread, or its NEWLEADER ACK)
SLOW_LIMIT = 75
#: initLimit for a schedule that holds a learner's synchronisation while its leader broadcasts
#: and takes its NEWLEADER ACK entries later (`_document`): 60 s of socket time-out, 37.5 s in
#: which the leader counts the learner as synced
SLOWER_INIT_LIMIT = 300
#: the failure properties (states where the implementation throws, exits or gives up) whose
#: real counterparts the verdict reads off the servers' logs
FAILURES = tuple(name for name, _ in _VERDICT_FAILURES)
#: the models whose traces have a real counterpart, ZooKeeper's own implementation of ZAB 1.0,
#: are those with a `real_translation` (zabmc.core.model): `real_models()`, or REAL_MODELS


def server_id(node: int) -> int:
    return node + 1


def _pair(a: int, b: int) -> list:
    return [min(a, b), max(a, b)]


@dataclass
class _View:
    """One state of a trace, as its JSON (the file's `states` entries)."""
    nodes: list
    down: set
    state: dict

    @classmethod
    def of(cls, s: dict) -> "_View":
        return cls(s["nodes"], set(s.get("down", ())), s)

    def up(self, i: int) -> bool:
        return i not in self.down

    def role(self, i: int) -> str:
        return self.nodes[i]["role"]


def _unwritten(node: dict) -> list:
    """Transactions the node holds for its SyncThread: lost by a crash, written by `log`."""
    out = list(node.get("memory_only", ()))
    if node.get("newleader_received"):
        out += list(node.get("packets_not_committed", ()))
    return list(node.get("leaked_queue", ())) + out


def _groups(views: list, n: int, events: list | None = None) -> list:
    """Per state and node: the leadership (leader, generation) it belongs to now or joins next,
    or None (down, or looking with no leadership ahead before a crash, or before the `join`
    that takes it to an established leader: linked earlier, a real server joins at once)."""
    gens = []  # per state: how many times each node has become leader so far
    runs = []  # per state: how many unbroken runs of Leading states each node has had so far
    count, rcount = [0] * n, [0] * n
    prev = None
    for v in views:
        for i in range(n):
            lead = v.up(i) and v.role(i) == "Leading"
            was = prev is not None and prev.up(i) and prev.role(i) == "Leading"
            if lead and not (was and prev.nodes[i]["accepted_epoch"]
                             == v.nodes[i]["accepted_epoch"]):
                count[i] += 1
            if lead and not was:
                rcount[i] += 1
        gens.append(list(count))
        runs.append(list(rcount))
        prev = v
    now = []
    since: dict = {}  # (leader, learner, connection) -> the leader's run that registered it
    for t, v in enumerate(views):
        for j in range(n):
            if v.up(j) and v.role(j) == "Leading":
                for i, c in enumerate(v.nodes[j].get("learner_connections") or ()):
                    if c:
                        since.setdefault((j, i, c), runs[t][j])
        row = []
        for i in range(n):
            if not v.up(i):
                row.append(None)
                continue
            r = v.role(i)
            if r == "Leading":
                row.append((i, gens[t][i]))
            elif r == "Following":
                lead = v.nodes[i]["leader"]
                first = since.get((lead, i, v.nodes[i]["connection"]))
                if (v.up(lead) and v.role(lead) == "Leading"
                        and (first is None or first == runs[t][lead])):
                    row.append((lead, gens[t][lead]))
                else:  # its leader gave up, or leads a later epoch on which this connection
                    row.append(None)  # is stale: it belongs where it goes next, as a looking
            else:  # node does
                row.append(None)
        now.append(row)
    out = [list(r) for r in now]
    for i in range(n):  # a looking node belongs to the leadership it joins next
        ahead = None
        for t in range(len(views) - 1, -1, -1):
            v = views[t]
            if not v.up(i):
                ahead = None
            elif now[t][i] is not None:
                ahead = now[t][i]
            else:
                out[t][i] = ahead
            ev = events[t - 1] if events and t else None
            if ev and ev["kind"] == "action" and ev["action"][0] == "join" \
                    and ev["action"][1] == i:
                ahead = None  # before its join it is nobody's
    return out


def _cuts(view: _View, groups: list, n: int) -> list:
    cut = []
    for a in range(n):
        for b in range(a + 1, n):
            ga, gb = groups[a], groups[b]
            linked = (view.up(a) and view.up(b) and ga is not None and ga == gb)
            if linked:  # a leader that dropped its follower, or a stalled connection (D8)
                na, nb = view.nodes[a], view.nodes[b]
                if b in na.get("stalled_connections", ()) or a in nb.get("stalled_connections",
                                                                          ()):
                    linked = False
            if not linked:
                cut.append([server_id(a), server_id(b)])
    return cut


def _support(view: _View, cut: list, i: int, n: int) -> bool:
    """Whether model leader i keeps a quorum the real leader can see: otherwise a real leader
    gives up within syncLimit ticks where the model lets it lead until its `lost` step."""
    cutset = {tuple(p) for p in cut}
    k = 1
    for j in range(n):
        if j != i and view.up(j) and view.role(j) == "Following" and view.nodes[j]["leader"] == i \
                and tuple(_pair(server_id(i), server_id(j))) not in cutset:
            k += 1
    return k >= n // 2 + 1


def _in_flight(state: dict, i: int) -> list:
    """Proposals on their way to node i: a real follower logs them as soon as they arrive."""
    out = []
    for link in state.get("network", ()):
        if link.get("dst") == i:
            for m in link.get("msgs", ()):
                if m.get("type") == "PROPOSAL":
                    out.append(m["txn"])
    return out


def _syncs(views: list, events: list, n: int) -> list:
    """Per state and node: the synchronisations the node has taken so far, by mode ("diff",
    "trunc", "snap"), as a real server's log names them: a SYNC delivered on its live
    connection. A real leader does not send a TRUNC across an epoch boundary: when the first
    committed transaction beyond a divergent follower's last zxid is of another epoch, it sends a
    snapshot instead (3.8.0 LearnerHandler.queueCommittedProposals, lines 995-1001: "Cannot send
    TRUNC to peer sid: ... peer zxid is from different epoch"). The model's TRUNC of such a
    follower (D3: its committed transactions follow, `committed` >= 1) leaves it where the
    snapshot does, its disk written at NEWLEADER (snapshotNeeded either way): "snap"."""
    out = [[[] for _ in range(n)]]
    for k, ev in enumerate(events, start=1):
        row = [list(x) for x in out[-1]]
        if ev["kind"] == "deliver" and ev["msg"]["type"] == "SYNC":
            x = views[k - 1].nodes[ev["dst"]]
            if x["role"] == "Following" and x["connection"] == ev["msg"]["conn"]:
                msg = ev["msg"]
                mode = msg["mode"].lower()
                peer = x["history"][-1]["zxid"] if x["history"] else [0, 0]
                if (mode == "trunc" and msg["committed"] >= 1 and msg["txns"]
                        and msg["txns"][0]["zxid"][0] != peer[0]):
                    mode = "snap"
                row[ev["dst"]].append(mode)
        out.append(row)
    return out


def _expect(view: _View, cut: list, held: set, n: int, syncs: list | None = None,
            both: frozenset | set = frozenset()) -> dict:
    """The model's state projected on the servers. `held`: the servers whose SyncThread a hook
    holds; `both`: those of them whose present role's SyncThread is held too, beside a leaked
    one (`_second_holds`)."""
    cutset = {tuple(p) for p in cut}
    out = {}
    for i in range(n):
        x = view.nodes[i]
        s = server_id(i)
        if not view.up(i):
            roles = ["down"]
        elif x["role"] == "Looking":
            roles = ["looking"]
            if all(tuple(_pair(s, server_id(j))) in cutset for j in range(n) if j != i):
                # cut off from everyone: a real server may act on election notifications it
                # received before the cut and sit in Discovery until its connection times out
                roles += ["following-discovery", "leading-discovery"]
        elif x["role"] == "Leading":
            roles = ["leading"] if _support(view, cut, i, n) else ["leading", "looking"]
        else:
            lead = x["leader"]
            ok = (view.up(lead) and view.role(lead) == "Leading"
                  and tuple(_pair(s, server_id(lead))) not in cutset)
            roles = ["following"] if ok else ["following", "looking"]
        # a node of the shutdown grain keeps its memory in `history` and its disk apart
        disk = [[t["zxid"][0], t["zxid"][1], "/" + t["payload"]]
                for t in x.get("disk", x["history"])]
        leaked = x.get("leaked_queue", ())
        if not view.up(i) or (s in held and (not leaked or s in both)):
            ahead = []  # the held SyncThreads are the ones that would write them
        else:  # only the leaked SyncThread is held: the node's present role writes freely,
            # also a transaction the leaked queue holds too (a DIFF that sends it again)
            mine = _unwritten(x)[len(leaked):]
            ahead = [[t["zxid"][0], t["zxid"][1], "/" + t["payload"]]
                     for t in mine + [t for t in _in_flight(view.state, i) if t not in leaked]]
        out[str(s)] = {"node": i, "role": roles, "accepted_epoch": x["accepted_epoch"],
                       "current_epoch": x["current_epoch"], "disk": disk, "disk_ahead": ahead}
        if len(roles) == 1 and roles[0] in ("following", "leading") and x["phase"] == "Broadcast":
            out[str(s)]["phase"] = "broadcast"  # synchronised: a real server says so too
        if view.up(i) and s in held and _unwritten(x):
            out[str(s)]["held"] = True  # the SyncThread must be seen held with them
        if syncs is not None:  # a SNAP where the model sends DIFF is not the trace's run
            out[str(s)]["syncs"] = syncs[i]
    return out


def _second_holds(views: list, events: list) -> dict:
    """state -> [node]: at the shutdown grain, a crash that loses both what a leaked SyncThread
    holds and what the node's present role has queued for its own SyncThread needs that second
    thread held too, from the state from which the present role has queued them without a break
    (the search's 4646 loss on zk-3.8.0: epoch 1's follower shutdown leaks 1.2, epoch 2's DIFF
    queues it again for the new SyncThread, and the crash after NEWLEADER's ACK loses both)."""
    def own(t: int, i: int) -> list:
        x = views[t].nodes[i]
        leaked = x.get("leaked_queue", ())
        return _unwritten(x)[len(leaked):] if leaked and views[t].up(i) else []
    out: dict = {}
    for c, ev in enumerate(events, start=1):
        if ev.get("kind") != "crash" or not own(c - 1, ev["node"]):
            continue
        t = c - 1
        while t > 0 and own(t - 1, ev["node"]):
            t -= 1
        out.setdefault(t, []).append(ev["node"])
    return out


def _ends_hold(ev: dict) -> int | None:
    """The node whose held SyncThread this event ends, if any: a crash (which loses what that
    thread has) or a leaked SyncThread's `flush` (which writes it)."""
    if ev.get("kind") == "crash":
        return ev["node"]
    if ev.get("kind") == "action" and ev["action"][0] == "flush":
        return ev["action"][1]
    return None


def _holds(views: list, events: list, n: int) -> dict:
    """step -> [server, ...]: the hook armed from the step where a node starts queueing, for
    its SyncThread, transactions that a later crash loses or a leaked SyncThread writes late."""
    plan: dict = {}
    for c, ev in enumerate(events, start=1):
        i = _ends_hold(ev)
        if i is None:
            continue
        if not _unwritten(views[c - 1].nodes[i]):
            continue
        plan.setdefault(_queued_since(views, i, c - 1), []).append(server_id(i))
    return plan


def _newleaders(events: list):
    """(step, node) of each NEWLEADER delivery, in order."""
    return [(k, ev["dst"]) for k, ev in enumerate(events, start=1)
            if ev["kind"] == "deliver" and ev["msg"]["type"] == "NEWLEADER"]


def _next_action(events: list, k: int, action: str, i: int) -> int | None:
    """The step after step k at which the trace takes `action i`, or None: never, or not
    before i crashes (a crash kills the thread that would take it)."""
    for c, e in enumerate(events[k:], start=k + 1):
        if e["kind"] == "action" and e["action"] == [action, i]:
            return c
        if e["kind"] == "crash" and e["node"] == i:
            return None
    return None


def _late_acks(views: list, events: list) -> dict:
    """The fine grain's NEWLEADER ACKs that must wait: {step of the NEWLEADER delivery to node
    i: (i, step of its release or None)}, for each delivery not followed at once by that ACK
    (the trace takes other steps first: the SyncThread's writes and ACKs, say). The release is
    the step at which the model's node has written it: `ack-newleader i`, or the next delivery
    to i, which the model handles only after writing the owed ACK (models/zk/fine.py, as the
    QuorumPeer thread does: 3.8.0 Learner.syncWithLeader writes the ACK, line 769, before the
    loop's next `readPacket`, line 624), or, for a node whose NEWLEADER left it owing
    currentEpoch (models/zk/epoch.py, K1), the first step at which it owes neither (a timeout
    that writes the epoch and drops the ACK on the closed connection, say); None when i crashes
    first or the trace ends."""
    out = {}
    for k, i in _newleaders(events):
        ack = _next_action(events, k, "ack-newleader", i)
        epoch = views[k].nodes[i].get("current_epoch_owed")  # the ACK waits for it (K1)
        if ack != k + 1 and views[k].nodes[i].get("newleader_ack_owed") is False and not epoch:
            out[k] = (i, ack)  # a NEWLEADER the node did not handle (a closed connection's)
        elif ack != k + 1:
            for c in range(k + 1, len(views)):
                if not views[c].up(i):
                    ack = None
                    break
                y = views[c].nodes[i]
                if not y.get("newleader_ack_owed", True) and not y.get("current_epoch_owed"):
                    ack = c
                    break
            out[k] = (i, ack)
    return out


def _owed_epochs(views: list, events: list) -> dict:
    """`zk-3.7.0-epoch`'s windows (models/zk/README.md, K1): {step of a NEWLEADER delivery that
    left node i owing currentEpoch: (i, step of its release or None)}. The `set-epoch` hook
    holds the server's QuorumPeer thread there, after NEWLEADER's snapshot, until the step at
    which the model's node has written it (released): `epoch i`, or a delivery to i, its
    timeout or a lost connection of it, which the model's node handles only after writing the
    epoch it owes (K2, models/zk/epoch.py: the thread writes it before its next read, 3.8.0
    Learner.syncWithLeader line 752 before the loop's `readPacket`, line 628); None when i
    crashes first (killed while held) or the trace ends."""
    out = {}
    for k, i in _newleaders(events):
        if not views[k].nodes[i].get("current_epoch_owed"):
            continue
        at = None
        for c in range(k + 1, len(views)):
            if not views[c].up(i):
                break
            if not views[c].nodes[i].get("current_epoch_owed"):
                at = c
                break
        out[k] = (i, at)
    return out


def _sync_point(features: frozenset) -> str:
    """The hook that holds a SyncThread: at the shutdown grain before it appends, and one thread
    only, since the leaked SyncThread must be held while the node's next role writes (H2)."""
    return "sync-append" if LEAKED_SYNC_THREAD in features else "sync-commit"


def _queued_since(views: list, i: int, k: int) -> int:
    """The state from which node i has held unwritten transactions without a break up to state
    k (which has some): the step that queued the first of them."""
    t = k
    while t > 0 and views[t - 1].up(i) and _unwritten(views[t - 1].nodes[i]):
        t -= 1
    return t


def _late_steps(views: list, events: list, n: int, caused: set,
                features: frozenset) -> tuple:
    """The threads a trace's timing needs held, beyond a crash's: (arms, releases, spans).

    A real SyncThread writes at once, and a real follower's NEWLEADER ACK leaves at once on an
    open link; the trace may take them later, after events zabmc brings about (`caused`): then
    what follows in the trace depends on their being late (a proposal not yet acknowledged, a
    leader that has not yet read the ACK), and the thread is held until the trace takes them:
    - `log i` late: the SyncThread, from the step that queued the transactions to `log i`
      (released there), or to the end when the trace never writes them;
    - at the coarse grain, NEWLEADER's ACK late (the ACK-NEWLEADER from i delivered after a
      caused event) or lost (never delivered, or i crashes first): the QuorumPeer thread, from
      NEWLEADER's delivery to that ACK's delivery or i's next delivery from its leader,
      whichever comes first (released there: i reads what the model delivers it next), or to
      i's crash or the end. The threads' grain has its own step for it (`_late_acks`).
    arms: {step: [(node, point)]}; releases: {step: [(node, point)]}; spans: [(node, first
    state, state after the last)] for the SyncThread holds (conformance expects them held)."""
    point = _sync_point(features)
    arms, rel, spans = {}, {}, []
    last = len(views) - 1

    def any_caused(a, b):  # a caused step in a..b (inclusive)
        return any(c in caused for c in range(a, b + 1))

    for i in range(n):
        ends = [k for k, ev in enumerate(events, start=1)
                if ev["kind"] == "action" and ev["action"] == ["log", i]
                and views[k - 1].up(i) and _unwritten(views[k - 1].nodes[i])]
        for L in ends:
            t = _queued_since(views, i, L - 1)
            if any_caused(t + 1, L - 1) and not _only_its_leaders_crash(views, events, caused,
                                                                        i, t, L):
                arms.setdefault(t, []).append((i, point))
                rel.setdefault(L, []).append((i, point))
                spans.append((i, t, L))
        if views[last].up(i) and _unwritten(views[last].nodes[i]):
            t = _queued_since(views, i, last)
            if any_caused(t + 1, last):
                arms.setdefault(t, []).append((i, point))
                spans.append((i, t, last + 1))
    if NEWLEADER_ACK_STEP in features:  # the threads' grain: `_late_acks`
        return arms, rel, spans
    for k, ev in enumerate(events, start=1):
        if not (ev["kind"] == "deliver" and ev["msg"]["type"] == "NEWLEADER"):
            continue
        i, lead = ev["dst"], ev["src"]
        x = views[k - 1].nodes[i]
        if not (x["role"] == "Following" and x["connection"] == ev["msg"]["conn"]):
            continue  # a stale NEWLEADER: nothing to acknowledge
        a = next((c for c, e in enumerate(events[k:], start=k + 1) if e["kind"] == "deliver"
                  and ((e["src"] == i and e["msg"]["type"] == "ACK-NEWLEADER")
                       or (e["src"] == lead and e["dst"] == i))
                  or e["kind"] == "crash" and e["node"] == i), None)
        if a is None or events[a - 1]["kind"] == "crash":  # the ACK never reaches the leader
            arms.setdefault(k, []).append((i, "newleader-ack"))  # (a kill disarms the hook)
        elif any_caused(k + 1, a - 1):
            arms.setdefault(k, []).append((i, "newleader-ack"))
            rel.setdefault(a, []).append((i, "newleader-ack"))
    return arms, rel, spans


def _only_its_leaders_crash(views: list, events: list, caused: set, i: int, t: int,
                            L: int) -> bool:
    """Whether the steps zabmc brings about between node i's queueing (state t) and its `log i`
    (step L) are crashes of the leader i still follows at L: then i's SyncThread is not held.
    Held, it would let i notice the crash first (the kill closes the connection its QuorumPeer
    thread reads), and the shutdown's fast-forward (release-3.8.0-1
    `ZooKeeperServer.shutdown(boolean)`, line 876) would miss what the thread writes after it, so
    that i's vote (`QuorumPeer.getLastLoggedZxid`, 1324-1329) would lack it, where the trace's
    node writes first and notices later. Unheld, the thread writes at once, as in the trace; its
    ACK may reach the leader before the kill, which the leader's restart, reading its disk, does
    not see."""
    x = views[L - 1].nodes[i]
    if x["role"] != "Following" or not views[L - 1].up(i):
        return False
    steps = [c for c in range(t + 1, L) if c in caused]
    return all(events[c - 1]["kind"] == "crash" and events[c - 1]["node"] == x["leader"]
               for c in steps)


def _forwarding_holds(views: list, events: list, caused: set) -> tuple:
    """The forwarding grain's timing (models/zk/README.md F9-F11: an established leader owes a
    learner NEWLEADER, `newleader i j`, a step after its synchronisation), which a real leader
    does not have: it queues NEWLEADER right after the synchronisation and only then starts
    sending (3.8.0 LearnerHandler.run, lines 555-609). (arms, releases), {step: [(node,
    point)]}:
    - `learner-sync`: when the trace takes a step zabmc brings about between leader i's reading
      j's ACKEPOCH and `newleader i j`, and i broadcasts meanwhile (what must be queued before
      NEWLEADER: a COMMIT of a proposal acknowledged meanwhile), leader i's LearnerHandler
      thread is held after `syncFollower`, from the ACKEPOCH's delivery to `newleader i j`
      (without a broadcast in between, the real leader's NEWLEADER, queued at once, is where
      the trace has it);
    - `sync-read`: when follower j, synchronised by TRUNC, is delivered a COMMIT and then
      leaves that connection before NEWLEADER is delivered (its timeout, or `lost j i` once its
      leader has given up: ZOOKEEPER-5094's interrupted TRUNC, `_broken_truncs`), its
      QuorumPeer thread is held before the read after that COMMIT, from the TRUNC's delivery,
      and that step releases it to fail that read: a real leader sends NEWLEADER with the
      rest, so only a connection broken there keeps the follower from reading it;
    - `learner-sync` for such a follower whose leader i still owes it NEWLEADER when the COMMIT
      is delivered and never queues it before j leaves (the model's leader gives up first, say:
      the search's 5094 loss): leader i's LearnerHandler thread is held after `syncFollower`
      from the ACKEPOCH's delivery to that COMMIT's delivery, which releases it once the
      leader has queued the COMMIT; the real follower reads its synchronisation only then, and
      until then conformance expects it where it was before the SYNC (`_Plan.behind`)."""
    arms: dict = {}
    rel: dict = {}
    for c, ev in enumerate(events, start=1):
        if ev["kind"] == "action" and ev["action"][0] == "newleader":
            i, j = ev["action"][1], ev["action"][2]
            a = next((k for k in range(c - 1, 0, -1) if events[k - 1]["kind"] == "deliver"
                      and events[k - 1]["msg"]["type"] == "ACKEPOCH"
                      and (events[k - 1]["src"], events[k - 1]["dst"]) == (j, i)), None)
            if a is not None and any(k in caused for k in range(a + 1, c)) \
                    and _broadcasts(views, i, a, c - 1):
                arms.setdefault(a, []).append((i, "learner-sync"))
                rel.setdefault(c, []).append((i, "learner-sync"))
    for j, i, a, s, m, c in _broken_truncs(views, events):
        arms.setdefault(s, []).append((j, "sync-read"))
        rel.setdefault(c, []).append((j, "sync-read"))
        if _owes_newleader_through(views, events, i, j, a, m, c):
            arms.setdefault(a, []).append((i, "learner-sync"))
            rel.setdefault(m, []).append((i, "learner-sync"))
    return arms, rel


def _broken_truncs(views: list, events: list) -> list:
    """ZOOKEEPER-5094's interrupted TRUNC: [(j, i, a, s, m, c)] for each follower j that leader
    i synchronises by TRUNC (its ACKEPOCH delivered at step a, or 0 when none is on record, the
    SYNC at step s), that is delivered a COMMIT on that connection (the last at step m) and
    then leaves the connection (step c: its timeout, or its noticing the leader gone, `lost j
    i`) before NEWLEADER is delivered to it."""
    out = []
    for c, ev in enumerate(events, start=1):
        if ev["kind"] == "timeout":
            j = ev["node"]
        elif ev["kind"] == "action" and ev["action"][0] == "lost":
            j = ev["action"][1]
        else:
            continue
        x = views[c - 1].nodes[j]
        if x["role"] != "Following" or (ev["kind"] == "action"
                                        and ev["action"][2] != x["leader"]):
            continue
        mine = [(k, e) for k, e in enumerate(events[:c - 1], start=1)
                if e["kind"] == "deliver" and e["dst"] == j
                and e["msg"].get("conn") == x["connection"]]
        sync = next((k for k, e in mine if e["msg"]["type"] == "SYNC"
                     and e["msg"]["mode"] == "TRUNC"), None)
        later = [(k, e["msg"]["type"]) for k, e in mine if sync is not None and k > sync]
        if sync is None or "NEWLEADER" in [t for _, t in later] \
                or "COMMIT" not in [t for _, t in later]:
            continue
        i = events[sync - 1]["src"]
        a = next((k for k in range(sync - 1, 0, -1) if events[k - 1]["kind"] == "deliver"
                  and events[k - 1]["msg"]["type"] == "ACKEPOCH"
                  and (events[k - 1]["src"], events[k - 1]["dst"]) == (j, i)
                  and events[k - 1]["msg"].get("conn") == x["connection"]), 0)
        m = max(k for k, t in later if t == "COMMIT")
        out.append((j, i, a, sync, m, c))
    return out


def _owes_newleader_through(views: list, events: list, i: int, j: int, a: int, m: int,
                            c: int) -> bool:
    """Whether leader i, from reading j's ACKEPOCH (step a) until j is delivered the COMMIT
    of step m, still owes j NEWLEADER (the forwarding grain's `newleader_owed`, F9), and does
    not queue it before j leaves (step c): what a real leader queues at once after the
    synchronisation (3.8.0 LearnerHandler.run, lines 555-609), so its COMMIT would follow
    NEWLEADER and the follower would finish its synchronisation."""
    if not a:
        return False
    owed = all(views[t].up(i) and j in (views[t].nodes[i].get("newleader_owed") or ())
               for t in range(a, m))
    return owed and not any(e["kind"] == "action" and e["action"] == ["newleader", i, j]
                            for e in events[a:c - 1])


def _sent_at(views: list, events: list, d: int, a: int, b: int, m: dict, ahead: int = 0) -> int:
    """The step that put message m on link (a, b), where it is in flight at state d - 1 behind
    `ahead` others: the first of the states before d through which it stayed in flight (links
    are FIFO: the messages delivered on the link meanwhile were ahead of it)."""
    def msgs(t):
        return next((ln.get("msgs", ()) for ln in views[t].state.get("network", ())
                     if ln.get("src") == a and ln.get("dst") == b), ())
    t = d - 1
    while t >= 0:
        ms = msgs(t)
        if not (ahead < len(ms) and ms[ahead] == m):
            break
        e = events[t - 1] if t else None
        if e and e["kind"] == "deliver" and (e["src"], e["dst"]) == (a, b):
            ahead += 1
        t -= 1
    return t + 1


def _hex_zxid(z) -> str:
    return f"{(z[0] << 32) | z[1]:x}"


def _in_flight_holds(views: list, events: list, caused: set) -> tuple:
    """Messages the trace keeps in flight past a step zabmc brings about, which a real server
    would have sent and read at once: the thread that would have sent or handled it is held
    from the step that sent it to its delivery. (arms, releases), {step: [(node, point[,
    key])]}:
    - an ACKEPOCH from learner i: i's QuorumPeer thread before it writes it (`ackepoch`); a
      real leader reads it at once and synchronises i before what the trace does meanwhile
      (3.8.0 LearnerHandler.run lines 540-555);
    - a PROPOSAL to follower i, on the connection i still follows on at the delivery: i's
      QuorumPeer thread with that PROPOSAL read and not handled (`proposal-read`, keyed by its
      zxid); a real follower handles it at once, its SyncThread writes and acknowledges it,
      and the leader commits before the trace's steps in between (a learner's
      synchronisation, say), or, when the leader gives up meanwhile, the follower reads its
      leader's closing the connection right after it. A PROPOSAL that i's crash drops from the
      link is held the same way, to the kill (`_left_in_flight`);
    - a PROPOSAL first in flight to follower i when i stops following there by a step that is
      no crash (`lost`, its own timeout): the trace's i leaves before it comes. i's QuorumPeer
      thread is held with it read and not handled (`proposal-lost`, keyed by its zxid) from
      the step that sent it, and released where i leaves: the read then fails as a broken
      connection does, and i gives up its leader without it (3.8.0 Follower.followLeader
      lines 124-133: an exception of `processPacket` closes the socket);
    - a synchronisation (SYNC) from leader i to learner j still in flight at the trace's end,
      or delivered only once j no longer follows on that connection (so never handled):
      i's LearnerHandler for j after `syncFollower` (`learner-sync`), to the end; a real
      leader sends it, and NEWLEADER, at once (3.8.0 LearnerHandler.run lines 555-609), and a
      leader not yet established counts j's NEWLEADER ACK towards its quorum, where the
      trace's leader establishes itself with another learner."""
    arms: dict = {}
    rel: dict = {}
    for c, i, src, k, s, m in _left_in_flight(views, events):
        key = _hex_zxid(m["txn"]["zxid"])
        if not (s and any(t in caused for t in range(s + 1, c))):
            continue
        if events[c - 1]["kind"] == "crash":  # PROPOSALs a crash of their follower drops
            arms.setdefault(s, []).append((i, "proposal-read", key))
        elif k == 0 and src == views[c - 1].nodes[i].get("leader"):  # one it never reads
            arms.setdefault(s, []).append((i, "proposal-lost", key))
            rel.setdefault(c, []).append((i, "proposal-lost", key))
    last = len(views) - 1
    for ln in views[last].state.get("network", ()):  # synchronisations in flight at the end
        i, j = ln.get("src"), ln.get("dst")
        for k, m in enumerate(ln.get("msgs", ())):
            if (m["type"] == "SYNC" and views[last].up(i) and views[last].up(j)
                    and views[last].role(i) == "Leading" and views[last].role(j) == "Following"
                    and views[last].nodes[j].get("connection") == m.get("conn")):
                s = _sent_at(views, events, last + 1, i, j, m, k)
                if s and any(t in caused for t in range(s + 1, last + 1)):
                    arms.setdefault(s, []).append((i, "learner-sync"))
    for d, ev in enumerate(events, start=1):  # synchronisations delivered too late to count
        if ev["kind"] == "deliver" and ev["msg"]["type"] == "SYNC":
            x = views[d - 1].nodes[ev["dst"]]
            if not (x["role"] == "Following" and x.get("connection") == ev["msg"].get("conn")):
                s = _sent_at(views, events, d, ev["src"], ev["dst"], ev["msg"])
                if s and any(t in caused for t in range(s + 1, d)):
                    arms.setdefault(s, []).append((ev["src"], "learner-sync"))
    for d, ev in enumerate(events, start=1):
        if ev["kind"] != "deliver" or ev["msg"]["type"] not in ("ACKEPOCH", "PROPOSAL"):
            continue
        s = _sent_at(views, events, d, ev["src"], ev["dst"], ev["msg"])
        if s == 0 or not any(k in caused for k in range(s + 1, d)):
            continue
        if ev["msg"]["type"] == "ACKEPOCH":
            arms.setdefault(s, []).append((ev["src"], "ackepoch"))
            rel.setdefault(d, []).append((ev["src"], "ackepoch"))
        elif (views[d - 1].up(ev["dst"]) and views[d - 1].role(ev["dst"]) == "Following"
              and views[d - 1].nodes[ev["dst"]].get("connection") == ev["msg"].get("conn")):
            key = _hex_zxid(ev["msg"]["txn"]["zxid"])
            arms.setdefault(s, []).append((ev["dst"], "proposal-read", key))
            rel.setdefault(d, []).append((ev["dst"], "proposal-read", key))
    return arms, rel


def _left_in_flight(views: list, events: list):
    """(step c, follower i, its sender, position k, step s that sent it, PROPOSAL m): each
    PROPOSAL of i's connection in flight to i when i leaves that connection at step c, by a
    crash or by ceasing to follow there (`lost`, its own timeout)."""
    for c, ev in enumerate(events, start=1):
        for i, x in enumerate(views[c - 1].nodes):
            if x is None or x["role"] != "Following":
                continue
            if ev["kind"] == "crash":
                if ev["node"] != i:
                    continue
            else:
                y = views[c].nodes[i]
                if (y is None or not views[c - 1].up(i) or (y["role"], y.get("connection"))
                        == ("Following", x.get("connection"))):
                    continue
            for ln in views[c - 1].state.get("network", ()):
                if ln.get("dst") != i:
                    continue
                for k, m in enumerate(ln.get("msgs", ())):
                    if m["type"] == "PROPOSAL" and m.get("conn") == x.get("connection"):
                        yield c, i, ln["src"], k, _sent_at(views, events, c, ln["src"], i, m, k), m


def _broadcasts(views: list, i: int, a: int, b: int) -> bool:
    """Whether leader i broadcast anything between states a and b (it proposed, or committed):
    what a forwarding learner's queue gets before NEWLEADER when its NEWLEADER comes later."""
    def mark(t):
        x = views[t].nodes[i]
        return len(x["history"]), x.get("commit"), x.get("last_committed")
    return any(mark(t) != mark(a) for t in range(a, b + 1))


#: model events that zabmc's own ops bring about (the rest the servers do by themselves)
CAUSED_KINDS = ("timeout", "drop", "crash", "restart", "propose")
CAUSED_ACTIONS = ("elect", "join", "decide", "connect", "flush")


def _caused(ev: dict) -> bool:
    return ev["kind"] in CAUSED_KINDS or (ev["kind"] == "action"
                                          and ev["action"][0] in CAUSED_ACTIONS)


def real_models() -> tuple:
    """The registered models whose traces have a real counterpart, in the registry's order."""
    return tuple(name for name in MODELS if real_translation(get_model(name)) is not None)


def __getattr__(name: str):
    if name == "REAL_MODELS":  # computed when asked: it loads every registered model
        return real_models()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def translation(model, lasso: bool) -> frozenset:
    """The features of the grain of trace's model (its name as the file gives it) that its schedule
    follows; a one-line UsageError when the trace has no real schedule: its model has no real
    counterpart, or it is a liveness lasso."""
    features = None
    if isinstance(model, str) and model in MODELS:  # a registered name, not an alias
        features = real_translation(get_model(model))
    if features is None:
        raise UsageError(f"model {model!r} has no real counterpart: `zabmc real` and "
                         f"`export --format zookeeper` take traces of {', '.join(real_models())} "
                         "(ZooKeeper's own implementation of ZAB)")
    if lasso:
        raise UsageError("a liveness lasso has no finite real schedule: give a safety trace")
    return features


@dataclass
class _Plan:
    """The threads a trace's timing needs held and let go, and the steps zabmc brings about."""
    arms: dict  # step -> [(node, point)]: holds armed as the entry that takes the step begins
    releases: dict  # step -> [(node, point)]: the held threads the trace lets go there
    spans: list  # [(node, first state, state after the last)]: SyncThread holds expected held
    caused: set  # the steps zabmc's ops bring about
    ahead: list  # [(node, step, step)]: a learner that runs ahead of the trace (_runs_ahead)
    behind: list  # [(node, step, step)]: a learner that lags behind it (_lags_behind)
    late_acks: dict  # NEWLEADER's delivery -> (node, its ACK's step or None): `_late_acks`


def _plan(views: list, events: list, n: int, features: frozenset) -> _Plan:
    late = _late_acks(views, events) if NEWLEADER_ACK_STEP in features else {}
    releases: dict = {}
    for i, ack in late.values():
        if ack is not None:
            releases.setdefault(ack, []).append((i, "newleader-ack"))
    owed = _owed_epochs(views, events) if EPOCH_STEP in features else {}
    for i, at in owed.values():
        if at is not None:
            releases.setdefault(at, []).append((i, "set-epoch"))
    caused = {k for k, ev in enumerate(events, start=1) if _caused(ev)} | set(releases)
    while True:  # a release is an op, so a step zabmc brings about: holds beget holds
        arms, rel, spans = _late_steps(views, events, n, caused, features)
        for f_arms, f_rel in (_forwarding_holds(views, events, caused),
                              _in_flight_holds(views, events, caused)):
            for k, lst in f_arms.items():
                arms.setdefault(k, []).extend(lst)
            for k, lst in f_rel.items():
                rel.setdefault(k, []).extend(lst)
        if caused >= set(rel):
            break
        caused |= set(rel)
    for k, lst in rel.items():
        releases.setdefault(k, []).extend(lst)
    # NEWLEADER's ACK held from the entry that delivers NEWLEADER (the hook holds the first
    # such ACK the server writes from then on)
    for t, (i, _) in sorted(late.items()):
        arms.setdefault(t, []).append((i, "newleader-ack"))
    for t, (i, _) in sorted(owed.items()):
        arms.setdefault(t, []).append((i, "set-epoch"))
    ahead = _runs_ahead(events, arms, releases)
    for j, d, m in ahead:  # armed before the release that lets the learner run to them
        for t in [t for t in arms if d < t <= m]:
            mine = [x for x in arms[t] if x[0] == j]
            arms[t] = [x for x in arms[t] if x[0] != j]
            arms.setdefault(d, []).extend(mine)
    return _Plan(arms, releases, spans, caused, ahead, _lags_behind(views, events), late)


def _lags_behind(views: list, events: list) -> list:
    """[(learner j, step s, step m)]: where leader i's LearnerHandler for j is held after
    `syncFollower` (`learner-sync`) until step m, which releases it, while the trace delivers
    j its SYNC at step s < m (`_forwarding_holds`: the interrupted TRUNC of a leader that still
    owes NEWLEADER). The real leader sends nothing before the release (3.8.0 LearnerHandler.run
    starts its sending thread at line 609, after the hook point), so from s to m conformance
    expects j where it was before the SYNC; at m the real j reads the synchronisation and the
    COMMIT at once and stands where the trace has it."""
    return [(j, s, m) for j, i, a, s, m, c in _broken_truncs(views, events)
            if _owes_newleader_through(views, events, i, j, a, m, c)]


def _sent_at_release(events: list, releases: dict) -> list:
    """[(learner j, step f, step c)]: leader i's LearnerHandler for j is held after
    `syncFollower` (`learner-sync`) until `newleader i j` (step c), and the trace delivers j
    its synchronisation (and what i forwarded since) from step f on, before step c. A real
    leader sends none of it before it queues NEWLEADER: `syncFollower` queues the packets,
    NEWLEADER is queued after them and only then `startSendingPackets` starts the thread that
    sends the queue (release-3.8.0-1 LearnerHandler.run, lines 555-609). So j reads them once
    the hold is released, and until step c conformance expects j where it is before step f
    (the model lets the learner read them before its leader's `newleader`, which no other
    node's step of these traces reads)."""
    out = []
    for c, lst in sorted(releases.items()):
        ev = events[c - 1]
        if not (ev["kind"] == "action" and ev["action"][0] == "newleader"):
            continue
        i, j = ev["action"][1], ev["action"][2]
        if (i, "learner-sync") not in [tuple(x[:2]) for x in lst]:
            continue
        a = next((k for k in range(c - 1, 0, -1) if events[k - 1]["kind"] == "deliver"
                  and events[k - 1]["msg"]["type"] == "ACKEPOCH"
                  and (events[k - 1]["src"], events[k - 1]["dst"]) == (j, i)), None)
        f = next((k for k in range(a + 1, c) if events[k - 1]["kind"] == "deliver"
                  and (events[k - 1]["src"], events[k - 1]["dst"]) == (i, j)), None) \
            if a is not None else None
        if f is not None:
            out.append((j, f, c))
    return out


def _runs_ahead(events: list, arms: dict, releases: dict) -> list:
    """[(learner j, step d, step m)]: where a trace releases j's ACKEPOCH (`ackepoch`, step
    d) and the leader synchronises j up to its NEWLEADER (step m), at which a hold catches j's
    QuorumPeer thread (`newleader-ack`, `set-epoch`). The real leader reads the ACKEPOCH at
    once and sends the synchronisation and NEWLEADER in one go (3.8.0 LearnerHandler.run,
    lines 540-609): j gets there by itself, also when the trace takes steps of other servers
    in between. Its holds on the way are armed with the release, and until step m conformance
    expects j where it is at m."""
    out = []
    for d, lst in sorted(releases.items()):
        for j in [x[0] for x in lst if x[1] == "ackepoch"]:
            ack = events[d - 1]
            m = next((k for k, e in enumerate(events[d:], start=d + 1)
                      if e["kind"] == "deliver" and e["dst"] == j
                      and e["msg"]["type"] == "NEWLEADER"
                      and e["msg"].get("conn") == ack["msg"].get("conn")), None)
            if m is None or any(e["kind"] in ("crash", "timeout") or
                                e["kind"] == "action" and e["action"][0] == "lost"
                                for e in events[d:m]):
                continue
            if any(x[0] == j and x[1] in ("newleader-ack", "set-epoch")
                   for t, lst2 in arms.items() if d < t <= m for x in lst2) and m > d + 1:
                out.append((j, d, m))
    return out


def from_trace(trace: TraceFile, run: Replayed, source: str | None = None) -> dict:
    """The schedule that realises a trace of the zk family, from the run its replay confirmed
    (`run`: this package does not replay; `zabmc.explore.trace.replay(trace).replayed()`)."""
    features = translation(trace.model, trace.lasso is not None)
    views = [_View.of(s) for s in run.states]
    events = list(run.events)
    n = len(views[0].nodes)
    groups = _groups(views, n, events)
    cuts = [_cuts(v, groups[k], n) for k, v in enumerate(views)]
    syncs = _syncs(views, events, n)
    plan = _plan(views, events, n, features)
    entries = _entries(views, events, list(run.texts), cuts, plan.releases, trace.violation)
    held_at, both_at = _arm(entries, views, events, n, plan.arms, features)
    _sync_holds_miss_newleader_writes(entries, views, events)
    _newleader_acks_together(entries, events, n, plan.late_acks)
    for i, t, end in plan.spans:  # conformance expects these SyncThreads held
        e = next(e for e in entries if e["step"] <= t <= e["upto"])
        for k in range(e["step"], end):
            held_at[k].add(server_id(i))
    late = _sent_at_release(events, plan.releases)
    for e in entries:
        k = e["upto"]
        e["expect"] = _expect(views[k], cuts[k], held_at[k], n, syncs[k], both_at[k])
        for j, d, m in plan.ahead:
            if d <= k < m:
                key = str(server_id(j))
                e["expect"][key] = _expect(views[m], cuts[m], held_at[m], n, syncs[m],
                                           both_at[m])[key]
        for j, f, c in late:
            if f <= k < c:
                key = str(server_id(j))
                e["expect"][key] = _expect(views[f - 1], cuts[k], held_at[k], n, syncs[f - 1],
                                           both_at[k])[key]
        for j, s, m in plan.behind:
            if s <= k < m:
                key = str(server_id(j))
                e["expect"][key] = _expect(views[s - 1], cuts[s - 1], held_at[s - 1], n,
                                           syncs[s - 1], both_at[s - 1])[key]
        k = e["step"]
        if k and k not in plan.caused:
            # a step the servers take by themselves (a leader noticing a lost follower, ...)
            # must have happened before the links of the entry change
            e["before"] = _expect(views[k], cuts[k - 1], held_at[k - 1], n, syncs[k],
                                  both_at[k - 1])
            for j, s, m in plan.behind:
                if s <= k < m:
                    key = str(server_id(j))
                    e["before"][key] = _expect(views[s - 1], cuts[s - 1], held_at[s - 1], n,
                                               syncs[s - 1], both_at[s - 1])[key]
    entries = _eager_writes(entries)
    _unchecked(entries, trace.violation)
    return _document(entries, n, trace, run, source, plan.arms, bool(late))


def _entries(views: list, events: list, texts: list, cuts: list, releases: dict,
             violation: dict | None) -> list:
    """The schedule's entries, one for each step zabmc brings about (the steps the servers take
    by themselves join the entry before them), with their ops but for the holds."""
    n = len(views[0].nodes)
    entries: list = []
    for k, v in enumerate(views):
        ops = []
        ev = events[k - 1] if k else None
        if k == 0:  # servers start cut off; links open once each is in its election
            ops.extend({"op": "start", "server": server_id(i)} for i in range(n) if v.up(i))
            ops.append({"op": "links", "cut": cuts[0]})
        else:
            kind = ev["kind"]
            if kind == "crash":
                ops.append({"op": "kill", "server": server_id(ev["node"])})
            if kind == "restart":
                op = {"op": "start", "server": server_id(ev["node"])}
                v_ = violation or {}
                if (v_.get("property") == "load-exception" and v_.get("step") == k
                        and ev["node"] in v_.get("nodes", ())):
                    op["fails"] = "load-exception"  # the server refuses to start (K4)
                ops.append(op)
            if cuts[k] != cuts[k - 1] or kind == "restart":
                ops.append({"op": "links", "cut": cuts[k]})
            for i, pt, *key in releases.get(k, ()):  # a held thread goes on: the trace's step
                op = {"op": "release", "server": server_id(i), "point": pt}
                if pt in WAIT_HELD:  # what follows needs it held first
                    op["after_held"] = [server_id(i)]
                ops.append(op)
            if kind == "action" and ev["action"][0] == "flush":  # the held SyncThread goes on
                ops.append({"op": "release", "server": server_id(ev["action"][1]),
                            "point": "sync-append"})
            if kind == "propose":
                payload = ev["payload"]
                ops.append({"op": "write", "server": server_id(ev["node"]), "path": "/" + payload,
                            "data": payload})
        if ops or not entries:
            entries.append({"step": k, "upto": k, "events": [texts[k - 1] if k else "start"],
                            "ops": ops})
        else:
            entries[-1]["upto"] = k
            entries[-1]["events"].append(texts[k - 1])
    return entries


def _arm(entries: list, views: list, events: list, n: int, arms: dict,
         features: frozenset) -> tuple:
    """Insert the holds: a crash's (armed when the entry that queues the transactions a later
    crash loses begins; a second one for the present role's SyncThread beside a leaked one,
    armed once the first holds its thread), then the plan's `arms`. Per state, the servers
    held, and those of them whose present role's SyncThread is held beside a leaked one."""
    held_at = [set() for _ in views]
    both_at = [set() for _ in views]
    point = _sync_point(features)
    for t, crashing in sorted(_holds(views, events, n).items()):
        e = next(e for e in entries if e["step"] <= t <= e["upto"])
        for s in crashing:
            e["ops"].insert(0, {"op": "hold", "server": s, "point": point})
            k = e["step"]
            while k < len(views) and not (k > 0 and _ends_hold(events[k - 1]) is not None
                                          and server_id(_ends_hold(events[k - 1])) == s):
                held_at[k].add(s)
                k += 1
    for t, crashing in sorted(_second_holds(views, events).items() if point == "sync-append"
                              else ()):
        e = next(e for e in entries if e["step"] <= t <= e["upto"])
        for i in crashing:  # the hook holds one thread at a time: armed again once it holds
            s = server_id(i)
            e["ops"].append({"op": "hold", "server": s, "point": point, "after_held": [s]})
            k = t
            while k < len(views) and not (k > 0 and events[k - 1].get("kind") == "crash"
                                          and events[k - 1]["node"] == i):
                both_at[k].add(s)
                k += 1
    for t, lst in sorted(arms.items()):  # armed as the entry that takes step t begins
        e = next(e for e in entries if e["step"] <= t <= e["upto"])
        for i, pt, *key in reversed(lst):
            op = {"op": "hold", "server": server_id(i), "point": pt}
            if key:
                op["zxid"] = key[0]
            e["ops"].insert(0, op)
    return held_at, both_at


def _disk(node: dict) -> list:
    return node.get("disk", node["history"])


def _sync_holds_miss_newleader_writes(entries: list, views: list, events: list) -> None:
    """A one-line UsageError when a SyncThread hold (`sync-append`, `sync-commit`) is armed on a
    server across a NEWLEADER at which the model's node writes to disk: that write is the
    QuorumPeer thread's (from 3.8.5 and 3.9.2 `FollowerZooKeeperServer.appendRequest` and
    `ZKDatabase.commit` in Learner.syncWithLeader; release-3.9.3 Learner.java 783-792), which
    the hook, a rule on those methods, would hold instead of the SyncThread (docs/real-zookeeper.md,
    "3.9.3's NEWLEADER"). Not yet translated."""
    for e in entries:
        for op in e["ops"]:
            if op["op"] != "hold" or op["point"] not in ("sync-append", "sync-commit"):
                continue
            s, i = op["server"], op["server"] - 1
            for k in range(e["step"] + 1, len(events) + 1):
                ev = events[k - 1]
                if ev["kind"] == "crash" and ev["node"] == i or (
                        k in _let_go(entries, s, op["point"])):
                    break
                if (ev["kind"] == "deliver" and ev["dst"] == i
                        and ev["msg"]["type"] == "NEWLEADER"
                        and len(_disk(views[k].nodes[i])) > len(_disk(views[k - 1].nodes[i]))):
                    raise UsageError(
                        f"not yet translated: the {op['point']} hold of server {s} from step "
                        f"{e['step']} spans its NEWLEADER at step {k}, whose writes are its "
                        "QuorumPeer thread's: the hook would hold that thread, not the "
                        "SyncThread (docs/real-zookeeper.md, \"3.9.3's NEWLEADER\")")


def _let_go(entries: list, s: int, point: str) -> set:
    """The steps at whose entry server s's `point` hold is released."""
    return {e["step"] for e in entries for o in e["ops"]
            if o["op"] == "release" and o.get("server") == s and o["point"] == point}


def _newleader_acks_together(entries: list, events: list, n: int, late: dict) -> None:
    """Several followers synchronising with a leader not yet established: their NEWLEADER
    ACKs wait until every one of them has handled NEWLEADER, and then go together; but an ACK
    the model sends only after this entry (`late`, `_late_acks`: a NEWLEADER delivered in it
    whose ACK is released later, or never) stays held to its own release, and the others wait
    until it is held (the search's 4925 loss from the initial state: node 1 owes its ACK from
    step 11 to step 17, where PROPOSAL 1.1 is delivered before it)."""
    for e in entries:
        k = e["step"]
        ev = events[k - 1] if k else None
        if not (ev and ev["kind"] == "action" and ev["action"][0] == "elect"):
            if k:
                continue
            # the start's election: the first leadership of the trace, if it comes in this entry
            ev = next((x for x in events[:e["upto"]] if x["kind"] == "action"
                       and x["action"][0] == "elect"), None)
            if ev is None:
                continue
        lead, mask = ev["action"][1], ev["action"][2]
        fol = [i for i in range(n) if mask >> i & 1 and i != lead]
        start = events.index(ev) + 1
        first_ack = next((c for c, x in enumerate(events[start:], start=start + 1)
                          if x["kind"] == "deliver" and x["dst"] == lead
                          and x["msg"]["type"] == "ACK-NEWLEADER"), len(events) + 1)
        synced = {x["dst"] for x in events[start:first_ack - 1] if x["kind"] == "deliver"
                  and x["src"] == lead and x["msg"]["type"] == "SYNC"}
        if len(fol) < 2 or not set(fol) <= synced:
            continue  # one follower, or the model too synchronises one after its quorum
        # a real leader that has its quorum of NEWLEADER ACKs sets its last zxid to the new
        # epoch's (Leader.lead, "setting last processed zxid"): a follower at zxid 0 whose
        # ACKEPOCH it reads after that gets a snapshot (LearnerHandler.syncFollower), where the
        # model's, which synchronises them all first, sends a DIFF. So their NEWLEADER ACKs
        # wait until every one of them has handled NEWLEADER, and then go together.
        ids = [server_id(i) for i in fol]
        later = {server_id(i) for k, (i, ack) in late.items()
                 if e["step"] <= k <= e["upto"] and (ack is None or ack > e["upto"])}
        go = [s_ for s_ in ids if s_ not in later]
        e["ops"][:0] = [{"op": "hold", "server": s_, "point": "newleader-ack"} for s_ in go]
        e["ops"] += [{"op": "release", "server": s_, "point": "newleader-ack",
                      "after_held": ids} for s_ in go]


def _unchecked(entries: list, viol: dict | None) -> None:
    """From a failure on, the failing servers do what the implementation does then (throw and
    drop the leader, give up leading), which the model does not follow: not compared (the links
    still follow the model's roles)."""
    if viol and viol["property"] in FAILURES:
        for e in entries:
            if e["upto"] >= viol["step"]:
                for i in viol.get("nodes", ()):
                    x = e["expect"].get(str(server_id(i)))
                    if x is not None:
                        x["unchecked"] = f"{viol['property']} at step {viol['step']}"


def _document(entries: list, n: int, trace: TraceFile, run: Replayed, source: str | None,
              arms: dict, late_syncs: bool = False) -> dict:
    out = {
        "format": FORMAT, "version": VERSION, "servers": n,
        "source": {"trace": source, "model": trace.model, "steps": len(run.events),
                   "violation": trace.violation, "final_sha256": run.final_sha256},
        "entries": entries,
    }
    limits = {}
    if any(o["op"] == "hold" and o["point"] in ("sync-append", "sync-commit")
           for e in entries for o in e["ops"]):  # a late SyncThread's span is such a hold too
        # a connected follower whose SyncThread the trace keeps slow (late, or holding what a
        # crash loses or a leaked thread writes late) is dropped by a real leader once a
        # proposal has waited syncLimit ticks for its ACK (3.8.0 LearnerHandler.ping,
        # SyncLimitCheck: "Closing connection to peer due to transaction timeout"; Leader.lead's
        # "Not sufficient followers synced"), which the model has no timer for: the schedule's
        # entries must run within it. At 5 ticks (1 s) the two were still linked when the
        # leader of ZOOKEEPER-4712's trace gave up on its held follower, and on a loaded
        # machine they elected each other before the next entry cut them apart
        limits["syncLimit"] = SLOW_LIMIT
    if any(x[1] in ("newleader-ack", "ackepoch", "learner-sync")
           for lst in arms.values() for x in lst):
        # likewise a NEWLEADER ACK (or an ACKEPOCH) the trace keeps late: LearnerHandler.run
        # reads it with the socket's timeout at initLimit ticks (LearnerMaster.syncTimeout; the
        # LearnerCnxAcceptor's setSoTimeout for ACKEPOCH) and drops the follower; and a learner
        # whose synchronisation the leader holds reads it with the same timeout
        # (Learner.connectToLeader) and gives up
        limits["initLimit"] = SLOW_LIMIT
    if late_syncs:
        # a learner whose synchronisation the leader holds while it broadcasts
        # (`_sent_at_release`) and whose NEWLEADER ACK comes entries later: the leader counts
        # it as synced only until initLimit + syncLimit of its ticks (half a tickTime each)
        # after its LearnerHandler started, as long as it reads nothing from it
        # (release-3.8.0-1 LearnerHandler.run line 465, Leader.getTickOfInitialAckDeadline,
        # LearnerHandler.synced; Leader.lead: "Not sufficient followers synced"): 15 s at 75,
        # which such a schedule's entries outlast
        limits["initLimit"] = SLOWER_INIT_LIMIT
    if limits:
        out["limits"] = limits
    return out


def _eager_writes(entries: list) -> list:
    """A write to a leader the model keeps leading without a quorum goes out with the entry
    before it, without waiting for that entry's state: a real leader gives up within syncLimit
    ticks, which is about as long as the other servers take to show a cut (models/zk D10: the
    model's leader leads on until its `lost` step). A hold of another server's thread in the
    same entry goes with it (armed an entry early: it holds nothing until that thread gets
    there)."""
    out = []
    for e in entries:
        prev = out[-1] if out else None
        writes = [o for o in e["ops"] if o["op"] == "write"]
        held = {o["server"] for o in e["ops"] if o["op"] == "hold"}
        if (prev is not None and writes
                and all(o["op"] in ("write", "hold") for o in e["ops"])
                and not held & {o["server"] for o in writes}
                and not e.get("before")
                and all("looking" in prev["expect"][str(o["server"])]["role"]
                        and "leading" in prev["expect"][str(o["server"])]["role"]
                        for o in writes)):
            prev["ops"] = prev["ops"] + e["ops"]
            prev["upto"] = e["upto"]
            prev["events"] = prev["events"] + e["events"]
            prev["expect"] = e["expect"]
            continue
        out.append(e)
    return out


# --- reading a schedule the user may have edited --------------------------------------------

def _fail(where: str, why: str):
    raise UsageError(f"malformed schedule: {where}: {why}")


def _int(obj: dict, key: str, where: str, lo: int = 0, hi: int = 1 << 62) -> int:
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        _fail(where, f"{key!r} must be an integer from {lo} to {hi}")
    return v


def validate(data) -> dict:
    """Check a schedule before anything runs: one-line errors (exit 2), never a traceback."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"not a zabmc schedule (no \"format\": \"{FORMAT}\")")
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # `true` is no version 1
        raise UsageError(f"unsupported schedule version {data.get('version')!r} (this zabmc "
                         f"reads version {VERSION})")
    n = _int(data, "servers", "header", 1, 9)
    limits = data.get("limits", {})
    if not isinstance(limits, dict) or set(limits) - {"syncLimit", "initLimit"}:
        _fail("header", "'limits' may only set syncLimit and initLimit")
    for key in limits:
        _int(limits, key, "header", 1, 1000)
    entries = data.get("entries")
    if not isinstance(entries, list) or not entries:
        _fail("header", "'entries' must be a non-empty list")
    for k, e in enumerate(entries):
        where = f"entry {k}"
        if not isinstance(e, dict):
            _fail(where, "not an object")
        # the model steps the entry stands for: `step` (its first; null: none of the model's)
        # and `upto` (its last), as `from_trace` writes them; a mismatch and a write name them
        if e.get("step") is not None:
            _int(e, "step", where)
        if "upto" in e or e.get("step") is None:
            _int(e, "upto", where, e.get("step") or 0)
        events = e.get("events")
        if not (isinstance(events, list) and events and all(isinstance(x, str) for x in events)):
            _fail(where, "'events' must be a non-empty list of the model's event texts")
        ops = e.get("ops", [])
        if not isinstance(ops, list):
            _fail(where, "'ops' must be a list")
        for op in ops:
            if not isinstance(op, dict) or op.get("op") not in OPS:
                _fail(where, f"an op must be one of {', '.join(OPS)}")
            if op["op"] == "links":
                cut = op.get("cut")
                if not isinstance(cut, list) or not all(
                        isinstance(p, list) and len(p) == 2 and all(
                            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= n
                            for x in p) and p[0] != p[1] for p in cut):
                    _fail(where, f"'cut' must be a list of pairs of distinct servers 1..{n}")
            else:
                _int(op, "server", where, 1, n)
            if op["op"] in ("hold", "release"):
                from .hooks import POINTS
                if op.get("point") not in POINTS:
                    _fail(where, f"unknown hook point {op.get('point')!r} (known: "
                                 f"{', '.join(POINTS)})")
                keyed = POINTS[op["point"]].keyed and op["op"] == "hold"
                z = op.get("zxid")
                if keyed != (z is not None) or z is not None and not (
                        isinstance(z, str) and 0 < len(z) <= 16
                        and all(c in "0123456789abcdef" for c in z)):
                    _fail(where, f"a hold at {op['point']} names "
                                 + ("its packet's zxid in hex ('zxid')" if keyed else "no zxid"))
            if "after_held" in op and not (
                    op["op"] in ("hold", "release") and isinstance(op["after_held"], list)
                    and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= n
                            for x in op["after_held"])):
                _fail(where, f"'after_held' is a hold's or a release's list of servers 1..{n}")
            if "fails" in op and not (op["op"] == "start" and op["fails"] in FAILURES):
                _fail(where, f"'fails' is a start's failure property, one of {', '.join(FAILURES)}")
            if op["op"] == "write":
                p = op.get("path")
                if not isinstance(p, str) or not p.startswith("/") or len(p) > 200 \
                        or p.count("/") != 1 or "\x00" in p:
                    _fail(where, "a write's 'path' must be a top-level znode path like /zab-0")
                if not isinstance(op.get("data", ""), str):
                    _fail(where, "a write's 'data' must be a string")
        for key in ("before", "expect"):
            _check_expect(e.get(key), where, n)
        if "pause_ms" in e:
            _int(e, "pause_ms", where, 0, 60000)
        if e.get("await") not in (None, "synced"):
            _fail(where, "'await' can only be \"synced\"")
    return data


def _check_expect(exp, where: str, n: int) -> None:
    if exp is not None:
        if not isinstance(exp, dict):
            _fail(where, "'expect' must be an object")
        for s, x in exp.items():
            if s not in {str(i) for i in range(1, n + 1)} or not isinstance(x, dict):
                _fail(where, f"'expect' keys are servers 1..{n}")
            roles = x.get("role")
            if not isinstance(roles, list) or not roles or not set(roles) <= set(ROLES):
                _fail(where, f"an expected role is a list of {', '.join(ROLES)}")
            if not isinstance(x.get("unchecked", ""), str):
                _fail(where, "'unchecked' says why, as a string")
            if "syncs" in x and not (isinstance(x["syncs"], list) and all(
                    m in ("diff", "trunc", "snap") for m in x["syncs"])):
                _fail(where, "'syncs' is a list of diff, trunc and snap")
            for key in ("accepted_epoch", "current_epoch"):
                _int(x, key, where, 0, (1 << 31))
            if x.get("phase", "broadcast") != "broadcast":
                _fail(where, "an expected 'phase' can only be \"broadcast\"")
            for key in ("disk", "disk_ahead"):
                d = x.get(key, [])
                if not isinstance(d, list) or not all(
                        isinstance(t, list) and len(t) == 3 and isinstance(t[0], int)
                        and isinstance(t[1], int) and isinstance(t[2], str) for t in d):
                    _fail(where, f"'{key}' must be a list of [epoch, counter, path]")


def text(schedule: dict) -> str:
    """A schedule as its file holds it (`zabmc real --save-schedule`, `export --format
    zookeeper`); the command line writes it through `zabmc.core.files.write`."""
    return json.dumps(schedule, indent=1) + "\n"
