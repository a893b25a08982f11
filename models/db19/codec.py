"""Byte encodings of db-19 values: the canonical `DSEZAB01` dump, and the explorer's canonical
encodings of whole node states and messages (E1), plus JSON views for traces and reports.

The fingerprint encodings are injective: every variable-length part is length-prefixed and every
field of a node is included (timer ticks live outside `Node`, so they are excluded by construction).
"""

from __future__ import annotations

import struct

from .state import MSG_FIELDS, MSG_NAMES, NEWLEADER, PROPOSE, ROLE_NAMES, Node, Txn, last_zxid

_U32 = struct.Struct("<I")
_NODE_HEAD = struct.Struct("<IBIIIIIII")
_TXN_HEAD = struct.Struct("<III")

DUMP_MAGIC = b"DSEZAB01"


def _txns(history: tuple) -> bytes:
    parts = [_U32.pack(len(history))]
    for (e, c), payload in history:
        parts.append(_TXN_HEAD.pack(e, c, len(payload)))
        parts.append(payload)
    return b"".join(parts)


def dump_node(node: Node) -> bytes:
    lz = last_zxid(node)
    lc = node.last_committed
    head = _NODE_HEAD.pack(
        node.id, node.role, node.current_epoch, node.accepted_epoch, lz[0], lz[1], lc[0], lc[1],
        len(node.history),
    )
    return head + _txns(node.history)[4:]


def dump(nodes) -> bytes:
    """The canonical dump (C27): magic, u32 node count, nodes in ascending id."""
    ordered = sorted(nodes, key=lambda x: x.id)
    return DUMP_MAGIC + _U32.pack(len(ordered)) + b"".join(dump_node(x) for x in ordered)


def parse_dump(data: bytes) -> list[dict]:
    """Parse a dump back into per-node field dicts (for tests and tooling)."""
    if data[:8] != DUMP_MAGIC:
        raise ValueError("not a DSEZAB01 dump")
    (count,) = _U32.unpack_from(data, 8)
    off = 12
    out = []
    for _ in range(count):
        nid, role, ce, ae, lze, lzc, lce, lcc, hlen = _NODE_HEAD.unpack_from(data, off)
        off += _NODE_HEAD.size
        hist = []
        for _ in range(hlen):
            e, c, plen = _TXN_HEAD.unpack_from(data, off)
            off += _TXN_HEAD.size
            hist.append(Txn((e, c), bytes(data[off : off + plen])))
            off += plen
        out.append(
            dict(id=nid, role=role, current_epoch=ce, accepted_epoch=ae, last_zxid=(lze, lzc),
                 last_committed=(lce, lcc), history=tuple(hist))
        )
    if off != len(data):
        raise ValueError("trailing bytes after the last node")
    return out


# --- explorer encodings (E1) ----------------------------------------------------------------------


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
    return struct.pack(f"<{len(ints)}I", *ints) + _txns(node.history)


def encode_msg(msg: tuple) -> bytes:
    kind = msg[0]
    if kind == NEWLEADER:
        return struct.pack("<BI", kind, msg[1]) + _txns(msg[2])
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


def txn_json(txn: tuple) -> dict:
    return {"zxid": list(txn[0]), "payload": txn[1].decode("ascii", "backslashreplace")}


def _value_json(name: str, v):
    if name == "txn":
        return txn_json(v)
    if name == "history":
        return [txn_json(t) for t in v]
    if isinstance(v, tuple):
        return list(v)
    return v


def msg_json(msg: tuple) -> dict:
    out = {"type": MSG_NAMES[msg[0]]}
    for name, v in zip(MSG_FIELDS[msg[0]], msg[1:]):
        out[name] = _value_json(name, v)
    return out


def node_json(node: Node) -> dict:
    from .state import bits

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
        "pending_new_epoch": node.pending_new_epoch,
        "epoch_acks": bits(node.epoch_acks),
        "leader_acks": bits(node.leader_acks),
        "synced": node.synced,
        "next_counter": node.next_counter,
        "ack_set": [[list(z), bits(m)] for z, m in node.ack_set],
    }


def _fmt_txn(t: tuple) -> str:
    return f"{t[0][0]}.{t[0][1]}:{t[1].decode('ascii', 'backslashreplace')}"


def _fmt(name: str, v) -> str:
    if name == "txn":
        return _fmt_txn(v)
    if name == "history":
        return "[" + " ".join(_fmt_txn(t) for t in v) + "]"
    if isinstance(v, tuple):
        return f"{v[0]}.{v[1]}"
    return str(v)


def describe_msg(msg: tuple) -> str:
    fields = ", ".join(f"{k}={_fmt(k, v)}" for k, v in zip(MSG_FIELDS[msg[0]], msg[1:]))
    return f"{MSG_NAMES[msg[0]]}({fields})"
