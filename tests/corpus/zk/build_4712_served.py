"""Build tests/corpus/zk/zookeeper-4712-served.trace.json through the zk-3.7.0-shutdown kernel.

ZOOKEEPER-4712 on ZooKeeper 3.8.0's code (`zk-3.7.0-shutdown`: from release-3.7.0 to 3.8.0,
Learner, Follower, ZKDatabase, FileTxnLog, FileTxnSnapLog and LearnerHandler change only in
property names, metrics and log text), carried on until a client can read the result:

- node 1 leads epoch 1 with node 0; its proposal 1.1 (zab-0) reaches node 0, whose SyncThread
  takes it and has not yet appended it;
- node 0 times out. `Learner.shutdown` calls `ZooKeeperServer.shutdown(boolean)`, which stops
  the request processors but not `FollowerZooKeeperServer`'s SyncRequestProcessor: the thread
  keeps 1.1. Node 0's data tree never applied 1.1 (uncommitted), so its vote names 0.0; with
  currentEpoch 1 it leads epoch 2 with node 2 and commits 2.1 (zab-1);
- the leaked SyncThread writes 1.1 into the log after 2.1 (`flush 0`; `FileTxnLog.append` only
  warns "Current zxid ... is <= ...");
- node 0 crashes and restarts: `FileTxnSnapLog.fastForwardFromEdits` applies 1.1 after 2.1 (it
  logs "(highestZxid) > (next log)" and goes on). The model's first violation is here (event
  28: `prefix`, `global-primary-order`), as breadth-first search finds it (depth 28, the
  reports' "ZOOKEEPER-4712" section);
- then, so that the real servers serve what they hold: node 2 loses its leader, leads epoch 3
  (the greatest id among equal votes, 2.1 each) and synchronises node 0 by an empty DIFF. Node 0
  serves zab-0, a write no quorum accepted and node 2 never saw (`agreement` with node 2).

`zabmc real` realises it on Debian's ZooKeeper 3.8.0 with the `sync-append` hook holding node
0's SyncThread from the proposal to `flush 0` (tests/test_real_run.py).

Each step names its event; `do` checks it is the one enabled event that matches, so the file is
what the kernel does. Run: python tests/corpus/zk/build_4712_served.py [OUT].
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import ESTABLISH, INVARIANTS, Builder, save_built  # noqa: E402

MODEL = "zk-3.7.0-shutdown"
CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 1,
          "max_heartbeats": 0, "proposals": 2, "depth": 60, "max_crashes": 1}


def _establish(b: Builder, leader: int, follower: int) -> None:
    """One follower's discovery and synchronisation, its NEWLEADER ACK a step of its own (F1)."""
    links = {(leader, follower), (follower, leader)}
    b.settle(links, ESTABLISH[:5])
    b.do(kind="action", action=["ack-newleader", follower])
    b.settle(links, ("ACK-NEWLEADER", "UPTODATE"))


def build():
    b = Builder(MODEL, CONFIG, INVARIANTS)
    # epoch 1: node 1 leads node 0; node 2 is elsewhere
    b.do(kind="action", action=["elect", 1, 0b011])
    _establish(b, 1, 0)
    b.do(kind="propose", node=1)
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")  # queued for node 0's SyncThread
    b.do(kind="timeout", node=0)  # its shutdown leaves the SyncThread running with 1.1
    # epoch 2: node 0 (currentEpoch 1, vote 0.0) leads node 2
    b.do(kind="action", action=["elect", 0, 0b101])
    _establish(b, 0, 2)
    b.do(kind="propose", node=0)
    b.do(kind="deliver", src=0, dst=2, msg="PROPOSAL")
    b.do(kind="action", action=["log", 2])
    b.do(kind="deliver", src=2, dst=0, msg="ACK")  # 2.1 committed
    b.do(kind="action", action=["flush", 0])  # the leaked SyncThread writes 1.1 after 2.1
    b.do(kind="crash", node=0)
    b.do(kind="restart", node=0)  # the load applies 1.1 after 2.1
    # epoch 3: node 2 leads node 0, which serves zab-0
    b.do(kind="action", action=["lost", 2, 0])
    b.do(kind="action", action=["elect", 2, 0b101])
    _establish(b, 2, 0)
    return b.trace()


if __name__ == "__main__":
    save_built(build, "zookeeper-4712-served")
