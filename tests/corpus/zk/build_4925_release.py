"""Build ZOOKEEPER-4925's run on the release models zk-3.9.3 and zk-3.9.4 (the THREADS stack,
models/zk/releases.py), step by step through the model, so that `zabmc real --release 3.9.3`
drives three real servers through it (`do` checks each event is the one enabled that matches, so
the file is what the model does; each owed step of the release's layers, `newleader`,
`ack-newleader` and `epoch`, is taken as soon as it is enabled, as a real server's thread takes
it at once).

The story is tests/corpus/zk/build_4925.py's (`zk-3.9.3-store`), in a run real servers can be
driven through:

- epoch 1: node 2 leads nodes 0 and 1, every follower through each message before either goes
  on (a real leader that has its quorum sends a follower at zxid 0 a snapshot, where the model
  sends a DIFF only before it); zab-0 (1.1) is committed by all three, so node 1 holds 1.1 in
  its in-memory committed log (a broadcast COMMIT: `processTxn(Request)`);
- nodes 0 and 1 time out (their links to node 2 cut), then zab-1 is written to node 2, which
  still leads without its quorum: 1.2 reaches its log only (the store trace proposes first and
  drops the PROPOSALs on closed connections; a real leader sends them at once on open links);
  node 2 gives up (`fastForwardDataBase` applies 1.2 and adds it to its committed log);
- epoch 2: node 2 leads node 1 (its vote, last zxid 1.2, wins) and sends it 1.2 by DIFF as
  committed: at NEWLEADER node 1 appends, applies (3.9.3: `processTxn(TxnHeader, Record)`,
  outside `ZKDatabase.committedLog`) and writes 1.2, then currentEpoch 2, then its ACK
  (release-3.9.3 Learner.syncWithLeader 764-805): `committed-log-hole` at node 1;
- node 1 times out, keeping its database; node 2 notices;
- epoch 3: node 1 (currentEpoch 2) leads node 0 (currentEpoch 1, last zxid 1.1) and builds the
  DIFF from its committed log [1.1]: an empty DIFF, though node 1 applied 1.2
  (`sync-loses-committed`, at node 0's ACKEPOCH);
- zab-2 (3.1) written to node 1 and committed by node 0: node 0 delivers 3.1 without 1.2, which
  node 1 delivered before it (`agreement`, `total-order` on the servers' data).

On zk-3.9.4 (PR #2254: the DIFF's committed transactions applied as Requests, into the committed
log) the same steps make epoch 3's DIFF carry 1.2: no property is violated.

Run: python tests/corpus/zk/build_4925_release.py [MODEL [OUT]] (MODEL zk-3.9.3, the default,
or zk-3.9.4) writes tests/corpus/zk/zookeeper-4925-MODEL.trace.json (zk-3.9.4, which has the fix:
zookeeper-4925-zk-3.9.4-fixed.trace.json), or OUT.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2]))  # this repository's zabmc and models, not another's

from build_4646_acked import INVARIANTS, Builder, write_trace  # noqa: E402

CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 4,
          "max_heartbeats": 0, "proposals": 3, "depth": 60, "max_crashes": 0}
#: the steps a release's threads take at once: the leader's NEWLEADER (F9), the follower's
#: currentEpoch (K2) and NEWLEADER ACK (F1); a leaked SyncThread's flush never comes (PR #2154)
OWED = ("newleader", "epoch", "ack-newleader", "flush")
HANDSHAKE = ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC", "NEWLEADER", "ACK-NEWLEADER",
             "UPTODATE")
TO_LEADER = ("FOLLOWERINFO", "ACKEPOCH", "ACK-NEWLEADER")


class ReleaseBuilder(Builder):
    def owed(self) -> None:
        while True:
            x = next((x for x in self.env.successors(self.s) if x[0].kind == "action"
                      and self._json(x[0])["action"][0] in OWED), None)
            if x is None:
                return
            Builder.do(self, kind="action", action=self._json(x[0])["action"])

    def do(self, **want) -> None:
        self.owed()
        Builder.do(self, **want)
        self.owed()

    def handshake(self, leader: int, followers) -> None:
        """Each message of the handshake to every follower before the next message."""
        for typ in HANDSHAKE:
            for f in followers:
                src, dst = (f, leader) if typ in TO_LEADER else (leader, f)
                self.do(kind="deliver", src=src, dst=dst, msg=typ)


def epoch1_committed(b: ReleaseBuilder) -> None:
    """Epoch 1: node 2 leads nodes 0 and 1; zab-0 (1.1) committed by all three."""
    every = {(a, c) for a in range(3) for c in range(3) if a != c}
    b.do(kind="action", action=["elect", 2, 0b111])
    b.handshake(2, (0, 1))
    b.do(kind="propose", node=2)
    b.settle(every, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.do(kind="action", action=["log", 1])
    b.settle(every, ("ACK", "COMMIT"))


def build(model: str = "zk-3.9.3") -> ReleaseBuilder:
    b = ReleaseBuilder(model, CONFIG, INVARIANTS + ["sync-loses-committed"])
    epoch1_committed(b)
    # zab-1 (1.2) reaches only the leader's log: its followers are cut off first
    b.do(kind="timeout", node=0)
    b.do(kind="timeout", node=1)
    b.do(kind="propose", node=2)
    b.do(kind="timeout", node=2)  # fastForwardDataBase: 1.2 applied, in its committed log
    b.do(kind="deliver", src=2, dst=0, msg="PROPOSAL")  # on closed connections: ignored
    b.do(kind="deliver", src=2, dst=1, msg="PROPOSAL")
    # epoch 2: node 2 leads node 1 and sends it 1.2 by DIFF as committed (applied outside
    # node 1's committed log on 3.9.3: committed-log-hole)
    b.do(kind="action", action=["elect", 2, 0b110])
    b.handshake(2, (1,))
    # node 1 gives up its leader, keeping its database; node 2 notices
    b.do(kind="timeout", node=1)
    b.do(kind="action", action=["lost", 2, 1])
    # epoch 3: node 1 leads node 0, DIFF from its committed log [1.1] (sync-loses-committed)
    b.do(kind="action", action=["elect", 1, 0b011])
    b.handshake(1, (0,))
    # zab-2 (3.1) committed by nodes 0 and 1: node 0 delivers it without 1.2
    b.do(kind="propose", node=1)
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=1, msg="ACK")
    b.do(kind="deliver", src=1, dst=0, msg="COMMIT")
    return b


def write(model: str = "zk-3.9.3", path: str | None = None) -> str:
    name = f"zookeeper-4925-{model}" + ("-fixed" if model == "zk-3.9.4" else "")
    return write_trace(
        build(model).trace(),
        f"written by hand through the model (issue #63 item 4): python "
        f"tests/corpus/zk/build_4925_release.py {model}; not a search's run: it "
        "follows tests/corpus/zk/build_4925.py's story (zk-3.9.3-store) in steps "
        "real servers can be driven through (the builder's docstring says which)",
        path or str(HERE / f"{name}.trace.json"))


if __name__ == "__main__":
    write(*sys.argv[1:3])
