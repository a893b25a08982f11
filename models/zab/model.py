"""The zab model adapter: binds the kernel in `handlers`, with one `Rules` object, to the
`zabmc.model.Model` interface.

`ZabModel(rules)` is the whole variation mechanism: `MODEL` uses `Rules()` (db-19's zxid-ordered
election), `OMEGA` uses `OmegaRules()` (a data-blind leader oracle), and the seeded mutations in
tests/test_zab_mutations.py pass a `Rules` subclass that overrides one decision. That includes what
a crash keeps (`durable`, read from the rules) and what a restart recovers (`start`, through
`Rules.recover`; models/zab/README.md, D19-D21).
"""

from __future__ import annotations

from zabmc.model import Step

from . import codec, handlers
from .handlers import OmegaRules, Rules
from .state import FOLLOWING, LEADING, P_BROADCAST, fresh_node


class ZabModel:
    network_assumption = "fifo"
    fresh = staticmethod(fresh_node)

    def __init__(self, rules: Rules | None = None, name: str | None = None,
                 description: str | None = None):
        self.rules = rules if rules is not None else Rules()
        tag = self.rules.tag
        self.name = name or ("zab" if not tag else f"zab-{tag}")
        self.description = description or (
            "ZAB as DSN 2011 §IV-V describes it, with db-19's FastLeaderElection"
            + (f" ({tag})" if tag else "")
        )

    def __repr__(self) -> str:
        return f"ZabModel({type(self.rules).__name__}(), name={self.name!r})"

    @property
    def durable(self) -> tuple:
        """The fields a crash keeps (E7): the rules' (the paper's persistent variables, D19)."""
        return self.rules.durable

    # --- the kernel --------------------------------------------------------------------------------
    def start(self, node, n: int) -> Step:
        """A starting node (start-up, and every restart) recovers its disk and enters Looking (D20)."""
        return handlers.start(node, n, self.rules)

    def deliver(self, node, src: int, msg, n: int) -> Step:
        return handlers.deliver(node, src, msg, n, self.rules)

    def timeout(self, node, n: int) -> Step:
        return handlers.timeout(node, n, self.rules)

    def heartbeat(self, node, n: int) -> Step | None:
        return handlers.heartbeat(node, n, self.rules)

    def propose(self, node, payload: bytes, n: int) -> Step:
        return handlers.propose(node, payload, n, self.rules)

    can_propose = staticmethod(handlers.can_propose)
    is_leading = staticmethod(handlers.is_leading)

    # --- liveness (docs/liveness.md) ---------------------------------------------------------------
    @staticmethod
    def leader_of(node):
        """The node this one follows: itself when Leading, None when Looking."""
        if node.role == LEADING:
            return node.id
        return node.leader_id if node.role == FOLLOWING else None

    @staticmethod
    def established(node) -> bool:
        """An established leader: in Phase 3 (a quorum acknowledged NEWLEADER)."""
        return node.role == LEADING and node.phase == P_BROADCAST

    # --- encodings and views -----------------------------------------------------------------------
    dump = staticmethod(codec.dump)
    msg_json = staticmethod(codec.msg_json)
    node_json = staticmethod(codec.node_json)
    describe_msg = staticmethod(codec.describe_msg)


class VoteCycleRules(Rules):
    """A vote order that is not transitive, in the manner of ZOOKEEPER-1419 (whose
    totalOrderPredicate compared epochs so that three votes could each beat the next): between
    equal zxids, node ids beat each other in a circle (1 beats 0, 2 beats 1, 0 beats 2, ...), so
    that with three nodes no vote is the best. Safety is untouched; the election can go round
    forever, which `zabmc check --liveness` finds (docs/liveness.md)."""

    tag = "1419"

    def vote_better(self, peer_zxid, voter, target_zxid, target):
        if peer_zxid != target_zxid:
            return peer_zxid > target_zxid
        return (voter - target) % 3 == 1  # the protocol: voter > target


MODEL = ZabModel()
OMEGA = ZabModel(
    OmegaRules(),
    description="zab with a data-blind leader oracle (votes ordered by node id only)",
)
VOTE_CYCLE = ZabModel(
    VoteCycleRules(),
    description="zab with a vote order that is not transitive (a ZOOKEEPER-1419-style election "
                "bug): safe, not live; for `check --liveness`",
)
