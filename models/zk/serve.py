"""A follower serves its data tree from UPTODATE on (models/zk/README.md, R6): what the release
models add over their stacks, so that a follower synchronised by a DIFF learns that the log it
already held is committed.

The kernel delivers only what a node knows committed (D5). A follower that logged a proposal it
never saw committed, left its role, and was synchronised again from that proposal (an empty
DIFF: the new leader holds the same log) was never told: nothing after it committed, and with no
further proposal it never delivered it (reports/liveness.md, the eventually-commit lasso of every
zk model). ZooKeeper's follower has applied it, and serves it:

- a role change fast-forwards the data tree over the log: `ZooKeeperServer.shutdown(false)` calls
  `ZKDatabase.fastForwardDataBase` (release-3.8.0-1 ZooKeeperServer.java 831-880, ZKDatabase.java
  299-303: `FileTxnSnapLog.fastForwardFromEdits`, 326-, replays every logged transaction beyond the
  tree's lastProcessedZxid); a start-up loads it all (`ZKDatabase.loadDataBase`, 283-294:
  `FileTxnSnapLog.restore`, which ends in `fastForwardFromEdits`). The same in every modelled
  release (3.6.2 to 3.9.4);
- the leader does the same (`Leader.lead` calls `zk.loadData()`, release-3.8.0-1 Leader.java 597,
  which for an initialised database takes the data tree's lastProcessedZxid, ZooKeeperServer.java
  517-518), and `LearnerHandler.syncFollower` (LearnerHandler.java 779-) sends an empty DIFF when
  the learner's last zxid is that (848-854), a DIFF of the later proposals when it is within the
  committed log, a TRUNC when it is beyond: what the follower holds up to the sync's zxid is the
  leader's;
- at UPTODATE the follower starts serving that data tree (`Learner.syncWithLeader`: release-3.8.0-1
  Learner.java 720-726 ends the loop, 776 `zk.startServing()`; 3.6.2, 3.9.3 and 3.9.4 call
  `zk.startup()`), and UPTODATE comes only after a quorum acknowledged NEWLEADER
  (`LearnerHandler.run`: `waitForNewLeaderAck`, then UPTODATE), so the leader's initial log is
  committed in ZAB's sense (F4; an established leader syncs only what it committed, D3).

Here the follower records where its synchronisation starts (`sync_zxid`: a DIFF's zxid, never
beyond its own last zxid, which its ACKEPOCH named (or its data tree's X.0 beyond it: R5,
storage.logged); a TRUNC's zxid; nothing for a SNAP, whose transactions come committed) and, at
UPTODATE, takes it as committed: `commit` rises to it and the kernel's `settle` delivers over
what is on disk (D5; H4 for the shutdown grain, whose `history` is memory).
The data tree already holds these transactions, so the storage grain's `dt` and committed log do
not change. Not here: a TRUNC that keeps a transaction past its zxid (R4, `truncate-keeps`) is
served by ZooKeeper as it stands; the model does not deliver that transaction at UPTODATE, as
before.

`Serve` is a `layer.Layer` over the release stack (releases.THREADS); the
abstractions keep the kernel's D5 as it was (their counts are pinned by their tests, and
benchmarks/tla/Zk.tla transliterates zk's). Its entry points take the coarse kernel `h` first, as
fine.py's do.
"""

from __future__ import annotations

from zabmc.core.model import Step

from . import releases, shutdown
from .layer import Layer
from .state import (F_BROADCAST, F_SYNC, FOLLOWING, NONE, SNAP, SYNC, ZERO, extend_node, last_zxid,
                    log_of)


def served(h, node, sync_zxid: tuple):
    """`node`, just past UPTODATE, with its log up to `sync_zxid` taken as committed and delivered
    (D5; over memory on disk only, H4)."""
    if sync_zxid <= node.commit:
        return node
    node = h.settle(node._replace(commit=sync_zxid))
    return shutdown._durable(node) if "disk" in node._fields else node


class Serve(Layer):
    """R6 over `parent` (a release stack): the sync's starting point recorded, and taken as
    committed at UPTODATE."""

    FIELDS = {"sync_zxid": ZERO}

    def own_norm(self, node):
        """`sync_zxid` in its one form: only a follower inside its synchronisation holds one."""
        if node.sync_zxid != ZERO and not (node.role == FOLLOWING and node.phase == F_SYNC):
            node = node._replace(sync_zxid=ZERO)
        return node

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        st = self.parent.deliver(h, node, src, msg, n, rules)
        y = st.node
        if node.role != FOLLOWING or node.phase != F_SYNC or y.role != FOLLOWING:
            return self._step(st)
        if msg[0] == SYNC and node.mode == NONE and y.mode != NONE:  # the sync taken (D3, S6)
            z = ZERO if msg[2] == SNAP else min(msg[3], last_zxid(log_of(node)))
            y = y._replace(sync_zxid=z)
        elif y.phase == F_BROADCAST:  # UPTODATE: the data tree is served
            y = served(h, y, node.sync_zxid)
        else:
            return self._step(st)
        return self._step(Step(y, st.outs, st.effects))

    # The views are the stack's: `sync_zxid` is left out of node_json and the canonical dump, as
    # it follows from the run (the SYNC the follower took and its log then) and shows only in
    # what UPTODATE delivers; so every trace recorded before R6 replays, to the same JSON and
    # final_sha256, where R6 changes nothing (reports/data/zk-wide/, tests/corpus/zk/).

    def dump(self, nodes) -> bytes:
        return self.parent.dump([x[:-1] for x in nodes])


def over(stack, name: str) -> Serve:
    """`stack` with R6 on top, its node type the stack's with `sync_zxid`."""
    node = extend_node(name, __name__, f"{stack.node.__name__}'s fields and `sync_zxid` "
                       "(memory only): where the follower's synchronisation starts (R6).",
                       base=stack.node, **Serve.FIELDS)
    return Serve(stack, node)


#: the release models' kernel: the stack of releases.py with R6
THREADS = over(releases.THREADS, "ServedReleaseNode")
