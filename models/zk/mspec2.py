"""zk (3.8.0) at the grain of Remix's MSPEC_2 (Disalg-ICS-NJU/zookeeper-tla-spec,
low-level-spec/mixed-spec/mixed_v2): a follower takes NEWLEADER in two actions,
`FollowerProcessNEWLEADER` (currentEpoch written) and
`FollowerProcessNEWLEADERAfterCurrentEpochUpdated` (packetsNotCommitted written and the ACK sent, at
once). Both halves are zk's kernel (`handlers._on_newleader`) with other rules.

Not registered in zabmc.core.model.MODELS, and not a release: benchmarks/remix_grain.py registers it
in its own child process to measure ZOOKEEPER-4643's search at the grain Remix found it on
(reports/benchmarks.md), and `zabmc real` could not run its traces.
"""

from __future__ import annotations

from zabmc.core.model import Step

from . import codec, handlers
from .handlers import FixedRules
from .model import ZkModel
from .scenarios import SCENARIOS
from .state import FOLLOWING, NEWLEADER, Node, extend_node

_NO = ()

Mspec2Node = extend_node("Mspec2Node", __name__, "zk's node, and `owes`: the epoch of a NEWLEADER "
                         "whose currentEpoch is written and whose proposals and ACK are not "
                         "(0: none; memory only).", base=Node, owes=0)


class Mspec2Rules(FixedRules):
    """The second step writes the proposals before it acknowledges, as MSPEC_2's does: the
    `sync` rule of zk-fixed, reached after currentEpoch (3.8.0's order, Learner.syncWithLeader)."""

    tag = "3.8.0-mspec2"


RULES = Mspec2Rules()


def norm(node):
    """Only a follower inside NEWLEADER owes its second step."""
    if node.owes and (node.role != FOLLOWING or not node.nl):
        node = node._replace(owes=0)
    return node


class _FirstHalf(Mspec2Rules):
    """zk's NEWLEADER up to currentEpoch: the proposals left for the second action."""

    newleader = "uptodate"


_FIRST = _FirstHalf()


def first_half(node, epoch: int):
    """NEWLEADER's first action: a TRUNC's snapshot, then currentEpoch (3.8.0 Learner.java
    746-752), as zk's kernel does them; the proposals kept and nothing sent."""
    return handlers._on_newleader(node, epoch, _FIRST).node._replace(owes=epoch)


def second_half(node) -> tuple:
    """NEWLEADER's second action: packetsNotCommitted written, then the ACK. Returns the node and
    what it sends."""
    st = handlers._on_newleader(node._replace(nl=False, owes=0), node.owes, RULES)
    return st.node, st.outs


def _settled(node) -> tuple:
    """The node with its second step done, if it owed one: the thread does it before it reads
    another packet, times out or notices a lost connection (as the epoch grain's K2)."""
    return second_half(node) if node.owes else (node, _NO)


def _n(st):
    return None if st is None else Step(norm(st.node), st.outs, st.effects)


class Mspec2Model(ZkModel):
    """zk with NEWLEADER in MSPEC_2's two actions."""

    fresh = staticmethod(lambda node_id, n: Mspec2Node(node_id))

    def __init__(self):
        super().__init__(RULES, "zk (3.8.0) with NEWLEADER in two steps as Remix's MSPEC_2: "
                                "currentEpoch, then the proposals written and the ACK")

    def start(self, node, n):
        return _n(handlers.start(node, n, self.rules))

    def deliver(self, node, src, msg, n):
        node, pre = _settled(node)
        st = handlers.deliver(node, src, msg, n, self.rules)
        if msg[0] == NEWLEADER and st.node.nl and not node.nl:
            return Step(first_half(node, msg[2]), pre, _NO)
        st = _n(st)
        return Step(st.node, pre + st.outs, st.effects)

    def timeout(self, node, n):
        node, pre = _settled(node)
        st = handlers.timeout(node, n, self.rules)
        if st is None:
            return Step(norm(node), pre, _NO) if pre else None
        return _n(Step(st.node, pre + st.outs, st.effects))

    def propose(self, node, payload, n):
        return _n(handlers.propose(node, payload, n, self.rules))

    def on_drop(self, nodes, src, dst, msg, n):
        return [(i, _n(st)) for i, st in handlers.on_drop(nodes, src, dst, msg, n, self.rules)]

    def actions(self, nodes, down, n):
        out = handlers.actions(nodes, down, n, self.rules)
        owing = [i for i in range(n) if not down >> i & 1 and nodes[i].owes]
        if owing:  # nothing is handed to the SyncThread before the second step
            out = [a for a in out if not (a[0] == "log" and nodes[a[1]].owes)]
            out.extend(("newleader", i) for i in owing)
        return out

    def act(self, nodes, label, n):
        i = label[1]
        if label[0] == "newleader":
            node, out = second_half(nodes[i])
            return [(i, Step(norm(node), out, _NO))]
        if label[0] == "lost" and nodes[i].owes:
            node, pre = second_half(nodes[i])
            nodes = nodes[:i] + (node,) + nodes[i + 1:]
            return [(k, _n(Step(st.node, pre + st.outs, st.effects) if k == i else st))
                    for k, st in handlers.act(nodes, label, n, self.rules)]
        return [(k, _n(st)) for k, st in handlers.act(nodes, label, n, self.rules)]

    @staticmethod
    def describe_action(label):
        if label[0] == "newleader":
            return (f"newleader node {label[1]} (NEWLEADER's proposals written, then its ACK, "
                    "after currentEpoch)")
        return codec.describe_action(label)

    @staticmethod
    def busy(node) -> bool:
        return bool(node.owes)


MODEL = Mspec2Model()
MODEL.scenarios = SCENARIOS[MODEL.name]  # remix-epoch1, Remix's start (models/zk/scenarios)
