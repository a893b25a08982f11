"""`zk-3.9.3-store` and `zk-3.9.4-store` at the storage grain (models/zk/README.md, S1-S10; models/zk/storage.py):
the in-memory committed log and data tree, the leader's DIFF/TRUNC/SNAP chosen from them, and
ZOOKEEPER-4925 (tests/corpus/zk/zookeeper-4925.trace.json).

The expected syncs below are worked out by hand from release-3.9.3's
`LearnerHandler.syncFollower` and `queueCommittedProposals` (cited at each case)."""

from __future__ import annotations

import json
import pathlib

import pytest

from models.zk.refine import shape
from models.zk.state import (ACKEPOCH, COMMIT, DIFF, F_DISCOVERY, F_SYNC, FOLLOWING, L_BROADCAST,
                             L_EPOCH, L_SYNC, LEADERINFO, LEADING, LOOKING, NEWLEADER, SNAP, SYNC,
                             TRUNC, ZERO, truncate_log)
from models.zk.storage import StoreNode, sync_follower
from zabmc.explore.env import Env, ExploreConfig
from zabmc.explore.trace import load, replay
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import FAILED, crashed, get_model

CORPUS = pathlib.Path(__file__).parent / "corpus" / "zk"


def t(e, c):
    return ((e, c), f"zab-{e}.{c}".encode())


T11, T12, T13, T21 = t(1, 1), t(1, 2), t(1, 3), t(2, 1)


def leader(history, clog, dt, phase=L_SYNC, acks=()):
    return StoreNode(1, role=LEADING, phase=phase, leader=1, accepted_epoch=3, current_epoch=3,
                     history=history, clog=clog, dt=dt, acks=acks)


# --- the leader's choice (S6-S9) ------------------------------------------------------------------

def test_a_learner_at_the_leaders_last_zxid_gets_an_empty_diff():
    """syncFollower lines 849-857: lastProcessedZxid == peerLastZxid."""
    lead = leader((T11, T12), ((1, 1), (1, 2)), (1, 2))
    assert sync_follower(lead, (1, 2)) == (DIFF, (1, 2), (), 0, ())


def test_a_diff_from_the_committed_log_carries_every_entry_after_the_learner():
    """868-873, then queueCommittedProposals 977-985 (DIFF at the learner's zxid) and 1021-1025."""
    lead = leader((T11, T12, T13), ((1, 1), (1, 2), (1, 3)), (1, 3))
    assert sync_follower(lead, (1, 1)) == (DIFF, (1, 3), (T12, T13), 2, ())


def test_a_hole_in_the_committed_log_is_skipped_and_reported():
    """ZOOKEEPER-4925: the committed log [1.1] (1.2 applied outside it): the learner at 1.1 is
    within [min, max] = [1.1, 1.1], so the DIFF comes from the committed log, empty, and 1.2,
    applied by the leader, is missing."""
    lead = leader((T11, T12), ((1, 1),), (1, 2))
    assert sync_follower(lead, (1, 1)) == (DIFF, (1, 1), (), 0, (T12,))
    # a hole in the middle: [1.1, 1.3] without 1.2
    lead = leader((T11, T12, T13), ((1, 1), (1, 3)), (1, 3))
    assert sync_follower(lead, (1, 1)) == (DIFF, (1, 3), (T13,), 1, (T12,))


def test_a_learner_beyond_the_committed_log_is_truncated_to_its_end():
    """858-867: peerLastZxid > maxCommittedLog: TRUNC to maxCommittedLog. With the hole at the end
    of the log that truncates below the leader's data tree: 1.2 is lost to the learner too."""
    lead = leader((T11, T12), ((1, 1), (1, 2)), (1, 2))
    assert sync_follower(lead, (1, 3)) == (TRUNC, (1, 2), (), 0, ())
    holed = leader((T11, T12), ((1, 1),), (1, 2))
    assert sync_follower(holed, (1, 3)) == (TRUNC, (1, 1), (), 0, (T12,))


def test_a_learner_inside_a_hole_is_truncated_to_the_entry_before_it():
    """queueCommittedProposals 995-1011: the learner's 1.2 is not in [1.1, 1.3]: TRUNC to the
    entry before (1.1), then 1.3; across an epoch (1.2 then 2.1) there is no TRUNC (998-1004) and
    no op packet, so a SNAP (930-935): the leader's data tree."""
    lead = leader((T11, T12, T13), ((1, 1), (1, 3)), (1, 3))
    assert sync_follower(lead, (1, 2)) == (TRUNC, (1, 1), (T13,), 1, (T12,))
    lead = leader((T11, T21), ((1, 1), (2, 1)), (2, 1))
    assert sync_follower(lead, (1, 2)) == (SNAP, (2, 1), (T11, T21), 2, ())


def test_below_the_committed_log_the_on_disk_log_then_the_committed_log():
    """874-902: the learner's 1.1 is below minCommittedLog 1.2 and in the on-disk log: the log
    up to the minimum, then the committed log beyond it; a learner with nothing (zxid 0) is not in
    the on-disk log (getProposalsFromTxnLog returns nothing): SNAP."""
    lead = leader((T11, T12, T13), ((1, 2), (1, 3)), (1, 3))
    assert sync_follower(lead, (1, 1)) == (DIFF, (1, 3), (T12, T13), 2, ())
    assert sync_follower(lead, (0, 0)) == (SNAP, (1, 3), (T11, T12, T13), 3, ())


def test_an_established_leader_then_forwards_its_outstanding_proposals():
    """Leader.startForwarding (Leader.java 1360-1395): outstanding proposals beyond the last
    queued zxid, as PROPOSAL only."""
    lead = leader((T11, T12), ((1, 1),), (1, 1), phase=L_BROADCAST, acks=(((1, 2), 0b10),))
    assert sync_follower(lead, (1, 1)) == (DIFF, (1, 1), (T12,), 0, ())


# --- what fills the committed log (S2-S5) ----------------------------------------------------------

def diff_follower(model):
    """A follower of epoch 2 that got DIFF(1.1) with PROPOSAL 1.2 and COMMIT 1.2 (1.1 in its
    committed log by a broadcast COMMIT of epoch 1)."""
    return StoreNode(0, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2,
                     current_epoch=1, history=(T11,), last_committed=(1, 1), commit=(1, 1),
                     conn=2, mode=DIFF, pending=(T12,), pcommit=(1, 2), clog=((1, 1),),
                     dt=(1, 1))


@pytest.mark.parametrize("model, clog", [("zk-3.9.3-store", ((1, 1),)),
                                         ("zk-3.9.4-store", ((1, 1), (1, 2)))])
def test_newleader_applies_the_diffs_commits_outside_the_committed_log_in_3_9_3(model, clog):
    """Learner.syncWithLeader at NEWLEADER (3.9.3 lines 771-785): 1.2 appended, written and
    applied with processTxn(hdr, txn), which 3.9.4 (lines 797-799) replaces with
    processTxn(Request), which adds it to the committed log."""
    st = get_model(model).deliver(diff_follower(model), 1, (NEWLEADER, 2, 2), 3)
    x = st.node
    assert (x.history, x.dt, x.clog) == ((T11, T12), (1, 2), clog)


@pytest.mark.parametrize("model, clog", [("zk-3.9.3-store", ((1, 1),)),
                                         ("zk-3.9.4-store", ((1, 1), (1, 2)))])
def test_trunc_reloads_the_log_then_applies_the_commits(model, clog):
    """TRUNC(1.1) of a follower holding 1.1 and 1.3: truncateLog is clear() and loadDataBase()
    (ZKDatabase.java 595-608), so the committed log is [1.1]; the committed 1.2 that follows is
    applied with processTxn(hdr, txn) in 3.9.3 (Learner.java 662-671), as a Request in 3.9.4."""
    f = StoreNode(0, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2, current_epoch=1,
                  history=(T11, T13), conn=2, clog=((1, 1), (1, 3)), dt=(1, 3))
    x = get_model(model).deliver(f, 1, (SYNC, 2, TRUNC, (1, 1), (T12,), 1), 3).node
    assert (x.history, x.mem, x.dt, x.clog) == ((T11,), (T12,), (1, 2), clog)


RELEASES = ("3.6.2", "3.7.0", "3.8.0", "3.8.5", "3.9.2", "3.9.3", "3.9.4")


@pytest.mark.parametrize("version", RELEASES)
def test_a_commit_forwarded_before_newleader_under_trunc_stays_out_of_the_committed_log(version):
    """S15, worked out by hand from each release's Learner.syncWithLeader: a follower of an
    established leader, synchronised by TRUNC(1.1) (its committed log reloaded: [1.1]), holds the
    forwarded proposal 2.1 in packetsNotCommitted when 2.1's COMMIT arrives before NEWLEADER.
    writeToTxnLog is false, so `case Leader.COMMIT` applies it with zk.processTxn(pif.hdr,
    pif.rec) (release-3.8.0-1 Learner.java 665-672; 3.6.2 605-612, 3.9.3 662-669), which reaches
    the data tree only (ZooKeeperServer.processTxn(TxnHeader, Record), no addCommittedProposal):
    the data tree at 2.1, the committed log still [1.1]. release-3.9.4 applies it with
    zk.processTxn(pif.toRequest()) (Learner.java 683-690), processTxn(Request), which adds it
    (ZooKeeperServer.java 1886-1889)."""
    m = get_model(f"zk-{version}")
    f = m.fresh(0, 3)._replace(role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2,
                               current_epoch=1, history=(T11,), disk=(T11,),
                               last_committed=(1, 1), commit=(1, 1), conn=2, mode=TRUNC,
                               pending=(T21,), clog=((1, 1),), dt=(1, 1))
    st = m.deliver(f, 1, (COMMIT, 2, (2, 1)), 3)
    x = st.node
    clog = ((1, 1), (2, 1)) if version == "3.9.4" else ((1, 1),)
    assert (x.history, x.mem, x.pending, x.commit, x.dt, x.clog) == (
        (T11,), (T21,), (), (2, 1), (2, 1), clog)
    assert (st.outs, st.effects) == ((), ())


def test_truncate_log_cuts_the_log_files_only():
    """Worked by hand from ZKDatabase.truncateLog (clear(), FileTxnSnapLog.truncateLog, then
    loadDataBase()), release-3.6.2 to release-3.9.4: FileTxnSnapLog.truncateLog calls
    FileTxnLog.truncate only and deletes no snapshot; FileTxnLog.truncate positions at the first
    logged transaction at or past the zxid and cuts the file after it; the load restores the
    newest snapshot and replays the log past it. The control's follower (tests/corpus/zk/
    zookeeper-4925-trunc-snap-3.8.0.schedule.json): a snapshot at 1.1 (its SNAP's NEWLEADER), a
    log holding 2.1 alone, told TRUNC 1.1: the first logged transaction at or past 1.1 is 2.1,
    the file is cut after it, and the load gives 1.1 (snapshot) then 2.1 (log)."""
    assert truncate_log((T11, T21), (1, 1), (1, 1), "file") == (T11, T21)
    assert truncate_log((T11, T21), (1, 1), (1, 1), "exact") == (T11,)  # the fix's cut, logged part
    assert truncate_log((T11, T21), (1, 1), ZERO, "file") == (T11,)  # 1.1 logged: cut after it
    # a snapshot past the zxid stays whole; only the log past it is cut (after its first)
    assert truncate_log((T11, T12, T13, T21), (1, 1), (1, 2), "file") == (T11, T12, T13)
    assert truncate_log((T11, T12, T13, T21), (1, 1), (1, 2), "exact") == (T11, T12)


@pytest.mark.parametrize("version", ["3.8.0", "3.9.3"])
def test_the_controls_trunc_keeps_what_the_snapshot_and_the_log_cut_hold(version):
    """The control's TRUNC on the release model, worked by hand as above: node 0, synchronised by
    SNAP at 1.1 (its log beginning after it, `logbase`), has logged 2.1; a leader of epoch 3 sends
    TRUNC 1.1. Real 3.8.0 servers keep 2.1 (reports/zookeeper.md, "ZOOKEEPER-4925 before
    3.9.3"): memory and disk are the snapshot's 1.1 and the log's 2.1, and the TRUNC window
    (truncate-keeps, R4) names 2.1, which the leader does not send."""
    m = get_model(f"zk-{version}")
    f = m.fresh(0, 3)._replace(role=FOLLOWING, phase=F_SYNC, leader=2, accepted_epoch=3,
                               current_epoch=2, history=(T11, T21), disk=(T11, T21),
                               last_committed=(2, 1), commit=(2, 1), conn=2, clog=((2, 1),),
                               dt=(2, 1), logbase=(1, 1))
    st = m.deliver(f, 2, (SYNC, 2, TRUNC, (1, 1), (), 0), 3)
    x = st.node
    assert (x.history, x.disk, x.logbase) == ((T11, T21), (T11, T21), (1, 1))
    assert [e[1] for e in st.effects] == ["truncate-keeps"]
    assert "keeps 2.1 past it" in st.effects[0][2]
    # without the snapshot (its whole disk a log) the file cut ends at the logged 1.1
    y = m.deliver(f._replace(logbase=ZERO), 2, (SYNC, 2, TRUNC, (1, 1), (), 0), 3).node
    assert (y.history, y.disk) == ((T11,), (T11,))


def test_a_snaps_newleader_records_where_the_log_begins_and_a_crash_keeps_it():
    """S12: NEWLEADER's snapshot (takeSnapshot(syncSnapshot)) is at the data tree's last zxid; the
    log files begin after it. The snapshot is a file: a crash keeps it (`durable`)."""
    m = get_model("zk-3.8.0")
    assert "logbase" in m.durable
    f = m.fresh(0, 3)._replace(logbase=(1, 1), disk=(T11,), history=(T11,))
    assert crashed(m, f, 3).logbase == (1, 1)


# --- R5: what QuorumPeer.getLastLoggedZxid reads (models/zk/README.md, R5) ------------------------


def _former_leader(m, i: int):
    """Node `i` after leading epoch 2 with 1.1 logged and nothing proposed: Leader.startZkServer
    set its data tree's lastProcessedZxid to 2.0 (S14), and the role change kept it (S5)."""
    return m.fresh(i, 3)._replace(accepted_epoch=2, current_epoch=2, history=(T11,), disk=(T11,),
                                  last_committed=(1, 1), commit=(1, 1), clog=((1, 1),),
                                  dt=(2, 0))


@pytest.mark.parametrize("version", RELEASES)
def test_a_former_leader_at_its_x0_wins_the_election(version):
    """R5, by hand: FLE's vote is (currentEpoch, QuorumPeer.getLastLoggedZxid(), id)
    (FastLeaderElection.getInitLastLoggedZxid, release-3.8.0-1 lines 868-874), and
    getLastLoggedZxid returns the data tree's lastProcessedZxid (QuorumPeer.java 1324-1329): the
    former leader's 2.0 beats node 1's 1.1 in totalOrderPredicate (743-747) though node 1's id
    is greater. The coarse vote (its last transaction, 1.1 for both) would elect node 1."""
    m = get_model(f"zk-{version}")
    nodes = (_former_leader(m, 0),
             _former_leader(m, 1)._replace(dt=(1, 1)),
             m.fresh(2, 3))
    assert ("elect", 0, 0b011) in m.actions(nodes, 0b100, 3)
    assert not [a for a in m.actions(nodes, 0b100, 3) if a[0] == "elect" and a[1] == 1]


@pytest.mark.parametrize("version", RELEASES)
def test_a_former_leaders_ackepoch_names_its_x0(version):
    """R5, by hand: Learner.registerWithLeader reads getLastLoggedZxid before FOLLOWERINFO and
    sends it in ACKEPOCH (release-3.8.0-1 Learner.java 490, 527): 2.0, not 1.1."""
    m = get_model(f"zk-{version}")
    f = _former_leader(m, 0)._replace(role=FOLLOWING, phase=F_DISCOVERY, leader=1, conn=1)
    st = m.deliver(f, 1, (LEADERINFO, 1, 3), 3)
    assert st.outs == ((1, (ACKEPOCH, 1, 2, (2, 0))),)


def _epoch_leader(m, dt):
    """Node 1 leading epoch 3 (LEADERINFO sent; node 0's ACKEPOCH awaited), with 1.1 logged and
    its data tree at `dt`."""
    return m.fresh(1, 3)._replace(role=LEADING, phase=L_EPOCH, leader=1, accepted_epoch=3,
                                  current_epoch=2, history=(T11,), disk=(T11,), clog=((1, 1),),
                                  dt=dt, last_committed=(1, 1), commit=(1, 1), learners=0b011,
                                  lconn=(1, 0, 0), connecting=0b011, electing=0b010,
                                  peers=(None, None, None), ackld=0b010)


@pytest.mark.parametrize("version", RELEASES)
def test_d9_compares_an_ackepoch_with_the_leaders_data_tree(version):
    """R5, by hand: Leader.lead takes leaderStateSummary = (currentEpoch,
    zk.getLastProcessedZxid()), the data tree's (release-3.8.0-1 Leader.java 597-599), and
    waitForEpochAck throws "Follower is ahead of the leader" when the ACKEPOCH's (currentEpoch,
    zxid) is beyond it (1461-1472; StateSummary.isMoreRecentThan, 42-44). A follower at its X.0
    2.0 is ahead of a leader whose tree is at 1.1; a follower at 1.2 is not ahead of a leader at
    its X.0 2.0 (the kernel's comparison with the log's 1.1 would give up), which takes it
    towards its quorum and synchronises it from 1.2 (TRUNC to the committed log's 1.1)."""
    m = get_model(f"zk-{version}")
    st = m.deliver(_epoch_leader(m, (1, 1)), 0, (ACKEPOCH, 1, 2, (2, 0)), 3)
    assert st.node.role == LOOKING
    assert [e[1] for e in st.effects if e[0] == FAILED] == ["leader-gives-up"]
    st = m.deliver(_epoch_leader(m, (2, 0)), 0, (ACKEPOCH, 1, 2, (1, 2)), 3)
    assert (st.node.role, st.node.phase, [e for e in st.effects if e[0] == FAILED]) == (
        LEADING, L_SYNC, [])
    assert st.outs[0] == (0, (SYNC, 1, TRUNC, (1, 1), (), 0))
    # of five nodes, before the quorum: the follower's zxid is kept as it came (`peers`)
    five = _epoch_leader(m, (2, 0))._replace(connecting=0b00111, learners=0b00111,
                                             lconn=(1, 0, 1, 0, 0), peers=(None,) * 5)
    st = m.deliver(five, 0, (ACKEPOCH, 1, 2, (1, 2)), 5)
    assert (st.node.phase, st.node.electing, st.node.peers[0], st.effects) == (
        L_EPOCH, 0b011, (1, 2), ())
    # an ACKEPOCH of a connection the leader no longer has open changes nothing (D8)
    stale = m.deliver(st.node, 0, (ACKEPOCH, 0, 2, (1, 3)), 5)
    assert (stale.node, stale.outs, stale.effects) == (st.node, (), ())


def test_where_zookeeper_reads_it_the_data_tree_is_at_least_the_last_zxid(monkeypatch):
    """`storage.logged` is max(dt, the kernel's last zxid). On every state these spaces reach
    where it is read (a vote, an ACKEPOCH sent, a leader's D9), dt is the larger: `logged` is
    the data tree's lastProcessedZxid, as ZooKeeper reads it; and a former leader's X.0 (S14)
    is read as beyond the last zxid."""
    from models.zk import storage
    from models.zk.state import last_zxid, log_of
    from zabmc.spec import CheckSpec

    seen = {"below": 0, "beyond": 0}
    real = storage.logged

    def logged(node):
        last = last_zxid(log_of(node))
        seen["below"] += node.dt < last
        seen["beyond"] += node.dt > last
        return real(node)

    monkeypatch.setattr(storage, "logged", logged)
    for model in ("zk-3.8.0", "zk-3.9.3"):
        CheckSpec(model=model, no_invariants=True, nodes=2, proposals=1, max_timeouts=2,
                  max_crashes=1, depth=100).validate().run()
    assert seen["below"] == 0 and seen["beyond"] > 0


def test_snap_empties_the_committed_log_in_both_releases():
    """SNAP: deserializeSnapshot clears the database; the snapshot is the data tree (Learner.java
    571-592, lastProcessedZxid set at 589)."""
    f = StoreNode(0, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2, current_epoch=1,
                  conn=2)
    for model in ("zk-3.9.3-store", "zk-3.9.4-store"):
        x = get_model(model).deliver(f, 1, (SYNC, 2, SNAP, (1, 2), (T11, T12), 2), 3).node
        assert (x.history, x.mem, x.mode, x.dt, x.clog) == ((), (T11, T12), TRUNC, (1, 2), ())


def test_a_role_change_keeps_the_database_and_a_restart_reloads_it():
    """shutdown(false) keeps the committed log with its hole and fast-forwards over the log
    beyond the data tree (ZooKeeperServer.java 922-949); a crash and restart load it from disk
    (loadDataBase), hole gone."""
    m = get_model("zk-3.9.3-store")
    x = m.deliver(diff_follower(m), 1, (NEWLEADER, 2, 2), 3).node
    left = m.timeout(x, 3).node
    assert (left.role, left.clog, left.dt) == (0, ((1, 1),), (1, 2))
    back = m.start(crashed(m, left, 3), 3).node
    assert (back.clog, back.dt) == (((1, 1), (1, 2)), (1, 2))
    # a former leader's own proposal, on disk beyond its data tree, is replayed into the log
    lead = leader((T11, T12), ((1, 1),), (1, 1), phase=L_BROADCAST, acks=(((1, 2), 0b10),))
    gone = m.timeout(lead, 3).node
    assert (gone.clog, gone.dt) == (((1, 1), (1, 2)), (1, 2))


def test_the_leaders_ackepoch_sends_the_storage_sync_and_reports_the_loss():
    """At the ACKEPOCH that completes the quorum, the SYNC to the learner is the committed log's
    DIFF, and the loss is the failure `sync-loses-committed`."""
    m = get_model("zk-3.9.3-store")
    lead = leader((T11, T12), ((1, 1),), (1, 2), phase=L_EPOCH)
    lead = lead._replace(accepted_epoch=3, current_epoch=2, learners=0b11, lconn=(2, 0),
                         connecting=0b11, electing=0b10, peers=(None, None), ackld=0b10)
    st = m.deliver(lead, 0, (ACKEPOCH, 2, 1, (1, 1)), 2)
    assert st.node.phase == L_SYNC
    assert st.outs[0] == (0, (SYNC, 2, DIFF, (1, 1), (), 0))
    [(tag, prop, what)] = st.effects
    assert (tag, prop) == (FAILED, "sync-loses-committed")
    assert "without 1.2" in what and "committed log (1.1)" in what


# --- ZOOKEEPER-4925 (models/zk/README.md, S10) --------------------------------------------------------

NEWLEADER_2, LOSS, LOST = 34, 41, 50  # node 1's NEWLEADER of epoch 2; the empty DIFF; 3.1
T11_, T12_ = ((1, 1), b"zab-0"), ((1, 2), b"zab-1")  # the corpus's transactions


def _corpus(name: str = "zookeeper-4925"):
    return load(str(CORPUS / f"{name}.trace.json"))


def _run(model: str, invariants, name: str = "zookeeper-4925"):
    """The events of corpus trace `name` on `model` with `invariants`, each matched by its kind,
    nodes and message type (models/zk/refine.py's `shape`: 3.9.4's DIFFs carry more):
    (violations by step, states)."""
    data = _corpus(name)
    env = Env(get_model(model), ExploreConfig(**data.config), Checker(invariants))
    s, _ = env.initial()
    found, states = [], [s]
    for k, want in enumerate(data.events, 1):
        nxt = [x for x in env.successors(s) if shape(x[0].to_json(env.model)) == shape(want)]
        assert len(nxt) == 1, (k, want)
        _, s, v = nxt[0]
        states.append(s)
        if v is not None:
            found.extend((k, p.property) for p in v.all())
    return found, states


def test_zookeeper_4925_replays_to_the_lost_commit():
    data = load(str(CORPUS / "zookeeper-4925.trace.json"))
    assert data.model == "zk-3.9.3-store" and len(data.events) == LOST
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == (
        "sync-loses-committed", LOSS)


def test_zookeeper_4925_is_what_its_builder_makes(tmp_path):
    """The corpus file is the builder's output, byte for byte (it stopped at step 36 for a while:
    its Builder's configuration, two timeouts, was not passed on to build_4646_acked's)."""
    import subprocess
    import sys

    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, str(CORPUS / "build_4925.py"), str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "50 steps; first violation: sync-loses-committed at step 41"
    mine = json.loads(out.read_text())
    theirs = json.loads((CORPUS / "zookeeper-4925.trace.json").read_text())
    # the builder writes the corpus's origin only when it writes the corpus's own path
    assert {k: v for k, v in mine.items() if k != "origin"} == {
        k: v for k, v in theirs.items() if k != "origin"}


def test_zookeeper_4925_is_the_committed_logs_hole():
    """Node 1 applies 1.2 at its NEWLEADER of epoch 2 (a DIFF's commit) outside its committed
    log, keeps that log across its timeout, and as leader of epoch 3 sends node 0 (at 1.1) a DIFF
    from it that lacks 1.2."""
    data = _corpus()
    ev = data.events
    assert ev[NEWLEADER_2 - 1]["msg"]["type"] == "NEWLEADER" and ev[NEWLEADER_2 - 1]["dst"] == 1
    assert ev[NEWLEADER_2 - 2]["msg"]["txns"][0]["zxid"] == [1, 2]  # the DIFF carries 1.2
    assert ev[NEWLEADER_2 - 2]["msg"]["committed"] == 1
    _, states = _run("zk-3.9.3-store", ())
    before, after = states[NEWLEADER_2 - 1].nodes[1], states[NEWLEADER_2].nodes[1]
    assert (before.clog, before.dt) == (((1, 1),), (1, 1))
    assert (after.clog, after.dt, after.history) == (((1, 1),), (1, 2), (T11_, T12_))
    assert ev[LOSS - 6] == {"kind": "timeout", "node": 1}  # a role change, not a restart
    lead = states[LOSS].nodes[1]
    assert (lead.role, lead.current_epoch, lead.clog, lead.dt) == (LEADING, 3, ((1, 1),), (1, 2))
    assert ev[LOSS]["msg"] == {"type": "SYNC", "conn": 2, "mode": "DIFF", "zxid": [1, 1],
                               "txns": [], "committed": 0}



def test_zookeeper_4925_breaks_agreement_once_the_learner_commits():
    """With the default properties only: node 0 delivers 3.1 without 1.2, which node 1 (leader
    of epoch 3) delivered before 3.1."""
    found, states = _run("zk-3.9.3-store", DEFAULT_PROPERTIES)
    assert found == [(LOST, "agreement"), (LOST, "total-order")]
    last = states[-1].nodes
    assert [z for z, _ in last[0].history] == [(1, 1), (3, 1)]
    assert [z for z, _ in last[1].history] == [(1, 1), (1, 2), (3, 1)]


def test_zookeeper_4925_is_fixed_in_3_9_4():
    """The same 50 events on zk-3.9.4-store: node 1's committed log holds 1.2, the DIFF carries it."""
    invariants = _corpus().invariants
    found, states = _run("zk-3.9.4-store", invariants)
    assert found == []
    assert states[LOSS].nodes[1].clog == ((1, 1), (1, 2))
    assert [z for z, _ in states[-1].nodes[0].history] == [(1, 1), (1, 2), (3, 1)]


def test_zookeeper_4925_window_opens_at_the_diffs_newleader():
    """`committed-log-hole` (4925's window, a node check): node 1 applies 1.2 outside its
    committed log at its NEWLEADER of epoch 2, seven events before the loss; never on 3.9.4."""
    from zabmc.core.properties import REGISTRY, load_all

    load_all()

    p = REGISTRY["committed-log-hole"]
    assert (p.kind, p.default, p.needs) == ("always", False, frozenset())
    found, states = _run("zk-3.9.3-store", ("committed-log-hole",))
    assert found[0] == (NEWLEADER_2, "committed-log-hole")
    assert "node 1 applied 1.2 outside its committed log (1.1" in p.check(
        states[NEWLEADER_2].nodes[1])
    assert _run("zk-3.9.4-store", ("committed-log-hole",))[0] == []
    assert p.check(get_model("zk").fresh(0, 3)) is None  # other models keep no committed log


# --- by search --------------------------------------------------------------------------------------
#: the window needs two nodes: 1.1 in the follower's log (its fast-forward puts it in its committed
#: log), 1.2 in the leader's only, both give up, and the leader's DIFF commits 1.2 at the
#: follower's NEWLEADER: 20 events by hand (elect, 7 of epoch 1's synchronisation, 2 proposals and
#: a PROPOSAL, a timeout, a lost connection, the stale PROPOSAL, elect, 5 of epoch 2's)
WINDOW = dict(nodes=2, proposals=2, max_timeouts=1, depth=100,
              invariants=("committed-log-hole", "sync-loses-committed"))


def test_the_window_on_two_nodes_breadth_first_and_3_9_4_exhausted():
    from zabmc.spec import CheckSpec

    [found] = CheckSpec(model="zk-3.9.3-store", **WINDOW).validate().run().violations
    assert (found.violation.property, found.depth) == ("committed-log-hole", 20)
    fixed = CheckSpec(model="zk-3.9.4-store", **WINDOW).validate().run()
    assert fixed.violations == [] and str(fixed.stop_reason) == "exhausted"


def test_the_depth_first_loss_replays_and_is_4925s():
    """tests/corpus/zk/zookeeper-4925-dfs.trace.json: what `zabmc check --model zk-3.9.3-store --nodes 3
    --proposals 2 --max-timeouts 2 --depth 35 --strategy dfs --invariant sync-loses-committed`
    finds (reports/zookeeper.md). Node 1 leads epoch 1; node 0 logs 1.1 (its fast-forward puts
    it in its committed log), node 2 gets 1.1 by SNAP; node 1 leads node 0 in epoch 2 with 1.2 by
    DIFF, committed (the hole); node 0 leads node 2 in epoch 3 with an empty DIFF."""
    data = load(str(CORPUS / "zookeeper-4925-dfs.trace.json"))
    result = replay(data)
    assert result.confirmed and data.model == "zk-3.9.3-store" and len(data.events) == 35
    assert result.trace.violation.property == "sync-loses-committed"
    ev = data.events
    assert ev[17]["msg"]["type"] == "SYNC" and ev[17]["msg"]["mode"] == "SNAP"
    assert ev[27]["msg"]["mode"] == "DIFF" and ev[27]["msg"]["txns"][0]["zxid"] == [1, 2]
    assert ev[-1]["msg"]["type"] == "ACKEPOCH" and ev[-1]["msg"]["last_zxid"] == [1, 1]
    lead = result.trace.states[-1].nodes[0]
    assert (lead.clog, lead.dt) == (((1, 1),), (1, 2))
    # the same events on 3.9.4: node 0's committed log holds 1.2, and its DIFF carries it
    every = tuple(data.invariants) + ("committed-log-hole",)
    found, states = _run("zk-3.9.4-store", every, "zookeeper-4925-dfs")
    assert found == [] and states[-1].nodes[0].clog == ((1, 1), (1, 2))
