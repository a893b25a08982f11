"""A follower's shutdown as ZooKeeper 3.7.0-3.9.2 does it (models/zk/README.md, "The shutdown
grain: H1-H9"): `zk-3.7.0-shutdown` and `zk-3.9.2-shutdown`, over fine.py.

The coarse kernel's shutdown (D8) writes the SyncThread's queue and rebuilds memory from disk: the
behaviour of 3.9.3, whose `ZooKeeperServer.shutdown(boolean)` shuts the learner's
SyncRequestProcessor down (ZOOKEEPER-4712, PR #2154). Before it, `Learner.shutdown` calls
`zk.shutdown(syncMode == SNAP)`, an overload `LearnerZooKeeperServer` does not override, so the
SyncRequestProcessor of the role it leaves keeps running with its queue; the data tree is kept
and fast-forwarded over the log (`ZKDatabase.fastForwardDataBase`); and the votes, FOLLOWERINFO
and ACKEPOCH of the next role read the data tree's lastProcessedZxid
(`QuorumPeer.getLastLoggedZxid`), not the disk.

Here a node's `history` is its memory (the data tree, with what its log holds for the role it is
in: what the next fast-forward would make of it), and two fields more hold the rest: `disk`, the
transaction log and snapshots (what a crash keeps and a restart loads), and `leak`, the queue of
a SyncThread that a shutdown left running (written by the action `flush i`, lost at a crash).
Every write of the kernel to `history` goes to `disk` too; a follower's shutdown does not write
its queue but leaks it, and keeps in memory what the data tree has applied.

Every function takes the coarse kernel `h` first, as fine.py's do (so `zabmc mutate` reaches this
variant too). Nothing here changes another variant.
"""

from __future__ import annotations

from zabmc.core.model import Step, txn_json

from . import fine
from .codec import describe_msg, dump, msg_json  # noqa: F401  (the views)
from .fine import FineNode
from .layer import Tracking
from .state import (FOLLOWING, LOOKING, NONE, SYNC, TRUNC, ZERO, extend_node, last_zxid, leaks,
                    queued, truncate_keeps, truncate_log, truncation)

_NO = ()

SdNode = extend_node(
    "SdNode", __name__,
    """`fine.FineNode`'s fields, in its order, and two more: `disk`, the transactions on disk
    (durable; `history` is the memory here, H1), and `leak`, the queue of the SyncThread a
    previous role's shutdown left running (memory only, H2).""",
    base=FineNode, disk=(), leak=())

assert SdNode._fields[:len(FineNode._fields)] == FineNode._fields

#: what a crash keeps (E7): the kernel's fields and the disk. `history`, the memory here, stays
#: only while the node is down, so that what it delivered stays as it was; the restart replaces
#: it with the disk (H7)
DURABLE = ("accepted_epoch", "current_epoch", "history", "last_committed", "conn", "disk")


def _write(disk: tuple, txns) -> tuple:
    """`disk` with `txns` written: the log read back in zxid order, each zxid once (a transaction
    written twice, or after a later one, is replayed with the others at a load, H8)."""
    if not txns:
        return disk
    if not disk or (txns[0][0] > disk[-1][0] and all(
            a[0] < b[0] for a, b in zip(txns, txns[1:]))):
        return disk + tuple(txns)
    by = {t[0]: t for t in disk}
    for t in txns:
        by.setdefault(t[0], t)
    return tuple(by[z] for z in sorted(by))


def _durable(node) -> SdNode:
    """H4: `last_committed` (what the node has delivered, D5) only over memory that is on disk: the
    greatest zxid at or below the kernel's whose every predecessor in `history` is on disk."""
    h, d, lc = node.history, node.disk, node.last_committed
    if h == d or h == d[:len(h)] or lc == ZERO:
        return node
    on = {t[0] for t in d}
    best = ZERO
    for t in h:
        if t[0] > lc or t[0] not in on:
            break
        best = t[0]
    return node if best == lc else node._replace(last_committed=best)


def _track(x, y, norm, truncate=None, leaks=True, how="exact"):
    """`y`, the parent's node after a step from `x`, with its disk and leaked queue brought
    along; `norm` is the parent's normal form, `leaks` the rules' (see `_shutdown`)."""
    if x.role != LOOKING and y.role == LOOKING:
        return _durable(_shutdown(x, y, norm, leaks))
    if truncate is not None:  # H6: truncateLog cuts the disk, then clear() and loadDataBase()
        disk = truncate_log(x.disk, truncate, getattr(x, "logbase", ZERO), how)  # S12's snapshot
        return _durable(y._replace(disk=disk, history=disk))
    hx, hy = x.history, y.history
    if hy is hx or hy == hx:
        return _durable(y)
    if x.mode == TRUNC and not x.nl and y.nl:  # H6: NEWLEADER's snapshot is the data tree
        return _durable(y._replace(disk=_write(x.disk, hy)))
    if hy[:len(hx)] == hx:  # H1: a write (the SyncThread, the leader's proposal, 3.9.2's sync)
        return _durable(y._replace(disk=_write(x.disk, hy[len(hx):])))
    raise AssertionError(f"node {x.id}: history changed other than by a write or a TRUNC")


def _shutdown(x, y, norm, leaks=True):
    """H2, H3: node `x` leaves its role; `y` is the kernel's shutdown (D8: queue written, memory
    reloaded). A follower's SyncThread is not shut down: its queue leaks, unwritten; the data
    tree keeps what it applied (the queue's committed transactions, and a TRUNC
    synchronisation's before NEWLEADER); then fastForwardDataBase replays the log beyond it.
    A leader's shutdown (`LeaderZooKeeperServer.shutdown`) stops its processors: nothing is
    queued there (D7). With `leaks` false (3.6.2, whose `Learner.shutdown` calls
    `zk.shutdown()`, which `LearnerZooKeeperServer` overrides to shut the SyncRequestProcessor
    down), the queue is written first; the data tree is kept all the same."""
    if x.role == FOLLOWING and not leaks and queued(x):
        disk = _write(x.disk, x.mem)
        history = x.history + x.mem
        last = last_zxid(history)
        history += tuple(t for t in disk if t[0] > last)
        return norm(y._replace(history=history, disk=disk))
    if x.role == FOLLOWING:
        if queued(x):
            leak = x.leak + x.mem
            mem = tuple(t for t in x.mem if t[0] <= x.commit)  # applied by the CommitProcessor
        else:
            leak, mem = x.leak, x.mem  # a TRUNC synchronisation's, applied (ZOOKEEPER-5094)
        history, disk = x.history + mem, x.disk
    else:
        leak, history, disk = x.leak, y.history, _write(x.disk, y.history[len(x.history):])
    last = last_zxid(history)
    history += tuple(t for t in disk if t[0] > last)  # fastForwardDataBase
    return norm(y._replace(history=history, disk=disk, leak=leak))


class Shutdown(Tracking):
    """H1-H9 over `parent` (fine.py, or a stack over it): memory and disk apart, the SyncThread a
    follower's shutdown leaves running."""

    FIELDS = {"disk": (), "leak": ()}

    def _track(self, x, st, rules, truncate=None):
        if st is None:
            return None
        y = _track(x, st.node, self.parent.norm, truncate, leaks(rules), truncation(rules))
        return Step(y, st.outs, st.effects)

    def start(self, h, node, n: int, rules) -> Step:
        """Start-up and every restart (H7): loadDataBase makes the data tree of the disk; what was
        delivered stays within it."""
        d = node.disk
        lc = max((t[0] for t in d if t[0] <= node.last_committed), default=ZERO)
        node = node._replace(history=d, last_committed=lc, leak=())
        st = self.parent.start(h, node, n, rules)
        return Step(st.node._replace(disk=d), st.outs, st.effects)

    def actions(self, h, nodes, down: int, n: int, rules) -> list:
        """The parent's actions, then each leaked SyncThread's write (H2)."""
        out = self.parent.actions(h, nodes, down, n, rules)
        out.extend(("flush", i) for i in range(n) if not down >> i & 1 and nodes[i].leak)
        return out

    def act(self, h, nodes, label: tuple, n: int, rules) -> list:
        if label[0] == "flush":
            i = label[1]
            return [(i, Step(flush(h, nodes[i]), _NO, _NO))]
        return super().act(h, nodes, label, n, rules)

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        truncate = None
        if (msg[0] == SYNC and msg[2] == TRUNC and fine._live(node, src, msg)
                and node.mode == NONE and not node.nl and node.role == FOLLOWING):
            truncate = msg[3]
        st = self.parent.deliver(h, node, src, msg, n, rules)
        if truncate is not None and st.node.mode != TRUNC:
            truncate = None  # not taken as a synchronisation (a stale phase)
        out = self._track(node, st, rules, truncate)
        if truncate is not None and truncation(rules) == "file":
            keeps = truncate_keeps(node.id, truncate, out.node.disk, msg[4],
                                   getattr(node, "logbase", ZERO))
            if keeps:
                out = Step(out.node, out.outs, out.effects + keeps)
        return out

    def node_json(self, node) -> dict:
        out = self.parent.node_json(node)
        out.update(disk=[txn_json(t) for t in node.disk],
                   leaked_queue=[txn_json(t) for t in node.leak])
        return out

    def describe_action(self, label: tuple) -> str:
        if label[0] == "flush":
            return (f"flush node {label[1]} (the SyncThread its last shutdown left running writes "
                    "its queue)")
        return self.parent.describe_action(label)


#: over fine.py: `zk-3.7.0-shutdown`, `zk-3.9.2-shutdown`
KERNEL = Shutdown(fine, SdNode)


def flush(h, node):
    """H2: the leaked SyncThread writes its queue (SyncRequestProcessor's group commit); its
    acknowledgements go to the socket of the role it served, which is closed. The data tree
    does not change; what memory holds that is now on disk may be delivered (D5)."""
    node = node._replace(disk=_write(node.disk, node.leak), leak=())
    return _durable(h.settle(node))


# --- the windows (models/zk/README.md, H9; node checks, as D18's windows) ------------------------


def _from_memory(node) -> tuple:
    """The committed transactions a follower that has acknowledged NEWLEADER holds in its data
    tree and not on its disk (`ack_from_memory`'s), and the zxids of those queued for a leaked
    SyncThread; `((), ())` for a node fine by that window or of a model without a `disk`."""
    d = getattr(node, "disk", None)
    if d is None or node.role != FOLLOWING or not node.nl or node.owed:
        return (), ()
    if node.history == d:
        return (), ()
    on = {t[0] for t in d}
    c = max(node.commit, node.pcommit)
    left = tuple(t for t in node.history if t[0] not in on and t[0] <= c)
    return left, {t[0] for t in node.leak} if left else ()


def ack_from_memory(node) -> str | None:
    """ZOOKEEPER-4712's and 5094's window: a follower has acknowledged NEWLEADER while its data
    tree holds a committed transaction that is not on its disk: its ACKEPOCH named it, so the
    leader did not send it, and a crash now loses it. Of any epoch: unlike D18's windows, which
    look at what the synchronisation sent, this looks at what it did not send, and a transaction
    of the new epoch the follower applied before a shutdown (a TRUNC's, or one queued when it
    left and rejoined the same leader) is not sent again either. None for the nodes of other
    models, which have no `disk` apart from `history`."""
    left, leaked = _from_memory(node)
    if not left:
        return None
    why = ", ".join(
        f"{z[0]}.{z[1]} ("
        + ("queued for a leaked SyncThread, ZOOKEEPER-4712" if z in leaked
           else "applied in memory only, ZOOKEEPER-5094") + ")"
        for z in (t[0] for t in left))
    return (f"node {node.id} acknowledged NEWLEADER of epoch {node.current_epoch} while its data "
            f"tree holds committed transactions not on its disk: {why}")


def ack_from_applied_memory(node) -> str | None:
    """ZOOKEEPER-5094's window alone: `ack_from_memory` narrowed to the transactions applied in
    memory only, none queued for a leaked SyncThread (4712's kind, which `ack_from_memory` also
    reports): a TRUNC synchronisation applies the COMMITs before NEWLEADER to the data tree only
    (`writeToTxnLog` false) and a shutdown before NEWLEADER keeps them (H3), so a later ACKEPOCH
    names them and no leader sends them again (on `zk-3.6.2`, whose shutdown keeps an
    interrupted SNAP's database too, S13, a SNAP's as well). None for the nodes of other
    models."""
    left, leaked = _from_memory(node)
    only = [t[0] for t in left if t[0] not in leaked]
    if not only:
        return None
    return (f"node {node.id} acknowledged NEWLEADER of epoch {node.current_epoch} while its data "
            f"tree holds committed transactions applied in memory only, neither on its disk nor "
            f"queued for a SyncThread: {', '.join(f'{z[0]}.{z[1]}' for z in only)} "
            "(ZOOKEEPER-5094)")


def stale_log_write(node) -> str | None:
    """ZOOKEEPER-4712's write: the node's log holds a transaction its data tree lacks, older than
    the tree's last one. Only a SyncThread that a shutdown left running writes one (H2): the
    transaction was queued for a role the node has left, and its data tree moved on without it;
    the next load applies it after the later ones (H8). None for the nodes of other models."""
    d = getattr(node, "disk", None)
    if not d or node.history == d or not node.history:
        return None
    have = {t[0] for t in node.history}
    last = node.history[-1][0]
    odd = [t[0] for t in d if t[0] < last and t[0] not in have]
    if not odd:
        return None
    return (f"node {node.id}'s log holds {', '.join(f'{z[0]}.{z[1]}' for z in odd)}, which its "
            f"data tree (last {last[0]}.{last[1]}) lacks: written by a SyncThread its shutdown "
            "left running (ZOOKEEPER-4712); a load applies it after the later transactions")
