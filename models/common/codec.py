"""Encodings and views of transactions every model shares: the transaction codec, the canonical
`DSEZAB01` dump (C27; db19's layout, which zab reuses), and the JSON and one-line views of
transactions, zxids and message fields.

The byte encodings are injective: every variable-length part is length-prefixed.
"""

from __future__ import annotations

import struct

from zabmc.core.model import txn_json, txn_str, zxid_str  # noqa: F401  (the transaction views are the contract's; re-exported)

from .state import ROLE_NAMES, Txn, last_zxid

_U32 = struct.Struct("<I")
_NODE_HEAD = struct.Struct("<IBIIIIIII")
_TXN_HEAD = struct.Struct("<III")

DUMP_MAGIC = b"DSEZAB01"


def txns(history: tuple) -> bytes:
    """A sequence of transactions: u32 count, then per transaction epoch, counter, payload length
    (u32 each) and the payload."""
    parts = [_U32.pack(len(history))]
    for (e, c), payload in history:
        parts.append(_TXN_HEAD.pack(e, c, len(payload)))
        parts.append(payload)
    return b"".join(parts)


# --- the DSEZAB01 dump (C27) --------------------------------------------------------------------------


def dump_node(node) -> bytes:
    lz = last_zxid(node)
    lc = node.last_committed
    head = _NODE_HEAD.pack(
        node.id, node.role, node.current_epoch, node.accepted_epoch, lz[0], lz[1], lc[0], lc[1],
        len(node.history),
    )
    return head + txns(node.history)[4:]


def dump(nodes) -> bytes:
    """The canonical dump (C27): magic, u32 node count, nodes in ascending id."""
    ordered = sorted(nodes, key=lambda x: x.id)
    return DUMP_MAGIC + _U32.pack(len(ordered)) + b"".join(dump_node(x) for x in ordered)


def parse_dump(data: bytes) -> list[dict]:
    """Parse a dump back into per-node field dicts: the format's reader, which the tests hold
    `dump` to (C27)."""
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


# --- JSON views -----------------------------------------------------------------------------------


def value_json(name: str, v):
    """A message field's JSON: a transaction (`txn`), a sequence of them (`history`), a zxid or
    other tuple as a list, anything else as it is."""
    if name == "txn":
        return txn_json(v)
    if name == "history":
        return [txn_json(t) for t in v]
    if isinstance(v, tuple):
        return list(v)
    return v


def msg_json(msg: tuple, names: tuple, fields: tuple) -> dict:
    """A message `(kind, *values)` as `{"type": names[kind], field: value_json(...), ...}`."""
    out = {"type": names[msg[0]]}
    for name, v in zip(fields[msg[0]], msg[1:]):
        out[name] = value_json(name, v)
    return out


def election_json(node) -> dict:
    """The JSON of the fields db19 and zab nodes share, in their order: identity, role, epochs,
    log, and db-19's FastLeaderElection variables. Each model's `node_json` goes on from here."""
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
    }


# --- one-line views -------------------------------------------------------------------------------


def value_str(name: str, v) -> str:
    """A message field for people: `e.c:payload` for a transaction, `[...]` for a history, `e.c`
    for a zxid."""
    if name == "txn":
        return txn_str(v)
    if name == "history":
        return "[" + " ".join(txn_str(t) for t in v) + "]"
    if isinstance(v, tuple):
        return f"{v[0]}.{v[1]}"
    return str(v)


def describe_msg(msg: tuple, names: tuple, fields: tuple) -> str:
    """`Name(field=value, ...)`."""
    parts = ", ".join(f"{k}={value_str(k, v)}" for k, v in zip(fields[msg[0]], msg[1:]))
    return f"{names[msg[0]]}({parts})"
