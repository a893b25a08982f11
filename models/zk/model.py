"""The zk model adapter: binds the kernel in `handlers`, with one `Rules` object, to the
`zabmc.model.Model` interface. `zk`, `zk-pre3911` and `zk-fixed` differ only in their `Rules`
(models/zk/README.md)."""

from __future__ import annotations

from models.common.model import RulesModel

from . import codec, handlers
from .handlers import Committed393Rules, FixedFleRules, FixedRules, FleRules, Pre3911Rules, Rules
from .state import ELECTION, FOLLOWING, L_BROADCAST, LEADING, Node


def fresh_node(node_id: int, n: int) -> Node:
    return Node(node_id)


class ZkModel(RulesModel):
    handlers = handlers
    codec = codec
    fresh = staticmethod(fresh_node)

    def __init__(self, rules: Rules | None = None, description: str = ""):
        super().__init__(rules if rules is not None else Rules())
        tag = self.rules.tag
        self.name = "zk" if not tag else f"zk-{tag}"
        self.description = description

    def __repr__(self) -> str:
        return f"ZkModel({type(self.rules).__name__}())"

    # --- the model's own actions, and what a lost message does (D1, D6, D8) -------------------------
    def actions(self, nodes, down: int, n: int) -> list:
        return handlers.actions(nodes, down, n, self.rules)

    def act(self, nodes, label: tuple, n: int) -> list:
        return handlers.act(nodes, label, n, self.rules)

    def on_drop(self, nodes, src: int, dst: int, msg, n: int) -> list:
        return handlers.on_drop(nodes, src, dst, msg, n, self.rules)

    describe_action = staticmethod(codec.describe_action)

    # --- liveness (docs/liveness.md) ---------------------------------------------------------------
    @staticmethod
    def leader_of(node):
        """The node this one follows: itself when leading; a follower's leader once it is
        connected to it (from FOLLOWERINFO on: `Learner.connectToLeader` has succeeded; with FLE a
        decided follower waits for `connect`, D1); None while looking or not yet connected."""
        if node.role == LEADING:
            return node.id
        if node.role == FOLLOWING and node.phase != ELECTION:
            return node.leader
        return None

    @staticmethod
    def established(node) -> bool:
        """A leader that a quorum (itself included) acknowledged NEWLEADER to
        (`Leader.waitForNewLeaderAck`, then `startZkServer`: the phase L_BROADCAST)."""
        return node.role == LEADING and node.phase == L_BROADCAST


MODEL = ZkModel(description="ZooKeeper 3.7.0's ZAB 1.0 (FLE outcome, DIFF/TRUNC sync, "
                            "asynchronous transaction log)")
PRE3911 = ZkModel(Pre3911Rules(), description="zk before ZOOKEEPER-3911: DIFF proposals logged "
                                              "only at UPTODATE")
FIXED = ZkModel(FixedRules(), description="zk with ZOOKEEPER-4785's fix (PR #2111): proposals "
                                          "written, then currentEpoch, then ACK of NEWLEADER")
FLE = ZkModel(FleRules(), description="zk with the election at Fast Leader Election's grain "
                                     "(notifications, logical clocks)")
FIXED_FLE = ZkModel(FixedFleRules(), description="zk-fixed with the election at Fast Leader "
                                                 "Election's grain")
R393 = ZkModel(Committed393Rules(), description="ZooKeeper 3.9.3: at NEWLEADER the DIFF's committed "
                                                "transactions written, outstanding ones kept for "
                                                "UPTODATE (PR #2152)")
