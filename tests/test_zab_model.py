"""The zab model: every branch of its handlers against DSN 2011 §IV (steps f.1.1 to l.3.4) and the
deviations of models/zab/README.md (D<n>), the model adapter, the FIFO simulator, and "verified
clean": exhaustive BFS of 2- and 3-node clusters with every default property, with pinned counts.

Handler cases spell the whole expected node (`expect(...)`), so a handler that touches a field it
should not fails the comparison, and the exact messages out in send order.
"""

from __future__ import annotations

import hashlib

import pytest

from models.db19.codec import parse_dump
from models.zab import MODEL, OMEGA, OmegaRules, Rules, ZabModel
from models.zab.handlers import (
    can_propose,
    deliver,
    enter_looking,
    heartbeat,
    is_leading,
    propose,
    timeout,
)
from models.zab.state import (
    ACK,
    ACKEPOCH,
    ACKLEADER,
    CEPOCH,
    COMMIT,
    COMMITLEADER,
    FOLLOWING,
    LEADING,
    LFL,
    LOOKING,
    NEWEPOCH,
    NEWLEADER,
    P_ACKEPOCH,
    P_BROADCAST,
    P_CEPOCH,
    P_SYNC,
    PROPOSE,
    VOTE,
    Txn,
    fresh_node,
    last_zxid,
)
from zabmc.explore.bfs import bfs
from zabmc.explore.env import Env, ExploreConfig
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import EFF_TIMER, crashed, get_model, initial_steps, registered
from zabmc.sim import SimConfig, Simulator

TIMER = (EFF_TIMER,)


def node(i=0, n=3, **kw):
    """A fresh node `i` of an `n`-node cluster with some fields replaced."""
    return fresh_node(i, n)._replace(**kw)


def t(e, c, p=None):
    return Txn((e, c), (p if p is not None else f"zab-{e}.{c}").encode())


def mask(*ids):
    out = 0
    for i in ids:
        out |= 1 << i
    return out


def follower(i=0, n=3, leader=2, epoch=1, hist=(), lc=(0, 0), **kw):
    """Node `i` following `leader`, synchronized in `epoch` (f.p = f.a = epoch)."""
    return node(i, n, role=FOLLOWING, leader_id=leader, accepted_epoch=epoch, current_epoch=epoch,
                history=hist, last_committed=lc, **kw)


def leader(i=2, n=3, epoch=1, hist=(), lc=(0, 0), fwd=(0, 1), **kw):
    """Node `i`, the established leader of `epoch`, forwarding to `fwd`."""
    base = dict(role=LEADING, leader_id=i, accepted_epoch=epoch, current_epoch=epoch, history=hist,
                last_committed=lc, phase=P_BROADCAST, pending_new_epoch=epoch,
                cepochs=mask(i, *fwd), cepoch_max=epoch - 1, epoch_acks=mask(i, *fwd),
                leader_acks=mask(i, *fwd))
    base.update(kw)
    return node(i, n, **base)


# --- Phase 0: FastLeaderElection (D1-D6) ----------------------------------------------------------


def test_start_up_broadcasts_lookforleader_only():
    """D2: one LookForLeader per peer, no Vote; the node votes for itself."""
    steps = initial_steps(MODEL, 3)
    assert [s.node for s in steps] == [
        node(i, vote_view=tuple(i if j == i else None for j in range(3))) for i in range(3)
    ]
    assert steps[0].outs == ((1, (LFL, 0, (0, 0), 0)), (2, (LFL, 0, (0, 0), 0)))
    assert steps[2].outs == ((0, (LFL, 2, (0, 0), 0)), (1, (LFL, 2, (0, 0), 0)))
    assert all(s.effects == () for s in steps)


def test_lookforleader_from_a_better_node_switches_the_vote_and_decides():
    """db-19's FLE: switch to the better voter and tell it (D3: the target only); own vote plus
    the target's own is a quorum of 3, so the node follows it and sends CEPOCH(f.p) (f.1.1)."""
    n0 = initial_steps(MODEL, 3)[0].node._replace(accepted_epoch=4)
    s = deliver(n0, 1, (LFL, 1, (0, 0), 0), 3)
    assert s.node == node(0, accepted_epoch=4, role=FOLLOWING, leader_id=1, vote_target_id=1)
    assert s.outs == ((1, (VOTE, 0, (0, 0), 0, 1)), (1, (CEPOCH, 4)))
    assert s.effects == ()


def test_a_vote_that_does_not_decide_keeps_looking():
    """In a 5-node cluster own vote plus the target's is not a quorum: the node only switches."""
    n0 = initial_steps(MODEL, 5)[0].node
    s = deliver(n0, 3, (VOTE, 3, (0, 0), 0, 4), 5)
    assert s.node == n0._replace(vote_target_id=3, vote_view=(3, None, None, 4, None))
    assert s.outs == ((3, (VOTE, 0, (0, 0), 0, 3)),)


def test_lookforleader_from_a_worse_node_is_answered_with_our_vote():
    """D3: a Looking node that does not switch tells the newcomer its current vote."""
    n2 = initial_steps(MODEL, 3)[2].node
    s = deliver(n2, 0, (LFL, 0, (0, 0), 0), 3)
    assert s.node == n2._replace(vote_view=(0, None, 2))
    assert s.outs == ((0, (VOTE, 2, (0, 0), 0, 2)),)


def test_votes_for_self_from_a_quorum_make_a_prospective_leader():
    """Phase 1 starts: fresh leader state with the node's own CEPOCH (D7), an election-timer reset
    (D9), and nothing sent until a quorum of CEPOCH arrives."""
    n2 = node(2, accepted_epoch=3, current_epoch=2, vote_view=(None, None, 2))
    s = deliver(n2, 1, (VOTE, 1, (0, 0), 0, 2), 3)
    assert s.node == node(2, accepted_epoch=3, current_epoch=2, role=LEADING, leader_id=2,
                          phase=P_CEPOCH, cepochs=mask(2), cepoch_max=3)
    assert s.outs == ()
    assert s.effects == TIMER


def test_zxid_order_votes_prefer_more_data_and_omega_ignores_it():
    """D1: `zab` orders votes by (last_zxid, id); `zab-omega` by id alone."""
    n1 = node(1, history=(t(1, 1),), vote_target_zxid=(1, 1), vote_view=(None, 1, None))
    lfl = (LFL, 2, (0, 0), 0)
    assert deliver(n1, 2, lfl, 3).node.vote_target_id == 1
    assert deliver(n1, 2, lfl, 3, OmegaRules()).node.vote_target_id == 2


def test_non_looking_nodes_answer_lookforleader_and_ignore_votes():
    """D3: a Vote is never answered; a LookForLeader is, with the node's current vote."""
    f = follower(0, leader=2, vote_target_id=2, hist=(t(1, 1),))
    assert deliver(f, 1, (VOTE, 1, (0, 0), 0, 1), 3) == (f, (), ())
    s = deliver(f, 1, (LFL, 1, (0, 0), 0), 3)
    assert s == (f, ((1, (VOTE, 0, (1, 1), 1, 2)),), ())
    ldr = leader(2, vote_target_id=2)
    assert deliver(ldr, 0, (LFL, 0, (0, 0), 1), 3).outs == ((0, (VOTE, 2, (0, 0), 1, 2)),)


def test_lookforleader_from_our_leader_ends_the_iteration():
    """D6: the leader went back to election, so the follower enters Looking (and then handles the
    LookForLeader as a Looking node: here it votes for its old leader again and follows it)."""
    f = follower(0, leader=2, vote_target_id=2)
    s = deliver(f, 2, (LFL, 2, (0, 0), 1), 3)
    assert s.node == node(0, accepted_epoch=1, current_epoch=1, role=FOLLOWING, leader_id=2,
                          vote_target_id=2)
    assert s.outs == (
        (1, (LFL, 0, (0, 0), 1)),
        (2, (LFL, 0, (0, 0), 1)),
        (2, (VOTE, 0, (0, 0), 1, 2)),
        (2, (CEPOCH, 1)),
    )


def test_timeout_of_a_leader_starts_a_new_iteration_with_no_leader_state():
    """D5, D9: any node may time out; the leader state of the old leadership is gone."""
    ldr = leader(2, hist=(t(1, 1),), lc=(1, 1), next_counter=1, ack_set=(((1, 2), mask(2)),))
    s = timeout(ldr, 3)
    assert s.node == node(2, accepted_epoch=1, current_epoch=1, history=(t(1, 1),),
                          last_committed=(1, 1), vote_target_zxid=(1, 1),
                          vote_view=(None, None, 2))
    assert s.outs == ((0, (LFL, 2, (1, 1), 1)), (1, (LFL, 2, (1, 1), 1)))
    assert timeout(follower(), 3).node.role == LOOKING


# --- Phase 1: Discovery -----------------------------------------------------------------------------


def prospective(i=2, n=3, **kw):
    base = dict(role=LEADING, leader_id=i, phase=P_CEPOCH, cepochs=mask(i))
    base.update(kw)
    return node(i, n, **base)


def test_cepoch_quorum_proposes_an_epoch_later_than_all():
    """l.1.1: e' = max(f.p) + 1 over the quorum (the leader's own f.p included, D7); the leader
    promises e' itself and becomes the prospective leader of e'."""
    p = prospective(2, accepted_epoch=1, cepoch_max=1, current_epoch=1, history=(t(1, 1),))
    s = deliver(p, 0, (CEPOCH, 3), 3)
    assert s.node == p._replace(phase=P_ACKEPOCH, cepochs=mask(0, 2), cepoch_max=3,
                                pending_new_epoch=4, accepted_epoch=4, epoch_acks=mask(2),
                                best_epoch=1, best_history=(t(1, 1),))
    assert s.outs == ((0, (NEWEPOCH, 4)),)
    assert s.effects == (("leading", 4),)


def test_late_cepoch_gets_the_epoch_already_proposed():
    """l.3.3 / D8: a late CEPOCH gets the epoch already proposed, and so does one that promised it
    already (D17: ZooKeeper's LEADERINFO of the current epoch); one that promised a later epoch
    gets nothing."""
    p = prospective(2, phase=P_ACKEPOCH, pending_new_epoch=2, accepted_epoch=2, cepochs=mask(0, 2),
                    epoch_acks=mask(2))
    assert deliver(p, 1, (CEPOCH, 1), 3) == (p, ((1, (NEWEPOCH, 2)),), ())
    assert deliver(p, 1, (CEPOCH, 2), 3) == (p, ((1, (NEWEPOCH, 2)),), ())
    assert deliver(p, 1, (CEPOCH, 3), 3) == (p, (), ())
    assert deliver(follower(), 1, (CEPOCH, 0), 3) == (follower(), (), ())


def test_new_epoch_is_acknowledged_only_when_later_than_the_promise():
    """f.1.2 / D10: ACK-E(e, f.a, last zxid, h_f); never twice for one epoch; from any sender."""
    f = follower(0, leader=2, epoch=1, hist=(t(1, 1), t(1, 2)))
    s = deliver(f, 2, (NEWEPOCH, 2), 3)
    assert s.node == f._replace(accepted_epoch=2)
    assert s.outs == ((2, (ACKEPOCH, 2, 1, (1, 2), (t(1, 1), t(1, 2)))),)
    assert s.effects == TIMER
    # D17: the same epoch again, from the leader: an ACK-E that does not acknowledge (epoch -1)
    again = deliver(s.node, 2, (NEWEPOCH, 2), 3)
    assert again == (s.node, ((2, (ACKEPOCH, 2, -1, (1, 2), (t(1, 1), t(1, 2)))),), TIMER)
    assert deliver(s.node, 1, (NEWEPOCH, 2), 3) == (s.node, (), ())  # not from our leader
    other = deliver(f, 1, (NEWEPOCH, 3), 3)  # not our leader: acknowledged, no timer reset
    assert (other.node.accepted_epoch, other.outs, other.effects) == (
        3, ((1, (ACKEPOCH, 3, 1, (1, 2), (t(1, 1), t(1, 2)))),), ())
    looking = node(0, accepted_epoch=1)
    assert deliver(looking, 2, (NEWEPOCH, 5), 3) == (looking, (), ())


def test_an_ack_e_that_does_not_acknowledge_never_counts_and_resynchronises():
    """D17: ACK-E(e, -1) is not an acknowledgement (ZooKeeper's Leader.waitForEpochAck skips it):
    before the initial history is chosen the leader ignores it; after, it sends NEWLEADER of its
    current history, to a follower it synchronised before too, and an established leader awaits
    that follower's ACK-LD again (to answer it with COMMIT-LD). A follower that accepts a NEWLEADER
    ending in proposals of its epoch acknowledges the last of them after ACK-LD (D13)."""
    p = prospective(2, phase=P_ACKEPOCH, pending_new_epoch=2, accepted_epoch=2,
                    cepochs=mask(0, 1, 2), epoch_acks=mask(2))
    assert deliver(p, 0, (ACKEPOCH, 2, -1, (0, 0), ()), 3) == (p, (), ())
    hist = (t(1, 1), t(2, 1))
    ldr = leader(2, epoch=2, hist=hist, lc=(1, 1), fwd=(0, 1))
    s = deliver(ldr, 0, (ACKEPOCH, 2, -1, (1, 1), (t(1, 1),)), 3)
    assert s == (ldr._replace(leader_acks=mask(1, 2)), ((0, (NEWLEADER, 2, hist)),), ())
    assert deliver(ldr, 0, (ACKEPOCH, 1, -1, (1, 1), ()), 3) == (ldr, (), ())  # another epoch
    f = follower(0, epoch=1, hist=(t(1, 1),))._replace(accepted_epoch=2)
    s = deliver(f, 2, (NEWLEADER, 2, hist), 3)
    assert s.node == f._replace(current_epoch=2, history=hist)
    assert s.outs == ((2, (ACKLEADER, 2)), (2, (ACK, (2, 1))))
    assert deliver(f, 2, (NEWLEADER, 2, (t(1, 1),)), 3).outs == ((2, (ACKLEADER, 2)),)


def test_history_selection_latest_epoch_then_highest_zxid():
    """l.1.2: the follower with the latest f.a wins even with a lower zxid; among equal epochs the
    highest zxid wins. With a quorum the leader adopts it and sends NEWLEADER (l.2.1)."""
    p = prospective(2, n=5, phase=P_ACKEPOCH, pending_new_epoch=4, accepted_epoch=4,
                    cepochs=mask(0, 1, 2, 3), cepoch_max=3, epoch_acks=mask(2), current_epoch=1,
                    history=(t(1, 1), t(1, 2), t(1, 3)), best_epoch=1,
                    best_history=(t(1, 1), t(1, 2), t(1, 3)))
    s = deliver(p, 0, (ACKEPOCH, 4, 2, (1, 1), (t(1, 1),)), 5)
    assert s.node == p._replace(epoch_acks=mask(0, 2), best_epoch=2, best_history=(t(1, 1),))
    assert s.outs == ()
    # Same epoch, lower zxid: node 0's history stays the best. A quorum of 5 is 3, so the initial
    # history is chosen now.
    lower = deliver(s.node, 3, (ACKEPOCH, 4, 2, (0, 0), ()), 5)
    assert lower.node == p._replace(phase=P_SYNC, epoch_acks=mask(0, 2, 3), current_epoch=4,
                                    history=(t(1, 1),), leader_acks=mask(2), best_epoch=0,
                                    best_history=())
    assert lower.outs == ((0, (NEWLEADER, 4, (t(1, 1),))), (3, (NEWLEADER, 4, (t(1, 1),))))


def test_ack_epoch_for_another_epoch_or_twice_is_ignored():
    p = prospective(2, phase=P_ACKEPOCH, pending_new_epoch=2, accepted_epoch=2, cepochs=mask(0, 2),
                    epoch_acks=mask(0, 2))
    assert deliver(p, 0, (ACKEPOCH, 2, 0, (0, 0), ()), 3) == (p, (), ())
    assert deliver(p, 1, (ACKEPOCH, 1, 0, (0, 0), ()), 3) == (p, (), ())


def test_late_ack_epoch_gets_the_current_history():
    """D8: after the initial history is chosen, a late follower gets NEWLEADER(e, I_e o beta_e)."""
    ldr = leader(2, epoch=2, hist=(t(1, 1), t(2, 1)), fwd=(0,))
    s = deliver(ldr, 1, (ACKEPOCH, 2, 1, (1, 1), (t(1, 1),)), 3)
    assert s.node == ldr._replace(epoch_acks=mask(0, 1, 2))
    assert s.outs == ((1, (NEWLEADER, 2, (t(1, 1), t(2, 1)))),)


# --- Phase 2: Synchronization -------------------------------------------------------------------


def test_new_leader_is_accepted_only_for_the_promised_epoch():
    """f.2.1 / D10: f.a := e, h_f := I_e (the old history is replaced), answer ACK-LD."""
    f = follower(0, leader=2, epoch=1, hist=(t(1, 1), t(1, 2)), lc=(1, 1))._replace(accepted_epoch=2)
    s = deliver(f, 2, (NEWLEADER, 2, (t(1, 1),)), 3)
    assert s.node == f._replace(current_epoch=2, history=(t(1, 1),))
    assert s.outs == ((2, (ACKLEADER, 2)),)
    assert s.effects == TIMER
    assert deliver(f, 2, (NEWLEADER, 3, ()), 3) == (f, (), ())
    assert deliver(f, 2, (NEWLEADER, 1, ()), 3) == (f, (), ())


def test_ack_leader_quorum_establishes_and_commits_the_initial_history():
    """l.2.2: the established leader delivers I_e and sends COMMIT-LD(e, last of I_e)."""
    p = prospective(2, phase=P_SYNC, pending_new_epoch=2, accepted_epoch=2, current_epoch=2,
                    cepochs=mask(0, 1, 2), epoch_acks=mask(0, 1, 2), leader_acks=mask(2),
                    history=(t(1, 1),))
    s = deliver(p, 1, (ACKLEADER, 2), 3)
    assert s.node == p._replace(phase=P_BROADCAST, leader_acks=mask(1, 2), last_committed=(1, 1))
    assert s.outs == ((1, (COMMITLEADER, 2, (1, 1))),)
    assert s.effects == (("synced", 2),)
    assert is_leading(s.node) and can_propose(s.node)
    assert not is_leading(p) and not can_propose(p)
    late = deliver(s.node, 0, (ACKLEADER, 2), 3)  # l.3.4
    assert late == (s.node._replace(leader_acks=mask(0, 1, 2)),
                    ((0, (COMMITLEADER, 2, (1, 1))),), ())
    assert deliver(s.node, 1, (ACKLEADER, 2), 3) == (s.node, (), ())
    assert deliver(s.node, 0, (ACKLEADER, 1), 3) == (s.node, (), ())


def test_commit_leader_delivers_only_a_held_transaction_of_the_current_epoch():
    """f.2.2 / D12."""
    f = follower(0, epoch=2, hist=(t(1, 1), t(1, 2)))
    s = deliver(f, 2, (COMMITLEADER, 2, (1, 2)), 3)
    assert s == (f._replace(last_committed=(1, 2)), (), TIMER)
    assert deliver(f, 2, (COMMITLEADER, 2, (1, 3)), 3).node == f  # not held
    assert deliver(f, 2, (COMMITLEADER, 1, (1, 2)), 3) == (f, (), ())  # not our epoch
    assert deliver(f, 2, (COMMITLEADER, 2, (0, 0)), 3).node == f  # nothing to deliver


# --- Phase 3: Broadcast -----------------------------------------------------------------------------


def test_propose_appends_acknowledges_and_forwards():
    """l.3.1: the next zxid of the epoch, to the followers that were sent NEWLEADER (D8)."""
    ldr = leader(2, epoch=2, hist=(t(1, 1),), lc=(1, 1), fwd=(0,))
    s = propose(ldr, b"zab-0", 3)
    txn = t(2, 1, "zab-0")
    assert s.node == ldr._replace(history=(t(1, 1), txn), next_counter=1,
                                  ack_set=(((2, 1), mask(2)),))
    assert s.outs == ((0, (PROPOSE, txn)),)
    assert s.effects == (("proposed", txn),)


def test_single_node_commits_its_own_proposal():
    solo = leader(0, n=1, epoch=1, fwd=())
    s = propose(solo, b"zab-0", 1)
    assert s.node.last_committed == (1, 1) and s.node.ack_set == ()
    assert s.outs == ()


@pytest.mark.parametrize(
    "hist, txn, accepted",
    [
        ((), t(2, 1), True),  # (e, 1) after nothing
        ((t(1, 1),), t(2, 1), True),  # (e, 1) after an earlier epoch
        ((t(2, 1),), t(2, 2), True),  # the next counter
        ((t(2, 1),), t(2, 3), False),  # a gap (D11)
        ((), t(2, 2), False),  # a gap at the start of the epoch
        ((t(2, 1),), t(2, 1), False),  # a duplicate
        ((), t(1, 1), False),  # a stale epoch (D10)
        ((), t(3, 1), False),  # a later epoch
    ],
)
def test_proposal_acceptance(hist, txn, accepted):
    """f.3.2: only proposals of the current epoch (D10), in zxid order with no gap (D11)."""
    f = follower(0, leader=2, epoch=2, hist=hist)
    s = deliver(f, 2, (PROPOSE, txn), 3)
    if accepted:
        assert s == (f._replace(history=hist + (txn,)), ((2, (ACK, txn[0])),), TIMER)
    else:
        assert s == (f, (), ())


def test_no_proposal_is_accepted_after_a_later_epoch_is_promised():
    """D10 / §V-A: f.p > f.a means Phase 1 of a later epoch has begun."""
    f = follower(0, leader=2, epoch=2)._replace(accepted_epoch=3)
    assert deliver(f, 2, (PROPOSE, t(2, 1)), 3) == (f, (), ())
    looking = follower(0, epoch=2)._replace(role=LOOKING)
    assert deliver(looking, 2, (PROPOSE, t(2, 1)), 3) == (looking, (), ())


def test_ack_quorum_commits_and_covers_every_earlier_zxid():
    """l.3.2 / D13: the ack of (2, 2) from node 0 makes a quorum: (2, 1) and (2, 2) are committed,
    their acknowledgement entries dropped, and COMMIT(e, z) goes to the followers."""
    ldr = leader(2, epoch=2, hist=(t(2, 1), t(2, 2)), fwd=(0, 1), next_counter=2,
                 ack_set=(((2, 1), mask(2)), ((2, 2), mask(2))))
    s = deliver(ldr, 0, (ACK, (2, 2)), 3)
    assert s.node == ldr._replace(last_committed=(2, 2), ack_set=())
    assert s.outs == ((0, (COMMIT, 2, (2, 2))), (1, (COMMIT, 2, (2, 2))))
    assert deliver(s.node, 1, (ACK, (2, 2)), 3) == (s.node, (), ())  # already committed
    assert deliver(ldr, 0, (ACK, (1, 1)), 3) == (ldr, (), ())  # another epoch
    assert deliver(ldr, 0, (ACK, (2, 3)), 3) == (ldr, (), ())  # not in the history


def test_acks_below_quorum_only_accumulate():
    ldr = leader(2, n=5, epoch=1, hist=(t(1, 1),), fwd=(0, 1, 3, 4), next_counter=1,
                 ack_set=(((1, 1), mask(2)),))
    s = deliver(ldr, 0, (ACK, (1, 1)), 5)
    assert s == (ldr._replace(ack_set=(((1, 1), mask(0, 2)),)), (), ())


def test_commit_delivers_only_a_held_transaction_of_the_current_epoch():
    """f.3.3 / D12: everything up to z, from the leader of the follower's epoch."""
    f = follower(0, leader=2, epoch=2, hist=(t(1, 1), t(2, 1), t(2, 2)), lc=(1, 1))
    assert deliver(f, 2, (COMMIT, 2, (2, 2)), 3) == (f._replace(last_committed=(2, 2)), (), TIMER)
    assert deliver(f, 1, (COMMIT, 2, (2, 1)), 3) == (f._replace(last_committed=(2, 1)), (), ())
    assert deliver(f, 2, (COMMIT, 2, (2, 3)), 3) == (f, (), TIMER)  # not held
    assert deliver(f, 2, (COMMIT, 1, (1, 1)), 3) == (f, (), ())  # an old epoch
    assert deliver(f, 2, (COMMIT, 2, (1, 1)), 3) == (f, (), TIMER)  # already delivered


def test_heartbeat_only_from_an_established_leader():
    """D14: COMMIT(e, last committed) to the followers."""
    ldr = leader(2, epoch=2, hist=(t(1, 1),), lc=(1, 1), fwd=(1,))
    assert heartbeat(ldr, 3) == (ldr, ((1, (COMMIT, 2, (1, 1))),), ())
    assert heartbeat(prospective(2), 3) is None
    assert heartbeat(follower(), 3) is None


def test_leader_side_messages_are_ignored_by_non_leaders():
    f = follower(0)
    for msg in ((CEPOCH, 0), (ACKEPOCH, 1, 0, (0, 0), ()), (ACKLEADER, 1), (ACK, (1, 1))):
        assert deliver(f, 1, msg, 3) == (f, (), ())


# --- crash and recovery (D19-D21) -------------------------------------------------------------------


def test_the_durable_fields_are_the_papers_persistent_variables_and_the_delivery_point():
    """D19: f.a, f.p, h_f and last_committed survive a crash (`Rules.durable`, read by the model);
    the role, the leader, the tally and the whole leader state do not."""
    assert Rules.durable == ("current_epoch", "accepted_epoch", "history", "last_committed")
    assert MODEL.durable == OMEGA.durable == Rules.durable

    class Mutant(Rules):
        tag = "mutant"
        durable = ("history",)

    assert ZabModel(Mutant()).durable == ("history",)
    ldr = leader(2, hist=(t(1, 1),), lc=(1, 1), next_counter=1, ack_set=(((1, 2), mask(2)),))
    assert crashed(MODEL, ldr, 3) == node(2, accepted_epoch=1, current_epoch=1, history=(t(1, 1),),
                                          last_committed=(1, 1))


def test_start_recovers_then_looks_and_is_the_start_up_of_a_fresh_node():
    """D20: `start` is `Rules.recover` (the protocol: the disk as written) and then Looking; for a
    fresh node that is exactly the start-up, and a restarted node votes with its durable zxid."""
    rules = Rules()
    down = crashed(MODEL, leader(2, hist=(t(1, 1),), lc=(1, 1)), 3)
    assert rules.recover(down) is down
    for x in (fresh_node(0, 3), down):
        assert MODEL.start(x, 3) == enter_looking(x, 3)
    s = MODEL.start(down, 3)
    assert s.node == down._replace(vote_target_zxid=(1, 1), vote_view=(None, None, 2))
    assert s.outs == ((0, (LFL, 2, (1, 1), 1)), (1, (LFL, 2, (1, 1), 1)))

    class Recover(Rules):
        def recover(self, node):
            return node._replace(history=())

    assert ZabModel(Recover()).start(down, 3).outs == ((0, (LFL, 2, (0, 0), 1)),
                                                       (1, (LFL, 2, (0, 0), 1)))


def _walk(cfg, script):
    """Take the events of `script` (each the start of one enabled event's description) from the
    initial state of `zab`; the final state, after checking that no property was violated."""
    env = Env(MODEL, cfg, Checker(DEFAULT_PROPERTIES))
    s, v = env.initial()
    for want in script:
        succ = [item for item in env.successors(s) if item[0].describe(MODEL).startswith(want)]
        assert len(succ) == 1, want
        _, s, v = succ[0]
        assert v is None, (want, v)
    return s


ESTABLISH_2 = [  # node 1 becomes the established leader of epoch 1, node 0 its follower
    "deliver 0->1 LookForLeader", "deliver 1->0 LookForLeader", "deliver 0->1 Vote",
    "deliver 0->1 CEpoch", "deliver 1->0 Vote", "deliver 1->0 NewEpoch", "deliver 0->1 AckEpoch",
    "deliver 1->0 NewLeader", "deliver 0->1 AckLeader", "deliver 1->0 CommitLeader",
]
REJOIN_2 = [  # node 0 crashes, restarts, re-elects node 1 and sends it CEPOCH(f.p = 1)
    "crash node 0", "restart node 0", "deliver 0->1 LookForLeader", "deliver 1->0 Vote",
    "deliver 0->1 Vote", "deliver 0->1 CEpoch",
]


RESYNC_2 = [  # D17: node 1 answers with NEWEPOCH(1), node 0 with ACK-E(1, -1), then the sync
    "deliver 1->0 NewEpoch", "deliver 0->1 AckEpoch", "deliver 1->0 NewLeader",
    "deliver 0->1 AckLeader",
]


def test_a_restarted_follower_is_synchronised_again_in_the_epoch_it_acknowledged():
    """D17, D21: the leader answers the CEPOCH of a follower that already acknowledged its epoch
    with NEWEPOCH of that epoch; the follower answers with an ACK-E that does not acknowledge it
    (epoch -1), and the leader synchronises it again (NEWLEADER, then COMMIT-LD once it
    acknowledged), as ZooKeeper's LearnerHandler does; f.p stays 1."""
    cfg = ExploreConfig(nodes=2, network="fifo", proposals=1, max_crashes=1, depth=100)
    s = _walk(cfg, ESTABLISH_2 + REJOIN_2)
    assert s.net[1 * 2 + 0] == ((NEWEPOCH, 1),)  # link 1->0
    s = _walk(cfg, ESTABLISH_2 + REJOIN_2 + RESYNC_2[:1])
    assert s.net[0 * 2 + 1] == ((ACKEPOCH, 1, -1, (0, 0), ()),)
    s = _walk(cfg, ESTABLISH_2 + REJOIN_2 + RESYNC_2 + ["deliver 1->0 CommitLeader",
        "propose zab-0", "deliver 1->0 Propose", "deliver 0->1 Ack", "deliver 1->0 Commit"])
    assert [(x.history, x.last_committed, x.accepted_epoch) for x in s.nodes] == [
        ((t(1, 1, "zab-0"),), (1, 1), 1)] * 2


def test_a_restarted_follower_that_missed_a_proposal_gets_and_acknowledges_it():
    """D13, D17: a proposal sent while the follower was down reaches it in the NEWLEADER of its
    new synchronisation, which it acknowledges after ACK-LD; with that acknowledgement the
    two-node leader commits it (before this, the follower stayed behind until the next epoch)."""
    cfg = ExploreConfig(nodes=2, network="fifo", proposals=2, max_crashes=1, depth=100)
    s = _walk(cfg, ESTABLISH_2 + ["crash node 0", "propose zab-0"] + REJOIN_2[1:] + RESYNC_2)
    assert s.nodes[0].history == (t(1, 1, "zab-0"),)
    assert s.net[0 * 2 + 1] == ((ACK, (1, 1)),)
    assert s.nodes[1].last_committed == (0, 0)
    s = _walk(cfg, ESTABLISH_2 + ["crash node 0", "propose zab-0"] + REJOIN_2[1:] + RESYNC_2 + [
        "deliver 0->1 Ack", "deliver 1->0 CommitLeader", "deliver 1->0 Commit"])
    assert [(x.history, x.last_committed) for x in s.nodes] == [
        ((t(1, 1, "zab-0"),), (1, 1))] * 2


# --- the model adapter --------------------------------------------------------------------------------


def test_registered_models():
    assert registered("zab")[1:] == ("models.zab.model", "MODEL")  # the adapter binds them
    assert registered("zab-omega")[1:] == ("models.zab.model", "OMEGA")
    assert get_model("zab") is MODEL and get_model("zab-omega") is OMEGA
    assert (MODEL.name, MODEL.network_assumption) == ("zab", "fifo")
    assert (OMEGA.name, OMEGA.network_assumption) == ("zab-omega", "fifo")
    assert type(MODEL.rules) is Rules and type(OMEGA.rules) is OmegaRules


def test_a_rules_subclass_names_the_variant():
    class Mutant(Rules):
        tag = "mutant"

    assert ZabModel(Mutant()).name == "zab-mutant"


def test_dump_is_the_db19_layout():
    nodes = (follower(0, epoch=2, hist=(t(1, 1),), lc=(1, 1)), node(1), leader(2, epoch=2))
    parsed = parse_dump(MODEL.dump(nodes))
    assert [(p["id"], p["role"], p["current_epoch"], p["accepted_epoch"], p["last_zxid"],
             p["last_committed"], p["history"]) for p in parsed] == [
        (0, FOLLOWING, 2, 2, (1, 1), (1, 1), (t(1, 1),)),
        (1, LOOKING, 0, 0, (0, 0), (0, 0), ()),
        (2, LEADING, 2, 2, (0, 0), (0, 0), ()),
    ]


def test_views_and_encodings():
    ldr = leader(2, epoch=2, hist=(t(1, 1),), lc=(1, 1), fwd=(0,))
    j = MODEL.node_json(ldr)
    assert (j["role"], j["phase"], j["epoch_acks"], j["history"]) == (
        "Leading", "broadcast", [0, 2], [{"zxid": [1, 1], "payload": "zab-1.1"}])
    msg = (ACKEPOCH, 2, 1, (1, 1), (t(1, 1),))
    assert MODEL.describe_msg(msg) == (
        "AckEpoch(new_epoch=2, current_epoch=1, last_zxid=1.1, history=[1.1:zab-1.1])")
    assert MODEL.msg_json((COMMIT, 2, (1, 1))) == {"type": "Commit", "epoch": 2, "zxid": [1, 1]}


# --- the seeded simulator -----------------------------------------------------------------------------


class _LinkOrder:
    """Records, per directed link, the order messages are sent and the order they arrive."""

    def __init__(self):
        self.sent: dict = {}
        self.got: dict = {}

    def on_step(self, tick, kind, i, detail, before, step):
        if kind == "deliver":
            src, dst, msg = detail
            self.got.setdefault((src, dst), []).append(msg)
        if step is not None:
            for dst, msg in step.outs:
                self.sent.setdefault((i, dst), []).append(msg)

    def on_violation(self, tick, v):
        raise AssertionError(v)


def _reordered_links(model, cfg, **kw) -> int:
    obs = _LinkOrder()
    Simulator(model, cfg, observer=obs, **kw).run()
    assert obs.got
    return sum(got != obs.sent[link][: len(got)] for link, got in obs.got.items())


@pytest.mark.parametrize("seed", range(8))
def test_simulator_keeps_zab_links_fifo(seed):
    """The simulator's random 1-3 tick delays never reorder a link of a FIFO model."""
    assert _reordered_links(MODEL, SimConfig(seed, 5, 1000, 4),
                            checker=Checker(DEFAULT_PROPERTIES)) == 0


def test_without_fifo_the_same_schedule_reorders_links():
    """The same run with `fifo=False` (C8's schedule as is) delivers a link out of order; db-19
    (network "any") always gets C8's schedule."""
    from models.db19 import MODEL as DB19

    assert _reordered_links(MODEL, SimConfig(0, 5, 1000, 4), fifo=False) == 1
    assert _reordered_links(MODEL, SimConfig(0, 5, 1000, 4)) == 0
    assert _reordered_links(DB19, SimConfig(0, 3, 2000, 4)) == 2


def test_simulate_zab_digests():
    """Pinned digests: three nodes elect node 2 and commit every proposal; with node 2 cut off
    from everyone, nodes 0 and 1 do."""
    full = Simulator(MODEL, SimConfig(1, 3, 3000, 5), checker=Checker(DEFAULT_PROPERTIES)).run()
    assert full.violation is None
    assert [(x.role, x.current_epoch, x.last_committed) for x in full.nodes] == [
        (FOLLOWING, 1, (1, 5)), (FOLLOWING, 1, (1, 5)), (LEADING, 1, (1, 5))]
    assert hashlib.sha256(full.dump).hexdigest() == full.digest == ZAB_DIGEST_SEED1
    cut = Simulator(MODEL, SimConfig(3, 3, 3000, 5, frozenset({(2, 0), (2, 1)})),
                    checker=Checker(DEFAULT_PROPERTIES)).run()
    assert cut.violation is None
    assert [(x.role, x.last_committed) for x in cut.nodes] == [
        (FOLLOWING, (1, 5)), (LEADING, (1, 5)), (LOOKING, (0, 0))]
    assert cut.digest == ZAB_DIGEST_SEED3_CUT


ZAB_DIGEST_SEED1 = "16af5aa6dbd5ce09b259755f3339d6cf23966ce115b0e30d9c2990487783047d"
ZAB_DIGEST_SEED3_CUT = "add7715cac9f11575a77113382802968a55ada3b7616ca7b2c78caf5a4b9e0d1"


# --- verified clean: exhaustive BFS, every default property -------------------------------------------


def explore(model, nodes, **bounds):
    cfg = ExploreConfig(nodes=nodes, network="fifo", depth=10_000, **bounds)
    return bfs(Env(model, cfg, Checker(DEFAULT_PROPERTIES)), stop_at_first=False)


def _clean(model, nodes, p, t=0, d=0, h=0, c=0, distinct=0, diameter=0, slow=False):
    bounds = dict(proposals=p, max_timeouts=t, max_drops=d, max_heartbeats=h)
    if c:
        bounds["max_crashes"] = c
    return pytest.param(model, nodes, bounds, distinct, diameter, marks=[pytest.mark.slow] * slow,
                        id=f"{model.name}-n{nodes}-p{p}-t{t}-d{d}-h{h}" + (f"-c{c}" if c else ""))


# The same figures are in reports/verification.md (benchmarks/verify_zab.py, tier "quick" and the
# gate's exhaustive runs). zabmc's own counts, with the properties' ghost state: they detect change
# only, except where noted. Where the ghost adds no state, TLC on benchmarks/tla/Zab.tla finds the
# same distinct states and diameter (tests/test_tlc.py runs 3n-p1; 3n-p2 was run by hand there:
# zab 129,521 and zab-omega 105,042 distinct, 497,620 and 406,553 generated, diameter 36).
CLEAN = [
    _clean(MODEL, 2, 2, distinct=31, diameter=18),
    _clean(MODEL, 2, 2, 1, 1, 1, distinct=5_237, diameter=31),
    _clean(OMEGA, 2, 2, 1, 1, 1, distinct=5_237, diameter=31),
    _clean(MODEL, 2, 2, 2, 1, 1, distinct=44_287, diameter=42),
    _clean(MODEL, 3, 0, distinct=4_681, diameter=24),
    _clean(MODEL, 3, 1, distinct=18_103, diameter=30),
    _clean(OMEGA, 3, 1, distinct=15_890, diameter=29),
    # the gate's exhaustive runs of zab are tests/test_gate_runs.py's, which pins their counts
    _clean(OMEGA, 3, 2, distinct=105_042, diameter=36, slow=True),
    # crashes (D19-D21): a crashed node keeps its durable fields and may restart at any step
    _clean(MODEL, 2, 2, c=1, distinct=720, diameter=29),
    _clean(MODEL, 2, 2, c=2, distinct=4_427, diameter=40),
    _clean(MODEL, 2, 2, c=3, distinct=18_674, diameter=51),
    _clean(MODEL, 2, 2, 1, 1, 1, c=1, distinct=53_761, diameter=41),
    _clean(OMEGA, 2, 2, 1, 1, 1, c=1, distinct=53_761, diameter=41),
    _clean(MODEL, 3, 0, c=1, distinct=322_110, diameter=45, slow=True),
]


@pytest.mark.parametrize("model, nodes, bounds, distinct, diameter", CLEAN)
def test_verified_clean(model, nodes, bounds, distinct, diameter):
    """Every reachable state within the bounds, every default property: no violation."""
    out = explore(model, nodes, **bounds)
    assert out.stop_reason == "exhausted"
    assert out.violations == []
    assert (out.distinct, out.depth_reached) == (distinct, diameter)


def _recipe(makefile: list[str], target: str) -> list[str]:
    start = makefile.index(target) + 1
    recipe = []
    for line in makefile[start:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_make_gate_runs_the_gate_of_the_verification_report():
    """`make gate` and reports/verification.md (benchmarks/verify_zab.py) name the same runs, and
    CI runs them: `.ci/run` is `make test`, which runs the test suite, each gate run among its
    tests (tests/test_gate_runs.py)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("verify_zab", root / "benchmarks/verify_zab.py")
    verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verify)
    from zabmc.gate import RUNS, command

    makefile = (root / "Makefile").read_text().splitlines()
    gate = [command(run) for run in RUNS]  # `make gate` runs `zabmc gate`, which runs these
    # the exhaustive and depth-bounded runs are the report's gate runs; the others check
    # liveness (--liveness) or take seeded random walks (--strategy random)
    zab = [line for line in gate if "--model zab" in line]
    exhaustive = [line for line in zab if "--liveness" not in line and "--strategy" not in line]
    assert sorted(exhaustive) == sorted(verify.gate_command(g) for g in verify.GATE)
    # zab's nine runs and zab-omega's one, then zk-fixed's nine (tests/test_mutate.py checks
    # them, #23 point 5)
    assert len(zab) == 10 and gate[:10] == zab
    assert all("--model zk-fixed " in line for line in gate[10:])
    assert len(gate) == 19
    assert _recipe(makefile, "gate: install") == ["zabmc gate"]
    # the whole suite in one run that selects every test (no -m), on every core, after the
    # sources are compiled (no process the tests start compiles them again)
    assert _recipe(makefile, "test: install-test") == [
        "$(PY) -m compileall -q zabmc models",
        "$(PY) -m pytest -q -p no:cacheprovider --durations=50 -n auto --maxprocesses 4 "
        "--dist loadgroup"]
    from test_gate_runs import test_the_gate_run_passes as gate_test
    marks = {m.name: m for m in gate_test.pytestmark}
    assert list(marks["parametrize"].args[1]) == list(range(1, len(RUNS) + 1))
    ci = (root / ".ci/run").read_text().splitlines()
    assert ci[-1] == "make test"
    assert [(g.model, g.depth, g.crashes, g.reduction) for g in verify.GATE] == [
        ("zab", 0, 0, "none"), ("zab", 0, 0, "none"), ("zab", 23, 0, "none"),
        ("zab", 0, 2, "none"), ("zab", 24, 1, "none"), ("zab", 0, 0, "por"),
        ("zab-omega", 0, 0, "por")]
