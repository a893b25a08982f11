"""One model per ZooKeeper release (models/zk/README.md, "Releases"): each release's rules, and
the grains stacked that its model has at once.

Every release model is one stack (models/zk/layer.py), THREADS: the follower's threads (fine.py:
NEWLEADER's ACK a step of its own, the SyncThread acknowledging what it writes, the leader's
first ACK read as NEWLEADER's), broadcasts between the sync packets and NEWLEADER (forward.py),
the follower's shutdown with memory and disk apart (shutdown.py), currentEpoch a step after
NEWLEADER's writes with the start-up's check (epoch.py), and, over them all, the in-memory
committed log with SNAP/DIFF/TRUNC chosen from it (storage.Storage: `LearnerHandler.syncFollower`
is the same from release-3.6.2 to release-3.9.4 but for log text; `LearnerHandler` and `Leader`
are unchanged from release-3.9.2 to release-3.9.4). Each release's rules carry its decisions:
what NEWLEADER writes and when it acknowledges (3.6.2: nothing before UPTODATE; 3.7.0, 3.8.0:
queued for the SyncThread; 3.8.5, 3.9.2: written, PR #2111; 3.9.3, 3.9.4: the committed ones
written, PR #2152, outside the committed log on 3.9.3 and into it on 3.9.4), and what a follower's
shutdown does with the SyncThread and an interrupted SNAP (`leaks`, `snap_clears`: 3.6.2 writes
the queue and keeps the database; 3.7.0-3.9.2 leak the queue and clear it; 3.9.3 and 3.9.4 write
the queue, PR #2154, and clear it). The STORE stack (storage.py under epoch.py, `epoch.STORE`),
which 3.9.3's and 3.9.4's models were until they had the threads' and forwarding grains, is now
the kernel of the abstractions `zk-3.9.3-epoch` and `zk-3.9.4-epoch` only (ABSTRACTIONS below).

Every row of `RELEASES` names the tag its rules were read at, and the methods that decide them;
`SAME` lists releases whose ZAB code differs from a modelled one's only in what no model
represents (`git diff` of the files below between the two tags, apache/zookeeper, each change
named), which name that model; `NOT_MODELLED`, releases that differ in something a model
represents and have no model yet. models/zk/README.md's table of releases is generated from these
(`python tests/test_zk_releases.py`; the test fails when it differs).
"""

from __future__ import annotations

from typing import NamedTuple

from . import epoch, fine, forward, shutdown, storage
from .fine import FineNode
from .state import extend_node

#: the files whose diff between two tags decides whether a release's ZAB code differs (under
#: zookeeper-server/src/main/java/org/apache/zookeeper/server/)
FILES = ("quorum/Learner.java", "quorum/Follower.java", "quorum/Leader.java",
         "quorum/LearnerHandler.java", "quorum/LearnerZooKeeperServer.java",
         "quorum/FollowerZooKeeperServer.java", "quorum/SendAckRequestProcessor.java",
         "quorum/QuorumPeer.java", "quorum/CommitProcessor.java", "ZKDatabase.java",
         "ZooKeeperServer.java",
         "SyncRequestProcessor.java", "persistence/FileTxnLog.java",
         "persistence/FileTxnSnapLog.java")

# --- the THREADS stack: fine.py, then forward, shutdown and epoch, each a layer.Layer ------------

ThreadsFwdNode = extend_node("ThreadsFwdNode", __name__, "fine.FineNode and forward's `nlq`.",
                             base=FineNode, **forward.Forward.FIELDS)
ThreadsSdNode = extend_node("ThreadsSdNode", __name__,
                            "ThreadsFwdNode and shutdown's `disk` and `leak`.",
                            base=ThreadsFwdNode, **shutdown.Shutdown.FIELDS)
ThreadsEpochNode = extend_node("ThreadsEpochNode", __name__,
                               "ThreadsSdNode and epoch's `snapped`.",
                               base=ThreadsSdNode, **epoch.Kernel.FIELDS)
ReleaseNode = extend_node("ReleaseNode", __name__,
                          "A release model's node: every field of the THREADS stack's layers "
                          "(fine.py, forward.py, shutdown.py, epoch.py, storage.Storage).",
                          base=ThreadsEpochNode, **storage.Storage.FIELDS)

THREADS = storage.Storage(
    epoch.Kernel(shutdown.Shutdown(forward.Forward(fine, ThreadsFwdNode), ThreadsSdNode),
                 ThreadsEpochNode),
    ReleaseNode)


#: what each stack's model has, in words (`zabmc models`)
GRAINS = {"threads": "threads, broadcasts before NEWLEADER, shutdown, currentEpoch's own "
                     "step and SNAP/DIFF/TRUNC from the committed log, at once"}


class Release(NamedTuple):
    version: str
    stack: str  # "threads" (the one stack every release model has now)
    rules: str  # the rules class (models/zk/model.py) whose decisions this release ships
    missing: tuple  # grains this release's code has that its model does not yet
    source: str  # where the rules were read: tag, file and method


RELEASES = (
    Release("3.6.2", "threads", "Rel362Rules", (),
            "release-3.6.2 Learner.syncWithLeader (proposals logged at UPTODATE: before "
            "ZOOKEEPER-3911's fix, PR #1445 in 3.6.3); Learner.shutdown calls zk.shutdown(), "
            "which LearnerZooKeeperServer overrides to shut the SyncRequestProcessor down"),
    Release("3.7.0", "threads", "Rel370Rules", (),
            "release-3.7.0 Learner.syncWithLeader (NEWLEADER's proposals handed to the "
            "SyncThread, ACK at once); Learner.shutdown's zk.shutdown(boolean) leaves the "
            "SyncRequestProcessor running (ZOOKEEPER-4712)"),
    Release("3.8.0", "threads", "Rel380Rules", (),
            "release-3.8.0-1 (Debian's zookeeper 3.8.0): Learner.syncWithLeader and "
            "Learner.shutdown as 3.7.0's (the diff touches log text, metrics, properties)"),
    Release("3.8.5", "threads", "Rel385Rules", (),
            "release-3.8.5 Learner.syncWithLeader: ZOOKEEPER-4785's fix (PR #2132) writes the "
            "proposals before currentEpoch and the ACK; Learner.shutdown unchanged"),
    Release("3.9.2", "threads", "Rel392Rules", (),
            "release-3.9.2 Learner.syncWithLeader (PR #2133, as 3.8.5); Learner.shutdown "
            "unchanged until 3.9.3"),
    Release("3.9.3", "threads", "Rel393Rules", (),
            "release-3.9.3 Learner.syncWithLeader (PR #2152 as #2188: the DIFF's committed "
            "transactions written and applied at NEWLEADER with processTxn(TxnHeader, Record), "
            "ZOOKEEPER-4925, then currentEpoch and the ACK in the QuorumPeer thread; the "
            "outstanding ones logged at UPTODATE); Learner.shutdown's zk.shutdown(syncMode == "
            "SNAP): LearnerZooKeeperServer.shutdownComponents stops the SyncThread (PR #2154), "
            "and shutdown(true) still clears the database"),
    Release("3.9.4", "threads", "Rel394Rules", (),
            "release-3.9.4 Learner.syncWithLeader: 4925's fix (PR #2254, #2266) applies them as "
            "Requests, into the committed log; the shutdown as 3.9.3's"),
)

#: releases whose ZAB code (FILES) is a modelled release's at the models' grain: name -> (that
#: release, the diff and why what it changes is below the grain). 3.8.1-3.8.4, 3.9.0 and 3.9.1 have
#: ZOOKEEPER-3911's fix and none of ZOOKEEPER-4785's (PR #2132 in 3.8.5, #2133 in 3.9.2), 4712's
#: (PR #2154, 3.9.3) or PR #2152's (3.9.3): Learner.syncWithLeader, Learner.shutdown,
#: LearnerZooKeeperServer.shutdown, ZooKeeperServer.shutdown, LearnerHandler.syncFollower,
#: QuorumPeer.loadDataBase and FileTxnLog.truncate read as release-3.8.0-1's once getId is read as
#: getMyId and `new X<T>()` as `new X<>()`, but for the Request an observer's UPTODATE builds in
#: syncWithLeader (3.9.0, ZOOKEEPER-4575; no model has observers).
SAME = {
    "3.8.1": ("3.8.0", "git diff release-3.8.0-1 release-3.8.1 -- FILES: QuorumPeer.getId renamed "
                       "getMyId at every caller (ZOOKEEPER-4460), ZooKeeperServer's test hooks "
                       "(4308, 4327), and CommitProcessor.run reading its queues under its lock "
                       "(4537, a lost wake-up: the models apply a commit in one step, D5)"),
    "3.8.2": ("3.8.0", "git diff release-3.8.1 release-3.8.2 -- FILES is empty (ZOOKEEPER-4026 "
                       "changes DataTree's multi-op only)"),
    "3.8.3": ("3.8.0", "git diff release-3.8.2 release-3.8.3 -- FILES is empty"),
    "3.8.4": ("3.8.0", "git diff release-3.8.3 release-3.8.4 -- FILES: Leader.createServerSocket "
                       "resolves its address again (ZOOKEEPER-4728), FileTxnSnapLog.getDataDir "
                       "renamed getDataLogDir for the admin's directory sizes (4730); without "
                       "ZOOKEEPER-4785's fix, which release-3.8.5 adds"),
    "3.8.6": ("3.8.5", "git diff release-3.8.5 release-3.8.6 -- FILES is empty"),
    "3.9.0": ("3.8.0", "git diff release-3.8.4 release-3.9.0 -- FILES: requests that keep their "
                       "bytes (ZOOKEEPER-4573, 4575, 4717: Leader.propose, "
                       "ZKDatabase.addCommittedProposal, FileTxnLog.append), FileTxnLog's size "
                       "kept in fields (4714), the admin's snapshot and restore (4570, 4571: "
                       "ZooKeeperServer.takeSnapshot, restoreFromSnapshot), client connections "
                       "and the admin server (4492, 4639, 4303, 4682), QuorumPeer.checkSuspended "
                       "for a test (4676), a log text of LearnerHandler (3615); it lacks 3.8.4's "
                       "4728 and 4730 (3.9.2 has them) and ZOOKEEPER-4785's fix (PR #2133, 3.9.2)"),
    "3.9.1": ("3.8.0", "git diff release-3.9.0 release-3.9.1 -- FILES is empty"),
    "3.9.5": ("3.9.4", "git diff release-3.9.4 release-3.9.5 -- FILES: one line of "
                       "ChangeRecord.duplicate and an annotation"),
}

#: releases served by Maven Central (3.8.0-3.8.6, 3.9.0-3.9.5: reports/zookeeper.md) that differ
#: from every modelled one in what a model represents, with no model yet: name -> the difference
NOT_MODELLED: dict = {}

# --- the abstractions: each one grain alone, and the release model its runs lift into ----------

#: the actions of the layers (fine.py's F1, forward's F9, shutdown's H2, epoch's K1): a step a
#: node owes, which a coarser model takes within the step before it
LAYER_ACTIONS = ("ack-newleader", "newleader", "flush", "epoch")


class Abstraction(NamedTuple):
    release: str  # the release model whose rules it takes
    own: tuple  # the LAYER_ACTIONS it has itself


#: abstraction -> its release model. A run of the abstraction is a run of the release model once
#: each owed step of a layer the abstraction lacks is taken as soon as it is enabled
#: (tests/test_zk_releases.py lifts every corpus counterexample so). zk-fle and zk-fixed-fle have
#: none: the election at FLE's grain is in no release model (D1: the release models elect by
#: outcome); zk-3.9.3-coarse has none: its leaders send DIFF where 3.9.3's model's send SNAP.
ABSTRACTIONS = {
    "zk": Abstraction("3.7.0", ()),
    "zk-pre3911": Abstraction("3.6.2", ()),
    "zk-fixed": Abstraction("3.8.5", ()),
    "zk-3.7.0-threads": Abstraction("3.7.0", ("ack-newleader",)),
    "zk-3.9.2-threads": Abstraction("3.9.2", ("ack-newleader",)),
    "zk-3.7.0-fwd": Abstraction("3.7.0", ("ack-newleader", "newleader")),
    "zk-3.7.0-shutdown": Abstraction("3.7.0", ("ack-newleader", "flush")),
    "zk-3.9.2-shutdown": Abstraction("3.9.2", ("ack-newleader", "flush")),
    "zk-3.7.0-epoch": Abstraction("3.7.0", ("ack-newleader", "epoch")),
    "zk-3.9.2-epoch": Abstraction("3.9.2", ("ack-newleader", "epoch")),
    "zk-3.9.3-store": Abstraction("3.9.3", ()),
    "zk-3.9.4-store": Abstraction("3.9.4", ()),
    "zk-3.9.3-epoch": Abstraction("3.9.3", ("epoch",)),
    "zk-3.9.4-epoch": Abstraction("3.9.4", ("epoch",)),
}
