"""The windows of ZOOKEEPER-3911, 4646 and 4643 as properties of one node (models/zk/windows.py,
models/zk/README.md D18; issue #36 points 2 and 3): which release opens which window, first on a
follower built by hand at its NEWLEADER, then by search.

What each release does at NEWLEADER is read from its `Learner.syncWithLeader`: 3.6.2 keeps
packetsNotCommitted in memory until UPTODATE; 3.7.0 and 3.8.0 write currentEpoch, hand them to the
SyncThread and acknowledge; 3.8.5 and 3.9.2 write them, then currentEpoch, then the ACK; 3.9.3
writes the committed ones before currentEpoch and the ACK."""

from __future__ import annotations

import pytest

from zabmc.explore.trace import rebuild
from zabmc.core.model import get_model
from zabmc.core.properties import REGISTRY, load_all
from zabmc.spec import CheckSpec

from models.zk import windows
from models.zk.fine import FineNode
from models.zk.state import COMMIT, DIFF, F_SYNC, FOLLOWING, NEWLEADER, PROPOSAL

WINDOWS = ("ack-before-logging", "ack-before-disk", "epoch-before-disk")
T1, T2 = ((1, 1), b"zab-0"), ((2, 1), b"zab-1")
# node 2 follows node 1 (connection 1) in Synchronisation for epoch 2; its DIFF held 1.1, committed
FOLLOWER = FineNode(2, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2, conn=1,
                    mode=DIFF, pending=(T1,), pcommit=(1, 1))


def broken(node) -> set:
    load_all()
    return {name for name in WINDOWS if REGISTRY[name].check(node) is not None}


def after_newleader(model: str):
    m = get_model(model)
    node = FOLLOWER if model in ("zk-3.7.0-threads", "zk-3.9.2-threads") else windows_coarse(FOLLOWER)
    node = type(m.fresh(2, 3))(*node)  # the storage grain's nodes (zk-3.9.3-store) have two more fields
    return m.deliver(node, 1, (NEWLEADER, 1, 2), 3).node


def windows_coarse(node):
    from models.zk.state import Node

    return Node(*node[:len(Node._fields)])


def test_the_windows_are_registered_off_by_default_as_node_checks():
    """The zk package registers them (models/zk/properties.py) when zabmc loads its models."""
    load_all()
    for name in WINDOWS:
        p = REGISTRY[name]
        assert (p.kind, p.default, p.needs) == ("always", False, frozenset())
        assert p.check is getattr(windows, name.replace("-", "_"))


def test_which_window_each_release_opens_at_newleader():
    """The follower right after NEWLEADER(2), with 1.1 (committed, of epoch 1) in its DIFF."""
    expect = {
        "zk-pre3911": set(WINDOWS),  # 1.1 in packetsNotCommitted, acknowledged, currentEpoch 2
        "zk": {"ack-before-disk", "epoch-before-disk"},  # 1.1 queued for the SyncThread
        "zk-3.7.0-threads": {"epoch-before-disk"},  # queued; the ACK is owed, not written yet (F1)
        "zk-fixed": set(), "zk-3.9.2-threads": set(),  # 1.1 written before currentEpoch and the ACK
        "zk-3.9.3-store": set(),  # the committed 1.1 written before currentEpoch and the ACK
    }
    for model, names in expect.items():
        node = after_newleader(model)
        assert node.current_epoch == 2 and node.nl
        assert broken(node) == names, model
    acked = get_model("zk-3.7.0-threads").act(
        (None, None, after_newleader("zk-3.7.0-threads")), ("ack-newleader", 2), 3)[0][1].node
    assert broken(acked) == {"ack-before-disk", "epoch-before-disk"}


def test_the_windows_close_when_the_sync_thread_writes():
    for model in ("zk", "zk-3.7.0-threads"):
        node = after_newleader(model)
        [(_, st)] = get_model(model).act((None, None, node), ("log", 2), 3)
        assert st.node.history == (T1,) and broken(st.node) == set()


def test_a_proposal_of_the_new_epoch_after_newleader_is_no_window():
    """PROPOSAL 2.1 and its COMMIT after NEWLEADER are the leader's broadcast, not the
    synchronisation's: a vote of epoch 2 that lacks 2.1 loses to one that has it."""
    node = after_newleader("zk-fixed")
    m = get_model("zk-fixed")
    node = m.deliver(node, 1, (PROPOSAL, 1, T2), 3).node
    node = m.deliver(node, 1, (COMMIT, 1, (2, 1)), 3).node
    assert node.pending == (T2,) and node.pcommit == (2, 1)
    assert broken(node) == set()


def test_a_node_of_another_model_is_never_in_a_window():
    for model in ("db19", "zab"):
        m = get_model(model)
        assert broken(m.fresh(0, 3)) == set()


# --- by search: two nodes, a timeout and a crash, every state ---------------------------------------
TWO = dict(nodes=2, proposals=1, max_timeouts=1, max_crashes=1, depth=100)
#: model -> the windows its space reaches (the others: exhausted, none)
FOUND = {
    "zk-pre3911": set(WINDOWS),
    "zk": {"ack-before-disk", "epoch-before-disk"},
    "zk-3.7.0-threads": {"ack-before-disk", "epoch-before-disk"},
    "zk-fixed": set(), "zk-3.9.2-threads": set(), "zk-3.9.3-store": set(),
}


@pytest.mark.parametrize("model", sorted(FOUND))
def test_the_windows_each_release_reaches(model):
    for name in WINDOWS:
        spec = CheckSpec(model=model, invariants=(name,), **TWO).validate()
        out = spec.run()
        if name not in FOUND[model]:
            assert out.violations == [] and str(out.stop_reason) == "exhausted", (model, name)
            continue
        [found] = out.violations
        trace = rebuild(spec.env(), found.path, name)
        [victim] = trace.violation.nodes
        m = spec.env().model
        last = trace.events[-1].describe(m)
        # the window opens at the victim's NEWLEADER, or at its ACK at the threads' grain (F1)
        if model == "zk-3.7.0-threads" and name == "ack-before-disk":
            assert last.startswith(f"ack-newleader node {victim} "), last
        else:
            assert last.startswith("deliver ") and f"->{victim} NEWLEADER(" in last, last


def test_3_7_0s_epoch_window_opens_one_event_before_its_ack_window():
    """At the threads' grain currentEpoch is written at NEWLEADER and the ACK a step later (F1):
    the shortest 4643 window is one event shorter than the shortest 4646 one. (The depths are
    zabmc's own figures: they detect change only; the order between them is the point.)"""
    depth = {}
    for name in ("epoch-before-disk", "ack-before-disk"):
        [found] = CheckSpec(model="zk-3.7.0-threads", invariants=(name,), **TWO).validate().run().violations
        depth[name] = found.depth
    assert depth == {"epoch-before-disk": 18, "ack-before-disk": 19}


@pytest.mark.slow
@pytest.mark.parametrize("model", ["zk-fixed", "zk-3.9.2-threads", "zk-3.9.3-store"])
def test_the_fixed_releases_stay_clean_with_three_nodes(model):
    """Three nodes, a timeout, depth 30: the bounds at which 3.6.2 and 3.7.0 open the windows in
    15 to 17 events."""
    names = WINDOWS
    out = CheckSpec(model=model, nodes=3, proposals=1, max_timeouts=1, depth=30,
                    invariants=names).validate().run()
    assert out.violations == [] and str(out.stop_reason) == "depth-bound"


# --- the matrix's findings as regression traces (tests/corpus/zk) ------------------------------------
CORPUS = __import__("pathlib").Path(__file__).parent / "corpus" / "zk"
#: trace -> (its model, property, step; the later release, where the same run breaks nothing).
#: The steps are those breadth-first search met first (zabmc's own: they detect change only).
FINDINGS = {
    "zookeeper-3911-window": ("zk-pre3911", "ack-before-logging", 17, "zk"),
    "zookeeper-4646-window": ("zk", "ack-before-disk", 17, "zk-fixed"),
    "zookeeper-4643-window": ("zk", "epoch-before-disk", 17, "zk-fixed"),
    "zookeeper-4394": ("zk", "sync-exception", 18, "zk-3.9.3-coarse"),
    "zookeeper-4685": ("zk-3.7.0-threads", "leader-unexpected-ack", 18, None),  # 3.9.2: by search
}


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_each_finding_replays_and_the_fix_survives_its_run(name):
    import json

    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.trace import load, replay
    from zabmc.invariants import Checker

    model, prop, step, fixed = FINDINGS[name]
    data = load(str(CORPUS / f"{name}.trace.json"))
    assert data.model == model
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == (prop, step)
    if fixed is None:
        return
    # the same events on the release with the fix: each is enabled there, and none breaks `prop`
    raw = json.loads((CORPUS / f"{name}.trace.json").read_text())
    env = Env(get_model(fixed), ExploreConfig(**raw["config"]), Checker((prop,)))
    s, v = env.initial()
    for k, want in enumerate(raw["events"], 1):
        match = [x for x in env.successors(s) if _shape(x[0].to_json(env.model)) == _shape(want)]
        assert match, (fixed, k, want)
        _, s, v = match[0]
        assert v is None, (fixed, k, v)


def _shape(d):
    """An event across variants: kind, nodes, message type (sync packets differ)."""
    if d["kind"] == "action":
        return ("action", tuple(d["action"]))
    if d["kind"] in ("deliver", "drop"):
        return (d["kind"], d["src"], d["dst"], d["msg"]["type"])
    return (d["kind"], d.get("node"))


def test_the_wide_report_names_the_window_a_data_loss_passed_through():
    """benchmarks/zk_wide.py attributes a default property's finding to the bugs' windows its run
    passed through. The corpus runs were built to be one bug each (their builders say which step
    opens it): 4643's follower writes currentEpoch at step 19 (the coarse NEWLEADER step opens
    4646's window with it), and 4925's hole opens when node 1 applies 1.2 outside its committed
    log at step 34."""
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks.zk_wide import what, windows_on

    corpus = "tests/corpus/zk/"
    assert windows_on(corpus + "zookeeper-4643.trace.json") == [("epoch-before-disk", 19),
                                                                 ("ack-before-disk", 19)]
    assert windows_on(corpus + "zookeeper-4925.trace.json") == [("committed-log-hole", 34)]
    assert what("agreement", corpus + "zookeeper-4925.trace.json") == (
        "after ZOOKEEPER-4925's window (models/zk/README.md S1-S10) at step 34")
    assert what("sync-exception") == "ZOOKEEPER-4394"
    # a run through no window is said to be unmatched, not pinned on a bug
    assert windows_on(corpus + "zookeeper-4394.trace.json") == []
    assert what("agreement", corpus + "zookeeper-4394.trace.json").startswith("not matched")


WIDE = sorted(__import__("pathlib").Path(__file__).resolve().parent.parent.glob(
    "reports/data/zk-wide/*.json"))


@pytest.mark.parametrize("path", WIDE, ids=[p.stem for p in WIDE])
def test_every_trace_of_the_wide_searches_replays(path):
    """reports/zookeeper.md "Wider searches" links each finding's trace: each still replays to
    its violation on today's model (a model change that breaks one says the report is stale)."""
    from zabmc.explore.trace import load, replay

    rr = replay(load(str(path)))
    assert rr.confirmed, rr.reason


def test_the_wide_searches_left_traces():
    assert len(WIDE) >= 40  # the report's findings (a glob that finds nothing would test nothing)
