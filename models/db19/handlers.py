"""The db-19 handlers: the one transition kernel every engine steps.

Each public function maps (node state, input) to a `Step(node, outs, effects)` and touches nothing
else. The code follows the seed document's pseudo-code line by line, with the open points decided by
docs/semantics.md (cited as C<n>); where the pseudo-code looks buggy it is still
followed literally, because finding such bugs is zabmc's job.

Effects: `("timer",)` for reset_election_deadline(), `("leading", e)` when become_leading() runs with
pending_new_epoch e, `("synced", e)` when synced becomes true in current_epoch e, `("proposed", txn)`.
"""

from __future__ import annotations

from bisect import bisect_left

from models.common.ctx import Ctx
from models.common.state import peers  # noqa: F401  (re-exported: every other node, C1)
from zabmc.core.model import EFF_TIMER, LEADING as EFF_LEADING, PROPOSED, SYNCED, Step

from .state import (
    ACK,
    ACKEPOCH,
    ACKLEADER,
    COMMIT,
    FOLLOWING,
    LEADING,
    LFL,
    LOOKING,
    NEWEPOCH,
    NEWLEADER,
    PROPOSE,
    VOTE,
    Node,
    Txn,
    last_zxid,
)

# The handler context (models/common/ctx.py); its quorum `q` is a majority, n // 2 + 1.
_Ctx = Ctx


# --- FastLeaderElection (Phase 0) ---------------------------------------------------------------


def _enter_looking(c: _Ctx) -> None:
    node = c.node
    me, lz, ce = node.id, last_zxid(node), node.current_epoch
    view = [None] * c.n
    view[me] = me
    c.node = node._replace(
        role=LOOKING, vote_target_id=me, vote_target_zxid=lz, vote_view=tuple(view)
    )
    c.broadcast((LFL, me, lz, ce))
    c.broadcast((VOTE, me, lz, ce, me))
    _check_election(c)


# `_check_election` and `_become_following` are zab's too (models/zab/handlers.py): zab's Phase 0
# is db-19's FastLeaderElection, and stays written out there, where `zabmc mutate` mutates it.
def _check_election(c: _Ctx) -> None:
    node = c.node
    target = node.vote_target_id
    if sum(1 for v in node.vote_view if v == target) >= c.q:
        if target == node.id:
            _become_leading(c)
        else:
            _become_following(c, target)


def _become_following(c: _Ctx, leader: int) -> None:
    # C14: nothing but the role and the leader.
    c.node = c.node._replace(role=FOLLOWING, leader_id=leader)


def _vote_reply(node: Node, src: int) -> Step:
    """C13: a node that is not Looking answers a Vote or LookForLeader with its current vote,
    unicast to the sender, and changes nothing else. Built without a `_Ctx`: by C22 these replies
    are nearly all the messages of a long run."""
    msg = (VOTE, node.id, last_zxid(node), node.current_epoch, node.vote_target_id)
    return Step(node, ((src, msg),), ())


def _on_vote(c: _Ctx, src: int, voter: int, peer_zxid: tuple, leader_chosen: int) -> None:
    """A Vote (or, by C12, a LookForLeader) while Looking; `deliver` answers the others (C13)."""
    node = c.node
    if (peer_zxid, voter) > (node.vote_target_zxid, node.vote_target_id):
        view = [None] * c.n
        view[node.id] = voter
        node = node._replace(vote_target_id=voter, vote_target_zxid=peer_zxid, vote_view=tuple(view))
        c.node = node
        # C21: our own zxid, the new target as leader.
        c.broadcast((VOTE, node.id, last_zxid(node), node.current_epoch, voter))
    view = list(node.vote_view)
    view[voter] = leader_chosen
    c.node = node._replace(vote_view=tuple(view))
    _check_election(c)


# --- Discovery and Synchronization (Phases 1-2) -------------------------------------------------


def _become_leading(c: _Ctx) -> None:
    node = c.node
    e = max(node.accepted_epoch, node.current_epoch) + 1
    # C15: synced, ack_set and next_counter are left as they are.
    c.node = node._replace(
        role=LEADING, pending_new_epoch=e, accepted_epoch=e, epoch_acks=1 << node.id
    )
    c.effects.append((EFF_LEADING, e))
    c.broadcast((NEWEPOCH, e))
    _try_finish_discovery(c)


def _try_finish_discovery(c: _Ctx) -> None:
    node = c.node
    if node.epoch_acks.bit_count() < c.q:
        return
    node = node._replace(
        current_epoch=node.pending_new_epoch, next_counter=0, leader_acks=1 << node.id
    )
    c.node = node
    c.broadcast((NEWLEADER, node.current_epoch, node.history))
    _try_finish_sync(c)


def _try_finish_sync(c: _Ctx) -> None:
    node = c.node
    if node.synced or node.leader_acks.bit_count() < c.q:
        return
    node = node._replace(synced=True)
    c.effects.append((SYNCED, node.current_epoch))
    lz = last_zxid(node)
    if lz > node.last_committed:
        node = node._replace(last_committed=lz)
        c.broadcast((COMMIT, lz))
    c.node = node


def _on_new_epoch(c: _Ctx, src: int, e: int) -> None:
    node = c.node
    if e > node.accepted_epoch:
        node = node._replace(accepted_epoch=e)
        c.node = node
        if node.role != FOLLOWING:
            _become_following(c, src)
        c.send(src, (ACKEPOCH, node.current_epoch, last_zxid(node)))
    elif e == node.accepted_epoch:
        c.send(src, (ACKEPOCH, node.current_epoch, last_zxid(node)))
    c.effects.append(EFF_TIMER)  # C23: also for a stale NewEpoch


def _on_ack_epoch(c: _Ctx, src: int) -> None:
    node = c.node
    if node.role != LEADING:
        return
    # C24: the message carries no epoch; every AckEpoch counts and re-runs discovery.
    c.node = node._replace(epoch_acks=node.epoch_acks | (1 << src))
    _try_finish_discovery(c)


def _on_new_leader(c: _Ctx, src: int, e: int, hist: tuple) -> None:
    node = c.node
    if e >= node.accepted_epoch:
        # C19: the whole history is replaced; last_committed is left alone.
        c.node = node._replace(accepted_epoch=e, current_epoch=e, history=hist)
        if c.node.role != FOLLOWING:
            _become_following(c, src)
        c.effects.append(EFF_TIMER)
        c.send(src, (ACKLEADER, e))


def _on_ack_leader(c: _Ctx, src: int, e: int) -> None:
    node = c.node
    if node.role != LEADING or e != node.current_epoch:
        return
    c.node = node._replace(leader_acks=node.leader_acks | (1 << src))
    _try_finish_sync(c)


# --- Broadcast (Phase 3) --------------------------------------------------------------------------


# ack_set is a tuple of (zxid, mask) pairs sorted by zxid, one per zxid. It is never pruned, so it
# holds every zxid ever proposed or acked: look-ups bisect (`(zxid,)` sorts just before
# `(zxid, mask)`) instead of scanning, which made long runs quadratic in the proposal count.


def _ack_entry(ack_set: tuple, zxid: tuple) -> int:
    k = bisect_left(ack_set, (zxid,))
    if k < len(ack_set) and ack_set[k][0] == zxid:
        return ack_set[k][1]
    return 0


def _with_ack_entry(ack_set: tuple, zxid: tuple, mask: int) -> tuple:
    k = bisect_left(ack_set, (zxid,))
    j = k + 1 if k < len(ack_set) and ack_set[k][0] == zxid else k
    return ack_set[:k] + ((zxid, mask),) + ack_set[j:]


def _try_commit(c: _Ctx, zxid: tuple) -> None:
    node = c.node
    if zxid <= node.last_committed:
        return
    if _ack_entry(node.ack_set, zxid).bit_count() >= c.q:
        c.node = node._replace(last_committed=zxid)
        c.broadcast((COMMIT, zxid))


def _on_propose(c: _Ctx, src: int, txn: tuple) -> None:
    node = c.node
    if node.role != FOLLOWING or src != node.leader_id:
        return
    # C25: no contiguity check; a rejected Propose resets nothing and sends nothing.
    if txn[0] > last_zxid(node):
        c.node = node._replace(history=node.history + (txn,))
        c.effects.append(EFF_TIMER)
        c.send(src, (ACK, txn[0]))


def _on_ack(c: _Ctx, src: int, zxid: tuple) -> None:
    node = c.node
    if node.role != LEADING:
        return
    mask = _ack_entry(node.ack_set, zxid) | (1 << src)  # C17: creates a missing entry
    c.node = node._replace(ack_set=_with_ack_entry(node.ack_set, zxid, mask))
    _try_commit(c, zxid)


def _on_commit(c: _Ctx, src: int, zxid: tuple) -> None:
    node = c.node
    if src == node.leader_id:  # C18
        c.effects.append(EFF_TIMER)
    if node.last_committed < zxid <= last_zxid(node):
        c.node = node._replace(last_committed=zxid)


# --- public kernel ----------------------------------------------------------------------------------


def enter_looking(node: Node, n: int) -> Step:
    """The "on entering Looking" block (start-up C6 and the election timeout C10)."""
    c = _Ctx(node, n)
    _enter_looking(c)
    return c.done()


def deliver(node: Node, src: int, msg: tuple, n: int) -> Step:
    """Handle one RPC from `src`."""
    kind = msg[0]
    if kind <= VOTE and node.role != LOOKING:  # LookForLeader or Vote while not Looking: C13
        return _vote_reply(node, src)
    c = _Ctx(node, n)
    if kind == VOTE:
        _on_vote(c, src, msg[1], msg[2], msg[4])
    elif kind == LFL:
        _on_vote(c, src, msg[1], msg[2], msg[1])  # C12
    elif kind == NEWEPOCH:
        _on_new_epoch(c, src, msg[1])
    elif kind == ACKEPOCH:
        _on_ack_epoch(c, src)
    elif kind == NEWLEADER:
        _on_new_leader(c, src, msg[1], msg[2])
    elif kind == ACKLEADER:
        _on_ack_leader(c, src, msg[1])
    elif kind == PROPOSE:
        _on_propose(c, src, msg[1])
    elif kind == ACK:
        _on_ack(c, src, msg[1])
    elif kind == COMMIT:
        _on_commit(c, src, msg[1])
    else:
        raise ValueError(f"unknown RPC kind {kind!r}")
    return c.done()


def timeout(node: Node, n: int) -> Step | None:
    """C10's timeout branch: a non-Leading node re-enters Looking. None for a leader."""
    if node.role == LEADING:
        return None
    return enter_looking(node, n)


def heartbeat(node: Node, n: int) -> Step | None:
    """C10's heartbeat branch: a synced leader re-sends Commit(last_committed)."""
    if node.role != LEADING or not node.synced:
        return None
    c = _Ctx(node, n)
    c.broadcast((COMMIT, node.last_committed))
    return c.done()


def can_propose(node: Node) -> bool:
    return node.role == LEADING and node.synced


def propose(node: Node, payload: bytes, n: int) -> Step:
    """propose(payload); the caller guarantees `can_propose(node)`."""
    c = _Ctx(node, n)
    counter = node.next_counter + 1
    zxid = (node.current_epoch, counter)
    txn = Txn(zxid, payload)
    c.node = node._replace(
        next_counter=counter,
        history=node.history + (txn,),
        ack_set=_with_ack_entry(node.ack_set, zxid, 1 << node.id),
    )
    c.effects.append((PROPOSED, txn))
    c.broadcast((PROPOSE, txn))
    _try_commit(c, zxid)
    return c.done()
