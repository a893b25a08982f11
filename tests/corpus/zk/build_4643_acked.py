"""Build tests/corpus/zk/zookeeper-4643-acked.trace.json: ZOOKEEPER-4643 with a write the client
saw acknowledged.

The run of build_4646_acked.py, except that node 0's NEWLEADER ACK of epoch 2 never reaches the
leader: node 0 writes currentEpoch 2 and hands zab-1 to its SyncThread at NEWLEADER, and crashes
before either the write or its ACK gets out (3.8.0's Learner.syncWithLeader writes currentEpoch
before the transactions are on disk; ZOOKEEPER-4643, fixed by PR #2111 in 3.8.5 and 3.9.2, then
PR #2152 in 3.9.3). Restarted with currentEpoch 2 and without zab-1, it beats node 1 (currentEpoch
1, zab-1 on disk) and truncates the acknowledged write from it. The breadth-first 4643 run
(zookeeper-4643.trace.json) synchronises a follower at zxid 0, which a real leader sends a
snapshot; this one starts with a write every server commits.

Run: python tests/corpus/zk/build_4643_acked.py [OUT].
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import build as build_4646, save_built  # noqa: E402


def build():
    return build_4646("zk", newleader_acked=False)


if __name__ == "__main__":
    save_built(build, "zookeeper-4643-acked")
