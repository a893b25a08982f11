"""`zk-3.7.0-fwd` (models/zk/forward.py, README F9-F11): an established leader's NEWLEADER is a
step after the sync packets, so its broadcasts can fall between them, as in ZooKeeper 3.7.0
(`LearnerHandler.syncFollower` ends with `startForwarding`; `LearnerHandler.run` queues NEWLEADER
after it returns). What the follower does with them is read off 3.7.0's
`Learner.syncWithLeader`, by hand: before NEWLEADER a PROPOSAL joins packetsNotCommitted and a
COMMIT (DIFF) packetsCommitted; at NEWLEADER packetsNotCommitted goes to the SyncThread and is
cleared, so a COMMIT after it finds nothing pending: ZOOKEEPER-4394's NullPointerException.
"""

from __future__ import annotations

import pytest

from zabmc.spec import CheckSpec

T1 = ((1, 1), b"zab-0")
# node 2 leads nodes 0 and 1 (epoch 1), established with node 0; node 1 still in Discovery
EPOCH_1 = ["elect node 2 (quorum [0, 1, 2])", "deliver 0->2 FOLLOWERINFO",
           "deliver 1->2 FOLLOWERINFO", "deliver 2->0 LEADERINFO", "deliver 0->2 ACKEPOCH", "deliver 2->0 SYNC",
           "deliver 2->0 NEWLEADER", "deliver 2->1 LEADERINFO", "ack-newleader node 0",
           "deliver 0->2 ACK-NEWLEADER", "deliver 2->0 UPTODATE"]


def _walk(model: str, steps: list[str], invariants=("sync-exception",)):
    """The explorer's own events, one per described step (conftest's `walk_described`)."""
    from conftest import walk_described

    spec = CheckSpec(model=model, nodes=3, proposals=2, depth=60,
                     invariants=invariants).validate()
    return walk_described(spec, steps)


def test_an_established_leader_owes_newleader_after_the_sync_packets():
    env, states, _ = _walk("zk-3.7.0-fwd", EPOCH_1 + ["deliver 1->2 ACKEPOCH"])
    lead = states[-1].nodes[2]
    assert lead.nlq == 0b010 and lead.forwarding >> 1 & 1
    labels = [ev.describe(env.model) for ev in env.events(states[-1])]
    assert any(t.startswith("newleader node 2 to 1 ") for t in labels), labels
    assert not any(t.startswith("deliver 2->1 NEWLEADER") for t in labels), labels
    # zk-3.7.0-threads queues it with the sync packets
    env, states, _ = _walk("zk-3.7.0-threads", EPOCH_1 + ["deliver 1->2 ACKEPOCH", "deliver 2->1 SYNC"])
    labels = [ev.describe(env.model) for ev in env.events(states[-1])]
    assert any(t.startswith("deliver 2->1 NEWLEADER") for t in labels), labels


def test_a_proposal_and_its_commit_before_newleader_are_kept_for_it():
    """The proposal is forwarded before NEWLEADER and committed before it too: packetsNotCommitted
    then packetsCommitted; NEWLEADER hands the proposal to the SyncThread, UPTODATE commits it."""
    steps = EPOCH_1 + ["deliver 1->2 ACKEPOCH", "propose zab-0 at node 2", "deliver 2->1 SYNC",
                       "deliver 2->1 PROPOSAL", "deliver 2->0 PROPOSAL", "log node 0",
                       "deliver 0->2 ACK(", "deliver 2->1 COMMIT", "newleader node 2 to 1",
                       "deliver 2->1 NEWLEADER", "ack-newleader node 1", "log node 1",
                       "deliver 1->2 ACK-NEWLEADER", "deliver 2->1 UPTODATE"]
    _, states, found = _walk("zk-3.7.0-fwd", steps)
    assert found == [None] * len(steps)
    k = len(EPOCH_1) + 4  # after the forwarded PROPOSAL
    f = states[k].nodes[1]
    assert (f.pending, f.nl) == ((T1,), False)
    f = states[k + 4].nodes[1]  # after the forwarded COMMIT
    assert (f.pending, f.pcommit, f.nl) == ((T1,), (1, 1), False)
    f = states[-1].nodes[1]
    assert f.history == (T1,) and f.last_committed == (1, 1) and f.current_epoch == 1


def test_a_commit_after_newleader_of_a_proposal_forwarded_before_it_throws():
    """The same proposal, committed after NEWLEADER: packetsNotCommitted was cleared there, the
    COMMIT peeks an empty queue (ZOOKEEPER-4394), here with a proposal that was forwarded, not
    sent with the sync packets as in zk-3.7.0-threads's runs."""
    steps = EPOCH_1 + ["deliver 1->2 ACKEPOCH", "propose zab-0 at node 2", "deliver 2->1 SYNC",
                       "deliver 2->1 PROPOSAL", "newleader node 2 to 1", "deliver 2->1 NEWLEADER",
                       "deliver 2->0 PROPOSAL", "log node 0", "deliver 0->2 ACK(",
                       "deliver 2->1 COMMIT"]
    _, states, found = _walk("zk-3.7.0-fwd", steps)
    assert found[:-1] == [None] * (len(steps) - 1)
    assert found[-1] is not None and found[-1].property == "sync-exception"
    assert found[-1].nodes == (1,)


def test_a_truncating_follower_applies_a_commit_before_newleader_in_memory():
    from models.zk import forward, handlers
    from models.zk.state import COMMIT, F_SYNC, FOLLOWING, TRUNC

    f = forward.FwdNode(1, role=FOLLOWING, phase=F_SYNC, leader=2, accepted_epoch=1, conn=1,
                        mode=TRUNC, pending=(T1,))
    st = forward._before_newleader(handlers, f, (COMMIT, 1, (1, 1)))
    assert (st.node.mem, st.node.pending, st.node.commit, st.effects) == ((T1,), (), (1, 1), ())
    st = forward._before_newleader(handlers, f, (COMMIT, 1, (1, 2)))  # not the next: a warning
    assert st.node == f and st.effects == ()


@pytest.mark.parametrize("model,depth", [("zk-3.7.0-threads", 19), ("zk-3.7.0-fwd", 20)])
def test_the_shortest_4394_run_each_finds(model, depth):
    """Both find 4394; the fwd variant's shortest run is one event longer (its NEWLEADER is a step
    of its own). zabmc's own figures: they detect change."""
    out = CheckSpec(model=model, nodes=3, proposals=2, depth=40,
                    invariants=("sync-exception",)).validate().run()
    [v] = out.violations
    assert v.depth == depth
