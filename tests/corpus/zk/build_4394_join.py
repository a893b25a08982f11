"""Build tests/corpus/zk/zookeeper-4394-join.trace.json through the zk kernel, step by step.

ZOOKEEPER-4394 with a follower that joins an established leader. The breadth-first run
(tests/corpus/zk/zookeeper-4394.trace.json) keeps a follower in the middle of its discovery while
the leader proposes, which real servers finish in milliseconds on an open link. Here the follower
joins after the proposal instead:

- epoch 1: node 2 leads nodes 0 and 1, and zab-0 (1.1) is committed everywhere (so that node
  1's last zxid is in the leader's committed log and a real leader sends it a DIFF too);
- node 1 crashes; node 2 proposes zab-1 (1.2), which node 0 queues for its SyncThread and has
  not yet written or acknowledged;
- node 1 restarts and joins again. The leader's synchronisation sends it an empty DIFF, then
  1.2 as an outstanding PROPOSAL (`Leader.startForwarding`), then NEWLEADER; node 1 hands 1.2
  to its SyncThread, empties packetsNotCommitted, and acknowledges NEWLEADER, an ACK the leader
  has not read yet;
- node 0 writes 1.2 and acknowledges it; the leader commits 1.2 and sends COMMIT to node 1, whose
  `Learner.syncWithLeader` is still before UPTODATE: it looks the COMMIT up in the empty
  packetsNotCommitted and throws a NullPointerException (`sync-exception`, event 37).

`zabmc real` realises it on Debian's 3.8.0 (tests/test_real_run.py) by holding node 0's
SyncThread until `log 0` (`sync-commit`), node 1's SyncThread to the end (it never writes in the
trace), and node 1's QuorumPeer thread before NEWLEADER's ACK until the COMMIT is on its way
(`newleader-ack`).

Each step names its event; `do` checks it is the one enabled event that matches, so the file is
what the kernel does. Run: python tests/corpus/zk/build_4394_join.py [OUT].
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import ESTABLISH, INVARIANTS, Builder, save_built  # noqa: E402

MODEL = "zk"
CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 0,
          "max_heartbeats": 0, "proposals": 2, "depth": 60, "max_crashes": 1}


def build():
    b = Builder(MODEL, CONFIG, INVARIANTS + ["sync-exception"])
    b.first_write_everywhere()  # epoch 1, zab-0 (1.1) committed by every node
    # node 1 crashes; the leader keeps node 0
    b.do(kind="crash", node=1)
    b.do(kind="action", action=["lost", 2, 1])
    # zab-1 (1.2) proposed; node 0 queues it
    b.do(kind="propose", node=2)
    b.do(kind="deliver", src=2, dst=0, msg="PROPOSAL")
    # node 1 restarts and joins again: an empty DIFF, the outstanding PROPOSAL 1.2, NEWLEADER;
    # its ACK is on its way
    b.do(kind="restart", node=1)
    b.do(kind="action", action=["join", 1, 2])
    b.settle({(1, 2), (2, 1)}, ESTABLISH[:5])
    # node 0 writes and acknowledges 1.2; the leader commits it; node 1 reads the COMMIT
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=2, msg="ACK")
    b.do(kind="deliver", src=2, dst=1, msg="COMMIT")
    return b.trace()


if __name__ == "__main__":
    save_built(build, "zookeeper-4394-join")
