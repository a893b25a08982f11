"""Node state, transactions and the eleven messages of the paper-faithful ZAB model.

Everything here is an immutable value. A node is a `Node` named tuple; a message is a plain tuple
whose first element is its kind, so two different kinds never compare equal. Zxids are
`(epoch, counter)` tuples compared lexicographically; `(0, 0)` means "none".

Names follow DSN 2011 §IV (CEPOCH, NEWEPOCH, ACK-E, NEWLEADER, ACK-LD, COMMIT-LD, PROPOSE, ACK,
COMMIT) in db-19's spelling, plus db-19's two election messages (LookForLeader, Vote).
The paper's `f.p` (last new-epoch proposal acknowledged) is `accepted_epoch`; its `f.a` (last
new-leader proposal acknowledged, the follower's current epoch) is `current_epoch`.
"""

from __future__ import annotations

from typing import NamedTuple

# A transaction is the plain tuple `(zxid, payload)` (plain, so states marshal canonically).
from models.common.state import (  # noqa: F401  (re-exported)
    FOLLOWING,
    LEADING,
    LOOKING,
    ROLE_NAMES,
    ZERO,
    Txn,
    bits,
    election_fresh,
    history_last,
    last_zxid,
    quorum,
)

# Message kinds, in protocol order. The names and fields of the messages zab shares with db-19
# (the election's, NEWEPOCH to ACK-LD, PROPOSE to COMMIT) are db-19's on purpose, as in the paper's
# mapping to db-19's spelling (models/zab/README.md); each model lists its own whole vocabulary.
(LFL, VOTE, CEPOCH, NEWEPOCH, ACKEPOCH, NEWLEADER, ACKLEADER, COMMITLEADER, PROPOSE, ACK,
 COMMIT) = range(11)
# zab's messages are db-19's (models/db19/state.py) with CEpoch and CommitLeader added; the two
# tables are written out in each model, deliberately, because they are each model's wire format.
MSG_NAMES = (
    "LookForLeader",
    "Vote",
    "CEpoch",
    "NewEpoch",
    "AckEpoch",
    "NewLeader",
    "AckLeader",
    "CommitLeader",
    "Propose",
    "Ack",
    "Commit",
)
# Field names of each message after its kind tag.
MSG_FIELDS = (
    ("src_id", "last_zxid", "peer_epoch"),
    ("voter_id", "last_zxid", "peer_epoch", "leader_id"),
    ("accepted_epoch",),
    ("new_epoch",),
    ("new_epoch", "current_epoch", "last_zxid", "history"),
    ("new_epoch", "history"),
    ("new_epoch",),
    ("new_epoch", "zxid"),
    ("txn",),
    ("zxid",),
    ("epoch", "zxid"),
)

# Leader phases (`Node.phase`); 0 on every node that is not Leading.
NOT_LEADING = 0
P_CEPOCH = 1  # Phase 1, step l.1.1: collecting CEPOCH from a quorum
P_ACKEPOCH = 2  # Phase 1, step l.1.2: NEWEPOCH(e) sent, collecting ACK-E from a quorum
P_SYNC = 3  # Phase 2: NEWLEADER(e, I_e) sent, collecting ACK-LD from a quorum
P_BROADCAST = 4  # Phase 3: established leader of epoch e
PHASE_NAMES = ("-", "discovery/cepoch", "discovery/ack-e", "synchronization", "broadcast")


class Node(NamedTuple):
    """One server's state (the simulator's timer ticks live in the simulator)."""

    # The first ten fields are db19's too (models/common/state.py's `election_fresh` and
    # codec.py's `election_json` read them); a NamedTuple cannot inherit fields, so both models
    # spell them.
    id: int
    # persistent (DSN 2011 Table I)
    current_epoch: int  # f.a
    accepted_epoch: int  # f.p
    history: tuple  # h_f, of (zxid, payload)
    last_committed: tuple  # zxid of the last delivered txn; the delivered sequence is the prefix <= it
    # volatile
    role: int
    leader_id: int | None  # the node this one follows (itself when Leading); None when Looking
    # election (db-19 FastLeaderElection); only meaningful while Looking
    vote_target_id: int
    vote_target_zxid: tuple
    vote_view: tuple  # indexed by voter id: the leader that voter chose, or None
    # leader-only; reset on every new leadership and on leaving it
    phase: int
    pending_new_epoch: int  # e, once chosen (step l.1.1); 0 before
    cepochs: int  # bit set: CEPOCH received (self included)
    cepoch_max: int  # the largest epoch in those CEPOCHs (own accepted_epoch included)
    epoch_acks: int  # bit set: ACK-E received (self included); later the forwarding set
    best_epoch: int  # the best ACK-E so far (step l.1.2): its current epoch ...
    best_history: tuple  # ... and its history (cleared once the initial history is chosen)
    leader_acks: int  # bit set: ACK-LD received (self included)
    next_counter: int
    ack_set: tuple  # sorted ((zxid, bit set), ...) for proposals not yet committed


def fresh_node(node_id: int, n: int) -> Node:
    """A node before start-up: everything zero or empty, voting for itself."""
    return Node(
        **election_fresh(node_id, n),
        phase=NOT_LEADING,
        pending_new_epoch=0,
        cepochs=0,
        cepoch_max=0,
        epoch_acks=0,
        best_epoch=0,
        best_history=(),
        leader_acks=0,
        next_counter=0,
        ack_set=(),
    )


# The leader-only fields as a follower or a Looking node holds them.
LEADER_RESET = dict(
    phase=NOT_LEADING, pending_new_epoch=0, cepochs=0, cepoch_max=0, epoch_acks=0, best_epoch=0,
    best_history=(), leader_acks=0, next_counter=0, ack_set=(),
)

