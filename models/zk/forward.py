"""The leader's NEWLEADER a step after its synchronisation (models/zk/README.md F7, F9-F11):
`zk-3.7.0-fwd`, `zk-3.7.0-threads` with broadcasts that can fall between SYNC and NEWLEADER.

In ZooKeeper 3.7.0 `LearnerHandler.syncFollower` ends with `learnerMaster.startForwarding(this,
currentZxid)`: from then on the leader's new PROPOSALs and COMMITs are queued for this learner
(`Leader.sendPacket` over `forwardingFollowers`). `LearnerHandler.run` queues NEWLEADER only
after `syncFollower` has returned (and, for a SNAP, after the snapshot is serialised), and the
sender thread sends the queue in order, so a proposal or commit of an established leader can
reach the follower between its sync packets and NEWLEADER. `Learner.syncWithLeader` takes them
there as it takes the sync packets: a PROPOSAL goes to packetsNotCommitted, a COMMIT to
packetsCommitted (DIFF) or applies the first pending proposal in memory (TRUNC, where
writeToTxnLog is false until NEWLEADER).

The kernel of `zk-3.7.0-threads` (fine.py over the coarse handlers) queues NEWLEADER in the same step as
SYNC. Here an established leader's synchronisation of a learner stops after SYNC and owes the
learner NEWLEADER (the field `nlq`, per node); the action `newleader i j` queues it. A new
leader's synchronisations stay whole: it proposes nothing before it is established.

`Forward` is this grain as a `layer.Layer`: over fine.py for `zk-3.7.0-fwd` (`KERNEL`), and in
the release stacks (releases.py). Its entry points take the coarse kernel `h` first, as fine.py's
do (so `zabmc mutate` reaches these variants too). Nothing here changes another variant: their nodes, steps and counts are
untouched.
"""

from __future__ import annotations

from zabmc.core.model import Step

from . import fine
from .codec import describe_msg, dump, msg_json  # noqa: F401  (the views: `ForwardZkModel.codec`)
from .state import (COMMIT, F_SYNC, L_BROADCAST, LEADING, NEWLEADER, NONE, PROPOSAL, TRUNC,
                    ACKEPOCH, bits, extend_node)
from .fine import FineNode
from .layer import Layer

_NO = ()

FwdNode = extend_node(
    "FwdNode", __name__,
    """`fine.FineNode`'s fields, in its order, and one more (memory only): `nlq`, a leader's
    learners (a bit set) that it has synchronised and not yet queued NEWLEADER for.""",
    base=FineNode, nlq=0)

assert FwdNode._fields[:len(FineNode._fields)] == FineNode._fields


class Forward(Layer):
    """F9-F11 over `parent` (fine.py, or a stack over it): an established leader's NEWLEADER a
    step after the synchronisation, and the follower's packets between."""

    FIELDS = {"nlq": 0}

    def own_norm(self, node):
        """`nlq` in its one form: only a leader owes NEWLEADER, and only to a learner it still
        forwards to (a learner it dropped, `_drop_learner`, is owed nothing)."""
        if node.nlq:
            keep = node.nlq & node.forwarding & node.learners if node.role == LEADING else 0
            if keep != node.nlq:
                node = node._replace(nlq=keep)
        return node

    def actions(self, h, nodes, down: int, n: int, rules) -> list:
        """The parent's actions, then each leader's owed NEWLEADERs (F9)."""
        out = self.parent.actions(h, nodes, down, n, rules)
        out.extend(("newleader", i, j) for i in range(n) if not down >> i & 1
                   for j in bits(nodes[i].nlq))
        return out

    def act(self, h, nodes, label: tuple, n: int, rules) -> list:
        if label[0] == "newleader":
            _, i, j = label
            lead = nodes[i]
            msg = (NEWLEADER, lead.lconn[j], lead.accepted_epoch)
            return [(i, Step(lead._replace(nlq=lead.nlq & ~(1 << j)), ((j, msg),), _NO))]
        return self._steps(self.parent.act(h, nodes, label, n, rules))

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        kind = msg[0]
        if kind == ACKEPOCH and node.role == LEADING and node.phase == L_BROADCAST:
            return self._step(_hold_newleader(self.parent.deliver(h, node, src, msg, n, rules),
                                              src))
        if (kind in (PROPOSAL, COMMIT) and fine._live(node, src, msg) and node.phase == F_SYNC
                and node.mode != NONE and not node.nl):
            return self._step(_before_newleader(h, node, msg))
        return self._step(self.parent.deliver(h, node, src, msg, n, rules))

    def node_json(self, node) -> dict:
        out = self.parent.node_json(node)
        out.update(newleader_owed=bits(node.nlq))
        return out

    def describe_action(self, label: tuple) -> str:
        if label[0] == "newleader":
            return (f"newleader node {label[1]} to {label[2]} (the LearnerHandler queues NEWLEADER "
                    "after the sync packets and what it forwarded since)")
        return self.parent.describe_action(label)


#: over fine.py: `zk-3.7.0-fwd`
KERNEL = Forward(fine, FwdNode)
norm = KERNEL.norm


def _hold_newleader(st: Step, j: int) -> Step:
    """F9: the established leader's synchronisation of j without its NEWLEADER, which it now
    owes j (`LearnerHandler.run` queues it after `syncFollower`, which ends forwarding to j)."""
    outs = tuple(o for o in st.outs if not (o[0] == j and o[1][0] == NEWLEADER))
    if len(outs) == len(st.outs):
        return st  # not synchronised now (an ACKEPOCH on a stale connection, say)
    return Step(st.node._replace(nlq=st.node.nlq | 1 << j), outs, st.effects)


def _before_newleader(h, node, msg: tuple) -> Step:
    """F10: `Learner.syncWithLeader` before NEWLEADER. PROPOSAL: packetsNotCommitted. COMMIT under
    DIFF (writeToTxnLog): packetsCommitted, after peeking packetsNotCommitted's first entry (a
    NullPointerException when it is empty, as after NEWLEADER: ZOOKEEPER-4394's `_npe`). COMMIT
    under TRUNC (the snapshot not yet taken): the first pending proposal applied in memory when
    it is the one committed ("Committing ..., but next proposal is ..." otherwise)."""
    if msg[0] == PROPOSAL:
        return Step(node._replace(pending=node.pending + (msg[2],)), _NO, _NO)
    z = msg[2]
    if node.mode != TRUNC:
        return Step(node._replace(pcommit=max(node.pcommit, z)), _NO, h._npe(node, msg))
    if node.pending and node.pending[0][0] == z:
        return Step(node._replace(mem=node.mem + node.pending[:1], pending=node.pending[1:],
                                  commit=max(node.commit, z)), _NO, _NO)
    return Step(node, _NO, h._npe(node, msg))
