"""Node state, transactions and the nine RPC variants of the db-19 ZAB design.

Everything here is an immutable value. A node is a `Node` named tuple; an RPC is a plain tuple whose
first element is its kind (`LFL` .. `COMMIT`), so two different variants never compare equal.
Zxids are `(epoch, counter)` tuples compared lexicographically (C4); `(0, 0)` means "none".
"""

from __future__ import annotations

from typing import NamedTuple

from models.common.state import (  # noqa: F401  (re-exported)
    FOLLOWING,
    LEADING,
    LOOKING,
    ROLE_NAMES,
    ZERO,
    Txn,
    bits,
    election_fresh,
    last_zxid,
    quorum,
)

# RPC kinds, in the seed document's order.
LFL, VOTE, NEWEPOCH, ACKEPOCH, NEWLEADER, ACKLEADER, PROPOSE, ACK, COMMIT = range(9)
MSG_NAMES = (
    "LookForLeader",
    "Vote",
    "NewEpoch",
    "AckEpoch",
    "NewLeader",
    "AckLeader",
    "Propose",
    "Ack",
    "Commit",
)
# Field names of each RPC after its kind tag, as the seed document spells them.
MSG_FIELDS = (
    ("src_id", "last_zxid", "peer_epoch"),
    ("voter_id", "last_zxid", "peer_epoch", "leader_id"),
    ("new_epoch",),
    ("current_epoch", "last_zxid"),
    ("new_epoch", "history"),
    ("new_epoch",),
    ("txn",),
    ("zxid",),
    ("zxid",),
)


class Node(NamedTuple):
    """One server's state, minus the simulator's timer ticks (those live in the simulator)."""

    # The first ten fields are zab's too (models/common/state.py's `election_fresh` and
    # codec.py's `election_json` read them); a NamedTuple cannot inherit fields, so both models
    # spell them.
    id: int
    # persistent
    current_epoch: int
    accepted_epoch: int
    history: tuple  # of Txn
    last_committed: tuple
    # volatile
    role: int
    leader_id: int | None
    # election
    vote_target_id: int
    vote_target_zxid: tuple
    vote_view: tuple  # indexed by voter id: the leader that voter chose, or None
    # leader-only
    pending_new_epoch: int
    epoch_acks: int  # bit set of node ids
    leader_acks: int  # bit set of node ids
    synced: bool
    next_counter: int
    ack_set: tuple  # sorted ((zxid, bit set of node ids), ...)


def fresh_node(node_id: int, n: int) -> Node:
    """A node before start-up: everything zero or empty, voting for itself."""
    return Node(
        **election_fresh(node_id, n),
        pending_new_epoch=0,
        epoch_acks=0,
        leader_acks=0,
        synced=False,
        next_counter=0,
        ack_set=(),
    )

