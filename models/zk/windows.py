"""The windows of ZooKeeper's synchronisation bugs, as properties of one node (models/zk/README.md,
D18). Each is the state the JIRA issue names as its cause, not the data loss it leads to: a data
loss needs more events (a crash at the right time, an election the node then wins), and one data
loss can come through several windows, so the loss alone cannot say which bug a release has.

`zabmc.core.properties` registers them (`ack-before-logging`, `ack-before-disk`, `epoch-before-disk`)
as node checks: each takes a node of any model and returns None when the node is fine (always for
the nodes of models without a synchronisation of this kind), otherwise what is wrong, in words.
"""

from __future__ import annotations

from .state import FOLLOWING


def _synced(node, *where: str) -> tuple:
    """The transactions in the fields `where` of `node` that its synchronisation gave it as committed
    and that are not on disk, once it has handled NEWLEADER: those of an epoch before the one
    NEWLEADER made its currentEpoch that it knows committed (the DIFF's COMMITs, `pcommit`, then
    `commit` after UPTODATE). A transaction of the new epoch is left out: it can only be a
    proposal of the leader's broadcast (received after NEWLEADER, or given to a follower that
    joins an established leader, whose NEWLEADER ack counts for nothing, F5), and a vote with
    the new epoch that lacks it loses to one of a node that has it (D1)."""
    if getattr(node, "nl", None) is not True or node.role != FOLLOWING:
        return ()  # also every node of a model without a NEWLEADER of this kind
    txns = sum((getattr(node, f) for f in where), ())
    if not txns:
        return ()
    e, bound = node.current_epoch, max(node.pcommit, node.commit)
    return tuple(t for t in txns if t[0][0] < e and t[0] <= bound)


def _acked(node) -> bool:
    """Whether the node has written its ACK of NEWLEADER: at once in the coarse variants, and
    once it owes it no more at the threads' grain (F1)."""
    return not getattr(node, "owed", False)


def _zxids(txns: tuple) -> str:
    return ", ".join(f"{t[0][0]}.{t[0][1]}" for t in txns)


def ack_before_logging(node) -> str | None:
    """ZOOKEEPER-3911: the follower acknowledged NEWLEADER while committed transactions of its
    synchronisation were still only in memory (packetsNotCommitted), neither written nor queued
    for the SyncThread: before the fix (PR #1445) `Learner.syncWithLeader` logged them only at
    UPTODATE."""
    if not _acked(node):
        return None
    left = _synced(node, "pending")
    if not left:
        return None
    return (f"node {node.id} acknowledged NEWLEADER of epoch {node.current_epoch} with committed "
            f"transactions {_zxids(left)} of its synchronisation not yet handed to its log "
            "(ZOOKEEPER-3911)")


def ack_before_disk(node) -> str | None:
    """ZOOKEEPER-4646: the follower acknowledged NEWLEADER while committed transactions of its
    synchronisation were not on disk (queued for the SyncThread, or not even that): a crash now
    loses transactions a quorum's acknowledgement vouched for."""
    if not _acked(node):
        return None
    left = _synced(node, "pending", "mem")
    if not left:
        return None
    return (f"node {node.id} acknowledged NEWLEADER of epoch {node.current_epoch} with committed "
            f"transactions {_zxids(left)} of its synchronisation not on disk (ZOOKEEPER-4646)")


def epoch_before_disk(node) -> str | None:
    """ZOOKEEPER-4643: the follower's currentEpoch on disk names the new epoch while committed
    transactions of its synchronisation are not on disk: restarted now, its vote carries the new
    epoch and a log without them, and can win an election that truncates them elsewhere."""
    left = _synced(node, "pending", "mem")
    if not left:
        return None
    return (f"node {node.id} wrote currentEpoch {node.current_epoch} with committed transactions "
            f"{_zxids(left)} of its synchronisation not on disk (ZOOKEEPER-4643)")
