"""Views of the `zk` model: JSON for traces and `--json`, one-line descriptions, and a canonical
dump (the marshal encoding behind a magic; zk has no seeded-simulator dump format)."""

from __future__ import annotations

from marshal import dumps

from models.common.codec import txn_json
from models.common.codec import zxid_str as _z

from .state import MODE_NAMES, MSG_FIELDS, MSG_NAMES, PHASE_NAMES, ROLE_NAMES, Node, bits, last_zxid, log_of


def msg_json(msg: tuple) -> dict:
    out = {"type": MSG_NAMES[msg[0]]}
    for name, v in zip(MSG_FIELDS[msg[0]], msg[1:]):
        if name == "txn":
            v = txn_json(v)
        elif name == "txns":
            v = [txn_json(t) for t in v]
        elif name == "mode":
            v = MODE_NAMES[v]
        elif name == "state":
            v = ROLE_NAMES[v]
        elif name == "vote":
            v = vote_json(v)
        elif isinstance(v, tuple):
            v = list(v)
        out[name] = v
    return out


def vote_json(v) -> dict | None:
    if not v:
        return None
    return {"leader": v[2], "zxid": list(v[1]), "peer_epoch": v[0]}


def _votes_json(votes) -> list:
    return [None if e is None else {"vote": vote_json(e[0]), "round": e[1], "state": ROLE_NAMES[e[2]]}
            for e in votes]


def describe_msg(msg: tuple) -> str:
    parts = []
    for name, v in zip(MSG_FIELDS[msg[0]], msg[1:]):
        if name == "txn":
            v = _z(v[0])
        elif name == "txns":
            v = "[" + " ".join(_z(t[0]) for t in v) + "]"
        elif name == "mode":
            v = MODE_NAMES[v]
        elif name == "state":
            v = ROLE_NAMES[v]
        elif name == "vote":
            v = f"({v[2]}, {_z(v[1])}, epoch {v[0]})"
        elif name in ("zxid", "last_zxid"):
            v = _z(v)
        parts.append(f"{name}={v}")
    return f"{MSG_NAMES[msg[0]]}({', '.join(parts)})"


def node_json(node: Node) -> dict:
    out = {
        "id": node.id,
        "role": ROLE_NAMES[node.role],
        "phase": PHASE_NAMES[node.phase],
        "leader": node.leader,
        "accepted_epoch": node.accepted_epoch,
        "current_epoch": node.current_epoch,
        "last_zxid": list(last_zxid(log_of(node))),
        "last_committed": list(node.last_committed),
        "connection": node.conn,
        "history": [txn_json(t) for t in node.history],
        "memory_only": [txn_json(t) for t in node.mem],
        "commit": list(node.commit),
        "sync_mode": MODE_NAMES[node.mode],
        "packets_not_committed": [txn_json(t) for t in node.pending],
        "packets_committed_upto": list(node.pcommit),
        "newleader_received": node.nl,
        "learners": bits(node.learners),
        "learner_connections": list(node.lconn),
        "connecting": bits(node.connecting),
        "electing": bits(node.electing),
        "acked_newleader": bits(node.ackld),
        "forwarding": bits(node.forwarding),
        "outstanding": [[list(z), bits(m)] for z, m in node.acks],
    }
    if node.cut:  # connections that lost a message (D8)
        out["stalled_connections"] = bits(node.cut)
    if node.lclock:  # the election at FLE's grain (zk-fle): its variables
        out.update(logicalclock=node.lclock, vote=vote_json(node.vote),
                   recvset=_votes_json(node.recv), outofelection=_votes_json(node.ooe))
    return out


# What each of the model's actions says of itself (`describe_action`), its label's fields by index.
_ACTION_TEXT = {
    "join": "join node {1} to leader {2}",
    "decide": "decide node {1} (FLE: its vote has a quorum and nothing better came)",
    "connect": "connect node {1} to leader {2}",
    "log": "log node {1} (the SyncThread writes its queued transactions)",
    "lost": "lost node {1}'s connection to node {2}",
}


def describe_action(label: tuple) -> str:
    if label[0] == "elect":
        return f"elect node {label[1]} (quorum {bits(label[2])})"
    text = _ACTION_TEXT.get(label[0])
    return text.format(*label) if text is not None else " ".join(map(str, label))


def dump(nodes) -> bytes:
    return b"ZKZAB001" + dumps(tuple(tuple(x) for x in nodes), 2)
