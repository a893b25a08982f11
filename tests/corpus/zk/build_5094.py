"""Build tests/corpus/zk/zookeeper-5094.trace.json through the zk kernel, step by step.

ZOOKEEPER-5094 (an interrupted TRUNC synchronisation keeps memory ahead of the log; unfixed,
PR #2459 proposed) at the shutdown grain (models/zk/README.md, H3): a follower truncated by
its leader applies the synchronisation's committed transactions in memory (Learner.syncWithLeader
under TRUNC: writeToTxnLog is false until NEWLEADER's snapshot), times out before NEWLEADER, and
keeps them: `Learner.shutdown` calls `zk.shutdown(syncMode == SNAP)`, which is shutdown(false)
for TRUNC. Its next ACKEPOCH names them from memory, the leader sends nothing, and it
acknowledges NEWLEADER without them on disk (`ack-from-memory`); the leader's next proposal is
then written after a gap, a restart loads the log with the gap, and the follower, synchronised
from it, delivers the next commit without the transaction in the gap.

Each step names the event; `do` checks it is the one enabled event that matches, so the file is
what the kernel does. Run: python tests/corpus/zk/build_5094.py [OUT] [MODEL].
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build_4646_acked import CONFIG, ESTABLISH, INVARIANTS, Builder, origin  # noqa: E402

#: two timeouts (the leader of epoch 1, then the truncated follower), a crash, four proposals
BOUNDS = dict(CONFIG, max_timeouts=2, max_crashes=1, proposals=4)


def build(model: str = "zk-3.9.2-shutdown"):
    b = Builder(model, BOUNDS, INVARIANTS + ["ack-from-memory"])
    every = {(a, c) for a in range(3) for c in range(3) if a != c}
    # epoch 1: node 2 leads nodes 0 and 1; its proposal 1.1 reaches only its own log
    b.do(kind="action", action=["elect", 2, 0b111])
    b.settle(every, ESTABLISH)
    b.do(kind="propose", node=2)
    # node 2 gives up; its followers notice; nodes 0 and 1 elect node 1 (epoch 2)
    b.do(kind="timeout", node=2)
    b.do(kind="action", action=["lost", 0, 2])
    b.do(kind="action", action=["lost", 1, 2])
    b.settle({(2, 0), (2, 1)}, ("PROPOSAL",))  # 1.1 arrives on closed connections: ignored
    b.do(kind="action", action=["elect", 1, 0b011])
    b.settle({(0, 1), (1, 0)}, ESTABLISH)
    # 2.1 committed by nodes 1 and 0
    b.do(kind="propose", node=1)
    b.settle({(1, 0)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.settle({(0, 1), (1, 0)}, ("ACK", "COMMIT"))
    # node 2 joins; its last zxid 1.1 is not in node 1's log: TRUNC to 0.0, then 2.1 committed,
    # which node 2 applies in memory (no snapshot before NEWLEADER)
    b.do(kind="action", action=["join", 2, 1])
    b.settle({(2, 1), (1, 2)}, ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC"))
    # node 2 times out before NEWLEADER: its memory keeps 2.1, its disk is empty
    b.do(kind="timeout", node=2)
    b.do(kind="action", action=["lost", 1, 2])
    # it joins again: its ACKEPOCH names 2.1, the DIFF is empty, and it acknowledges NEWLEADER
    b.do(kind="action", action=["join", 2, 1])
    b.settle({(2, 1), (1, 2)}, ESTABLISH[:7])
    # 2.2: node 2 writes it after the gap where 2.1 should be; a crash and a restart load the gap
    b.do(kind="propose", node=1)
    b.settle({(1, 2)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 2])
    b.do(kind="crash", node=2)
    b.do(kind="action", action=["lost", 1, 2])
    b.do(kind="restart", node=2)
    # it loads a log with the gap (2.2 without 2.1), joins again, and names 2.2: the DIFF is empty
    b.do(kind="action", action=["join", 2, 1])
    b.settle({(2, 1), (1, 2)}, ESTABLISH[:7])
    # 2.3 committed: node 2 delivers 2.2 and 2.3 without 2.1
    b.do(kind="propose", node=1)
    b.settle({(1, 0), (1, 2)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.settle({(0, 1), (1, 0), (1, 2)}, ("ACK", "COMMIT"))
    return b.trace()


if __name__ == "__main__":
    model = sys.argv[2] if len(sys.argv) > 2 else "zk-3.9.2-shutdown"
    t = build(model)
    if model == "zk-3.9.2-shutdown":  # the corpus's run says the command that writes it
        t.origin = origin(__file__, "tests/corpus/zk/zookeeper-5094.trace.json")
    if len(sys.argv) > 1 and sys.argv[1]:
        t.save(sys.argv[1])
    v = t.violation
    print(f"{len(t.events)} steps; first violation: "
          f"{v.property if v else None} at step {t.violation_step}")
