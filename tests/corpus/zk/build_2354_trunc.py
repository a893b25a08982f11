"""Build tests/corpus/zk/zookeeper-2354-trunc.trace.json: ZOOKEEPER-2354 in `zk-3.7.0-epoch`.

A follower synchronised by TRUNC applies the leader's committed transactions in memory and
writes them with the snapshot NEWLEADER takes (3.7.0 and 3.8.0 Learner.syncWithLeader, the
`snapshotNeeded` branch), and only then writes the new currentEpoch. Node 2, epoch 1's leader,
logged zab-1 (1.2) after both followers had given up on it; epoch 2's leader, node 1, commits
zab-2 (2.1) with node 0; node 2 joins, is truncated to 1.1 and applies 2.1, takes the snapshot, and crashes before
`QuorumPeer.setCurrentEpoch`. Restarted, its disk ends at 2.1 beside currentEpoch 1, and
`QuorumPeer.loadDataBase` refuses to start it ("The current epoch, 1, is older than the last
zxid, 8589934593").

A real 3.8.0 leader sends node 2 a snapshot where the model sends TRUNC to 1.1 and then 2.1: it
sends no TRUNC across an epoch boundary (LearnerHandler.queueCommittedProposals, lines 995-1001,
"Cannot send TRUNC to peer sid: 3 peer zxid is from different epoch"). A SNAP too is written at
NEWLEADER before currentEpoch, to the same disk, so `zabmc real` realises the trace (expecting
the snapshot): the restarted server exits.

Run: python tests/corpus/zk/build_2354_trunc.py [OUT].
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import CONFIG, ESTABLISH, Builder, save_built  # noqa: E402

INVARIANTS = ["integrity", "total-order", "agreement", "prefix", "local-primary-order",
              "global-primary-order", "primary-integrity", "leadership", "sane-history",
              "load-exception"]


def build():
    b = Builder("zk-3.7.0-epoch", config=dict(CONFIG, max_timeouts=2), invariants=INVARIANTS)
    b.first_write_everywhere(own_acks=True)  # epoch 1: node 2 leads, zab-0 (1.1) everywhere
    # zab-1 (1.2) only in the leader's log: both followers give up on the leader first (their
    # timeouts), and the leader, which has not yet noticed the second, takes the write alone
    b.do(kind="timeout", node=0)
    b.do(kind="action", action=["lost", 2, 0])
    b.do(kind="timeout", node=1)
    b.do(kind="propose", node=2)
    b.do(kind="action", action=["lost", 2, 1])
    b.do(kind="deliver", src=2, dst=1, msg="PROPOSAL")  # on the closed connection: ignored
    # epoch 2: node 1 leads node 0 and commits zab-2 (2.1) with it
    b.do(kind="action", action=["elect", 1, 0b011])
    b.establish(1, (0,), own_acks=True)
    b.do(kind="propose", node=1)
    b.settle({(1, 0)}, ("PROPOSAL",))
    b.do(kind="action", action=["log", 0])
    b.settle({(0, 1), (1, 0)}, ("ACK", "COMMIT"))
    # node 2 joins: TRUNC to 1.1, 2.1 applied in memory; NEWLEADER's snapshot, then a crash
    # before currentEpoch 2 is written; the restart's loadDataBase throws
    b.do(kind="action", action=["join", 2, 1])
    b.settle({(1, 2), (2, 1)}, ESTABLISH[:5])
    b.do(kind="crash", node=2)
    b.do(kind="restart", node=2)
    return b.trace()


if __name__ == "__main__":
    save_built(build, "zookeeper-2354-trunc")
