"""The zab model adapter: binds the kernel in `handlers`, with one `Rules` object, to the
`zabmc.core.model.Model` interface.

`ZabModel(rules)` is the whole variation mechanism: `MODEL` uses `Rules()` (db-19's zxid-ordered
election), `OMEGA` uses `OmegaRules()` (a data-blind leader oracle), and the seeded mutations in
tests/test_zab_mutations.py pass a `Rules` subclass that overrides one decision. That includes what
a crash keeps (`durable`, read from the rules) and what a restart recovers (`start`, through
`Rules.recover`; models/zab/README.md, D19-D21).
"""

from __future__ import annotations

from models.common.model import RulesModel
from models.common.state import leader_of
from zabmc.core.model import Symmetry

from . import codec, handlers
from .handlers import OmegaRules, Rules
from .progress import ZabProgress
from .state import LEADING, P_BROADCAST, fresh_node


class ZabModel(RulesModel):
    handlers = handlers
    codec = codec
    fresh = staticmethod(fresh_node)

    def __init__(self, rules: Rules | None = None, name: str | None = None,
                 description: str | None = None):
        super().__init__(rules if rules is not None else Rules())
        tag = self.rules.tag
        self.name = name or ("zab" if not tag else f"zab-{tag}")
        self.description = description or (
            "ZAB as DSN 2011 §IV-V describes it, with db-19's FastLeaderElection"
            + (f" ({tag})" if tag else "")
        )
        # the reduced search's progress measure (models/zab/progress.py), with its own memos
        measure = ZabProgress()
        self.progress = measure.progress
        self.progress_delivered = measure.progress_delivered

    def __repr__(self) -> str:
        return f"ZabModel({type(self.rules).__name__}(), name={self.name!r})"

    #: payloads only (docs/check.md, "Symmetry"); each variant's `vote_better` reads node ids
    symmetry = Symmetry(
        payloads=True,
        why="client payloads are symmetric (models/zab/handlers.py copies them and compares "
            "transactions by zxid and equality only); node ids are not: the election orders "
            "votes by id (handlers.Rules.vote_better: (peer_zxid, voter) > (target_zxid, "
            "target); zab-omega's: voter > target; zab-1419's: (voter - target) % 3 == 1)")

    # The kernel and the views are `RulesModel`'s: `durable` is the rules' (the paper's persistent
    # variables, D19), and `start`, at start-up and every restart, recovers the disk and enters
    # Looking (D20).

    # --- liveness (docs/liveness.md) ---------------------------------------------------------------
    #: the node this one follows: itself when Leading, None when Looking
    leader_of = staticmethod(leader_of)

    @staticmethod
    def established(node) -> bool:
        """An established leader: in Phase 3 (a quorum acknowledged NEWLEADER)."""
        return node.role == LEADING and node.phase == P_BROADCAST


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
