"""The properties of ZooKeeper's implementation, which the zk models own and register
(`register` in models/zk/__init__.py): its failures, and the windows of its bugs.

- **Failures**: a step that reports a FAILED effect naming one of these
  (`zabmc.core.model.FAILED`) breaks it; models that follow no implementation report none.
- **Windows** (models/zk/README.md, D18): the states a JIRA issue names as its cause, each a check
  of one node.

All are off by default: a failure or a window is a finding of its own, asked for by name.
`BASE`, `FINE`, `STORE`, `SHUTDOWN`, `EPOCH` and `STORE_EPOCH` name the ones each layer of the kernel can break
(its models' `properties`, models/zk/model.py).
"""

from __future__ import annotations

from zabmc.core.properties import always

from . import shutdown, storage, windows

PROPERTIES = (
    # failures of the implementation a model follows: a step that reports a FAILED effect
    # naming one of these breaks it (zabmc.core.model.FAILED); models that follow no implementation
    # report none. Off by default: a failure is a finding of its own, asked for by name.
    always("sync-exception", "a follower's synchronisation with its leader never throws",
           "ZooKeeper 3.7.0-3.9.2 Learner.syncWithLeader (ZOOKEEPER-4394)", default=False,
           needs={"failures"}),
    always("leader-gives-up", "a leader never abandons its epoch because a follower is "
           "ahead of it", "ZooKeeper 3.7.0 Leader.waitForEpochAck (\"Follower is ahead of "
           "the leader\")", default=False, needs={"failures"}),
    always("load-exception", "a restarted server loads its disk: the epoch of its last "
           "zxid is never beyond its currentEpoch", "ZooKeeper 3.7.0-3.9.4 "
           "QuorumPeer.loadDataBase (ZOOKEEPER-2354)", default=False, needs={"failures"}),
    always("leader-unexpected-ack", "a leader never takes a proposal's ACK for a follower's "
           "NEWLEADER ack", "ZooKeeper 3.7.0 LearnerHandler.run and Leader.waitForNewLeaderAck "
           "(ZOOKEEPER-4685)", default=False, needs={"failures"}),
    # the windows of ZooKeeper's synchronisation bugs (models/zk/README.md, D18): states a
    # JIRA issue names as its cause, each a check of one node; off by default, as failures
    always("ack-before-logging", "a follower acknowledges NEWLEADER only once the committed "
           "transactions of its synchronisation are written or queued for its log",
           "ZooKeeper Learner.syncWithLeader before PR #1445 (ZOOKEEPER-3911)",
           default=False, check=windows.ack_before_logging),
    always("ack-before-disk", "a follower acknowledges NEWLEADER only once the committed "
           "transactions of its synchronisation are on disk",
           "ZooKeeper 3.7.0-3.8.4 Learner.syncWithLeader (ZOOKEEPER-4646)",
           default=False, check=windows.ack_before_disk),
    always("epoch-before-disk", "a follower writes the new currentEpoch only once the "
           "committed transactions of its synchronisation are on disk",
           "ZooKeeper 3.7.0-3.8.4 Learner.syncWithLeader (ZOOKEEPER-4643)",
           default=False, check=windows.epoch_before_disk),
    always("sync-loses-committed", "a leader never synchronises a follower without a "
           "transaction the leader has applied", "ZooKeeper 3.9.3 LearnerHandler.syncFollower "
           "over ZKDatabase.committedLog (ZOOKEEPER-4925)", default=False, needs={"failures"}),
    always("committed-log-hole", "a node's in-memory committed log holds every transaction "
           "it has applied beyond the log's first entry", "ZooKeeper 3.9.3 "
           "Learner.syncWithLeader's processTxn(TxnHeader, Record) (ZOOKEEPER-4925)",
           default=False, check=storage.committed_log_hole),
    always("ack-from-memory", "a follower acknowledges NEWLEADER only once the committed "
           "transactions its data tree holds are on disk", "ZooKeeper 3.7.0-3.9.2 "
           "Learner.shutdown's zk.shutdown(boolean), which leaves the SyncRequestProcessor "
           "running (ZOOKEEPER-4712); a TRUNC synchronisation's memory kept (ZOOKEEPER-5094)",
           default=False, check=shutdown.ack_from_memory),
    always("ack-from-applied-memory", "a follower acknowledges NEWLEADER only once the "
           "committed transactions its data tree applied in memory alone (kept by a shutdown "
           "before NEWLEADER, not queued for a leaked SyncThread) are on disk", "ZooKeeper "
           "3.7.0-3.9.5 Learner.syncWithLeader, which under TRUNC applies the COMMITs before "
           "NEWLEADER to the data tree only (writeToTxnLog false), and Learner.shutdown's "
           "zk.shutdown(syncMode == SNAP), which keeps them (ZOOKEEPER-5094, unfixed); 3.6.2's "
           "zk.shutdown() keeps an interrupted SNAP's too",
           default=False, check=shutdown.ack_from_applied_memory),
    always("stale-log-write", "no node's log gets a transaction that its data tree lacks "
           "and has moved past", "ZooKeeper 3.7.0-3.9.2 Learner.shutdown, whose "
           "SyncRequestProcessor keeps writing the queue of the role left "
           "(ZOOKEEPER-4712)", default=False, check=shutdown.stale_log_write),
    always("truncate-keeps", "a follower told to TRUNC to a zxid keeps nothing past it",
           "ZooKeeper 3.6.2-3.9.5 FileTxnLog.truncate, which cuts after the first transaction "
           "at or past the zxid (TRUNC-KEEPS-UNCOMMITTED, reports/bugs/trunc-keeps-uncommitted.md)",
           default=False,
           needs={"failures"}),)

#: what the coarse kernel (handlers.py) can break: its two failures and the three windows of
#: NEWLEADER (windows.py)
BASE = ("sync-exception", "leader-gives-up", "ack-before-logging", "ack-before-disk",
        "epoch-before-disk")
#: fine.py adds the leader's wait for NEWLEADER acks (ZOOKEEPER-4685)
FINE = BASE + ("leader-unexpected-ack",)
#: storage.py (over the coarse kernel) adds the sync over the in-memory committed log
#: (ZOOKEEPER-4925)
STORE = BASE + ("sync-loses-committed", "committed-log-hole")
#: shutdown.py adds the SyncThread left running (ZOOKEEPER-4712) and a TRUNC's memory kept
#: (ZOOKEEPER-5094)
SHUTDOWN = FINE + ("ack-from-memory", "ack-from-applied-memory", "stale-log-write")
#: epoch.py adds the start-up's check of currentEpoch (ZOOKEEPER-2354), over fine.py or storage.py
EPOCH = FINE + ("load-exception",)
STORE_EPOCH = STORE + ("load-exception",)
#: the release models (releases.py): their stack's, and a TRUNC as FileTxnLog.truncate does it
RELEASE = tuple(dict.fromkeys(SHUTDOWN + EPOCH + STORE)) + ("truncate-keeps",)
RELEASE_STORE = STORE_EPOCH + ("truncate-keeps",)
