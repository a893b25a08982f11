"""The `zk` model (models/zk/README.md): ZooKeeper 3.7's ZAB 1.0 and its two variants.

- tests/corpus/zk holds the counterexamples of ZOOKEEPER-3911 (`zk-pre3911`) and ZOOKEEPER-4646
  (`zk`), as `zabmc check --strategy dfs` found them (reports/zookeeper.md); each replays to its
  violation at the same step, and the DFS finds it again, event for event (slow). It also holds
  ZOOKEEPER-4643's run, the shortest breadth-first search finds in `zk` (at the end).
- The same run of events in `zk-fixed` breaks nothing: the follower's NEWLEADER acknowledgement
  comes after the proposals are on its disk, so its crash loses nothing the leader counted.
- What tells the two bugs apart: in `zk` a write by the follower's SyncThread between its
  acknowledgement and its crash saves the transaction; in `zk-pre3911` nothing is queued to write
  until UPTODATE, so no such write is possible.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from zabmc.explore.env import Env, ExploreConfig
from zabmc.explore.trace import load, rebuild, replay
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import get_model

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "zk"
BUG = {"zookeeper-3911": "zk-pre3911", "zookeeper-4646": "zk"}
STEP = 29  # both: node 0 proposes 3.1 as leader of epoch 3 without 1.1, which node 1 delivered
CRASH_AT = 20  # the follower's crash, right after its acknowledgement of NEWLEADER(2)


def events(name):
    return json.loads((CORPUS / f"{name}.trace.json").read_text())["events"]


def env_for(model, name):
    cfg = json.loads((CORPUS / f"{name}.trace.json").read_text())["config"]
    return Env(get_model(model), ExploreConfig(**cfg), Checker(DEFAULT_PROPERTIES))


def shape(d):
    """What identifies an event across variants: its kind, nodes and message type (payloads and
    sync packets differ between variants)."""
    if d["kind"] == "action":
        return ("action", tuple(d["action"]))
    if d["kind"] in ("deliver", "drop"):
        return (d["kind"], d["src"], d["dst"], d["msg"]["type"])
    return (d["kind"], d.get("node"))


def run_shapes(env, shapes):
    """Step `env` through events of the given shapes; (violations by step, final state)."""
    s, v = env.initial()
    found = []
    for k, want in enumerate(shapes, 1):
        match = [x for x in env.successors(s) if shape(x[0].to_json(env.model)) == want]
        assert match, f"step {k}: no enabled event {want}"
        _, s, v = match[0]
        if v is not None:
            found.append((k, v.property))
    return found, s


@pytest.mark.parametrize("name", sorted(BUG))
def test_the_bug_replays_to_its_violation(name):
    data = load(str(CORPUS / f"{name}.trace.json"))
    assert data.model == BUG[name]
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == (
        "primary-integrity", STEP)
    assert "without 1.1:zab-0, which node 1 delivered" in result.trace.violation.message


@pytest.mark.parametrize("name", sorted(BUG))
def test_zk_fixed_survives_the_same_run(name):
    shapes = [shape(d) for d in events(name)]
    found, s = run_shapes(env_for("zk-fixed", name), shapes)
    assert found == []
    leader = s.nodes[0]  # the new leader of epoch 3 holds 1.1 under its own proposal
    assert [t[0] for t in leader.history] == [(1, 1), (3, 1)]


def test_a_write_before_the_crash_saves_zk_but_not_zk_pre3911():
    shapes = [shape(d) for d in events("zookeeper-4646")]
    assert shapes[CRASH_AT - 1] == ("crash", 0)
    write = ("action", ("log", 0))
    found, s = run_shapes(env_for("zk", "zookeeper-4646"), shapes[:CRASH_AT - 1] + [write])
    assert found == [] and s.nodes[0].history[-1][0] == (1, 1)  # on disk before the crash
    env = env_for("zk-pre3911", "zookeeper-3911")
    _, s = run_shapes(env, [shape(d) for d in events("zookeeper-3911")][:CRASH_AT - 1])
    enabled = {shape(x[0].to_json(env.model)) for x in env.successors(s)}
    assert write not in enabled  # nothing queued: packetsNotCommitted waits for UPTODATE
    assert s.nodes[0].pending and not s.nodes[0].mem


def test_zk_fails_the_zk_fixed_gate_as_the_abstraction_matrix_records():
    """zk-fixed's capped depth-first gate run (zabmc.mutate.ZK_FIXED_GATE, run 7: its first
    800,000 states) fails on `zk`: that search meets ZOOKEEPER-4646 (primary-integrity, 29
    events) after 723,978 states (#23 point 5). That search takes about 66 CPU s alone and 100 s
    of a loaded CI worker, so CI runs only its twin on zk-pre3911 (tests/test_mutate.py:
    ZOOKEEPER-3911 after 538,595 states) and the abstraction matrix keeps this one
    (benchmarks/abstraction_matrix.py, the "data loss" row of reports/zookeeper.md): its recorded
    cell must be the gate's search without the cap, stopped at that violation within the cap. The
    corpus trace above came from that search; it replays to the same step."""
    from zabmc.mutate import ZK_FIXED_GATE, gate_config

    data = ROOT / "reports" / "data" / "abstraction-matrix.json"
    cell = json.loads(data.read_text())["zk|data loss"]
    gate = ZK_FIXED_GATE[6]
    assert gate.endswith("--strategy dfs --max-states 800000")
    assert ExploreConfig(**cell["config"]) == gate_config(gate)
    assert cell["flags"].endswith("--strategy dfs") and "--max-states" not in cell["flags"]
    assert cell["stop_reason"] == "violation" and cell["distinct_states"] == 723_978 < 800_000
    assert cell["violations"] == [{"depth": STEP, "property": "primary-integrity"}]
    assert json.loads((CORPUS / "zookeeper-4646.trace.json").read_text())["config"] == \
        cell["config"]


# --- the election at Fast Leader Election's grain (zk-fle, models/zk/README.md D1) ---------------

from models.zk.refine import refine  # noqa: E402
from models.zk.state import F_BROADCAST, L_BROADCAST, LEADING, LOOKING, NOTIFICATION  # noqa: E402


def fle_env(model, depth=45, **kw):
    cfg = dict(json.loads((CORPUS / "zookeeper-4646.trace.json").read_text())["config"])
    cfg.update(depth=depth, **kw)
    return Env(get_model(model), ExploreConfig(**cfg), Checker(DEFAULT_PROPERTIES))


def test_zookeeper_4646_refines_to_fle_and_replays():
    """The outcome-grain counterexample is one FLE can produce: each election becomes its
    notifications, decisions and connections (43 events), and the bug is the same."""
    coarse = env_for("zk", "zookeeper-4646")
    evs, states, found = refine(coarse, events("zookeeper-4646"), fle_env("zk-fle"))
    assert [(k, v.property) for k, v in found] == [(43, "primary-integrity")]
    assert [e.to_json(get_model("zk-fle")) for e in evs] == events("zookeeper-4646-fle")
    data = load(str(CORPUS / "zookeeper-4646-fle.trace.json"))
    result = replay(data)
    assert result.confirmed and result.trace.violation_step == 43
    assert "without 1.1:zab-0, which node 1 delivered" in result.trace.violation.message
    kinds = [d["action"][0] for d in events("zookeeper-4646-fle") if d["kind"] == "action"]
    assert kinds.count("decide") == 6 and kinds.count("connect") == 3


def test_zk_fixed_fle_survives_the_refined_run():
    coarse = env_for("zk-fixed", "zookeeper-4646")
    evs, states, found = refine(coarse, events("zookeeper-4646"), fle_env("zk-fixed-fle"))
    assert found == [] and len(evs) == 43
    assert [t[0] for t in states[-1].nodes[0].history] == [(1, 1), (3, 1)]


def _fle_space(depth):
    """Every state of a fresh 3-node zk-fle cluster within `depth` events, no faults."""
    env = fle_env("zk-fle", depth=depth, proposals=0, max_timeouts=0, max_crashes=0)
    s, _ = env.initial()
    seen, frontier, states = {env.fingerprint(s)}, [s], [s]
    for _ in range(depth):
        nxt = []
        for cur in frontier:
            for _, s2, _ in env.successors(cur):
                f = env.fingerprint(s2)
                if f not in seen:
                    seen.add(f)
                    nxt.append(s2)
        states += nxt
        frontier = nxt
    return states


def test_fle_elects_only_a_greatest_vote_of_a_quorum():
    """With equal logs FLE elects the greatest id of some quorum: node 0 never leads, and both
    other nodes can become established leaders. The count is `zabmc check`'s for these bounds."""
    states = _fle_space(12)
    assert len(states) == 54915
    assert not any(s.nodes[0].role == LEADING for s in states)
    established = {i for s in states for i, x in enumerate(s.nodes)
                   if x.role == LEADING and x.phase == L_BROADCAST}
    assert established == {1, 2}
    assert not any(x.phase == F_BROADCAST and x.role == LOOKING for s in states for x in s.nodes)


def test_fle_rounds():
    """lookForLeader's rounds: an older round is answered with the node's vote, a newer one is
    joined (recvset cleared, the better of the two votes adopted and sent to every peer)."""
    from models.zk.handlers import FleRules, deliver, start
    from models.zk.state import Node

    rules, n = FleRules(), 3
    a = start(Node(0), n, rules).node._replace(lclock=2)
    a = a._replace(recv=((a.vote, 2, LOOKING), None, None))
    old = deliver(a, 1, (NOTIFICATION, 0, (0, (0, 0), 1), 1, LOOKING), n, rules)
    assert old.node == a and old.outs == ((1, (NOTIFICATION, 0, a.vote, 2, LOOKING)),)
    new = deliver(a, 2, (NOTIFICATION, 0, (0, (0, 0), 2), 5, LOOKING), n, rules)
    assert new.node.lclock == 5 and new.node.vote == (0, (0, 0), 2)
    assert new.node.recv == (((0, (0, 0), 2), 5, LOOKING), None, ((0, (0, 0), 2), 5, LOOKING))
    assert {dst for dst, _ in new.outs} == {1, 2}


def test_a_lost_message_stalls_its_connection():
    """A drop on a connection is TCP's broken connection, never a gap (D8): the follower gets
    nothing more from its leader on it, and may notice (`lost`); the leader then notices too."""
    env = env_for("zk", "zookeeper-4646")
    env = Env(env.model, env.config._replace(max_drops=1), env.checker)
    shapes = [shape(d) for d in events("zookeeper-4646")][:8]  # node 0 follows node 1, in Broadcast
    s, _ = env.initial()
    for want in shapes + [("propose", 1), ("propose", 1), ("drop", 1, 0, "PROPOSAL")]:
        s = next(x[1] for x in env.successors(s) if shape(x[0].to_json(env.model)) == want)
    assert s.nodes[0].cut == 0b10
    after = next(x[1] for x in env.successors(s)
                 if shape(x[0].to_json(env.model)) == ("deliver", 1, 0, "PROPOSAL"))
    assert after.nodes[0] == s.nodes[0]  # 1.2 does not arrive after the lost 1.1
    enabled = {shape(x[0].to_json(env.model)) for x in env.successors(s)}
    assert ("action", ("lost", 0, 1)) in enabled and ("action", ("lost", 1, 0)) not in enabled
    s = next(x[1] for x in env.successors(s)
             if shape(x[0].to_json(env.model)) == ("action", ("lost", 0, 1)))
    assert s.nodes[0].role == LOOKING and s.nodes[0].cut == 0
    enabled = {shape(x[0].to_json(env.model)) for x in env.successors(s)}
    assert ("action", ("lost", 1, 0)) in enabled


# --- failure properties (#36): ZOOKEEPER-4394 ------------------------------------------------------
def test_zookeeper_4394_a_commit_after_newleader_finds_nothing_to_commit():
    """3.7.0's Learner.syncWithLeader clears packetsNotCommitted at NEWLEADER; a COMMIT of a
    proposal that came in the DIFF (the leader's outstanding proposal, sent as PROPOSAL only)
    arriving before UPTODATE and before any new PROPOSAL reads `peekFirst().hdr` of the empty list
    and throws. The shortest run (no faults needed): the leader proposes 1.1 while node 1 is
    still in Discovery, node 1's DIFF carries 1.1 uncommitted, NEWLEADER, then COMMIT 1.1."""
    from zabmc.spec import CheckSpec

    bounds = dict(nodes=3, proposals=1, depth=100, invariants=("sync-exception",), find_all=True)
    out = CheckSpec(model="zk", **bounds).validate().run()
    assert str(out.stop_reason) == "exhausted"
    [found] = out.violations
    trace = rebuild(out_env := CheckSpec(model="zk", **bounds).env(), found.path, "sync-exception")
    v, evs = trace.violation, trace.events
    assert v.property == "sync-exception" and "NullPointerException" in v.message
    [victim] = v.nodes
    model = out_env.model
    to_victim = [e.describe(model) for e in evs if getattr(e, "dst", None) == victim]
    kinds = [d.split()[2].split("(")[0] for d in to_victim]
    # the victim's synchronisation, in order: its DIFF carries the transaction uncommitted,
    # NEWLEADER, then (last event of the run) the COMMIT of that transaction, nothing in between
    assert kinds[-3:] == ["SYNC", "NEWLEADER", "COMMIT"], to_victim
    assert "txns=[1.1], committed=0" in to_victim[-3] and "zxid=1.1" in to_victim[-1]
    assert evs[-1].describe(model) == to_victim[-1]


def test_zookeeper_4394_is_not_in_releases_that_keep_packets_not_committed():
    """Before ZOOKEEPER-3911's fix (3.6.2), NEWLEADER left packetsNotCommitted alone (it was
    logged at UPTODATE), so a COMMIT always found its proposal: exhausted, no violation."""
    from zabmc.spec import CheckSpec

    out = CheckSpec(model="zk-pre3911", nodes=3, proposals=1, depth=100,
                    invariants=("sync-exception",)).validate().run()
    assert out.violations == [] and str(out.stop_reason) == "exhausted"


def test_a_leader_gives_up_when_a_follower_is_ahead():
    """Leader.waitForEpochAck throws "Follower is ahead of the leader" when an ACKEPOCH's
    (currentEpoch, last zxid) beats the leader's own (D9). Without faults FLE elects the greatest
    vote of every quorum, so it never happens (exhausted); with one election timeout a node that
    wrote currentEpoch 1 can join a leader elected by the two others at currentEpoch 0."""
    from zabmc.spec import CheckSpec

    calm = CheckSpec(model="zk", nodes=3, proposals=1, depth=100,
                     invariants=("leader-gives-up",)).validate().run()
    assert calm.violations == [] and str(calm.stop_reason) == "exhausted"
    out = CheckSpec(model="zk", nodes=3, proposals=0, max_timeouts=1, depth=30,
                    invariants=("leader-gives-up",)).validate().run()
    [found] = out.violations
    v = found.violation
    env = CheckSpec(model="zk", nodes=3, proposals=0, max_timeouts=1, depth=30).env()
    last = rebuild(env, found.path).events[-1].describe(env.model)
    [leader] = v.nodes
    assert last.startswith("deliver ") and f"->{leader} ACKEPOCH(" in last
    assert "current_epoch=1" in last and "follower" in v.message and "is ahead" in v.message


# --- releases by version (#36 point 3) -------------------------------------------------------------
def test_release_names_are_the_models_that_ship_their_rules():
    """Issue #62: one model per release (models/zk/releases.py), each with its rules: 3.6.2
    before ZOOKEEPER-3911's fix (PR #1445, in 3.6.3), 3.7.0 and Debian's 3.8.0 as released,
    3.8.5 and 3.9.2 with ZOOKEEPER-4785's fix (PRs #2132, #2133), 3.9.3 and 3.9.4 on the storage
    grain; 3.8.6 and 3.9.5 name 3.8.5's and 3.9.4's (their ZAB code is the same: releases.SAME)."""
    from models.zk import handlers

    newleader = {"zk-3.6.2": "uptodate", "zk-3.7.0": "async", "zk-3.8.0": "async",
                 "zk-3.8.5": "sync", "zk-3.9.2": "sync"}
    for name, rule in newleader.items():
        m = get_model(name)
        assert (m.name, m.release, m.rules.newleader) == (name, name[3:], rule)
    from models.zk.state import leaks, truncation

    assert not leaks(get_model("zk-3.6.2").rules) and leaks(get_model("zk-3.8.0").rules)
    assert {truncation(get_model(r).rules) for r in newleader} == {"file"}
    assert truncation(get_model("zk-3.7.0-shutdown").rules) == "exact"
    assert isinstance(get_model("zk-3.9.3").rules, handlers.Committed393Rules)
    assert (get_model("zk-3.9.3").rules.sync_in_clog, get_model("zk-3.9.4").rules.sync_in_clog) == (
        False, True)
    assert get_model("zk-3.8.6") is get_model("zk-3.8.5")
    assert get_model("zk-3.9.5") is get_model("zk-3.9.4")


def test_3_9_3_newleader_writes_the_committed_and_keeps_the_outstanding():
    """Learner.syncWithLeader in 3.9.3 (PR #2152), at NEWLEADER after a DIFF of PROPOSAL 1.1,
    COMMIT 1.1, PROPOSAL 1.2: 1.1 is appended, written and applied; 1.2 stays in packetsNotLogged
    (for the SyncThread at UPTODATE); currentEpoch is written; the ACK goes out. 3.8.5 (`zk-fixed`)
    writes both before the ACK; 3.7.0 (`zk`) queues both for the SyncThread. At the coarse grain
    (`zk-3.9.3-coarse`); tests/test_zk_storage.py has the storage grain's (`zk-3.9.3-store`)."""
    from models.zk.state import ACKLD, DIFF, F_SYNC, FOLLOWING, NEWLEADER, Node

    t1, t2 = ((1, 1), b"zab-0"), ((1, 2), b"zab-1")
    follower = Node(0, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=1, conn=1,
                    mode=DIFF, pending=(t1, t2), pcommit=(1, 1))
    newleader = (NEWLEADER, 1, 1)
    st = get_model("zk-3.9.3-coarse").deliver(follower, 1, newleader, 2)
    assert (st.node.history, st.node.pending, st.node.mem) == ((t1,), (t2,), ())
    assert (st.node.current_epoch, st.node.last_committed, st.node.nl) == (1, (1, 1), True)
    assert st.outs == ((1, (ACKLD, 1, 1)),) and st.effects == ()
    fixed = get_model("zk-fixed").deliver(follower, 1, newleader, 2).node
    assert (fixed.history, fixed.pending, fixed.mem) == ((t1, t2), (), ())
    released = get_model("zk").deliver(follower, 1, newleader, 2).node
    assert (released.history, released.pending, released.mem) == ((), (), (t1, t2))


def test_3_9_3_has_no_sync_exception():
    """ZOOKEEPER-4394 is fixed in 3.9.3: the outstanding proposal stays in packetsNotLogged, so its
    COMMIT finds it (exhausted, where 3.8.5 throws within the same bounds)."""
    from zabmc.spec import CheckSpec

    bounds = dict(nodes=3, proposals=1, depth=100, invariants=("sync-exception",))
    fixed393 = CheckSpec(model="zk-3.9.3-store", **bounds).validate().run()
    assert fixed393.violations == [] and str(fixed393.stop_reason) == "exhausted"
    [found] = CheckSpec(model="zk-fixed", **bounds).validate().run().violations
    assert found.violation.property == "sync-exception"


# --- ZOOKEEPER-4643: the shortest data-loss run of zk (reports/zookeeper.md, "Beside Remix") ------

# tests/corpus/zk/zookeeper-4643.trace.json is the run breadth-first search finds first with the
# bounds of the corpus (27 events; reports/zookeeper.md has its states and CPU seconds). Read
# against ZOOKEEPER-4643: node 2 writes currentEpoch 2 at NEWLEADER (event 19), crashes before its
# SyncThread writes 1.1 and before its ack leaves (event 20), and leads epoch 3 on that epoch,
# truncating node 1's committed 1.1 (event 27).
NEWLEADER_4643, CRASH_4643 = 19, 20


def test_zookeeper_4643_replays_to_a_truncated_commit():
    data = load(str(CORPUS / "zookeeper-4643.trace.json"))
    assert data.model == "zk"
    result = replay(data)
    assert result.confirmed
    assert (result.trace.violation.property, result.trace.violation_step) == ("sane-history", 27)
    shapes = [shape(d) for d in events("zookeeper-4643")]
    assert shapes[NEWLEADER_4643 - 1] == ("deliver", 0, 2, "NEWLEADER")
    assert shapes[CRASH_4643 - 1] == ("crash", 2)
    # 4643, not 4646: node 2 never acknowledged NEWLEADER, and nothing was written in between
    assert not any(s[:3] == ("deliver", 2, 0) for s in shapes[NEWLEADER_4643:CRASH_4643])
    assert ("action", ("log", 2)) not in shapes[:CRASH_4643]
    env = env_for("zk", "zookeeper-4643")
    found, s = run_shapes(env, shapes)
    assert found == [(27, "sane-history")]
    # node 1 committed 1.1 in epoch 1 and lost it to the leader of epoch 3, node 2
    assert s.nodes[1].history == () and s.nodes[2].current_epoch == 3


def test_zk_fixed_survives_the_4643_run():
    """zk-fixed (3.8.5, 3.9.2) writes the DIFF's transactions before currentEpoch: the crashed
    follower comes back with 1.1, so its epoch-3 leadership keeps it. The same events up to the
    follower's crash and restart, then the rest as far as zk-fixed enables them."""
    shapes = [shape(d) for d in events("zookeeper-4643")]
    found, s = run_shapes(env_for("zk-fixed", "zookeeper-4643"), shapes[:CRASH_4643 + 1])
    assert found == []
    assert [t[0] for t in s.nodes[2].history] == [(1, 1)] and s.nodes[2].current_epoch == 2


# --- Remix's invariant: leader-log-completeness ----------------------------------------------------

#: The shortest run in which a node of `zk` (3.8.0) becomes leader without a delivered transaction
#: (`--nodes 3 --proposals 1 --max-timeouts 1 --max-crashes 1`), as breadth-first search gives it.
#: Read against ZOOKEEPER-4646 by hand: node 1 leads epoch 1 with node 0 and proposes 1.1 after
#: node 0 timed out (events 1-10); it leads epoch 2 with node 2, whose DIFF carries 1.1; node 2
#: acknowledges NEWLEADER with 1.1 still queued for its SyncThread, and that ack completes node
#: 1's quorum, which delivers 1.1 (11-17); node 2 crashes and restarts without 1.1 and with
#: currentEpoch 2, so its vote beats node 0's (currentEpoch 1) and it is elected (18-20). That no
#: shorter run exists is the search's own answer (a change detector, not an independent figure).
LLC_4646 = [
    ("action", ("elect", 1, 3)), ("deliver", 0, 1, "FOLLOWERINFO"),
    ("deliver", 1, 0, "LEADERINFO"), ("deliver", 0, 1, "ACKEPOCH"), ("deliver", 1, 0, "SYNC"),
    ("deliver", 1, 0, "NEWLEADER"), ("deliver", 0, 1, "ACK-NEWLEADER"), ("timeout", 0),
    ("propose", 1), ("action", ("lost", 1, 0)), ("action", ("elect", 1, 6)),
    ("deliver", 2, 1, "FOLLOWERINFO"), ("deliver", 1, 2, "LEADERINFO"),
    ("deliver", 2, 1, "ACKEPOCH"), ("deliver", 1, 2, "SYNC"), ("deliver", 1, 2, "NEWLEADER"),
    ("deliver", 2, 1, "ACK-NEWLEADER"), ("crash", 2), ("restart", 2),
    ("action", ("elect", 2, 5)),
]
LLC_CONFIG = dict(nodes=3, network="fifo", proposals=1, max_timeouts=1, max_crashes=1, depth=30)


def llc_env(model):
    return Env(get_model(model), ExploreConfig(**LLC_CONFIG), Checker(("leader-log-completeness",)))


def test_leader_log_completeness_on_the_4646_run():
    found, s = run_shapes(llc_env("zk"), LLC_4646)
    assert found == [(20, "leader-log-completeness")]
    assert s.nodes[2].history == () and [t[0] for t in s.nodes[1].history] == [(1, 1)]
    # zk-fixed writes the DIFF's 1.1 before the ack: the same events elect node 2 with it
    found, s = run_shapes(llc_env("zk-fixed"), LLC_4646)
    assert found == [] and [t[0] for t in s.nodes[2].history] == [(1, 1)]


def test_leader_log_completeness_on_the_4643_run_fires_at_the_election_not_the_truncation():
    """The corpus's 4643 run: node 2 is elected at step 23 without the 1.1 node 1 committed in
    epoch 1 (step 12), four events before the truncation `sane-history` sees (step 27)."""
    env = env_for("zk", "zookeeper-4643")
    env = Env(env.model, env.config, Checker(("leader-log-completeness",)))
    shapes = [shape(d) for d in events("zookeeper-4643")]
    assert shapes[22] == ("action", ("elect", 2, 6))
    found, _ = run_shapes(env, shapes)
    assert found == [(23, "leader-log-completeness")]


@pytest.mark.slow
def test_breadth_first_search_meets_the_4646_run_first():
    from zabmc.explore.bfs import bfs

    env = llc_env("zk")
    out = bfs(env)
    f = out.violations[0]
    assert (f.violation.property, f.depth) == ("leader-log-completeness", 20)
    assert [shape(ev.to_json(env.model)) for ev in rebuild(env, f.path).events] == LLC_4646


@pytest.mark.parametrize("model", ["zk", "zk-pre3911", "zk-fixed", "zk-3.7.0-threads", "zk-3.9.3-store"])
def test_leader_log_completeness_agrees_with_a_plain_recomputation(model):
    """A second implementation along seeded random walks of 40 events (every fault of the
    bounds): every transaction some node has ever had at or below its commit point, and, at
    each step where a node's role turns to leading, whether its history lacks one of them. The
    checker's verdict must be the same at every step. On `zk` and `zk-fixed` half the walks
    start after the first 19 events of the 4646 run (node 2 restarted without 1.1 on `zk`), so
    that both answers come up; elsewhere random walks meet only complete leaders."""
    import random

    env = Env(get_model(model), ExploreConfig(**dict(LLC_CONFIG, proposals=2)),
              Checker(("leader-log-completeness",)))
    leading = get_model(model).is_leading
    starts = [env.initial()[0]]
    if model in ("zk", "zk-fixed"):
        starts.append(run_shapes(env, LLC_4646[:19])[1])
    seen = {True: 0, False: 0}
    for seed in range(300):
        rng = random.Random(seed)
        s = starts[seed % len(starts)]
        ever = set()
        for x in s.nodes:
            ever |= {t for t in x.history if t[0] <= x.last_committed}
        for _ in range(40):
            items = env.successors(s)
            if not items:
                break
            _, s2, v = rng.choice(items)
            for x in s2.nodes:
                ever |= {t for t in x.history if t[0] <= x.last_committed}
            want = False
            for a, b in zip(s.nodes, s2.nodes):
                if leading(b) and not leading(a):
                    lacks = bool(ever - set(b.history))
                    seen[lacks] += 1
                    want = want or lacks
            assert (v is not None) == want, (seed, v)
            if v is not None:
                break
            s = s2
    assert seen[False] > 0 and (seen[True] > 0) == (model == "zk"), seen
