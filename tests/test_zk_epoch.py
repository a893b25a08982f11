"""`zk-3.7.0-epoch` and `zk-3.9.2-epoch` (models/zk/epoch.py, README K1-K4): currentEpoch written a
step after what a follower's NEWLEADER writes to disk, and the start-up's epoch check
(`QuorumPeer.loadDataBase`; ZOOKEEPER-2354, the failure `load-exception`).

What each release writes before `setCurrentEpoch` is read off `Learner.syncWithLeader` by hand:
3.7.0 (lines 746-749) a TRUNC's or SNAP's snapshot only, its DIFF proposals going to the SyncThread
after; 3.9.2 (lines 746-775) the snapshot and the proposals, appended and committed to the log.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from zabmc.spec import CheckSpec

CORPUS = pathlib.Path(__file__).parent / "corpus" / "zk"
T1 = ((1, 1), b"zab-0")
# node 2 leads epoch 1, established with node 0; it proposes zab-0 (1.1) before node 1, still in
# Discovery, is synchronised: node 1's DIFF carries 1.1 (the 15-event run of the docstring below)
EPOCH_1 = ["elect node 2 (quorum [0, 1, 2])", "deliver 0->2 FOLLOWERINFO",
           "deliver 1->2 FOLLOWERINFO", "deliver 2->0 LEADERINFO", "deliver 0->2 ACKEPOCH",
           "deliver 2->0 SYNC", "deliver 2->0 NEWLEADER"]
LATE = ["deliver 2->1 LEADERINFO", "propose zab-0 at node 2", "deliver 1->2 ACKEPOCH",
        "deliver 2->1 SYNC", "deliver 2->1 NEWLEADER"]


def _walk(model: str, steps: list[str], invariants=("load-exception",)):
    from conftest import walk_described

    spec = CheckSpec(model=model, nodes=3, proposals=2, max_crashes=1, max_timeouts=1, depth=40,
                     invariants=invariants).validate()
    return walk_described(spec, steps)


def _labels(env, s) -> list[str]:
    return [ev.describe(env.model) for ev in env.events(s)]


def test_3_9_2_writes_a_diff_and_owes_the_epoch():
    """K1: 3.9.2's NEWLEADER appends 1.1 and commits the log, and stops before setCurrentEpoch: no
    ACK yet, and the node's SyncThread is handed nothing (K3)."""
    steps = EPOCH_1 + ["deliver 0->2 ACK-NEWLEADER"] + LATE
    env, states, found = _walk("zk-3.9.2-epoch", steps)
    assert found == [None] * len(steps)
    f = states[-1].nodes[1]
    assert (f.history, f.current_epoch, f.snapped, f.nl) == ((T1,), 0, 1, True)
    labels = _labels(env, states[-1])
    assert "epoch node 1 (the QuorumPeer thread writes currentEpoch after NEWLEADER's writes to " \
           "disk)" in labels
    assert not any(t.startswith("deliver 1->2 ") for t in labels), labels
    env, states, found = _walk("zk-3.9.2-epoch", steps + ["epoch node 1", "deliver 1->2 ACK-NEWLEADER"])
    f = states[-1].nodes[1]
    assert (f.current_epoch, f.snapped) == (1, 0) and found == [None] * (len(steps) + 2)


def test_3_7_0_takes_a_diff_whole():
    """A 3.7.0 DIFF writes nothing before setCurrentEpoch (its proposals go to the SyncThread
    after it): the step stays whole, the epoch written and the ACK owed (F1)."""
    steps = EPOCH_1 + ["ack-newleader node 0", "deliver 0->2 ACK-NEWLEADER"] + LATE
    env, states, found = _walk("zk-3.7.0-epoch", steps)
    f = states[-1].nodes[1]
    assert (f.history, f.mem, f.current_epoch, f.snapped, f.owed) == ((), (T1,), 1, 0, True)
    assert not any(t.startswith("epoch ") for t in _labels(env, states[-1]))


@pytest.mark.parametrize("then", ["timeout node 1", "deliver 2->1 PROPOSAL"])
def test_the_thread_writes_the_epoch_before_it_reads_or_times_out(then):
    """K2: a timeout of the node, or the next packet it reads, comes after the epoch it owes; a
    crash and restart then load a consistent disk."""
    steps = EPOCH_1 + ["deliver 0->2 ACK-NEWLEADER"] + LATE
    if then.startswith("deliver"):
        steps += ["propose zab-1 at node 2"]
    steps += [then, "crash node 1", "restart node 1"]
    _, states, found = _walk("zk-3.9.2-epoch", steps)
    assert found == [None] * len(steps)
    assert states[-1].nodes[1].current_epoch == 1


def test_a_crash_in_the_window_and_the_restart_fail_the_load():
    steps = EPOCH_1 + ["deliver 0->2 ACK-NEWLEADER"] + LATE + ["crash node 1", "restart node 1"]
    _, states, found = _walk("zk-3.9.2-epoch", steps)
    assert found[:-1] == [None] * (len(steps) - 1)
    v = found[-1]
    assert (v.property, v.nodes) == ("load-exception", (1,))
    assert "disk's last zxid 1.1 of an epoch beyond its currentEpoch 0" in v.message
    # the crash forgot the epoch it owed; the disk and the old currentEpoch stayed
    f = states[-2].nodes[1]
    assert (f.history, f.current_epoch, f.snapped) == ((T1,), 0, 0)


def test_the_shortest_3_9_2_run_is_fifteen_events():
    """Hand-computed: the follower must get NEWLEADER with a proposal of the leader's epoch, which
    an established leader makes: elect (1), the two FOLLOWERINFOs, LEADERINFO, ACKEPOCH, SYNC,
    NEWLEADER and its ACK for the first follower (7: the leader's quorum), the proposal (1), the
    second follower's LEADERINFO, ACKEPOCH, SYNC and NEWLEADER (4), a crash and a restart (2): 15.
    (A join instead of the second FOLLOWERINFO costs the same event.) Breadth-first search finds
    a run of that length, so none is shorter; zk-3.7.0-epoch has none within the same bound."""
    out = CheckSpec(model="zk-3.9.2-epoch", nodes=3, proposals=1, max_crashes=1, depth=20,
                    invariants=("load-exception",)).validate().run()
    [v] = out.violations
    assert v.depth == 15
    out = CheckSpec(model="zk-3.7.0-epoch", nodes=3, proposals=1, max_crashes=1, depth=15,
                    invariants=("load-exception",)).validate().run()
    assert out.violations == []


def test_the_coarser_variants_take_newleader_whole():
    """Without the window the same run writes currentEpoch with the disk: zk-3.9.2-threads has no
    `epoch` action and its restart is not checked (no variant but the -epoch ones reports
    load-exception, and a check of it on zk-3.9.2-threads is refused: it could not fail)."""
    from zabmc.core.errors import UsageError

    steps = EPOCH_1 + ["deliver 0->2 ACK-NEWLEADER"] + LATE
    with pytest.raises(UsageError, match="'load-exception' cannot break on model zk-3.9.2-threads"):
        _walk("zk-3.9.2-threads", steps)
    env, states, _ = _walk("zk-3.9.2-threads", steps, invariants=())
    f = states[-1].nodes[1]
    assert (f.history, f.current_epoch) == ((T1,), 1)


def test_zookeeper_2354_trunc_replays_and_is_what_its_builder_makes(tmp_path):
    """3.7.0's window under TRUNC (tests/corpus/zk/build_2354_trunc.py): node 2 is truncated to
    1.1, applies epoch 2's committed 2.1 in memory, writes it with NEWLEADER's snapshot and
    crashes before currentEpoch 2."""
    from zabmc.explore.trace import load, replay

    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, str(CORPUS / "build_2354_trunc.py"), str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{out}: 54 steps; first violation: load-exception at step 54"
    assert out.read_bytes() == (CORPUS / "zookeeper-2354-trunc.trace.json").read_bytes()
    data = load(str(out))
    result = replay(data)
    assert result.confirmed and result.trace.violation_step == 54
    ev = json.loads(out.read_text())["events"]
    sync = ev[50]["msg"]
    assert (sync["type"], sync["mode"], sync["zxid"], sync["committed"]) == ("SYNC", "TRUNC",
                                                                            [1, 1], 1)
    assert [e["kind"] for e in ev[-3:]] == ["deliver", "crash", "restart"]
    f = result.trace.states[-2].nodes[2]
    assert [t[0] for t in f.history] == [(1, 1), (2, 1)] and f.current_epoch == 1


def test_the_reduction_finds_the_same_shortest_run():
    """`--reduction por` (with `epoch i` a step of the node alone, models/zk/footprint.py): the
    same verdict as test_the_shortest_3_9_2_run_is_fifteen_events, one step deeper (16, zabmc's
    own count: it detects change). A reduced search need not find the shortest run: once the
    crash is spent, states where a delivery that its follower's leaving undoes is kept alone
    (docs/reduction.md, rule 7) put the shortest run out of the reduced graph, whose run is one
    event longer."""
    out = CheckSpec(model="zk-3.9.2-epoch", nodes=3, proposals=1, max_crashes=1, depth=20,
                    invariants=("load-exception",), reduction="por").validate().run()
    [v] = out.violations
    assert (v.violation.property, v.depth) == ("load-exception", 16)


@pytest.mark.parametrize("model", ["zk-3.9.3-epoch", "zk-3.9.4-epoch"])
def test_3_9_3_and_3_9_4_have_the_window_after_a_committed_sync(model):
    """3.9.3 and 3.9.4 (PR #2152) write only the transactions the synchronisation committed
    before setCurrentEpoch, so the 3.9.2 run needs four events more: UPTODATE to the first
    follower, the proposal reaching it, its SyncThread's write and its ACK, which commits 1.1
    (4 + 15 = 19, counted by hand). Then the second follower's synchronisation carries a committed
    1.1; 3.9's leader sends it as a snapshot (storage.py, S7), which NEWLEADER writes before
    currentEpoch (3.9.4 Learner.java 759-761, 813)."""
    out = CheckSpec(model=model, nodes=3, proposals=1, max_crashes=1, depth=25,
                    invariants=("load-exception",)).validate().run()
    [v] = out.violations
    assert (v.violation.property, v.depth, v.violation.nodes) == ("load-exception", 19, (1,))
    # the state before the crash: 1.1 on disk (the snapshot), currentEpoch 0 owed 1, no ACK yet
    spec = CheckSpec(model=model, nodes=3, proposals=1, max_crashes=1, depth=25,
                     invariants=("load-exception",)).validate()
    env = spec.env()
    s, _ = env.initial()
    for k in v.path[:-2]:
        s = env.successor(s, env.events(s)[k])[1]
    f = s.nodes[1]
    assert (f.history, f.current_epoch, f.snapped, f.mode) == ((T1,), 0, 1, 2)
