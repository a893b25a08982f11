"""The db-19 model adapter: binds the kernel in `handlers` to the `zabmc.core.model.Model` interface."""

from __future__ import annotations

from models.common.state import leader_of
from zabmc.core.model import Symmetry

from . import codec, handlers
from .state import LEADING, fresh_node


class Db19Model:
    name = "db19"
    description = "the db-19 lab design, literal reading of its pseudo-code (docs/semantics.md)"
    network_assumption = "any"
    #: the seed's `persistent` group (E7)
    durable = ("current_epoch", "accepted_epoch", "history", "last_committed")

    fresh = staticmethod(fresh_node)
    #: C6: a starting node enters Looking
    start = staticmethod(handlers.enter_looking)
    deliver = staticmethod(handlers.deliver)
    timeout = staticmethod(handlers.timeout)
    heartbeat = staticmethod(handlers.heartbeat)
    can_propose = staticmethod(handlers.can_propose)
    propose = staticmethod(handlers.propose)

    @staticmethod
    def is_leading(node) -> bool:
        return node.role == LEADING

    # --- liveness (docs/liveness.md) ---------------------------------------------------------------
    #: the node this one follows: itself when Leading, None when Looking
    leader_of = staticmethod(leader_of)

    @staticmethod
    def established(node) -> bool:
        """An established leader: Leading and synced (a quorum acknowledged NewLeader)."""
        return node.role == LEADING and node.synced

    #: payloads only: the handlers copy a payload (propose, _on_propose, _on_new_leader) and
    #: compare transactions by zxid alone; node ids are not symmetric (docs/check.md, "Symmetry")
    symmetry = Symmetry(
        payloads=True,
        why="client payloads are symmetric (models/db19/handlers.py copies them and compares "
            "zxids only); node ids are not: FastLeaderElection breaks ties by id "
            "(handlers._on_vote: (peer_zxid, voter) > (vote_target_zxid, vote_target_id))")

    dump = staticmethod(codec.dump)
    msg_json = staticmethod(codec.msg_json)
    node_json = staticmethod(codec.node_json)
    describe_msg = staticmethod(codec.describe_msg)


MODEL = Db19Model()
