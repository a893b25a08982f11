"""Node basics every model shares: roles, zxids, transactions, quorums and bit sets of node ids.

Zxids are `(epoch, counter)` tuples compared lexicographically; `(0, 0)` means "none". A
transaction is the plain tuple `(zxid, payload)`.
"""

from __future__ import annotations

from zabmc.core.model import ROLE_NAMES  # noqa: F401  (re-exported)

# `Node.role`, as the contract in zabmc/core/model.py names it (ROLE_NAMES[role] is how reports print it)
LOOKING, FOLLOWING, LEADING = 0, 1, 2

ZERO = (0, 0)


def Txn(zxid: tuple, payload: bytes) -> tuple:
    """A transaction: the plain tuple `(zxid, payload)`.

    Plain tuples (not named tuples) so that states marshal into canonical bytes at C speed
    (see `zabmc.explore.env`); read them with `t[0]` (zxid) and `t[1]` (payload)."""
    return (zxid, payload)


def election_fresh(node_id: int, n: int) -> dict:
    """The fields db19 and zab nodes share (the first ten of their `Node`s: identity, epochs, log,
    role and db-19's FastLeaderElection variables), as a node holds them before start-up:
    everything zero or empty, voting for itself. Each model's `fresh_node` adds its own."""
    return dict(id=node_id, current_epoch=0, accepted_epoch=0, history=(), last_committed=ZERO,
                role=LOOKING, leader_id=None, vote_target_id=node_id, vote_target_zxid=ZERO,
                vote_view=(None,) * n)


def history_last(history: tuple) -> tuple:
    """The zxid of a history's last transaction, or (0, 0) for an empty history."""
    return history[-1][0] if history else ZERO


def last_zxid(node) -> tuple:
    """The zxid of the last element of `node.history` (C26), or (0, 0) for an empty history."""
    h = node.history
    return h[-1][0] if h else ZERO


def quorum(n: int) -> int:
    return n // 2 + 1


def bits(mask: int) -> list[int]:
    """The node ids in a bit set, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


_PEERS: dict[tuple[int, int], tuple[int, ...]] = {}


def peers(node_id: int, n: int) -> tuple[int, ...]:
    """Every other node, ascending (C1). models/zab/handlers.py keeps a copy of its own, on
    purpose: `zabmc mutate` mutates it there (the note at zab's `_Ctx`)."""
    key = (node_id, n)
    p = _PEERS.get(key)
    if p is None:
        p = _PEERS[key] = tuple(i for i in range(n) if i != node_id)
    return p


def leader_of(node):
    """For a model whose nodes name their leader in `leader_id`: the node this one follows,
    itself when Leading, None when Looking (the contract's liveness hook)."""
    if node.role == LEADING:
        return node.id
    return node.leader_id if node.role == FOLLOWING else None
