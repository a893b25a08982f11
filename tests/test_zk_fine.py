"""`zk-3.7.0-threads` and `zk-3.9.2-threads`: the zk kernel at the grain of the follower's threads
(models/zk/README.md, F1-F8; issue #36 point 1). Every state below is derived by hand from
ZooKeeper 3.7.0's Learner.syncWithLeader, SendAckRequestProcessor, LearnerHandler.run and
Leader.waitForNewLeaderAck (and 3.9.2's Learner.syncWithLeader for the fix)."""

from __future__ import annotations

from zabmc.explore.trace import rebuild
from zabmc.core.model import ALIASES, FAILED, SYNCED, get_model
from zabmc.spec import CheckSpec

from models.zk.fine import FineNode
from models.zk.state import (ACK, ACKLD, DIFF, F_BROADCAST, F_SYNC, FOLLOWING, L_BROADCAST, L_SYNC,
                             LEADING, NEWLEADER, PROPOSAL, UPTODATE, Node)

T1, T2 = ((1, 1), b"zab-0"), ((1, 2), b"zab-1")
# node 2 follows node 1 on its connection 1, in Synchronisation for epoch 2: its DIFF held 1.1
# (committed), and NEWLEADER(2) is next
FOLLOWER = FineNode(2, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2, conn=1,
                    mode=DIFF, pending=(T1,), pcommit=(1, 1))
# node 1 leads epoch 2, has sent node 2 its DIFF and NEWLEADER, and counts only its own ack
LEADER = FineNode(1, role=LEADING, phase=L_SYNC, leader=1, accepted_epoch=2, current_epoch=2,
                  history=(T1,), learners=0b110, lconn=(0, 0, 1), tmax=2, connecting=0b110,
                  electing=0b110, peers=(None, None, None), ackld=0b010, forwarding=0b100)
NL = (NEWLEADER, 1, 2)
ACK_T1 = (ACK, 1, (1, 1))
ACK_NL = (ACKLD, 1, 2)


def test_the_threads_grain_is_an_abstraction_apart_from_the_releases():
    """Issue #62: a release's name is its own model (models/zk/releases.py); the threads' grain
    alone is an abstraction named for the rules it takes."""
    assert get_model("zk-3.7.0-threads").name == "zk-3.7.0-threads"
    assert get_model("zk-3.9.2-threads").name == "zk-3.9.2-threads"
    assert get_model("zk-3.7.0-threads").release is None
    assert get_model("zk-3.8.0").release == "3.8.0" and "zk-3.8.0" not in ALIASES


def test_3_7_0_newleader_queues_then_owes_its_ack():
    """Learner.syncWithLeader (3.7.0) at NEWLEADER: currentEpoch (line 749), the proposals handed
    to the SyncThread (760-763), and only then the ACK (766), a step of its own (F1)."""
    m = get_model("zk-3.7.0-threads")
    st = m.deliver(FOLLOWER, 1, NL, 3)
    assert st.outs == () and st.effects == ()
    assert st.node == FOLLOWER._replace(current_epoch=2, nl=True, mem=(T1,), pending=(), owed=True)
    nodes = (m.fresh(0, 3), LEADER, st.node)
    # node 0 may join; node 2's SyncThread may write; node 2's QuorumPeer thread may ack
    assert m.actions(nodes, 0, 3) == [("join", 0, 1), ("log", 2), ("ack-newleader", 2)]
    [(i, acked)] = m.act(nodes, ("ack-newleader", 2), 3)
    assert (i, acked.outs, acked.node) == (2, ((1, ACK_NL),), st.node._replace(owed=False))


def test_3_7_0_sync_thread_acknowledges_every_transaction_it_writes():
    """SendAckRequestProcessor.processRequest sends an ACK for every request it gets, whatever its
    epoch (F3): 1.1 of epoch 1 is acknowledged to the leader of epoch 2, before NEWLEADER's ACK.
    The coarse `zk` acknowledges only the current epoch's (D6), so it sends nothing here."""
    m = get_model("zk-3.7.0-threads")
    owing = m.deliver(FOLLOWER, 1, NL, 3).node
    [(i, st)] = m.act((m.fresh(0, 3), LEADER, owing), ("log", 2), 3)
    assert (i, st.outs) == (2, ((1, ACK_T1),))
    assert st.node == owing._replace(history=(T1,), mem=())  # still owes the NEWLEADER ack
    coarse = Node(**{f: getattr(owing, f) for f in Node._fields})
    [(_, cst)] = get_model("zk").act((Node(0), Node(1), coarse), ("log", 2), 3)
    assert cst.outs == () and cst.node.history == (T1,)


def test_a_follower_writes_its_owed_ack_before_it_reads_a_packet():
    """F2: the QuorumPeer thread reads the next packet only after the ACK is written."""
    m = get_model("zk-3.7.0-threads")
    owing = m.deliver(FOLLOWER, 1, NL, 3).node
    st = m.deliver(owing, 1, (PROPOSAL, 1, T2), 3)
    assert st.outs == ((1, ACK_NL),)
    assert st.node == owing._replace(owed=False, pending=(T2,))


def test_the_leader_takes_the_first_ack_as_newleaders_and_discards_a_proposals():
    """LearnerHandler.run reads one packet after NEWLEADER and hands its zxid to
    Leader.waitForNewLeaderAck, which drops a zxid that is not NEWLEADER's (2.0) without counting
    the follower (F4); the NEWLEADER ack that follows goes to processAck, which ignores a zxid whose
    counter is 0. The failure is `leader-unexpected-ack` (ZOOKEEPER-4685)."""
    m = get_model("zk-3.7.0-threads")
    st = m.deliver(LEADER, 2, ACK_T1, 3)
    assert st.node == LEADER._replace(nlread=(0, 0, 1)) and st.outs == ()
    [(tag, prop, what)] = st.effects
    assert (tag, prop) == (FAILED, "leader-unexpected-ack")
    assert what.startswith("leader 1 reads ACK 1.1 from follower 2 where it waits for the ACK of "
                           "NEWLEADER 2.0")
    later = m.deliver(st.node, 2, ACK_NL, 3)
    assert later == (st.node, (), ())  # never counted: the leader stays in Synchronisation


def test_the_newleader_ack_first_establishes_and_a_later_proposal_ack_is_processed():
    """The other order: NEWLEADER's ACK first is counted (a quorum with the leader's own), the
    leader is established (every transaction it holds committed) and sends UPTODATE; the ACK of
    1.1 then goes to processAck, which finds no outstanding proposal 1.1 and does nothing."""
    m = get_model("zk-3.7.0-threads")
    st = m.deliver(LEADER, 2, ACK_NL, 3)
    est = LEADER._replace(phase=L_BROADCAST, ackld=0b110, commit=(1, 1), last_committed=(1, 1),
                          nlread=(0, 0, 1))
    assert st == (est, ((2, (UPTODATE, 1)),), ((SYNCED, 2),))
    assert m.deliver(est, 2, ACK_T1, 3) == (est, (), ())


def test_a_discarded_follower_gets_uptodate_when_others_establish_the_leader():
    """F4: the LearnerHandler whose first ACK was discarded goes on to waitForStartup and queues
    UPTODATE once the leader starts; an established leader's handler (quorumFormed) sends UPTODATE
    whatever its first ACK (F5)."""
    m = get_model("zk-3.7.0-threads")
    both = LEADER._replace(learners=0b111, lconn=(1, 0, 1), connecting=0b111, electing=0b111,
                           forwarding=0b101)
    discarded = m.deliver(both, 2, ACK_T1, 3)
    assert discarded.effects[0][1] == "leader-unexpected-ack"
    st = m.deliver(discarded.node, 0, (ACKLD, 1, 2), 3)
    assert st.outs == ((0, (UPTODATE, 1)), (2, (UPTODATE, 1)))
    assert (st.node.phase, st.node.ackld, st.node.nlread) == (L_BROADCAST, 0b011, (1, 0, 1))
    est = LEADER._replace(phase=L_BROADCAST, commit=(1, 1), last_committed=(1, 1))
    assert m.deliver(est, 2, ACK_T1, 3) == (est._replace(nlread=(0, 0, 1)),
                                             ((2, (UPTODATE, 1)),), ())


def test_3_9_2_writes_acks_newleader_and_acknowledges_the_proposals_after_uptodate():
    """3.9.2's Learner.syncWithLeader (PR #2111): at NEWLEADER the proposals are appended and
    committed to the log in the QuorumPeer thread (lines 759-772), then currentEpoch (775), then
    the ACK (779), one step; their ACKs are written after UPTODATE (801-804, F6)."""
    m = get_model("zk-3.9.2-threads")
    st = m.deliver(FOLLOWER, 1, NL, 3)
    assert st.outs == ((1, ACK_NL),) and st.effects == ()
    assert st.node == FOLLOWER._replace(current_epoch=2, nl=True, history=(T1,), pending=(),
                                        toack=((1, 1),))
    assert m.actions((m.fresh(0, 3), LEADER, st.node), 0, 3) == [("join", 0, 1)]
    up = m.deliver(st.node, 1, (UPTODATE, 1), 3)
    assert up.outs == ((1, ACK_T1),)
    assert up.node == st.node._replace(phase=F_BROADCAST, commit=(1, 1), pcommit=(0, 0),
                                       last_committed=(1, 1), toack=())


BOUNDS = dict(nodes=3, proposals=1, max_timeouts=1, invariants=("leader-unexpected-ack",))
#: the shortest run (hand-derived): epoch 1 established (8 events: elect, FOLLOWERINFO,
#: LEADERINFO, ACKEPOCH, SYNC, NEWLEADER, its ACK written, its ACK read), a proposal, the leader's
#: timeout (so a later epoch's DIFF carries 1.1), then epoch 2 with the third node up to NEWLEADER
#: (6), the SyncThread's write and its ACK of 1.1 read first: 8 + 2 + 8 = 18
SHORTEST = [
    "elect node 1 (quorum [0, 1])",
    "deliver 0->1 FOLLOWERINFO(conn=1, accepted_epoch=0)",
    "deliver 1->0 LEADERINFO(conn=1, epoch=1)",
    "deliver 0->1 ACKEPOCH(conn=1, current_epoch=0, last_zxid=0.0)",
    "deliver 1->0 SYNC(conn=1, mode=DIFF, zxid=0.0, txns=[], committed=0)",
    "deliver 1->0 NEWLEADER(conn=1, epoch=1)",
    "ack-newleader node 0 (the QuorumPeer thread writes NEWLEADER's ACK)",
    "deliver 0->1 ACK-NEWLEADER(conn=1, epoch=1)",
    "propose zab-0 at node 1",
    "timeout node 1",
    "elect node 1 (quorum [1, 2])",
    "deliver 2->1 FOLLOWERINFO(conn=1, accepted_epoch=0)",
    "deliver 1->2 LEADERINFO(conn=1, epoch=2)",
    "deliver 2->1 ACKEPOCH(conn=1, current_epoch=0, last_zxid=0.0)",
    "deliver 1->2 SYNC(conn=1, mode=DIFF, zxid=0.0, txns=[1.1], committed=1)",
    "deliver 1->2 NEWLEADER(conn=1, epoch=2)",
    "log node 2 (the SyncThread writes its queued transactions)",
    "deliver 2->1 ACK(conn=1, zxid=1.1)",
]


def test_zookeeper_4685_on_3_7_0_in_18_events():
    spec = CheckSpec(model="zk-3.7.0-threads", depth=40, **BOUNDS).validate()
    [found] = spec.run().violations
    trace = rebuild(spec.env(), found.path, "leader-unexpected-ack")
    assert [e.describe(spec.env().model) for e in trace.events] == SHORTEST
    assert trace.violation.nodes == (1,)


def test_zookeeper_4685_needs_a_second_epoch():
    """Without a fault every synchronisation is epoch 1's, whose DIFFs are empty: exhausted."""
    out = CheckSpec(model="zk-3.7.0-threads", nodes=3, proposals=1, depth=100,
                    invariants=("leader-unexpected-ack",)).validate().run()
    assert out.violations == [] and str(out.stop_reason) == "exhausted"


def test_no_zookeeper_4685_with_3_9_2s_fix():
    """3.9.2 acknowledges NEWLEADER before any proposal: not within the bounds that find it on
    3.7.0, to its depth (18), and exhausted with two nodes, where 3.7.0 shows it in 21 events."""
    out = CheckSpec(model="zk-3.9.2-threads", depth=18, **BOUNDS).validate().run()
    assert out.violations == [] and str(out.stop_reason) == "depth-bound"
    two = dict(BOUNDS, nodes=2, depth=100)
    fixed = CheckSpec(model="zk-3.9.2-threads", **two).validate().run()
    assert fixed.violations == [] and str(fixed.stop_reason) == "exhausted"
    [found] = CheckSpec(model="zk-3.7.0-threads", **two).validate().run().violations
    assert found.depth == 21
