"""`zabmc check --liveness`: exact graph sizes, the lassos it finds and their replay, the two timer
rules that keep budget artifacts out (docs/liveness.md), and the command line."""

from __future__ import annotations

import json

import pytest

from zabmc.explore import Env, ExploreConfig
from zabmc.explore.liveness import check_liveness
from zabmc.explore.trace import to_trace
from zabmc.explore.trace import load, replay
from zabmc.invariants import Checker
from zabmc.core.model import get_model


class _Result:
    def __init__(self, code, out, err):
        self.exit_code, self.stdout, self.output = code, out, out + err


def run(cli, *args) -> _Result:
    return _Result(*cli(args))


def _env(model, nodes=3, depth=60, **kw):
    return Env(get_model(model), ExploreConfig(nodes=nodes, depth=depth, **kw), Checker(()))


@pytest.mark.slow
def test_zab_is_live_without_faults_and_with_a_crash():
    r = check_liveness(_env("zab", proposals=0))
    assert (r.stop_reason, r.prefix_states, r.suffix_states) == ("exhausted", 4681, 4721)
    assert r.lassos == []
    r = check_liveness(_env("zab", proposals=0, max_crashes=1, depth=60))
    assert r.stop_reason == "exhausted"
    assert (r.prefix_states, r.suffix_states) == (226771, 223549)
    assert r.lassos == [] and r.fair_components == {"eventually-leader": 0, "eventually-commit": 0}


def test_the_1419_style_vote_order_goes_round_forever():
    env = _env("zab-1419", proposals=0, depth=80)
    r = check_liveness(env)
    assert r.stop_reason == "exhausted" and r.complete
    assert (r.prefix_states, r.suffix_states) == (5655, 16272)
    assert r.fair_components == {"eventually-leader": 1, "eventually-commit": 0}
    (lasso,) = r.lassos
    assert (lasso.property, lasso.kind, len(lasso.events), lasso.faults_stop, lasso.loop_start) \
        == ("eventually-leader", "cycle", 83, 2, 2)
    # the loop comes back to the state it started from, and no one leads along it
    assert env.fingerprint(lasso.states[-1]) == env.fingerprint(lasso.states[lasso.loop_start])
    roles = {x.role for s in lasso.states[2:] for x in s.nodes}
    assert 2 not in roles  # LEADING never appears: the votes go round
    # the same model with the protocol's vote order is live
    assert check_liveness(_env("zab", proposals=0, depth=80)).lassos == []


def test_a_lost_message_needs_the_quiet_timers():
    """zab, three nodes, one drop: a lost message can strand a node until an election timeout.
    With the suffix's timers every such run recovers (no violation); without them the same graph
    has dead ends, the budget artifact the timer rule exists to avoid."""
    env = _env("zab", max_drops=1, proposals=0)
    r = check_liveness(env)
    assert r.complete and r.lassos == []
    assert (r.prefix_states, r.suffix_states) == (15948, 17958)
    bare = check_liveness(env, timers=False)
    assert bare.fair_components["eventually-leader"] == 11
    (lasso,) = bare.lassos
    assert (lasso.property, lasso.kind, len(lasso.events)) == ("eventually-leader", "dead-end", 13)
    assert any(ev.kind == "drop" for ev in lasso.events[:lasso.faults_stop])


def test_endless_traffic_does_not_stop_the_clock():
    """db-19's C13 makes two non-looking nodes answer each other's votes for ever. With the
    stranded follower's timer counted as running during that traffic, the exchange is not a fair
    run; counted as stopped, it would be reported as a livelock that real time breaks."""
    env = _env("db19", nodes=2, max_drops=1, proposals=0)
    assert check_liveness(env).lassos == []
    (lasso,) = [x for x in check_liveness(env, pressure=False).lassos
                if x.property == "eventually-leader"]
    assert lasso.kind == "cycle"
    assert {ev.kind for ev in lasso.events[lasso.loop_start:]} == {"deliver"}


def test_zab_with_a_lost_newleader_is_stuck(tmp_path):
    """A finding, not an artifact: zab's links are the paper's reliable channels; a NEWLEADER lost
    on one leaves a follower that hears heartbeats (so never times out) and never synchronises."""
    env = _env("zab", proposals=1, max_drops=1)
    r = check_liveness(env)
    (lasso,) = r.lassos
    assert (lasso.property, lasso.kind, len(lasso.events), lasso.faults_stop) == \
        ("eventually-commit", "cycle", 29, 26)
    assert lasso.events[25].kind == "drop" and "NewLeader" in lasso.events[25].describe(env.model)
    path = tmp_path / "l.json"
    to_trace(env, lasso).save(str(path))
    res = replay(load(str(path)))
    assert res.confirmed and res.trace.lasso["kind"] == "cycle"


def test_lasso_file_replays_and_tampering_is_caught(cli, tmp_path):
    out = tmp_path / "lasso.json"
    r = run(cli, "check", "--liveness", "--model", "zab-1419", "--proposals", "0", "--depth", "80",
            "-q", "--trace-out", str(out))
    assert r.exit_code == 10
    assert "-- the loop starts here (the state after step 2) --" in r.output
    assert "LIVENESS VIOLATION: eventually-leader" in r.output
    data = json.loads(out.read_text())
    assert data["version"] == 3 and data["violation"] is None
    assert data["liveness"]["loop_start"] == 2 and data["liveness"]["faults_stop"] == 2
    r = run(cli, "replay", str(out), "-q")
    assert r.exit_code == 10 and "confirmed: eventually-leader fails" in r.output
    # one step short: the loop no longer closes
    data["events"].pop()
    data["states"].pop()
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(data))
    r = run(cli, "replay", str(cut), "-q")
    assert r.exit_code == 1 and "NOT confirmed" in r.output
    # a malformed liveness object is bad input
    data["liveness"]["loop_start"] = 999
    cut.write_text(json.dumps(data))
    r = run(cli, "replay", str(cut), "-q")
    assert r.exit_code == 2 and "loop_start 999" in r.output
    data["liveness"]["property"] = ["eventually-leader"]  # not even a name
    cut.write_text(json.dumps(data))
    r = run(cli, "replay", str(cut), "-q")
    assert r.exit_code == 2 and "unknown liveness property" in r.output
    html = tmp_path / "l.html"
    r = run(cli, "show", str(out), "-o", str(html))
    assert r.exit_code == 0
    page = html.read_text()
    assert 'class="loop"' in page and 'class="faults-stop"' in page


def test_partial_verdicts_say_so(cli):
    r = run(cli, "check", "--liveness", "--model", "zab", "--proposals", "1", "--depth", "10", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["verdict"], d["stop_reason"], d["complete"]) == ("ok-within-bounds", "depth-bound",
                                                               False)
    assert (d["prefix_states"], d["suffix_states"], d["frontier_left"]) == (1533, 1533, 688)
    r = run(cli, "check", "--liveness", "--model", "zab", "--max-states", "500", "--json")
    d = json.loads(r.stdout)
    assert r.exit_code == 0 and d["stop_reason"] == "state-cap" and not d["complete"]
    assert d["distinct_states"] == 502  # the cap is checked before each expansion
    r = run(cli, "check", "--liveness", "--model", "zab", "--proposals", "1", "--depth", "10")
    assert "NO LIVELOCK FOUND within the bounds" in r.output and "partial" in r.output


@pytest.mark.parametrize("args, message", [
    (["--strategy", "dfs"], "--liveness runs breadth-first in-process"),
    (["--all"], "--all does not work with --liveness"),
    (["--checkpoint", "x"], "--checkpoint does not work with --liveness"),
    (["--invariant", "agreement"], "unknown liveness property 'agreement'"),
    (["--max-states", "0"], "--max-states must be at least 1"),
])
def test_bad_liveness_flags(cli, args, message):
    r = run(cli, "check", "--liveness", *args)
    assert r.exit_code == 2 and message in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_model_that_does_not_say_who_leads_whom_is_refused(cli, monkeypatch):
    """Every registered model has the liveness hooks now (the zk family since #36 point 4); a
    model without them gets the one-line refusal."""
    from models.zk import ZkModel

    monkeypatch.delattr(ZkModel, "leader_of")
    r = run(cli, "check", "--liveness", "--model", "zk")
    assert r.exit_code == 2 and "model zk does not say who leads whom" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_max_states_is_a_liveness_flag(cli):
    r = run(cli, "check", "--max-states", "10")
    assert r.exit_code == 2 and "--max-states works with --liveness" in r.output


def test_zab_is_live_under_an_election_timeout(cli):
    """#36 point 4: a follower that times out and re-elects its established leader is synchronised
    again (models/zab/README.md D17), so the eventually-commit lasso of this space is gone.
    Before, the leader ignored its CEPOCH and the follower missed the proposal for ever."""
    r = run(cli, "check", "--model", "zab", "--nodes", "2", "--proposals", "1",
            "--max-timeouts", "1", "--liveness", "--require-complete", "--json", "-q")
    d = json.loads(r.stdout)
    assert r.exit_code == 0 and d["verdict"] == "ok" and d["complete"]
    # zabmc's own counts: they detect change only
    assert (d["prefix_states"], d["suffix_states"]) == (261, 251)


#: zk family (#36 point 4), 2 nodes, 1 proposal, FIFO: (max_timeouts, depth) -> verdict, prefix and
#: suffix states, and the lasso's (property, kind, steps, faults_stop, loop_start) or None.
#: zabmc's own counts: they detect change only. The election-outcome variants exhaust their
#: spaces; the FLE ones never do (every abandoned round raises the logical clock), so they run
#: within a depth bound. The lasso of one timeout is a modelling artefact (reports/liveness.md):
#: the new leader counts its whole log as committed and the follower, whose log holds the same
#: proposal, is synchronised by an empty DIFF, so it never learns that the proposal committed,
#: where ZooKeeper's follower applied its log when it left its role (fastForwardDataBase). The
#: release models serve it at UPTODATE (models/zk/serve.py, R6) and are live: ZK_RELEASE_LIVENESS.
ZK_LIVENESS = {
    "zk": {(0, 40): ("exhausted", 15, 21, None),
           (1, 40): ("exhausted", 159, 204, ("eventually-commit", "cycle", 22, 20, 20))},
    "zk-fixed": {(0, 40): ("exhausted", 15, 21, None),
                 (1, 40): ("exhausted", 156, 200, ("eventually-commit", "cycle", 22, 20, 20))},
    "zk-pre3911": {(0, 40): ("exhausted", 15, 21, None),
                   (1, 40): ("exhausted", 157, 202, ("eventually-commit", "cycle", 22, 20, 20))},
    "zk-3.9.3-coarse": {(0, 40): ("exhausted", 15, 21, None),
                 (1, 40): ("exhausted", 156, 200, ("eventually-commit", "cycle", 22, 20, 20))},
    # the storage grain (models/zk/README.md, S1-S10): the same verdicts; its counts are zabmc's
    # own and only detect change (one more state where the committed logs differ)
    "zk-3.9.3-store": {(0, 40): ("exhausted", 15, 21, None),
                 (1, 40): ("exhausted", 157, 202, ("eventually-commit", "cycle", 22, 20, 20))},
    "zk-3.9.4-store": {(0, 40): ("exhausted", 15, 21, None),
                 (1, 40): ("exhausted", 157, 202, ("eventually-commit", "cycle", 22, 20, 20))},
    # the threads' grain (F1-F8): zk-3.7.0-threads's follower owes its NEWLEADER ACK for a step, which is
    # `busy` (no timer fires before it); without that rule its fault-free space never ended (a
    # timeout while the ACK was owed began a new epoch, again and again)
    "zk-3.7.0-threads": {(0, 40): ("exhausted", 16, 22, None),
                 (1, 40): ("exhausted", 175, 234, ("eventually-commit", "cycle", 24, 22, 22))},
    "zk-3.9.2-threads": {(0, 40): ("exhausted", 15, 21, None),
                 (1, 40): ("exhausted", 157, 201, ("eventually-commit", "cycle", 22, 20, 20))},
    "zk-fle": {(0, 30): ("depth-bound", 379, 2270, None)},
    "zk-fixed-fle": {(0, 30): ("depth-bound", 379, 2270, None)},
}


@pytest.mark.parametrize("model, timeouts, depth", [
    (m, t, d) for m, runs in ZK_LIVENESS.items() for (t, d) in runs])
def test_zk_liveness_verdicts(model, timeouts, depth):
    """(The counts are zabmc's own: they detect change only; the verdicts are argued above.)"""
    stop, prefix, suffix, want = ZK_LIVENESS[model][(timeouts, depth)]
    env = _env(model, nodes=2, depth=depth, proposals=1, max_timeouts=timeouts)
    r = check_liveness(env)
    assert (r.stop_reason, r.prefix_states, r.suffix_states) == (stop, prefix, suffix)
    got = [(x.property, x.kind, len(x.events), x.faults_stop, x.loop_start) for x in r.lassos]
    assert got == ([want] if want else [])
    if want:
        (lasso,) = r.lassos
        last = lasso.states[-1].nodes
        # the follower holds the leader's proposal, which only the leader counts as delivered
        assert last[0].history == last[1].history and len(last[0].history) == 1
        assert (last[0].last_committed, last[1].last_committed) == ((0, 0), last[1].history[0][0])


@pytest.mark.parametrize("model, extra", [("zk-3.7.0-epoch", 0), ("zk-3.9.2-epoch", 1)])
def test_the_epoch_grain_keeps_its_release_s_liveness_on_two_nodes(model, extra):
    """The -epoch variants against their releases' figures above (the reference). Without a
    timeout two nodes never open the window (K1): the leader proposes nothing before its one
    follower is synchronised. With one, a leader that logged the proposal alone, timed out and
    won again (it holds more) synchronises the follower by a DIFF carrying it: 3.9.2 writes it at
    NEWLEADER before currentEpoch, so its graphs have that one state more, in each phase
    (`extra`); 3.7.0 queues it after currentEpoch, so its graphs are its release's. The lassos
    are the same. (`zk-3.9.3-epoch` and `zk-3.9.4-epoch` are epoch.py over storage.py: no threads'
    grain, so no such reference; their releases' figures are ZK_RELEASE_LIVENESS below.)"""
    base = {"zk-3.7.0-epoch": "zk-3.7.0-threads", "zk-3.9.2-epoch": "zk-3.9.2-threads"}[model]
    for timeouts, depth in ZK_LIVENESS[base]:
        env = _env(model, nodes=2, depth=depth, proposals=1, max_timeouts=timeouts)
        r = check_liveness(env)
        stop, prefix, suffix, want = ZK_LIVENESS[base][(timeouts, depth)]
        more = extra if timeouts else 0
        assert (r.stop_reason, r.prefix_states, r.suffix_states) == (stop, prefix + more,
                                                                     suffix + more)
        got = [(x.property, x.kind, len(x.events), x.faults_stop, x.loop_start) for x in r.lassos]
        assert got == ([want] if want else [])


def test_no_timer_fires_while_a_node_is_busy():
    """zk-3.7.0-threads's follower that owes its NEWLEADER ACK is `busy`: at that quiet state (nothing in
    flight) the fault-free suffix offers its `ack-newleader` and no timeout; the same state with
    the ACK written offers the timeouts again."""
    from zabmc.core import events as E
    from zabmc.explore.liveness import busy, suffix_successors

    env = _env("zk-3.7.0-threads", nodes=2, depth=40, proposals=1)
    s, _ = env.initial()
    owed = None
    for _ in range(20):  # the first run of events to a state where a node owes its ACK
        nxt = suffix_successors(env, s)
        s = nxt[0][1]
        if busy(env, s) and not any(s.net):
            owed = s
            break
    assert owed is not None and [x.owed for x in owed.nodes].count(True) == 1
    kinds = {type(x[0]) for x in suffix_successors(env, owed)}
    assert E.Timeout not in kinds and E.Action in kinds
    i = [x.owed for x in owed.nodes].index(True)
    freed = owed._replace(nodes=tuple(x._replace(owed=False) if k == i else x
                                      for k, x in enumerate(owed.nodes)))
    assert not busy(env, freed)
    assert E.Timeout in {type(x[0]) for x in suffix_successors(env, freed)}


# --- the release models (issue #62 item 6; models/zk/serve.py, models/zk/README.md R6) -----------

#: release model -> {(max_timeouts, max_crashes): (prefix, suffix)}, 2 nodes, 1 proposal, depth 40,
#: every space exhausted with no lasso. zabmc's own counts: they detect change only (the verdict is
#: argued by the test below: the abstractions' lasso ends in a goal state there). The THREADS
#: rows moved when the storage grain (S11-S14) joined R6 on those releases, at this merge; 3.9.3's
#: and 3.9.4's when they moved from the STORE stack to THREADS (the threads' and forwarding grains:
#: NEWLEADER's ACK a step of its own), where they were (15, 21), (157, 201), (180, 209). They are
#: 3.6.2's here: on two nodes with one proposal neither release queues anything for the SyncThread
#: at NEWLEADER, nor leaks it at a shutdown.
ZK_RELEASE_LIVENESS = {
    "zk-3.6.2": {(0, 0): (16, 22), (1, 0): (182, 232), (0, 1): (210, 244)},
    "zk-3.7.0": {(0, 0): (16, 22), (1, 0): (200, 255), (0, 1): (229, 264)},
    "zk-3.8.0": {(0, 0): (16, 22), (1, 0): (200, 255), (0, 1): (229, 264)},
    "zk-3.8.5": {(0, 0): (15, 21), (1, 0): (189, 244), (0, 1): (214, 250)},
    "zk-3.9.2": {(0, 0): (15, 21), (1, 0): (189, 244), (0, 1): (214, 250)},
    "zk-3.9.3": {(0, 0): (16, 22), (1, 0): (182, 232), (0, 1): (210, 244)},
    "zk-3.9.4": {(0, 0): (16, 22), (1, 0): (182, 232), (0, 1): (210, 244)},
}


@pytest.mark.parametrize("model, timeouts, crashes", [
    (m, t, c) for m, runs in ZK_RELEASE_LIVENESS.items() for (t, c) in runs])
def test_the_release_models_are_live_on_two_nodes(model, timeouts, crashes):
    """Every release model is live with no fault, one timeout or one crash, where every
    abstraction has the eventually-commit lasso (ZK_LIVENESS): its follower serves its data tree
    at UPTODATE (R6)."""
    env = _env(model, nodes=2, depth=40, proposals=1, max_timeouts=timeouts, max_crashes=crashes)
    r = check_liveness(env)
    assert (r.stop_reason, r.lassos) == ("exhausted", [])
    assert (r.prefix_states, r.suffix_states) == ZK_RELEASE_LIVENESS[model][(timeouts, crashes)]


@pytest.mark.parametrize("abstraction", ["zk-pre3911", "zk-3.7.0-shutdown", "zk-3.9.2-shutdown",
                                         "zk-3.9.3-store", "zk-3.9.4-store"])
def test_the_abstraction_s_lasso_ends_in_a_goal_state_on_its_release_model(abstraction):
    """The eventually-commit lasso of an abstraction (one timeout), its faulty prefix replayed on
    its release model (models/zk/releases.py ABSTRACTIONS, each owed step of a layer the
    abstraction lacks taken as soon as it is enabled, as tests/test_zk_releases.py lifts the
    corpus). The prefix ends with UPTODATE to node 0, synchronised by an empty DIFF from 1.1, the
    proposal it logged in epoch 1 and the leader of epoch 2 counts committed: on the
    abstraction node 0 has delivered nothing there (the loop never reaches the goal); on the
    release model it has delivered 1.1 and the state is a goal state (R6: ZooKeeper's follower
    fast-forwarded 1.1 into its data tree when it left its role, and serves it from UPTODATE on).
    Checked by hand from the runs: the lassos are printed by `zabmc replay` of
    reports/data/liveness/ before this change (commit 0a93067)."""
    from zabmc.core import events as E
    from zabmc.core.goals import goal_commit
    from models.zk import releases

    r = check_liveness(_env(abstraction, nodes=2, depth=40, proposals=1, max_timeouts=1))
    (lasso,) = r.lassos
    assert lasso.property == "eventually-commit"
    env = _env(abstraction, nodes=2, depth=40, proposals=1, max_timeouts=1)
    at = lasso.states[lasso.faults_stop]
    assert [x.last_committed for x in at.nodes] == [(0, 0), (1, 1)] and not goal_commit(env, at)
    a = releases.ABSTRACTIONS[abstraction]
    owed = set(releases.LAYER_ACTIONS) - set(a.own)
    rel = _env(f"zk-{a.release}", nodes=2, depth=40, proposals=1, max_timeouts=1)

    def settle(s):
        while True:
            for ev, nxt, _ in rel.successors(s):
                if ev.kind == "action" and ev.to_json(rel.model)["action"][0] in owed:
                    s = nxt
                    break
            else:
                return s

    s, _ = rel.initial()
    for ev in lasso.events[:lasso.faults_stop]:
        item = E.from_json(rel, settle(s), ev.to_json(env.model))
        assert item is not None and item[2] is None
        s = item[1]
    s = settle(s)
    assert [x.last_committed for x in s.nodes] == [(1, 1), (1, 1)] and goal_commit(rel, s)
