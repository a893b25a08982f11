"""Views of zab values: the canonical `DSEZAB01` dump (db-19's layout, models/common/codec.py) and
JSON and one-line views.

The dump holds the fields both models share (id, role, epochs, history, last committed), so a zab
cluster dumps in exactly the db-19 layout and `zabmc simulate --model zab` prints a comparable
digest.
"""

from __future__ import annotations

from models.common import codec as common
from models.common.codec import dump, parse_dump, txn_json  # noqa: F401  (re-exported)

from .state import MSG_FIELDS, MSG_NAMES, PHASE_NAMES, Node, bits


def msg_json(msg: tuple) -> dict:
    return common.msg_json(msg, MSG_NAMES, MSG_FIELDS)


def node_json(node: Node) -> dict:
    out = common.election_json(node)
    out.update(
        phase=PHASE_NAMES[node.phase],
        pending_new_epoch=node.pending_new_epoch,
        cepochs=bits(node.cepochs),
        cepoch_max=node.cepoch_max,
        epoch_acks=bits(node.epoch_acks),
        best_epoch=node.best_epoch,
        best_history=[txn_json(t) for t in node.best_history],
        leader_acks=bits(node.leader_acks),
        next_counter=node.next_counter,
        ack_set=[[list(z), bits(m)] for z, m in node.ack_set],
    )
    return out


def describe_msg(msg: tuple) -> str:
    return common.describe_msg(msg, MSG_NAMES, MSG_FIELDS)
