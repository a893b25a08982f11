"""Byte encodings of db-19 values: the canonical `DSEZAB01` dump (models/common/codec.py), the
explorer's former field-by-field encodings of whole node states and messages (E1; the explorer
now fingerprints the marshal encoding, benchmarks/explore_bench.py keeps these as its baseline),
plus JSON views for traces and reports.

The field-by-field encodings are injective: every variable-length part is length-prefixed and every
field of a node is included (timer ticks live outside `Node`, so they are excluded by construction).
"""

from __future__ import annotations

import struct

from models.common import codec as common
from models.common.codec import dump, dump_node, parse_dump, txn_json, txns  # noqa: F401  (re-exported)

from .state import MSG_FIELDS, MSG_NAMES, NEWLEADER, PROPOSE, Node, bits

DUMP_MAGIC = common.DUMP_MAGIC


# --- field-by-field encodings (E1) ----------------------------------------------------------------


def encode_node(node: Node) -> bytes:
    """Every field of a node, injectively."""
    ints = [
        node.id, node.current_epoch, node.accepted_epoch, node.last_committed[0],
        node.last_committed[1], node.role, 0 if node.leader_id is None else node.leader_id + 1,
        node.vote_target_id, node.vote_target_zxid[0], node.vote_target_zxid[1],
        node.pending_new_epoch, node.epoch_acks, node.leader_acks, int(node.synced),
        node.next_counter, len(node.vote_view),
    ]
    ints.extend(0 if v is None else v + 1 for v in node.vote_view)
    ints.append(len(node.ack_set))
    for (e, c), mask in node.ack_set:
        ints.extend((e, c, mask))
    return struct.pack(f"<{len(ints)}I", *ints) + txns(node.history)


def encode_msg(msg: tuple) -> bytes:
    kind = msg[0]
    if kind == NEWLEADER:
        return struct.pack("<BI", kind, msg[1]) + txns(msg[2])
    if kind == PROPOSE:
        return bytes((kind,)) + txns((msg[1],))
    ints = []
    for v in msg[1:]:
        if isinstance(v, tuple):
            ints.extend(v)
        else:
            ints.append(v)
    return bytes((kind,)) + struct.pack(f"<{len(ints)}I", *ints)


# --- views ----------------------------------------------------------------------------------------


def msg_json(msg: tuple) -> dict:
    return common.msg_json(msg, MSG_NAMES, MSG_FIELDS)


def node_json(node: Node) -> dict:
    out = common.election_json(node)
    out.update(
        pending_new_epoch=node.pending_new_epoch,
        epoch_acks=bits(node.epoch_acks),
        leader_acks=bits(node.leader_acks),
        synced=node.synced,
        next_counter=node.next_counter,
        ack_set=[[list(z), bits(m)] for z, m in node.ack_set],
    )
    return out


def describe_msg(msg: tuple) -> str:
    return common.describe_msg(msg, MSG_NAMES, MSG_FIELDS)
