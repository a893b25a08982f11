"""Build tests/corpus/zk/zookeeper-4646-acked.trace.json through the zk kernel, step by step.

ZOOKEEPER-4646 with a write the client saw acknowledged: a follower that synchronises by DIFF
acknowledges NEWLEADER before its SyncThread wrote the DIFF's transactions (Learner.syncWithLeader
in 3.7.0-3.9.2 hands them to FollowerZooKeeperServer.logRequest, then sends the ACK), crashes,
and comes back with the new currentEpoch but without them; with that epoch it wins the next
election and truncates the one server that still had them.

The breadth-first searches reach the bug with an empty history (tests/corpus/zk/zookeeper-4646),
where the real leader would send a SNAP instead of a DIFF (LearnerHandler.syncFollower: a learner
at zxid 0 is never inside the leader's committed log), which a real follower writes to disk before
its ACK. This trace starts with one write every server commits, so that the follower's last zxid
is inside the leader's committed log and the real leader sends the DIFF the model does.

Each step below names the event; `do` checks it is the one enabled event that matches, so the
file is what the kernel does. Run: python tests/corpus/zk/build_4646_acked.py [OUT] [MODEL].
"""

from __future__ import annotations

import sys

from zabmc.explore.trace import Trace, env_of

CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 1,
          "max_heartbeats": 0, "proposals": 3, "depth": 60, "max_crashes": 3}
INVARIANTS = ["integrity", "total-order", "agreement", "prefix", "local-primary-order",
              "global-primary-order", "primary-integrity", "leadership", "sane-history"]
ESTABLISH = ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC", "NEWLEADER", "ACK-NEWLEADER",
             "UPTODATE", "PROPOSAL", "ACK", "COMMIT")


class Builder:
    def __init__(self, model: str, config: dict = CONFIG, invariants: list = INVARIANTS):
        self.env = env_of(model, config, invariants)
        self.s, v = self.env.initial()
        self.states, self.events = [self.s], []
        self.first, self.first_step = v, (0 if v is not None else None)

    def _json(self, ev) -> dict:
        return ev.to_json(self.env.model)

    def do(self, **want) -> None:
        def ok(j):
            return all((j.get("msg", {}).get("type") == x) if k == "msg" else j.get(k) == x
                       for k, x in want.items())
        found = [x for x in self.env.successors(self.s) if ok(self._json(x[0]))]
        if len(found) != 1:
            raise SystemExit(f"step {len(self.events) + 1}: {len(found)} events match {want}")
        ev, self.s, v = found[0]
        self.events.append(ev)
        self.states.append(self.s)
        if self.first is None and v is not None:
            self.first, self.first_step = v, len(self.events)

    def settle(self, links, types) -> None:
        """Deliver messages of `types` on `links` while any is enabled."""
        while True:
            for ev, _, _ in self.env.successors(self.s):
                j = self._json(ev)
                if (j["kind"] == "deliver" and (j["src"], j["dst"]) in links
                        and j["msg"]["type"] in types):
                    self.do(kind="deliver", src=j["src"], dst=j["dst"], msg=j["msg"]["type"])
                    break
            else:
                return

    def trace(self) -> Trace:
        return Trace(self.env, self.events, self.states, self.first, self.first_step)

    def establish(self, leader: int, followers, own_acks: bool | str = False) -> None:
        """A leader and several followers through discovery and synchronisation, every follower
        through each message before any goes on to the next, so that all are synchronised
        before the leader has its quorum of NEWLEADER ACKs: a real leader that has it sets its
        last zxid to the new epoch's (3.8.0 Leader.lead, "setting last processed zxid") and
        sends a follower at zxid 0 that it synchronises later a snapshot, where the model sends
        a DIFF. `own_acks`: NEWLEADER's ACK is a step of its own, the action `ack-newleader`
        (the threads' grain), or the action it names (`newleader`: Remix's MSPEC_2 grain,
        models/zk/mspec2.py)."""
        for typ in ESTABLISH[:4]:
            for f in followers:
                src, dst = (f, leader) if typ in ("FOLLOWERINFO", "ACKEPOCH") else (leader, f)
                self.do(kind="deliver", src=src, dst=dst, msg=typ)
        for f in followers:
            self.do(kind="deliver", src=leader, dst=f, msg="NEWLEADER")
            if own_acks:
                ack = own_acks if isinstance(own_acks, str) else "ack-newleader"
                self.do(kind="action", action=[ack, f])
        for f in followers:
            self.do(kind="deliver", src=f, dst=leader, msg="ACK-NEWLEADER")
        for f in followers:
            self.do(kind="deliver", src=leader, dst=f, msg="UPTODATE")

    def first_write_everywhere(self, own_acks: bool | str = False) -> None:
        """Epoch 1: node 2 leads nodes 0 and 1 (the greatest id wins among equals), and zab-0
        (1.1) is committed by all three, so that each follower's last zxid is inside the
        leader's committed log and a real leader synchronises it later by DIFF, as the model
        does (LearnerHandler.syncFollower sends a learner at zxid 0 a snapshot)."""
        every = {(a, c) for a in range(3) for c in range(3) if a != c}
        self.do(kind="action", action=["elect", 2, 0b111])
        self.establish(2, (0, 1), own_acks)
        self.do(kind="propose", node=2)
        self.settle(every, ("PROPOSAL",))
        self.do(kind="action", action=["log", 0])
        self.do(kind="action", action=["log", 1])
        self.settle(every, ("ACK", "COMMIT"))


def origin(script: str, *args: str) -> str:
    """The command that writes a corpus trace: its builder, run from the repository's root."""
    import os
    return " ".join(["python", f"tests/corpus/zk/{os.path.basename(script)}", *args])


def save_built(build, name: str) -> None:
    """A builder's command line: `python BUILDER [OUT]` writes tests/corpus/zk/NAME.trace.json
    (or OUT) and says how long it is and what it violates first."""
    import os
    t = build()
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), f"{name}.trace.json")
    t.origin = origin(sys.argv[0])
    t.save(out)
    v = t.violation
    print(f"{out}: {len(t.events)} steps; first violation: "
          f"{v.property if v else None} at step {t.violation_step}")


def write_trace(t, origin_text: str, out: str) -> str:
    """Write the built trace `t` to `out` with `origin_text` as its origin (after the format
    header, as Trace.to_json places it), and say how long it is and what it violates first."""
    import json
    from pathlib import Path

    doc = t.to_json()
    head = {k: doc.pop(k) for k in ("format", "version")}
    head["origin"] = origin_text
    Path(out).write_text(json.dumps({**head, **doc}, indent=1) + "\n")
    v = t.violation
    print(f"{out}: {len(t.events)} steps; first violation: "
          f"{v.property if v else None} at step {t.violation_step}")
    return out


def build(model: str = "zk", newleader_acked: bool = True) -> Trace:
    """The run; with `newleader_acked` False, node 0's NEWLEADER ACK never reaches the leader
    (its crash closes the connection first): ZOOKEEPER-4643's shape, currentEpoch on disk
    without the transactions and no ACK sent (build_4643_acked.py)."""
    b = Builder(model)
    b.first_write_everywhere()  # epoch 1, zab-0 (1.1) committed by every node
    # node 0 loses its leader; the leader keeps node 1
    b.do(kind="timeout", node=0)
    b.do(kind="action", action=["lost", 2, 0])
    # zab-1 committed by nodes 2 and 1: the client's write is acknowledged
    b.do(kind="propose", node=2)
    b.settle({(2, 1)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 1])
    b.settle({(2, 1), (1, 2)}, ("ACK", "COMMIT"))
    # node 1 crashes: the leader has no quorum
    b.do(kind="crash", node=1)
    b.do(kind="action", action=["lost", 2, 1])
    # epoch 2: node 2 leads node 0, which gets zab-1 by DIFF and acknowledges NEWLEADER before
    # its SyncThread writes it
    b.do(kind="action", action=["elect", 2, 0b101])
    b.settle({(0, 2), (2, 0)}, ESTABLISH[:6] if newleader_acked else ESTABLISH[:5])
    # node 0 crashes before the write; the leader goes too; nodes 0 and 1 come back
    b.do(kind="crash", node=0)
    b.do(kind="crash", node=2)
    b.do(kind="restart", node=0)
    b.do(kind="restart", node=1)
    # epoch 3: node 0 (currentEpoch 2) beats node 1 (currentEpoch 1, zab-1 on disk) and
    # truncates zab-1 from it
    b.do(kind="action", action=["elect", 0, 0b011])
    b.settle({(0, 1), (1, 0)}, ESTABLISH)
    b.do(kind="propose", node=0)
    return b.trace()


if __name__ == "__main__":
    model = sys.argv[2] if len(sys.argv) > 2 else "zk"
    t = build(model)
    name = {"zk": "zookeeper-4646-acked", "zk-fixed": "zookeeper-4646-acked-fixed"}.get(model)
    if name:  # the corpus's two runs say the command that writes them
        t.origin = origin(__file__, f"tests/corpus/zk/{name}.trace.json",
                          *([model] if model != "zk" else []))
    if len(sys.argv) > 1 and sys.argv[1]:
        t.save(sys.argv[1])
    v = t.violation
    print(f"{len(t.events)} steps; first violation: "
          f"{v.property if v else None} at step {t.violation_step}")
