"""`zk-3.7.0-shutdown` and `zk-3.9.2-shutdown` (models/zk/shutdown.py, README H1-H9): a follower's
shutdown as ZooKeeper 3.7.0-3.9.2 do it. Read off the releases by hand: `Learner.shutdown` calls
`zk.shutdown(boolean)`, which `LearnerZooKeeperServer` does not override, so the
SyncRequestProcessor keeps its queue and writes it later (ZOOKEEPER-4712; 3.9.3's PR #2154 shuts
it down); the data tree is kept (`shutdown(false)`, then `fastForwardDataBase`); and the next
role's ACKEPOCH names the data tree's lastProcessedZxid (`QuorumPeer.getLastLoggedZxid`).
"""

from __future__ import annotations

from models.zk import handlers, shutdown
from models.zk.state import F_SYNC, FOLLOWING, LOOKING, SYNC, TRUNC, ZERO
from zabmc.spec import CheckSpec

T1 = ((1, 1), b"zab-0")
T2 = ((1, 2), b"zab-1")

# Epoch 1: node 2 leads nodes 0 and 1; its proposal 1.1 is committed by node 0's ACK while node 1
# (synchronised by a DIFF that carried it) has it only queued for its SyncThread; node 1 takes
# the COMMIT and UPTODATE (the CommitProcessor applies 1.1), then loses its leader.
EPOCH_1 = ["elect node 2 (quorum [0, 1, 2])", "deliver 0->2 FOLLOWERINFO",
           "deliver 1->2 FOLLOWERINFO", "deliver 2->0 LEADERINFO", "deliver 0->2 ACKEPOCH",
           "deliver 2->0 SYNC", "deliver 2->0 NEWLEADER", "deliver 2->1 LEADERINFO",
           "ack-newleader node 0", "deliver 0->2 ACK-NEWLEADER", "deliver 2->0 UPTODATE",
           "propose zab-0 at node 2", "deliver 1->2 ACKEPOCH", "deliver 2->0 PROPOSAL",
           "deliver 2->1 SYNC", "deliver 2->1 NEWLEADER", "log node 0", "deliver 0->2 ACK(",
           "deliver 2->1 COMMIT", "deliver 1->2 ACK-NEWLEADER", "deliver 2->1 UPTODATE",
           "timeout node 2", "lost node 1's connection to node 2"]
# Epoch 2: node 2 leads node 1, which names 1.1 in its ACKEPOCH: the DIFF is empty
EPOCH_2 = ["elect node 2 (quorum [1, 2])", "deliver 1->2 FOLLOWERINFO", "deliver 2->1 LEADERINFO",
           "deliver 1->2 ACKEPOCH", "deliver 2->1 SYNC", "deliver 2->1 NEWLEADER",
           "ack-newleader node 1"]


def _walk(model: str, steps: list[str], invariants=("ack-from-memory",), crashes=0):
    """The explorer's own events, one per described step (conftest's `walk_described`)."""
    from conftest import walk_described

    spec = CheckSpec(model=model, nodes=3, proposals=1, max_timeouts=1, max_crashes=crashes,
                     depth=60, invariants=invariants).validate()
    return walk_described(spec, steps)


def test_a_follower_leaves_its_role_with_its_queue_leaked_and_its_memory_kept():
    _, states, found = _walk("zk-3.7.0-shutdown", EPOCH_1)
    assert found == [None] * len(EPOCH_1)
    before, f = states[-2].nodes[1], states[-1].nodes[1]
    assert (before.role, before.mem, before.commit) == (FOLLOWING, (T1,), (1, 1))
    assert f.role == LOOKING
    assert f.history == (T1,)  # the data tree applied 1.1 (the COMMIT, then UPTODATE)
    assert f.disk == () and f.leak == (T1,)  # nobody wrote it: the SyncThread still holds it
    assert f.last_committed == ZERO  # delivered only once on disk (D5, H4)
    # zk-3.7.0-threads (D8, the behaviour of 3.9.3's fix) writes the queue at the shutdown
    _, states, _ = _walk("zk-3.7.0-threads", EPOCH_1, invariants=())
    f = states[-1].nodes[1]
    assert f.history == (T1,) and f.last_committed == (1, 1) and not hasattr(f, "disk")


def test_its_next_ackepoch_names_memory_and_its_ack_of_newleader_opens_the_window():
    _, states, found = _walk("zk-3.7.0-shutdown", EPOCH_1 + EPOCH_2)
    f = states[-2].nodes[1]
    assert f.phase == F_SYNC and f.disk == () and f.history == (T1,)
    assert found[:-1] == [None] * (len(found) - 1)
    v = found[-1]
    assert v is not None and v.property == "ack-from-memory" and v.nodes == (1,)
    assert "1.1 (queued for a leaked SyncThread, ZOOKEEPER-4712)" in v.message


def test_the_leader_sends_an_empty_diff_from_the_named_zxid():
    env, states, _ = _walk("zk-3.7.0-shutdown", EPOCH_1 + EPOCH_2[:4])
    texts = [ev.describe(env.model) for ev in env.events(states[-1])]
    want = "deliver 2->1 SYNC(conn=2, mode=DIFF, zxid=1.1, txns=[]"
    assert any(t.startswith(want) for t in texts), texts
    # zk-3.7.0-threads: node 1 wrote 1.1 at its shutdown, and names it from disk: the same DIFF, safely
    env, states, found = _walk("zk-3.7.0-threads", EPOCH_1 + EPOCH_2, invariants=())
    from zabmc.core.properties import can_break  # its kernel has no window of this kind

    assert "ack-from-memory" not in can_break(env.model)


def test_a_crash_loses_the_leaked_queue_and_what_memory_held():
    _, states, found = _walk("zk-3.7.0-shutdown", EPOCH_1 + ["crash node 1", "restart node 1"],
                             crashes=1)
    assert found == [None] * len(found)
    f = states[-1].nodes[1]
    assert (f.history, f.disk, f.leak, f.last_committed) == ((), (), (), ZERO)


def test_the_leaked_thread_writes_later_and_acknowledges_nothing():
    env, states, found = _walk("zk-3.7.0-shutdown", EPOCH_1 + ["flush node 1"])
    f = states[-1].nodes[1]
    assert (f.history, f.disk, f.leak, f.last_committed) == ((T1,), (T1,), (), (1, 1))
    assert found[-1] is None
    assert len(states[-1].net) == len(states[-2].net)  # no ACK left node 1


def test_a_truncation_reloads_memory_from_disk():
    """truncateLog: the log cut, then clear() and loadDataBase(): memory not on disk is gone."""
    f = shutdown.SdNode(1, role=FOLLOWING, phase=F_SYNC, leader=2, accepted_epoch=2,
                        current_epoch=1, conn=2, history=(T1, T2), disk=(T1,), leak=(T2,),
                        commit=(1, 2))
    st = shutdown.KERNEL.deliver(handlers, f, 2, (SYNC, 2, TRUNC, (1, 1), (), 0), 3,
                          shutdown_rules())
    assert (st.node.history, st.node.disk, st.node.leak) == ((T1,), (T1,), (T2,))
    assert st.node.mode == TRUNC


def test_an_interrupted_truncation_keeps_its_memory():
    """ZOOKEEPER-5094: a TRUNC synchronisation applies the COMMITs before NEWLEADER in memory, and a
    shutdown before NEWLEADER's snapshot keeps them there (`shutdown(syncMode == SNAP)` is
    `shutdown(false)` for TRUNC); the coarse kernel drops them (D8)."""
    f = shutdown.SdNode(1, role=FOLLOWING, phase=F_SYNC, leader=2, accepted_epoch=2,
                        current_epoch=1, conn=2, history=(), disk=(), mode=TRUNC, mem=(T1,),
                        commit=(1, 1))
    st = shutdown.KERNEL.timeout(handlers, f, 3, shutdown_rules())
    y = st.node
    assert y.role == LOOKING and y.history == (T1,) and y.disk == () and y.leak == ()
    assert handlers.vote(y) == (1, (1, 1), 1)  # its vote names 1.1, which no disk holds
    coarse = handlers.timeout(f, 3, handlers.Rules())
    assert coarse.node.history == ()


def test_without_faults_the_space_is_zk_3_7_0s():
    """With no fault no follower leaves its role: disk and memory never part, and the search
    meets the states of zk-3.7.0-threads, level by level (a second kernel for the same space)."""
    a, b = (CheckSpec(model=m, nodes=3, proposals=1, depth=60).validate().run()
            for m in ("zk-3.7.0-threads", "zk-3.7.0-shutdown"))
    assert a.stop_reason == b.stop_reason == "exhausted"
    assert a.distinct == b.distinct and a.per_depth == b.per_depth and a.generated == b.generated


def test_the_shortest_window_each_finds():
    """Breadth-first: 30 events on zk-3.7.0-shutdown (the run above). zabmc's own figure: it
    detects change. zk-3.9.3-store's shutdown writes the queue (D8): no model of it has the window."""
    out = CheckSpec(model="zk-3.7.0-shutdown", nodes=3, proposals=1, max_timeouts=1, depth=30,
                    invariants=("ack-from-memory",)).validate().run()
    [v] = out.violations
    assert v.depth == 30


def shutdown_rules():
    from models.zk import R370S
    return R370S.rules


# --- the inconsistency on zk-3.9.2-shutdown (reports/zookeeper.md, "ZOOKEEPER-4712") ------------

CORPUS = __import__("pathlib").Path(__file__).parent / "corpus" / "zk"
# tests/corpus/zk/zookeeper-4712.trace.json: breadth-first search's first run
# (benchmarks/zk_4712.py), read against 3.9.2's code by hand: node 0 times out with 1.1 queued
# (event 11), leads epoch 2 and commits 2.1 (event 23), its leaked SyncThread writes 1.1 after
# 2.1 (event 24), and its restart replays both (events 25, 26).
TIMEOUT_4712, FLUSH_4712 = 11, 24


def _events_on(model: str, trace: str, upto: int | None = None, **bounds):
    """Step the explorer of `model` on three nodes with `bounds` through the events of the corpus
    trace `trace` (up to event `upto`), each the one enabled event with that JSON. Returns the
    last state and each step's violation (None where it broke nothing)."""
    from zabmc.explore.trace import load

    data = load(str(CORPUS / f"{trace}.trace.json"))
    env = CheckSpec(model=model, nodes=3, **bounds).validate().env()
    s, _ = env.initial()
    found = []
    for want in data.events[:upto]:
        [ev] = [ev for ev in env.events(s) if ev.to_json(env.model) == want]
        _, s, v = env.successor(s, ev)
        found.append(v)
    return s, found


def test_zookeeper_4712_replays_to_an_uncommitted_write_applied_at_the_load():
    from zabmc.explore.trace import load, replay

    data = load(str(CORPUS / "zookeeper-4712.trace.json"))
    assert data.model == "zk-3.9.2-shutdown"
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == ("prefix", 26)
    kinds = [e["kind"] for e in data.events]
    assert kinds[TIMEOUT_4712 - 1] == "timeout" and kinds[-2:] == ["crash", "restart"]
    assert data.events[FLUSH_4712 - 1] == {"kind": "action", "action": ["flush", 0]}
    s = result.trace.states[-1]
    assert [t[0] for t in s.nodes[0].history] == [(1, 1), (2, 1)]
    assert [t[0] for t in s.nodes[2].history] == [(2, 1)]  # node 2 never had 1.1


def test_zk_3_9_2_writes_the_queue_before_it_votes():
    """The same first 11 events on zk-3.9.2-threads (D8, 3.9.3's shutdown): node 0 writes 1.1 at its
    timeout and names it in its vote, so the next epoch's history holds it before 2.1."""
    s, found = _events_on("zk-3.9.2-threads", "zookeeper-4712", TIMEOUT_4712, proposals=2,
                          max_timeouts=1, max_crashes=1, depth=30)
    assert found == [None] * TIMEOUT_4712
    f = s.nodes[0]
    assert [t[0] for t in f.history] == [(1, 1)] and handlers.vote(f) == (1, (1, 1), 0)


def test_the_stale_write_is_named_where_it_happens():
    """`stale-log-write` (4712's write) fires at the leaked SyncThread's write of 1.1, after node
    0's data tree moved on to 2.1, and nowhere before."""
    from models.zk.shutdown import stale_log_write
    from zabmc.explore.trace import load, replay

    states = replay(load(str(CORPUS / "zookeeper-4712.trace.json"))).trace.states
    first = next(k for k, s in enumerate(states) if any(stale_log_write(n) for n in s.nodes))
    assert first == FLUSH_4712
    assert "node 0's log holds 1.1" in stale_log_write(states[first].nodes[0])


# --- ZOOKEEPER-5094: an interrupted TRUNC (tests/corpus/zk/build_5094.py builds the run) --------

# node 2, truncated by leader 1 (its 1.1 of an abandoned epoch), applies the synchronisation's
# committed 2.1 in memory (event 39), times out before NEWLEADER (event 40) and keeps it; its next
# ACKEPOCH names 2.1, and it acknowledges NEWLEADER without 2.1 on disk (event 48). The leader's
# 2.2 is then written after the gap, a restart loads the gap, and 2.3's COMMIT makes node 2
# deliver 2.2 without 2.1 (event 74).
TRUNC_5094, TIMEOUT_5094, ACK_5094, LOSS_5094 = 39, 40, 48, 74


def test_zookeeper_5094_replays_to_a_gap_in_the_log():
    from zabmc.explore.trace import load, replay

    data = load(str(CORPUS / "zookeeper-5094.trace.json"))
    assert data.model == "zk-3.9.2-shutdown"
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == ("ack-from-memory",
                                                                              ACK_5094)
    assert "2.1 (applied in memory only, ZOOKEEPER-5094)" in result.trace.violation.message
    states = result.trace.states
    f = states[TRUNC_5094].nodes[2]
    assert (f.mode, f.disk, [t[0] for t in f.mem]) == (TRUNC, (), [(2, 1)])
    f = states[TIMEOUT_5094].nodes[2]
    assert f.role == LOOKING and [t[0] for t in f.history] == [(2, 1)] and f.disk == ()
    assert handlers.vote(f)[1] == (2, 1)  # its vote (and next ACKEPOCH) names 2.1
    # the rest of the run with the default properties: node 2 delivers 2.2 without 2.1
    s, found = _events_on("zk-3.9.2-shutdown", "zookeeper-5094", proposals=4, max_timeouts=2,
                          max_crashes=1, depth=100)
    k = next(k for k, v in enumerate(found, start=1) if v is not None)
    first = (k, {x.property for x in found[k - 1].all()})
    assert first == (LOSS_5094, {"local-primary-order", "agreement", "total-order"})
    assert [t[0] for t in s.nodes[2].history] == [(2, 2)]


def test_zk_3_9_2_drops_the_truncation_memory_at_the_shutdown():
    """D8 (zk-3.9.2-threads): the same run up to node 2's timeout leaves its memory as its disk (empty),
    so its vote names 0.0 and the leader would send 2.1 again."""
    s, _ = _events_on("zk-3.9.2-threads", "zookeeper-5094", TIMEOUT_5094, proposals=4, max_timeouts=2,
                      max_crashes=1, depth=100)
    f = s.nodes[2]
    assert f.role == LOOKING and f.history == () and handlers.vote(f)[1] == ZERO
