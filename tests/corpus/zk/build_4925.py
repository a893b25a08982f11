"""Build tests/corpus/zk/zookeeper-4925.trace.json through the zk-3.9.3-store kernel, step by step.

ZOOKEEPER-4925 (3.9.3 only): a follower synchronised by DIFF applies the transactions the DIFF
committed with `ZooKeeperServer.processTxn(TxnHeader, Record)`, which leaves them out of
`ZKDatabase.committedLog`; the database outlives its role change, and when that follower leads,
`LearnerHandler.syncFollower` sends a stale peer a DIFF from the committed log, past the hole.

Three nodes (models/zk/README.md, S10 reads it step by step):
- epoch 1: node 2 leads nodes 0 and 1; zab-0 (1.1) is committed by all, so node 1 holds 1.1 in
  its committed log (a broadcast COMMIT: processTxn(Request)) and node 0's last zxid is 1.1;
  zab-1 (1.2) reaches only the leader's own log;
- epoch 2: node 2 (1.2 on disk) leads node 1 and sends it 1.2 by DIFF as committed: node 1
  applies and writes it at NEWLEADER, outside its committed log (1.1 only);
- epoch 3: node 1 (currentEpoch 2) leads node 0 (currentEpoch 1) with the database it kept: node
  0's 1.1 lies within the committed log [1.1, 1.1], so the DIFF is built from it and is empty,
  though node 1 applied (and delivered) 1.2: `sync-loses-committed` at node 0's ACKEPOCH;
- node 0 acknowledges, node 1 is established, and zab-2 (3.1) committed by nodes 0 and 1 makes
  node 0 deliver 3.1 without 1.2, which node 1 delivered before it: `total-order`.

`do` checks each step is the one enabled event that matches, so the file is what the kernel
does. Run: python tests/corpus/zk/build_4925.py [OUT] [MODEL].
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import build_4646_acked as base  # noqa: E402  (its Builder)

CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 2,
          "max_heartbeats": 0, "proposals": 3, "depth": 60, "max_crashes": 0}
INVARIANTS = base.INVARIANTS + ["sync-loses-committed"]
ESTABLISH = base.ESTABLISH


class Builder(base.Builder):
    def __init__(self, model: str):
        super().__init__(model, CONFIG, INVARIANTS)


def build(model: str = "zk-3.9.3-store"):
    b = Builder(model)
    every = {(a, c) for a in range(3) for c in range(3) if a != c}
    # epoch 1: node 2 leads nodes 0 and 1 (the greatest id wins among equals)
    b.do(kind="action", action=["elect", 2, 0b111])
    b.settle(every, ESTABLISH)
    # zab-0 committed by everyone: 1.1 in node 1's committed log, node 0's last zxid
    b.do(kind="propose", node=2)
    b.settle(every, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.do(kind="action", action=["log", 1])
    b.settle(every, ("ACK", "COMMIT"))
    # zab-1 only in the leader's log; the leader gives up (fastForwardDataBase: 1.2 applied)
    b.do(kind="propose", node=2)
    b.do(kind="timeout", node=2)
    b.do(kind="action", action=["lost", 1, 2])
    b.do(kind="deliver", src=2, dst=1, msg="PROPOSAL")  # 1.2, on the closed connection: ignored
    # epoch 2: node 2 leads node 1, whose DIFF commits 1.2: applied outside the committed log
    b.do(kind="action", action=["elect", 2, 0b110])
    b.settle({(1, 2), (2, 1)}, ESTABLISH[:6])
    # node 1 gives up its leader, keeping its database; node 0 notices its leader moved on
    b.do(kind="timeout", node=1)
    b.do(kind="action", action=["lost", 0, 2])
    # epoch 3: node 1 leads node 0 and sends it an empty DIFF from its committed log
    b.do(kind="action", action=["elect", 1, 0b011])
    b.settle({(0, 1), (1, 0)}, ESTABLISH[:7])
    # zab-2: node 0 delivers 3.1 without 1.2
    b.do(kind="propose", node=1)
    b.settle({(1, 0)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.settle({(0, 1), (1, 0)}, ("ACK", "COMMIT"))
    return b.trace()


if __name__ == "__main__":
    model = sys.argv[2] if len(sys.argv) > 2 else "zk-3.9.3-store"
    t = build(model)
    if model == "zk-3.9.3-store":  # the corpus's run says the command that writes it
        t.origin = base.origin(__file__, "tests/corpus/zk/zookeeper-4925.trace.json")
    if len(sys.argv) > 1 and sys.argv[1]:
        t.save(sys.argv[1])
    v = t.violation
    print(f"{len(t.events)} steps; first violation: "
          f"{v.property if v else None} at step {t.violation_step}")
