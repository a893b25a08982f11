"""Byte encodings of zab values: the canonical `DSEZAB01` dump (db-19's layout, reused), the
explorer's injective encodings of whole node states and messages, and JSON views.

The dump holds the fields both models share (id, role, epochs, history, last committed), so a zab
cluster dumps in exactly the db-19 layout and `zabmc simulate --model zab` prints a comparable
digest. The fingerprint encodings cover every field of a node (E1).
"""

from __future__ import annotations

import struct

from models.db19.codec import _fmt, _txns, dump, parse_dump, txn_json  # noqa: F401  (re-exported)

from .state import (
    ACKEPOCH,
    MSG_FIELDS,
    MSG_NAMES,
    NEWLEADER,
    PHASE_NAMES,
    PROPOSE,
    ROLE_NAMES,
    Node,
    bits,
    last_zxid,
)


def encode_node(node: Node) -> bytes:
    """Every field of a node, injectively."""
    ints = [
        node.id, node.current_epoch, node.accepted_epoch, node.last_committed[0],
        node.last_committed[1], node.role, 0 if node.leader_id is None else node.leader_id + 1,
        node.vote_target_id, node.vote_target_zxid[0], node.vote_target_zxid[1], node.phase,
        node.pending_new_epoch, node.cepochs, node.cepoch_max, node.epoch_acks, node.best_epoch,
        node.leader_acks, node.next_counter, len(node.vote_view),
    ]
    ints.extend(0 if v is None else v + 1 for v in node.vote_view)
    ints.append(len(node.ack_set))
    for (e, c), mask in node.ack_set:
        ints.extend((e, c, mask))
    return (struct.pack(f"<{len(ints)}I", *ints) + _txns(node.history)
            + _txns(node.best_history))


def encode_msg(msg: tuple) -> bytes:
    kind = msg[0]
    if kind == NEWLEADER:
        return struct.pack("<BI", kind, msg[1]) + _txns(msg[2])
    if kind == ACKEPOCH:
        _, e, ce, (ze, zc), hist = msg
        return struct.pack("<BIIII", kind, e, ce, ze, zc) + _txns(hist)
    if kind == PROPOSE:
        return bytes((kind,)) + _txns((msg[1],))
    ints = []
    for v in msg[1:]:
        if isinstance(v, tuple):
            ints.extend(v)
        else:
            ints.append(v)
    return bytes((kind,)) + struct.pack(f"<{len(ints)}I", *ints)


# --- JSON views -----------------------------------------------------------------------------------


def msg_json(msg: tuple) -> dict:
    out = {"type": MSG_NAMES[msg[0]]}
    for name, v in zip(MSG_FIELDS[msg[0]], msg[1:]):
        if name == "txn":
            out[name] = txn_json(v)
        elif name == "history":
            out[name] = [txn_json(t) for t in v]
        else:
            out[name] = list(v) if isinstance(v, tuple) else v
    return out


def node_json(node: Node) -> dict:
    return {
        "id": node.id,
        "role": ROLE_NAMES[node.role],
        "current_epoch": node.current_epoch,
        "accepted_epoch": node.accepted_epoch,
        "last_zxid": list(last_zxid(node)),
        "last_committed": list(node.last_committed),
        "history": [txn_json(t) for t in node.history],
        "leader_id": node.leader_id,
        "vote_target_id": node.vote_target_id,
        "vote_target_zxid": list(node.vote_target_zxid),
        "vote_view": list(node.vote_view),
        "phase": PHASE_NAMES[node.phase],
        "pending_new_epoch": node.pending_new_epoch,
        "cepochs": bits(node.cepochs),
        "cepoch_max": node.cepoch_max,
        "epoch_acks": bits(node.epoch_acks),
        "best_epoch": node.best_epoch,
        "best_history": [txn_json(t) for t in node.best_history],
        "leader_acks": bits(node.leader_acks),
        "next_counter": node.next_counter,
        "ack_set": [[list(z), bits(m)] for z, m in node.ack_set],
    }


def describe_msg(msg: tuple) -> str:
    fields = ", ".join(f"{k}={_fmt(k, v)}" for k, v in zip(MSG_FIELDS[msg[0]], msg[1:]))
    return f"{MSG_NAMES[msg[0]]}({fields})"
