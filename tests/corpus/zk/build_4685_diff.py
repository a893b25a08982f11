"""Build tests/corpus/zk/zookeeper-4685-diff.trace.json through the zk-3.7.0-threads kernel, step by step.

ZOOKEEPER-4685 on a synchronisation a real leader sends as a DIFF. The breadth-first run
(tests/corpus/zk/zookeeper-4685.trace.json) synchronises a follower at zxid 0, which a real
leader sends a snapshot (LearnerHandler.syncFollower: a learner below the committed log gets SNAP
when the log does not hold its zxid), and a follower that gets a snapshot queues nothing for its
SyncThread. Here every server first commits zab-0 (1.1), so the follower's last zxid is inside
the leader's committed log:

- epoch 1: node 2 leads nodes 0 and 1; zab-0 (1.1) is committed everywhere;
- node 0 times out; node 2 commits zab-1 (1.2) with node 1; then node 2 times out too, and
  node 1, which notices, stays out of what follows;
- epoch 2: node 2 (last zxid 1.2) leads node 0 (1.1); the DIFF carries 1.2, committed. At
  NEWLEADER node 0 writes currentEpoch 2 and queues 1.2 for its SyncThread, which writes it and
  acknowledges it before the QuorumPeer thread acknowledges NEWLEADER (3.7.0's
  SendAckRequestProcessor acknowledges every transaction; 3.8.0's is the same code);
- the leader reads ACK 1.2 where it waits for NEWLEADER's: `Leader.waitForNewLeaderAck`
  discards it and never counts node 0 (`leader-unexpected-ack`, event 43). Without node 1 it has
  no quorum, and gives up after initLimit ticks.

`zabmc real` realises it on Debian's 3.8.0 with the `newleader-ack` hook holding node 0's
QuorumPeer thread before it writes NEWLEADER's ACK (tests/test_real_run.py).

Each step names its event; `do` checks it is the one enabled event that matches, so the file is
what the kernel does. Run: python tests/corpus/zk/build_4685_diff.py [OUT].
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import ESTABLISH, INVARIANTS, Builder, save_built  # noqa: E402

MODEL = "zk-3.7.0-threads"
CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 2,
          "max_heartbeats": 0, "proposals": 2, "depth": 60, "max_crashes": 0}


def build():
    b = Builder(MODEL, CONFIG, INVARIANTS + ["leader-unexpected-ack"])
    b.first_write_everywhere(own_acks=True)  # epoch 1, zab-0 (1.1) committed by every node
    # node 0 times out; zab-1 (1.2) committed by nodes 2 and 1; node 2 times out
    b.do(kind="timeout", node=0)
    b.do(kind="action", action=["lost", 2, 0])
    b.do(kind="propose", node=2)
    b.settle({(2, 1), (1, 2)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 1])
    b.settle({(2, 1), (1, 2)}, ("ACK", "COMMIT"))
    b.do(kind="timeout", node=2)
    b.do(kind="action", action=["lost", 1, 2])  # node 1 notices, and stays out of epoch 2
    # epoch 2: node 2 leads node 0; the DIFF carries 1.2; node 0's SyncThread acknowledges it
    # before node 0 acknowledges NEWLEADER
    b.do(kind="action", action=["elect", 2, 0b101])
    b.settle({(0, 2), (2, 0)}, ESTABLISH[:5])
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=2, msg="ACK")
    return b.trace()


if __name__ == "__main__":
    save_built(build, "zookeeper-4685-diff")
