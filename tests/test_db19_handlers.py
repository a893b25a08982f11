"""Every branch of every db-19 handler, checked against the seed document's pseudo-code and
docs/semantics.md (C<n>): the exact resulting node, the exact messages out in send order, the exact
effects.

Nodes are built from `fresh_node` with the fields a case needs; `expect(...)` spells the whole
expected node, so a handler that touches a field it should not fails the comparison.
"""

from __future__ import annotations

import pytest

from models.db19 import MODEL
from models.db19.handlers import (
    can_propose,
    deliver,
    enter_looking,
    heartbeat,
    peers,
    propose,
    timeout,
)
from models.db19.state import (
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
    Txn,
    bits,
    fresh_node,
    last_zxid,
    quorum,
)
from zabmc.core.model import EFF_TIMER, Step, initial_steps

TIMER = (EFF_TIMER,)
NONE = ()


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


def view(n, **chosen):
    """vote_view of an n-node cluster: view(3, v0=2, v2=2) -> (2, None, 2)."""
    v = [None] * n
    for k, leader in chosen.items():
        v[int(k[1:])] = leader
    return tuple(v)


def assert_step(step, node_, outs, effects):
    assert isinstance(step, Step)
    assert step.node == node_
    assert step.outs == tuple(outs)
    assert step.effects == tuple(effects)


# --- basics -------------------------------------------------------------------------------------


def test_fresh_node_and_helpers():
    x = fresh_node(2, 5)
    assert x.id == 2 and x.role == LOOKING and x.leader_id is None
    assert (x.current_epoch, x.accepted_epoch, x.history, x.last_committed) == (0, 0, (), (0, 0))
    assert (x.vote_target_id, x.vote_target_zxid, x.vote_view) == (2, (0, 0), (None,) * 5)
    assert (x.pending_new_epoch, x.epoch_acks, x.leader_acks, x.synced, x.next_counter,
            x.ack_set) == (0, 0, 0, False, 0, ())
    assert last_zxid(x) == (0, 0)
    # C26: the last element, not the largest one.
    assert last_zxid(x._replace(history=(t(2, 1), t(1, 7)))) == (1, 7)
    assert [quorum(n) for n in range(1, 10)] == [1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert bits(0) == [] and bits(0b101101) == [0, 2, 3, 5]
    assert peers(0, 1) == () and peers(2, 5) == (0, 1, 3, 4) and peers(0, 3) == (1, 2)


def test_unknown_rpc_kind_is_an_error():
    with pytest.raises(ValueError):
        deliver(node(), 1, (99, 0), 3)


# --- entering Looking, the election timeout ------------------------------------------------------


def test_enter_looking_broadcasts_lfl_then_vote_and_keeps_leader_id():
    h = (t(1, 1), t(1, 2))
    x = node(1, 3, role=FOLLOWING, leader_id=2, current_epoch=1, accepted_epoch=2, history=h,
             last_committed=(1, 1), vote_target_id=2, vote_target_zxid=(1, 2),
             vote_view=(2, 2, 2))
    step = enter_looking(x, 3)
    # C14: leader_id survives; vote resets to self with own last zxid, tally = {self: self}.
    want = x._replace(role=LOOKING, vote_target_id=1, vote_target_zxid=(1, 2),
                      vote_view=(None, 1, None))
    lfl = (LFL, 1, (1, 2), 1)
    vote = (VOTE, 1, (1, 2), 1, 1)
    assert_step(step, want, [(0, lfl), (2, lfl), (0, vote), (2, vote)], NONE)


def test_timeout_of_follower_and_looking_node_re_enters_looking():
    """C10: a non-Leading node whose deadline passed runs the "on entering Looking" block: it
    votes for itself with its own last zxid, its tally holds only that vote, `leader_id` stays
    (C14), and it broadcasts LookForLeader, then Vote, to its peers in ascending id. The deadline
    is the simulator's (it resets it itself), so the step reports no timer effect."""
    h = (t(2, 1), t(2, 2))
    x = node(0, 3, role=FOLLOWING, leader_id=1, current_epoch=2, accepted_epoch=2, history=h,
             last_committed=(2, 1), vote_target_id=1, vote_target_zxid=(1, 5),
             vote_view=(1, 1, None))
    want = node(0, 3, role=LOOKING, leader_id=1, current_epoch=2, accepted_epoch=2, history=h,
                last_committed=(2, 1), vote_target_id=0, vote_target_zxid=(2, 2),
                vote_view=(0, None, None))
    lfl, vote = (LFL, 0, (2, 2), 2), (VOTE, 0, (2, 2), 2, 0)
    assert_step(timeout(x, 3), want, [(1, lfl), (2, lfl), (1, vote), (2, vote)], NONE)
    # a Looking node voting for node 0, whose deadline passed: back to its own vote, empty tally
    y = node(2, 3, vote_target_id=0, vote_target_zxid=(0, 0), vote_view=(None, None, 0))
    want = node(2, 3, role=LOOKING, vote_target_id=2, vote_target_zxid=(0, 0),
                vote_view=(None, None, 2))
    lfl, vote = (LFL, 2, (0, 0), 0), (VOTE, 2, (0, 0), 0, 2)
    assert_step(timeout(y, 3), want, [(0, lfl), (1, lfl), (0, vote), (1, vote)], NONE)


def test_timeout_of_leader_is_none():
    assert timeout(node(0, 3, role=LEADING), 3) is None
    assert timeout(node(0, 3, role=LEADING, synced=True), 3) is None


def test_start_up_single_node_leads_and_syncs_at_once():
    # n = 1: quorum 1, so entering Looking elects, discovers and syncs in one call.
    step = enter_looking(fresh_node(0, 1), 1)
    want = fresh_node(0, 1)._replace(
        role=LEADING, current_epoch=1, accepted_epoch=1, pending_new_epoch=1,
        epoch_acks=mask(0), leader_acks=mask(0), synced=True, vote_view=(0,),
    )
    assert_step(step, want, [], [("leading", 1), ("synced", 1)])


def test_single_node_sync_commits_its_history():
    x = node(0, 1, history=(t(3, 1), t(3, 2)), current_epoch=3, accepted_epoch=3)
    step = enter_looking(x, 1)
    want = x._replace(role=LEADING, current_epoch=4, accepted_epoch=4, pending_new_epoch=4,
                      epoch_acks=mask(0), leader_acks=mask(0), synced=True, vote_view=(0,),
                      vote_target_zxid=(3, 2), last_committed=(3, 2))
    assert_step(step, want, [], [("leading", 4), ("synced", 4)])


def test_model_initial_is_start_up_in_ascending_id():
    steps = initial_steps(MODEL, 3)
    nodes = tuple(s.node for s in steps)
    sends = [(i, dst, msg) for i, s in enumerate(steps) for dst, msg in s.outs]
    assert nodes == tuple(enter_looking(fresh_node(i, 3), 3).node for i in range(3))
    assert sends[:4] == [(0, 1, (LFL, 0, (0, 0), 0)), (0, 2, (LFL, 0, (0, 0), 0)),
                         (0, 1, (VOTE, 0, (0, 0), 0, 0)), (0, 2, (VOTE, 0, (0, 0), 0, 0))]
    assert len(sends) == 12 and [s[0] for s in sends] == [0] * 4 + [1] * 4 + [2] * 4


# --- Vote and LookForLeader while Looking -------------------------------------------------------


def test_lfl_from_higher_id_switches_vote_and_completes_quorum():
    x = enter_looking(fresh_node(0, 3), 3).node  # votes for itself
    step = deliver(x, 2, (LFL, 2, (0, 0), 0), 3)
    # switch: clear, view[self] = 2, broadcast Vote(self's zxid, leader 2); then view[2] = 2 (C12)
    # -> 2 of 3 votes for target 2 -> become_following(2).
    want = x._replace(vote_target_id=2, vote_target_zxid=(0, 0), vote_view=(2, None, 2),
                      role=FOLLOWING, leader_id=2)
    v = (VOTE, 0, (0, 0), 0, 2)
    assert_step(step, want, [(1, v), (2, v)], NONE)


def test_lfl_from_lower_id_is_tallied_as_a_vote_for_the_sender():
    x = enter_looking(fresh_node(2, 3), 3).node
    step = deliver(x, 0, (LFL, 0, (0, 0), 5), 3)  # peer_epoch ignored (C21)
    assert_step(step, x._replace(vote_view=(0, None, 2)), [], NONE)


def test_vote_switch_broadcasts_own_zxid_and_new_target():
    h = (t(1, 1),)
    x = node(1, 5, history=h, current_epoch=1, accepted_epoch=1, vote_target_id=1,
             vote_target_zxid=(1, 1), vote_view=view(5, v1=1, v3=1, v4=1))
    # voter 0 has a larger zxid (1, 3) and chose 4.
    step = deliver(x, 0, (VOTE, 0, (1, 3), 1, 4), 5)
    # the old tally (v3, v4 for 1) is cleared; view[1] = 0; view[0] = 4; 1 vote for 0 < quorum 3.
    want = x._replace(vote_target_id=0, vote_target_zxid=(1, 3), vote_view=view(5, v0=4, v1=0))
    v = (VOTE, 1, (1, 1), 1, 0)  # C21: own last zxid, not the target's
    assert_step(step, want, [(0, v), (2, v), (3, v), (4, v)], NONE)


def test_vote_without_switch_only_tallies():
    x = node(3, 5, vote_target_id=3, vote_target_zxid=(2, 2), vote_view=view(5, v3=3))
    # (2,1) < (2,2): smaller counter loses even from a higher id.
    step = deliver(x, 4, (VOTE, 4, (2, 1), 2, 1), 5)
    assert_step(step, x._replace(vote_view=view(5, v3=3, v4=1)), [], NONE)
    # equal zxid, lower id: no switch either
    step = deliver(x, 0, (VOTE, 0, (2, 2), 2, 0), 5)
    assert_step(step, x._replace(vote_view=view(5, v0=0, v3=3)), [], NONE)
    # the voter's own entry is overwritten by its latest choice
    y = x._replace(vote_view=view(5, v0=3, v3=3))
    step = deliver(y, 0, (VOTE, 0, (1, 9), 2, 2), 5)
    assert_step(step, y._replace(vote_view=view(5, v0=2, v3=3)), [], NONE)


def test_vote_from_the_current_target_itself_does_not_switch():
    # (peer_zxid, voter) == (vote_target_zxid, vote_target_id): strictly greater is required,
    # so the tally is kept (no clear) and nothing is re-broadcast.
    x = node(0, 5, vote_target_id=3, vote_target_zxid=(1, 2), vote_view=view(5, v0=3, v4=3))
    step = deliver(x, 3, (VOTE, 3, (1, 2), 1, 3), 5)
    assert_step(step, x._replace(vote_view=view(5, v0=3, v3=3, v4=3), role=FOLLOWING,
                                 leader_id=3), [], NONE)


def test_vote_comparison_is_lexicographic_epoch_counter_id():
    base = node(1, 3, vote_target_id=1, vote_target_zxid=(1, 5), vote_view=view(3, v1=1))
    # a higher epoch beats a larger counter (C5)
    s = deliver(base, 0, (VOTE, 0, (2, 0), 0, 0), 3)
    assert s.node.vote_target_id == 0 and s.node.vote_target_zxid == (2, 0)
    # equal zxid: the higher id wins
    s = deliver(base, 2, (VOTE, 2, (1, 5), 0, 2), 3)
    assert s.node.vote_target_id == 2
    assert s.node.role == FOLLOWING and s.node.leader_id == 2  # view (None, 2, 2)
    # equal zxid and a lower id: no switch
    s = deliver(base, 0, (VOTE, 0, (1, 5), 0, 0), 3)
    assert s.node.vote_target_id == 1 and s.outs == ()


def test_check_election_counts_every_voter_choosing_the_target():
    x = node(0, 5, vote_target_id=4, vote_target_zxid=(0, 0), vote_view=view(5, v0=4, v1=4))
    step = deliver(x, 2, (VOTE, 2, (0, 0), 0, 4), 5)  # no switch (id 2 < 4); third vote for 4
    assert_step(step, x._replace(vote_view=view(5, v0=4, v1=4, v2=4), role=FOLLOWING,
                                 leader_id=4), [], NONE)
    # two of five is not a quorum
    step = deliver(x._replace(vote_view=view(5, v0=4)), 2, (VOTE, 2, (0, 0), 0, 4), 5)
    assert step.node.role == LOOKING and step.node.leader_id is None


def test_check_election_makes_the_target_leading():
    # node 2 votes for itself; a vote from 0 for 2 makes a quorum of 3 -> become_leading().
    x = node(2, 3, current_epoch=2, accepted_epoch=3, next_counter=7, synced=False,
             vote_view=view(3, v2=2))
    step = deliver(x, 0, (VOTE, 0, (0, 0), 0, 2), 3)
    want = x._replace(vote_view=view(3, v0=2, v2=2), role=LEADING, pending_new_epoch=4,
                      accepted_epoch=4, epoch_acks=mask(2))
    ne = (NEWEPOCH, 4)  # max(3, 2) + 1
    assert_step(step, want, [(0, ne), (1, ne)], [("leading", 4)])


def test_become_leading_uses_max_of_both_epochs():
    # current_epoch above accepted_epoch (never in a run, but the formula is a max)
    x = node(2, 3, current_epoch=5, accepted_epoch=2, vote_view=view(3, v2=2))
    step = deliver(x, 1, (VOTE, 1, (0, 0), 0, 2), 3)
    assert step.node.role == LEADING
    assert step.node.pending_new_epoch == 6 and step.node.accepted_epoch == 6
    assert step.node.current_epoch == 5  # only try_finish_discovery sets it
    assert step.effects == (("leading", 6),)


def test_become_leading_keeps_synced_ack_set_and_next_counter():
    # C15: a former leader (synced, counters, acks) is re-elected: nothing is reset.
    acks = (((1, 1), mask(0, 1)),)
    x = node(0, 3, current_epoch=1, accepted_epoch=1, history=(t(1, 1),), synced=True,
             next_counter=1, ack_set=acks, leader_acks=mask(0, 1), epoch_acks=mask(0, 1, 2),
             vote_target_zxid=(1, 1), vote_view=view(3, v0=0))
    step = deliver(x, 2, (VOTE, 2, (0, 0), 1, 0), 3)
    want = x._replace(vote_view=view(3, v0=0, v2=0), role=LEADING, pending_new_epoch=2,
                      accepted_epoch=2, epoch_acks=mask(0))
    assert_step(step, want, [(1, (NEWEPOCH, 2)), (2, (NEWEPOCH, 2))], [("leading", 2)])
    assert step.node.synced and can_propose(step.node)


# --- Vote and LookForLeader while not Looking (C13, C22) ----------------------------------------


@pytest.mark.parametrize("role, leader_id, target", [(FOLLOWING, 0, 2), (LEADING, None, 1)])
@pytest.mark.parametrize("kind", [VOTE, LFL])
def test_non_looking_node_replies_with_its_vote_and_changes_nothing(role, leader_id, target, kind):
    # A follower that kept an old leader_id (C16) still answers with its vote target.
    x = node(1, 3, role=role, leader_id=leader_id, current_epoch=2, accepted_epoch=2,
             history=(t(2, 1), t(2, 2)), vote_target_id=target, vote_target_zxid=(1, 0),
             vote_view=view(3, v1=target, v2=target))
    msg = (VOTE, 0, (9, 9), 9, 0) if kind == VOTE else (LFL, 0, (9, 9), 9)
    step = deliver(x, 0, msg, 3)
    # unicast to the sender: own id, own last zxid, current epoch, leader = vote_target_id
    assert_step(step, x, [(0, (VOTE, 1, (2, 2), 2, target))], NONE)


def test_non_looking_reply_goes_to_the_sender_not_the_voter():
    x = node(0, 3, role=FOLLOWING, leader_id=1, vote_target_id=1)
    step = deliver(x, 2, (VOTE, 1, (0, 0), 0, 1), 3)
    assert step.outs == ((2, (VOTE, 0, (0, 0), 0, 1)),)


# --- NewEpoch (Discovery) ----------------------------------------------------------------------


def test_new_epoch_higher_while_following_keeps_leader_and_acks():
    h = (t(1, 1), t(1, 2))
    x = node(0, 3, role=FOLLOWING, leader_id=1, current_epoch=1, accepted_epoch=1, history=h)
    step = deliver(x, 2, (NEWEPOCH, 3), 3)
    # C16: already Following -> leader_id stays 1; the AckEpoch goes to the sender 2.
    assert_step(step, x._replace(accepted_epoch=3), [(2, (ACKEPOCH, 1, (1, 2)))], TIMER)


@pytest.mark.parametrize("role", [LOOKING, LEADING])
def test_new_epoch_higher_while_not_following_follows_the_sender(role):
    x = node(0, 3, role=role, leader_id=None, current_epoch=2, accepted_epoch=2,
             history=(t(2, 1),), synced=True, pending_new_epoch=2)
    step = deliver(x, 1, (NEWEPOCH, 4), 3)
    want = x._replace(accepted_epoch=4, role=FOLLOWING, leader_id=1)
    assert_step(step, want, [(1, (ACKEPOCH, 2, (2, 1)))], TIMER)


def test_new_epoch_equal_is_acked_again_without_change():
    x = node(2, 3, role=FOLLOWING, leader_id=0, current_epoch=1, accepted_epoch=3)
    step = deliver(x, 1, (NEWEPOCH, 3), 3)  # from someone else than leader_id: still acked
    assert_step(step, x, [(1, (ACKEPOCH, 1, (0, 0)))], TIMER)
    step = deliver(x._replace(role=LOOKING), 1, (NEWEPOCH, 3), 3)  # no role change either
    assert_step(step, x._replace(role=LOOKING), [(1, (ACKEPOCH, 1, (0, 0)))], TIMER)


def test_stale_new_epoch_resets_the_timer_only():
    # C23: the reset stands outside the if/elif.
    x = node(2, 3, role=LOOKING, current_epoch=3, accepted_epoch=4)
    assert_step(deliver(x, 0, (NEWEPOCH, 3), 3), x, [], TIMER)
    assert_step(deliver(x, 0, (NEWEPOCH, 0), 3), x, [], TIMER)


# --- AckEpoch -----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", [LOOKING, FOLLOWING])
def test_ack_epoch_to_non_leader_is_ignored(role):
    x = node(0, 3, role=role, pending_new_epoch=2, epoch_acks=mask(0))
    assert_step(deliver(x, 1, (ACKEPOCH, 0, (0, 0)), 3), x, [], NONE)


def test_ack_epoch_below_quorum_only_counts():
    x = node(0, 5, role=LEADING, pending_new_epoch=2, accepted_epoch=2, current_epoch=1,
             epoch_acks=mask(0))
    step = deliver(x, 3, (ACKEPOCH, 1, (1, 4)), 5)
    assert_step(step, x._replace(epoch_acks=mask(0, 3)), [], NONE)


def test_ack_epoch_reaching_quorum_finishes_discovery():
    h = (t(1, 1), t(1, 2))
    x = node(0, 3, role=LEADING, pending_new_epoch=2, accepted_epoch=2, current_epoch=1,
             history=h, next_counter=5, epoch_acks=mask(0), leader_acks=mask(0, 2))
    # the AckEpoch payload (a larger last zxid) is not used (C24)
    step = deliver(x, 1, (ACKEPOCH, 1, (1, 9)), 3)
    want = x._replace(epoch_acks=mask(0, 1), current_epoch=2, next_counter=0,
                      leader_acks=mask(0))
    nl = (NEWLEADER, 2, h)
    assert_step(step, want, [(1, nl), (2, nl)], NONE)  # 1 of 3 AckLeaders: not synced


def test_ack_epoch_after_sync_re_runs_discovery():
    # C24: at or above quorum every AckEpoch re-broadcasts NewLeader, resets next_counter and
    # leader_acks; synced stays true and no new "synced" effect is reported.
    h = (t(2, 1), t(2, 2), t(2, 3))
    x = node(0, 3, role=LEADING, pending_new_epoch=2, accepted_epoch=2, current_epoch=2,
             history=h, last_committed=(2, 3), next_counter=3, synced=True,
             epoch_acks=mask(0, 1), leader_acks=mask(0, 1, 2))
    step = deliver(x, 2, (ACKEPOCH, 0, (0, 0)), 3)
    want = x._replace(epoch_acks=mask(0, 1, 2), next_counter=0, leader_acks=mask(0))
    nl = (NEWLEADER, 2, h)
    assert_step(step, want, [(1, nl), (2, nl)], NONE)
    # a duplicate AckEpoch from a node already counted does the same
    step2 = deliver(step.node._replace(next_counter=4), 1, (ACKEPOCH, 2, (2, 3)), 3)
    assert_step(step2, want, [(1, nl), (2, nl)], NONE)


def test_ack_epoch_quorum_syncs_a_single_member_quorum_at_once():
    # n = 2 has quorum 2; n = 1 never gets an AckEpoch. Use n = 3 with leader_acks preset: a
    # NewLeader round always restarts at {self}, so with quorum 2 the sync waits for an AckLeader.
    x = node(1, 2, role=LEADING, pending_new_epoch=1, accepted_epoch=1, epoch_acks=mask(1))
    step = deliver(x, 0, (ACKEPOCH, 0, (0, 0)), 2)
    want = x._replace(epoch_acks=mask(0, 1), current_epoch=1, leader_acks=mask(1))
    assert_step(step, want, [(0, (NEWLEADER, 1, ()))], NONE)
    # the AckLeader completes the quorum of 2 -> synced; empty history -> no Commit
    step = deliver(step.node, 0, (ACKLEADER, 1), 2)
    assert_step(step, want._replace(leader_acks=mask(0, 1), synced=True), [], [("synced", 1)])


# --- NewLeader (Synchronization) ---------------------------------------------------------------


def test_new_leader_accepted_replaces_history_and_follows():
    old = (t(1, 1), t(1, 2), t(1, 3))
    new = (t(1, 1), t(2, 1, "other"))
    x = node(0, 3, role=LOOKING, leader_id=None, current_epoch=1, accepted_epoch=2,
             history=old, last_committed=(1, 3))
    step = deliver(x, 2, (NEWLEADER, 3, new), 3)
    # C19: history replaced wholesale, last_committed untouched (even though (1,3) is gone)
    want = x._replace(accepted_epoch=3, current_epoch=3, history=new, role=FOLLOWING,
                      leader_id=2)
    assert_step(step, want, [(2, (ACKLEADER, 3))], TIMER)


def test_new_leader_equal_epoch_while_following_keeps_leader_id():
    x = node(1, 3, role=FOLLOWING, leader_id=0, current_epoch=1, accepted_epoch=2)
    step = deliver(x, 2, (NEWLEADER, 2, (t(2, 1),)), 3)
    want = x._replace(current_epoch=2, history=(t(2, 1),))  # C16 for NewLeader: leader stays 0
    assert_step(step, want, [(2, (ACKLEADER, 2))], TIMER)


def test_new_leader_to_a_leader_demotes_it():
    x = node(1, 3, role=LEADING, synced=True, current_epoch=2, accepted_epoch=2,
             pending_new_epoch=2, history=(t(2, 1),), last_committed=(2, 1))
    step = deliver(x, 0, (NEWLEADER, 2, ()), 3)
    want = x._replace(history=(), role=FOLLOWING, leader_id=0)
    assert_step(step, want, [(0, (ACKLEADER, 2))], TIMER)


def test_new_leader_with_stale_epoch_is_rejected_silently():
    x = node(1, 3, role=FOLLOWING, leader_id=0, current_epoch=2, accepted_epoch=3,
             history=(t(2, 1),))
    assert_step(deliver(x, 0, (NEWLEADER, 2, ()), 3), x, [], NONE)


# --- AckLeader ----------------------------------------------------------------------------------


def test_ack_leader_reaching_quorum_syncs_and_commits_the_tail():
    h = (t(1, 1), t(1, 2))
    x = node(0, 3, role=LEADING, current_epoch=2, accepted_epoch=2, pending_new_epoch=2,
             history=h, last_committed=(1, 1), leader_acks=mask(0))
    step = deliver(x, 2, (ACKLEADER, 2), 3)
    want = x._replace(leader_acks=mask(0, 2), synced=True, last_committed=(1, 2))
    c = (COMMIT, (1, 2))
    assert_step(step, want, [(1, c), (2, c)], [("synced", 2)])


def test_ack_leader_quorum_with_nothing_uncommitted_sends_no_commit():
    x = node(0, 3, role=LEADING, current_epoch=2, accepted_epoch=2, history=(t(1, 1),),
             last_committed=(1, 1), leader_acks=mask(0))
    step = deliver(x, 1, (ACKLEADER, 2), 3)
    assert_step(step, x._replace(leader_acks=mask(0, 1), synced=True), [], [("synced", 2)])


def test_ack_leader_below_quorum_only_counts():
    x = node(0, 5, role=LEADING, current_epoch=1, leader_acks=mask(0))
    step = deliver(x, 4, (ACKLEADER, 1), 5)
    assert_step(step, x._replace(leader_acks=mask(0, 4)), [], NONE)


def test_ack_leader_when_already_synced_only_counts():
    x = node(0, 3, role=LEADING, current_epoch=1, leader_acks=mask(0, 1), synced=True,
             history=(t(1, 1),))
    step = deliver(x, 2, (ACKLEADER, 1), 3)
    assert_step(step, x._replace(leader_acks=mask(0, 1, 2)), [], NONE)


def test_ack_leader_with_wrong_epoch_is_ignored():
    x = node(0, 3, role=LEADING, current_epoch=2, leader_acks=mask(0))
    assert_step(deliver(x, 1, (ACKLEADER, 1), 3), x, [], NONE)
    assert_step(deliver(x, 1, (ACKLEADER, 3), 3), x, [], NONE)


@pytest.mark.parametrize("role", [LOOKING, FOLLOWING])
def test_ack_leader_to_non_leader_is_ignored(role):
    x = node(0, 3, role=role, current_epoch=2, leader_acks=mask(0))
    assert_step(deliver(x, 1, (ACKLEADER, 2), 3), x, [], NONE)


# --- Propose ------------------------------------------------------------------------------------


def test_propose_accepted_appends_resets_and_acks():
    x = node(1, 3, role=FOLLOWING, leader_id=0, current_epoch=1, history=(t(1, 1),))
    txn = t(1, 2)
    step = deliver(x, 0, (PROPOSE, txn), 3)
    assert_step(step, x._replace(history=(t(1, 1), txn)), [(0, (ACK, (1, 2)))], TIMER)


def test_propose_has_no_contiguity_check():
    # C25: (1, 3) right after (1, 1) is accepted.
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1),))
    step = deliver(x, 0, (PROPOSE, t(1, 3)), 3)
    assert_step(step, x._replace(history=(t(1, 1), t(1, 3))), [(0, (ACK, (1, 3)))], TIMER)
    # and onto an empty history
    y = node(2, 3, role=FOLLOWING, leader_id=0)
    step = deliver(y, 0, (PROPOSE, t(4, 7)), 3)
    assert_step(step, y._replace(history=(t(4, 7),)), [(0, (ACK, (4, 7)))], TIMER)


@pytest.mark.parametrize("zxid", [(1, 2), (1, 1), (0, 9)])
def test_propose_with_old_zxid_is_rejected_silently(zxid):
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1), t(1, 2)))
    assert_step(deliver(x, 0, (PROPOSE, t(*zxid)), 3), x, [], NONE)


def test_propose_from_other_than_leader_id_is_ignored():
    x = node(1, 3, role=FOLLOWING, leader_id=0)
    assert_step(deliver(x, 2, (PROPOSE, t(1, 1)), 3), x, [], NONE)


@pytest.mark.parametrize("role", [LOOKING, LEADING])
def test_propose_to_non_follower_is_ignored(role):
    x = node(1, 3, role=role, leader_id=0)  # leader_id kept from an earlier epoch (C14)
    assert_step(deliver(x, 0, (PROPOSE, t(1, 1)), 3), x, [], NONE)


# --- Ack ----------------------------------------------------------------------------------------


def test_ack_reaching_quorum_commits_and_broadcasts():
    x = node(0, 3, role=LEADING, synced=True, current_epoch=1, history=(t(1, 1),),
             ack_set=(((1, 1), mask(0)),))
    step = deliver(x, 2, (ACK, (1, 1)), 3)
    want = x._replace(ack_set=(((1, 1), mask(0, 2)),), last_committed=(1, 1))
    c = (COMMIT, (1, 1))
    assert_step(step, want, [(1, c), (2, c)], NONE)


def test_ack_below_quorum_only_counts():
    x = node(0, 5, role=LEADING, current_epoch=1, history=(t(1, 1),),
             ack_set=(((1, 1), mask(0)),))
    step = deliver(x, 3, (ACK, (1, 1)), 5)
    assert_step(step, x._replace(ack_set=(((1, 1), mask(0, 3)),)), [], NONE)


def test_ack_without_entry_creates_it_and_keeps_ack_set_sorted():
    # C17 and C25: no entry, no history check.
    x = node(0, 3, role=LEADING, current_epoch=1, ack_set=(((1, 1), mask(0)), ((1, 5), mask(0))))
    step = deliver(x, 1, (ACK, (1, 3)), 3)
    want = x._replace(ack_set=(((1, 1), mask(0)), ((1, 3), mask(1)), ((1, 5), mask(0))))
    assert_step(step, want, [], NONE)
    # a second Ack for the unknown zxid reaches quorum: committed although not in history
    step = deliver(step.node, 2, (ACK, (1, 3)), 3)
    want2 = want._replace(ack_set=(((1, 1), mask(0)), ((1, 3), mask(1, 2)), ((1, 5), mask(0))),
                          last_committed=(1, 3))
    c = (COMMIT, (1, 3))
    assert_step(step, want2, [(1, c), (2, c)], NONE)


def test_ack_for_committed_zxid_counts_but_does_not_recommit():
    x = node(0, 3, role=LEADING, current_epoch=1, history=(t(1, 1), t(1, 2)),
             last_committed=(1, 2), ack_set=(((1, 1), mask(0, 1)),))
    step = deliver(x, 2, (ACK, (1, 1)), 3)
    assert_step(step, x._replace(ack_set=(((1, 1), mask(0, 1, 2)),)), [], NONE)


def test_ack_reaching_quorum_for_the_committed_zxid_does_not_recommit():
    # try_commit: zxid <= last_committed returns before the quorum test.
    x = node(0, 3, role=LEADING, current_epoch=1, history=(t(1, 1),), last_committed=(1, 1),
             ack_set=(((1, 1), mask(0)),))
    step = deliver(x, 1, (ACK, (1, 1)), 3)
    assert_step(step, x._replace(ack_set=(((1, 1), mask(0, 1)),)), [], NONE)


def test_ack_commit_does_not_require_lower_zxids_committed():
    # C25: (1, 2) commits on quorum while (1, 1) is still short of acks; last_committed jumps.
    x = node(0, 3, role=LEADING, current_epoch=1, history=(t(1, 1), t(1, 2)),
             ack_set=(((1, 1), mask(0)), ((1, 2), mask(0))))
    step = deliver(x, 1, (ACK, (1, 2)), 3)
    assert step.node.last_committed == (1, 2)
    assert step.outs == ((1, (COMMIT, (1, 2))), (2, (COMMIT, (1, 2))))


@pytest.mark.parametrize("role", [LOOKING, FOLLOWING])
def test_ack_to_non_leader_is_ignored(role):
    x = node(0, 3, role=role, ack_set=(((1, 1), mask(0)),))
    assert_step(deliver(x, 1, (ACK, (1, 1)), 3), x, [], NONE)


# --- Commit -------------------------------------------------------------------------------------


def test_commit_from_leader_resets_timer_and_advances():
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1), t(1, 2), t(1, 3)),
             last_committed=(1, 1))
    step = deliver(x, 0, (COMMIT, (1, 2)), 3)
    assert_step(step, x._replace(last_committed=(1, 2)), [], TIMER)


def test_commit_from_other_node_advances_without_timer():
    # C18: the deadline only for the sender leader_id; last_committed whoever sent it.
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1), t(1, 2)))
    step = deliver(x, 2, (COMMIT, (1, 2)), 3)
    assert_step(step, x._replace(last_committed=(1, 2)), [], NONE)


def test_commit_beyond_last_zxid_does_not_advance():
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1),))
    assert_step(deliver(x, 0, (COMMIT, (1, 2)), 3), x, [], TIMER)
    assert_step(deliver(x, 2, (COMMIT, (2, 0)), 3), x, [], NONE)


def test_commit_at_or_below_last_committed_does_not_move_it():
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1), t(1, 2)),
             last_committed=(1, 2))
    assert_step(deliver(x, 0, (COMMIT, (1, 2)), 3), x, [], TIMER)  # equal: no change
    assert_step(deliver(x, 0, (COMMIT, (1, 1)), 3), x, [], TIMER)  # lower: never backwards
    assert_step(deliver(x, 0, (COMMIT, (0, 0)), 3), x, [], TIMER)  # heartbeat of (0,0)


def test_commit_checks_only_the_last_zxid_not_membership():
    # C26: last_committed < zxid <= last_zxid(); (1, 5) is not in the history but within range
    x = node(1, 3, role=FOLLOWING, leader_id=0, history=(t(1, 1), t(2, 1)))
    step = deliver(x, 2, (COMMIT, (1, 5)), 3)
    assert_step(step, x._replace(last_committed=(1, 5)), [], NONE)


def test_commit_from_leader_id_resets_timer_even_while_looking():
    # C14 keeps leader_id on entering Looking; C18 tests only the sender.
    x = node(1, 3, role=LOOKING, leader_id=0)
    assert_step(deliver(x, 0, (COMMIT, (0, 0)), 3), x, [], TIMER)
    assert_step(deliver(node(1, 3), 0, (COMMIT, (0, 0)), 3), node(1, 3), [], NONE)


# --- heartbeat ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [dict(role=LOOKING), dict(role=FOLLOWING, synced=True),
                                dict(role=LEADING, synced=False)])
def test_heartbeat_needs_a_synced_leader(kw):
    assert heartbeat(node(0, 3, **kw), 3) is None


def test_heartbeat_resends_last_committed_even_when_none():
    x = node(1, 3, role=LEADING, synced=True)
    assert_step(heartbeat(x, 3), x, [(0, (COMMIT, (0, 0))), (2, (COMMIT, (0, 0)))], NONE)
    y = x._replace(history=(t(1, 1), t(1, 2)), last_committed=(1, 1))
    assert_step(heartbeat(y, 3), y, [(0, (COMMIT, (1, 1))), (2, (COMMIT, (1, 1)))], NONE)


# --- propose ------------------------------------------------------------------------------------


def test_can_propose():
    assert can_propose(node(role=LEADING, synced=True))
    assert not can_propose(node(role=LEADING, synced=False))
    assert not can_propose(node(role=FOLLOWING, synced=True))
    assert not can_propose(node(role=LOOKING, synced=True))


def test_propose_in_a_cluster_appends_and_broadcasts_without_commit():
    x = node(1, 3, role=LEADING, synced=True, current_epoch=2, next_counter=4,
             history=(t(2, 4),), last_committed=(2, 4), ack_set=(((2, 4), mask(0, 1)),))
    step = propose(x, b"zab-7", 3)
    txn = Txn((2, 5), b"zab-7")
    want = x._replace(next_counter=5, history=(t(2, 4), txn),
                      ack_set=(((2, 4), mask(0, 1)), ((2, 5), mask(1))))
    assert_step(step, want, [(0, (PROPOSE, txn)), (2, (PROPOSE, txn))], [("proposed", txn)])


def test_propose_replaces_a_stale_ack_entry():
    # ack_set[zxid] = {self.id}: an entry left over (e.g. from C17) is overwritten, not merged.
    x = node(0, 3, role=LEADING, synced=True, current_epoch=1, ack_set=(((1, 1), mask(1, 2)),))
    step = propose(x, b"p", 3)
    assert step.node.ack_set == (((1, 1), mask(0)),)
    assert step.node.last_committed == (0, 0)


def test_propose_single_node_commits_immediately():
    x = enter_looking(fresh_node(0, 1), 1).node
    s1 = propose(x, b"zab-0", 1)
    t1 = Txn((1, 1), b"zab-0")
    want = x._replace(next_counter=1, history=(t1,), ack_set=(((1, 1), mask(0)),),
                      last_committed=(1, 1))
    assert_step(s1, want, [], [("proposed", t1)])
    s2 = propose(s1.node, b"zab-1", 1)
    assert s2.node.last_committed == (1, 2) and s2.node.history[-1] == Txn((1, 2), b"zab-1")


def test_propose_after_re_election_uses_the_old_epoch_before_discovery():
    # C15 consequence: a re-elected former leader is still synced, so it can propose right after
    # become_leading(), under its old current_epoch and old next_counter.
    x = node(0, 3, current_epoch=1, accepted_epoch=1, history=(t(1, 1), t(1, 2)), synced=True,
             next_counter=2, last_committed=(1, 2), vote_target_zxid=(1, 2),
             vote_view=view(3, v0=0))
    led = deliver(x, 1, (VOTE, 1, (0, 0), 1, 0), 3).node
    assert led.role == LEADING and led.pending_new_epoch == 2 and led.current_epoch == 1
    assert can_propose(led)
    step = propose(led, b"zab-9", 3)
    assert step.node.history[-1] == Txn((1, 3), b"zab-9")
