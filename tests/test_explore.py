"""The explorer: pinned state counts (E1-E6), strategy agreement, shortest counterexamples,
fingerprint soundness, and the environment's event semantics."""

from __future__ import annotations

import gc

import pytest

from models.db19 import MODEL
from models.db19.state import FOLLOWING, LEADING, NEWLEADER
from zabmc.explore import Env, ExploreConfig, Observer, bfs, dfs, random_walks
from zabmc.explore.env import State
from zabmc.core.events import Deliver
from zabmc.explore.trace import rebuild
from zabmc.invariants import DEFAULT_PROPERTIES, Checker

ALL = DEFAULT_PROPERTIES


def env_for(invariants=ALL, **kw) -> Env:
    return Env(MODEL, ExploreConfig(**kw), Checker(invariants))


# (config, distinct states, transitions, depth) of exhaustive searches; the same with every
# default property on and with none (E6): in these configs the ghost adds no distinctions.
EXHAUSTIVE = [
    (dict(nodes=2, network="bag", proposals=0), 327, 946, 11),
    (dict(nodes=2, network="fifo", proposals=0), 23, 33, 13),
    (dict(nodes=2, network="bag", proposals=1), 1019, 3163, 15),
    (dict(nodes=2, network="fifo", proposals=2), 73, 115, 24),
    (dict(nodes=2, network="fifo", proposals=1, max_timeouts=1), 351, 601, 31),
    (dict(nodes=2, network="fifo", proposals=1, max_drops=1), 95, 169, 20),
    (dict(nodes=2, network="fifo", proposals=1, max_heartbeats=1), 73, 119, 22),
]


@pytest.mark.parametrize("invariants", [(), ALL], ids=["no-invariants", "all-properties"])
@pytest.mark.parametrize("cfg,distinct,generated,depth", EXHAUSTIVE)
def test_pinned_exhaustive_counts(cfg, distinct, generated, depth, invariants):
    o = bfs(env_for(invariants, depth=200, **cfg), stop_at_first=False)
    assert o.stop_reason == "exhausted"
    assert (o.distinct, o.generated, o.depth_reached) == (distinct, generated, depth)
    assert sum(o.per_depth) == distinct
    assert not o.violations


def test_pinned_per_depth_3_nodes_fifo():
    o = bfs(env_for(nodes=3, network="fifo", proposals=0, depth=8), stop_at_first=False)
    assert o.stop_reason == "depth-bound"
    assert o.per_depth == [1, 6, 23, 63, 140, 268, 468, 755, 1156]


def _reachable_states(env, depth):
    init, _ = env.initial()
    level, seen = [init], {init}
    for _ in range(depth):
        level = [s2 for s in level for _e, s2, _v in env.successors(s)
                 if s2 not in seen and not seen.add(s2)]
    return seen


def test_the_ghost_state_only_observes():
    """The properties' ghost never changes which protocol states are reachable, nor how: with
    every property on, the states reached within 9 events, with their ghost dropped, are exactly
    those reached with none (whose ghost is all None, E6)."""
    cfg = dict(nodes=2, network="bag", proposals=2, max_timeouts=1, depth=9)
    plain = _reachable_states(env_for((), **cfg), 9)
    ghost = _reachable_states(env_for(ALL, **cfg), 9)
    assert {s.ghost for s in plain} == {(None, None, None, None)}
    assert {s._replace(ghost=None) for s in ghost} == {s._replace(ghost=None) for s in plain}


def test_ghost_state_remembers_a_retracted_delivery():
    """A follower that delivered (1,1) and then takes NewLeader(2, ()) drops it from its history
    (C19) and keeps last_committed (1,1): the protocol state no longer shows the delivery, the
    delivery log does, so the state with the log and the one without are two states (E1) and the
    step breaks `prefix`. With no property on they are one. (Only `prefix` is on: the delivery
    log is its ghost, and this hand-made history was never broadcast.)"""
    env = env_for(("prefix",), nodes=2, network="bag", proposals=1)
    init, _ = env.initial()
    txn = ((1, 1), b"zab-0")
    leader = MODEL.fresh(0, 2)._replace(role=LEADING, current_epoch=2, accepted_epoch=2)
    f = MODEL.fresh(1, 2)._replace(role=FOLLOWING, leader_id=0, current_epoch=1,
                                   accepted_epoch=1, history=(txn,), last_committed=(1, 1))
    ghost, v = env.checker.step(init.ghost, 1, f, (), (leader, f), init.nodes[1])
    assert v is None and ghost == (((), (txn,)), None, None, None)  # node 1 delivered (1,1)
    step = MODEL.deliver(f, 0, (NEWLEADER, 2, ()), 2)
    assert (step.node.history, step.node.last_committed) == ((), (1, 1))
    after, v = env.checker.step(ghost, 1, step.node, step.effects, (leader, step.node), f)
    assert after == ghost and v.property == "prefix"
    remembered = State((leader, step.node), init.net, init.budgets, after)
    never = State((leader, step.node), init.net, init.budgets, (((), ()), None, None, None))
    assert env.fingerprint(remembered) != env.fingerprint(never)
    plain = env_for((), nodes=2, network="bag", proposals=1)
    assert plain.fingerprint(remembered._replace(ghost=(None,) * 4)) == \
        plain.fingerprint(never._replace(ghost=(None,) * 4))


@pytest.mark.parametrize("cfg", [c for c, *_ in EXHAUSTIVE[:4]])
def test_bfs_and_dfs_reach_the_same_fingerprints(cfg):
    env = env_for(ALL, depth=200, **cfg)
    a = bfs(env, stop_at_first=False)
    b = dfs(env, stop_at_first=False)
    assert b.stop_reason == "exhausted"
    assert (a.extra["seen"].to_array() == b.extra["seen"].to_array()).all()


def test_dfs_under_a_depth_bound_matches_bfs():
    env = env_for(ALL, nodes=2, network="bag", proposals=1, depth=7)
    a, b = bfs(env, stop_at_first=False), dfs(env, stop_at_first=False)
    assert a.stop_reason == b.stop_reason == "depth-bound"
    assert a.distinct == b.distinct
    assert (a.extra["seen"].to_array() == b.extra["seen"].to_array()).all()


def test_a_capped_dfs_covers_the_same_first_states_on_every_run():
    """`max_states=N` (`zabmc check --strategy dfs --max-states N`): the search stops at the first
    distinct state beyond N, and, the successors' order being fixed, covers the same N states
    every time (what a CI gate needs of a partial search); a cap the space fits in changes nothing."""
    env = env_for(ALL, nodes=2, network="bag", proposals=1, depth=200)
    full = dfs(env, stop_at_first=False)
    assert (full.stop_reason, full.distinct) == ("exhausted", 1019)
    a, b = (dfs(env, stop_at_first=False, max_states=500) for _ in range(2))
    assert a.stop_reason == b.stop_reason == "state-cap" and a.distinct == b.distinct == 500
    assert (a.extra["seen"].to_array() == b.extra["seen"].to_array()).all()
    assert set(a.extra["seen"].to_array().tolist()) < set(full.extra["seen"].to_array().tolist())
    assert dfs(env, stop_at_first=False, max_states=1018).stop_reason == "state-cap"
    assert dfs(env, stop_at_first=False, max_states=1019).stop_reason == "exhausted"


def test_shortest_counterexample_bag_reordered_propose():
    """db-19 finding: under bag a follower accepts Propose(1.2) before (1.1) (C25) and commits it."""
    env = env_for(nodes=2, network="bag", proposals=2, max_timeouts=1, depth=40)
    o = bfs(env)
    assert o.stop_reason == "violation"
    # one step breaks three properties at once: all are reported, in checking order
    assert [(f.violation.property, f.depth) for f in o.violations] == [("local-primary-order", 11), ("agreement", 11), ("total-order", 11)]
    found = o.violations[0]
    trace = rebuild(env, found.path)
    assert [e.describe(env.model) for e in trace.events] == [
        "deliver 1->0 LookForLeader(src_id=1, last_zxid=0.0, peer_epoch=0)",
        "deliver 0->1 Vote(voter_id=0, last_zxid=0.0, peer_epoch=0, leader_id=1)",
        "deliver 1->0 NewEpoch(new_epoch=1)",
        "deliver 0->1 AckEpoch(current_epoch=0, last_zxid=0.0)",
        "deliver 1->0 NewLeader(new_epoch=1, history=[])",
        "deliver 0->1 AckLeader(new_epoch=1)",
        "propose zab-0 at node 1",
        "propose zab-1 at node 1",
        "deliver 1->0 Propose(txn=1.2:zab-1)",
        "deliver 0->1 Ack(zxid=1.2)",
        "deliver 1->0 Commit(zxid=1.2)",
    ]
    assert trace.violation_step == 11 and trace.violation.nodes == (0,)


def test_shortest_counterexample_fifo_follower_timeout_gap():
    """db-19 finding under FIFO: a follower times out, drops Propose(1.1) while Looking (C25: a
    rejected Propose is silent), follows again on the leader's Vote reply and accepts 1.2."""
    env = env_for(nodes=2, network="fifo", proposals=2, max_timeouts=1, depth=200)
    o = bfs(env)
    assert [(f.violation.property, f.depth) for f in o.violations] == [("local-primary-order", 28), ("agreement", 28), ("total-order", 28)]
    found = o.violations[0]
    trace = rebuild(env, found.path)
    events = [e.describe(env.model) for e in trace.events]
    assert events[13] == "timeout node 0"
    assert events[16] == "deliver 1->0 Propose(txn=1.1:zab-0)"
    assert trace.states[17].nodes[0].history == ()  # rejected while Looking
    assert events[27] == "deliver 1->0 Commit(zxid=1.2)"


@pytest.mark.slow
def test_shortest_counterexample_fifo_duplicate_zxid():
    """db-19 finding: a late AckEpoch re-runs discovery after sync (C24), resetting next_counter,
    so the leader issues zxid 1.1 twice: sane-history at depth 20 (3 nodes, FIFO)."""
    env = env_for(nodes=3, network="fifo", proposals=2, depth=40)
    o = bfs(env)
    (found,) = o.violations
    assert (found.violation.property, found.depth) == ("sane-history", 20)
    trace = rebuild(env, found.path)
    tail = [e.describe(env.model) for e in trace.events[-3:]]
    assert tail == [
        "propose zab-0 at node 1",
        "deliver 2->1 AckEpoch(current_epoch=0, last_zxid=0.0)",
        "propose zab-1 at node 1",
    ]
    assert trace.states[-1].nodes[1].history == (((1, 1), b"zab-0"), ((1, 1), b"zab-1"))


def test_stop_at_first_versus_all():
    env = env_for(nodes=2, network="bag", proposals=2, max_timeouts=1, depth=12)
    first = bfs(env)
    every = bfs(env, stop_at_first=False)
    assert len(first.violations) == 3  # the three properties the first bad step breaks
    assert every.violations[:3] == first.violations
    assert len({f.violation.property for f in every.violations}) == len(every.violations)


def test_random_walks_are_deterministic_and_find_the_bag_bug():
    env = env_for(nodes=2, network="bag", proposals=2, max_timeouts=1, depth=30)
    a = random_walks(env, seed=7, walks=3000)
    b = random_walks(env, seed=7, walks=3000)
    assert a.violations and a.violations == b.violations
    lpo = next(f for f in a.violations if f.violation.property == "local-primary-order")
    trace = rebuild(env, lpo.path, "local-primary-order")
    assert trace.violation.property == "local-primary-order"
    assert trace.violation_step == lpo.depth == len(lpo.path)


def test_invariant_selection_changes_what_is_found():
    env = env_for(("leadership",), nodes=2, network="bag", proposals=2, max_timeouts=1, depth=12)
    o = bfs(env, stop_at_first=False)
    assert all(f.violation.property == "leadership" for f in o.violations)


# --- environment semantics ---------------------------------------------------------------------


def test_initial_state_is_the_simulator_startup():
    env = env_for(nodes=3, network="bag")
    s, v = env.initial()
    assert v is None
    assert [x.role for x in s.nodes] == [0, 0, 0]
    # every node's LookForLeader and Vote to each peer: 3 * 2 * 2 distinct messages, one copy each
    assert len(s.net) == 12 and all(c == 1 for _, c in s.net)
    assert s.budgets == (0, 0, 0, 0, 0, 0)


def test_bag_merges_identical_messages_and_delivers_one_copy():
    env = env_for(nodes=2, network="bag")
    s, _ = env.initial()
    msg = s.net[0][0]
    doubled = s._replace(net=env._add(s.net, msg[0], [(msg[1], msg[2])]))
    assert doubled.net[0] == (msg, 2)
    events = env.events(doubled)
    assert sum(1 for e in events if e.kind == "deliver" and e[:3] == msg) == 1  # E5
    nxt, _ = env.step(doubled, Deliver(*msg))
    assert dict(nxt.net).get(msg, 0) == 1


def test_fifo_delivers_only_link_heads():
    env = env_for(nodes=2, network="fifo")
    s, _ = env.initial()
    events = env.events(s)
    assert [e.kind for e in events] == ["deliver", "deliver"]
    assert [e.msg[0] for e in events] == [0, 0]  # LookForLeader is first on both links


def test_budgets_bound_events():
    env = env_for(nodes=2, network="bag", max_drops=1, max_timeouts=1)
    s, _ = env.initial()
    kinds = [e.kind for e in env.events(s)]
    assert kinds.count("drop") == 4 and kinds.count("timeout") == 2
    dropped, _ = env.step(s, next(e for e in env.events(s) if e.kind == "drop"))
    assert dropped.budgets[0] == 0
    assert "drop" not in [e.kind for e in env.events(dropped)]


def test_fingerprint_covers_more_than_the_dump():
    """E1: two states with the same DSEZAB01 dump but different votes must not be merged."""
    env = env_for(nodes=2, network="bag")
    s, _ = env.initial()
    succ = [s2 for _, s2, _ in env.successors(s)]
    same_dump = [x for x in succ if MODEL.dump(x.nodes) == MODEL.dump(s.nodes)]
    assert same_dump
    assert all(env.fingerprint(x) != env.fingerprint(s) for x in same_dump)


def test_fingerprint_ignores_object_sharing():
    env = env_for(nodes=2, network="bag")
    s, _ = env.initial()
    import copy

    clone = copy.deepcopy(s)
    assert clone is not s and env.fingerprint(clone) == env.fingerprint(s)


@pytest.mark.parametrize("network", ["fifo", "bag"])
def test_encoding_is_marshal_v2_of_the_plain_state(network, monkeypatch):
    """E1: the encoding (assembled from memoised per-node bytes) is byte for byte
    `marshal.dumps((*nodes as tuples, net, budgets, ghost), 2)`, also when the per-node memo is
    cleared under it, so fingerprints stay what they were."""
    import marshal

    import zabmc.explore.env as env_module
    from xxhash import xxh3_128_digest

    monkeypatch.setattr(env_module, "_NODE_BYTES_LIMIT", 7)
    env = env_for(ALL, nodes=3, network=network, max_drops=1, max_timeouts=1, max_crashes=1)
    s, _ = env.initial()
    todo, seen = [s], {env.fingerprint(s)}
    while todo and len(seen) < 1500:
        s = todo.pop()
        plain = marshal.dumps((*map(tuple, s.nodes), s.net, s.budgets, s.ghost), 2)
        assert env.encode(s) == plain
        assert env.fingerprint(s) == xxh3_128_digest(plain)
        for _, s2, _ in env.successors(s):
            fp = env.fingerprint(s2)
            if fp not in seen:
                seen.add(fp)
                todo.append(s2)


def test_model_is_not_imported_by_the_explorer():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "zabmc" / "explore"
    for path in root.glob("*.py"):
        text = path.read_text()
        assert "import models" not in text and "from models" not in text, path
        assert "pyspark" not in text, path


class _CollectorWatch(Observer):
    """Records whether the cyclic collector was enabled at each callback."""

    def __init__(self, fail: bool = False):
        self.seen: list[bool] = []
        self.fail = fail

    def on_level(self, depth, frontier, new, seconds):
        self.seen.append(gc.isenabled())

    def on_finish(self, outcome):
        self.seen.append(gc.isenabled())
        if self.fail:
            raise RuntimeError("observer failed")


SEARCHES = {
    "bfs": lambda env, obs: bfs(env, stop_at_first=False, observer=obs),
    "dfs": lambda env, obs: dfs(env, stop_at_first=False, observer=obs),
    "random": lambda env, obs: random_walks(env, walks=20, stop_at_first=False, observer=obs),
}


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_searches_pause_the_cyclic_collector_and_restore_it(search):
    """A search runs with the cyclic collector off (it walks every live state, over and over:
    zabmc.explore.collector) and leaves it as it found it: back on, also when the search raises;
    still off if the caller had turned it off."""
    env = env_for(nodes=2, network="fifo", proposals=1, depth=6)
    assert gc.isenabled()
    watch = _CollectorWatch()
    SEARCHES[search](env, watch)
    assert watch.seen and not any(watch.seen)
    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="observer failed"):
        SEARCHES[search](env, _CollectorWatch(fail=True))
    assert gc.isenabled()
    gc.disable()
    try:
        SEARCHES[search](env, _CollectorWatch())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_frozen_pause_moves_the_survivors_out_of_the_collectors_reach():
    """`collector_paused(freeze=True)` (the Spark workers' tasks) freezes what survives the block."""
    from zabmc.explore.collector import collector_paused

    before = gc.get_freeze_count()
    try:
        with collector_paused(freeze=True):
            kept = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()


# --- crash and restart (E7-E10) --------------------------------------------------------------------

# (config, distinct states, transitions, depth) with one crash, exhaustive; with every default
# property on and with none: here the ghost (the established leaders of each epoch) adds states.
EXHAUSTIVE_CRASHES = [
    (dict(nodes=2, network="fifo", proposals=0), (157, 246, 25), (139, 223, 20)),
    (dict(nodes=2, network="fifo", proposals=1), (331, 512, 32), (302, 473, 31)),
    (dict(nodes=2, network="bag", proposals=1), (1579, 6301, 20), (1527, 6206, 19)),
]


@pytest.mark.parametrize("cfg,with_ghost,without", EXHAUSTIVE_CRASHES)
def test_pinned_exhaustive_counts_with_a_crash(cfg, with_ghost, without):
    for invariants, want in ((ALL, with_ghost), ((), without)):
        o = bfs(env_for(invariants, depth=200, max_crashes=1, **cfg), stop_at_first=False)
        assert o.stop_reason == "exhausted" and not o.violations
        assert (o.distinct, o.generated, o.depth_reached) == want


def _node_state(env, s, i):
    return [f for f in s.nodes[i]._fields if getattr(s.nodes[i], f) != getattr(env.model.fresh(i, env.n), f)]


def test_a_crash_keeps_the_durable_fields_and_closes_the_nodes_links():
    env = env_for(nodes=3, network="fifo", proposals=1, max_crashes=1, depth=40)
    # the first state, breadth first and without crashes, where a proposal was made
    s, _ = env.initial()
    todo, seen = [s], {env.fingerprint(s)}
    while todo:
        s = todo.pop(0)
        if s.budgets[3] == 1:
            break
        for ev, s2, _ in env.successors(s):
            if ev.kind != "crash" and env.fingerprint(s2) not in seen:
                seen.add(env.fingerprint(s2))
                todo.append(s2)
    assert s.budgets[3] == 1 and any(s.net), "a proposal was made and is in flight"
    leader = next(i for i, x in enumerate(s.nodes) if x.role == 2)
    crashes = {ev.node: (s2, v) for ev, s2, v in env.successors(s) if ev.kind == "crash"}
    assert sorted(crashes) == [0, 1, 2]  # any up node may crash, the leader too
    down, v = crashes[leader]
    assert v is None
    node = down.nodes[leader]
    for f in node._fields:
        kept = f in env.model.durable
        assert getattr(node, f) == (getattr(s.nodes[leader], f) if kept else
                                    getattr(env.model.fresh(leader, 3), f)), f
    assert down.budgets[4:] == (0, 1 << leader)
    n = 3
    for k, q in enumerate(down.net):  # every link to or from the crashed node is empty
        if leader in (k // n, k % n):
            assert q == ()
        else:
            assert q == s.net[k]
    kinds = [(ev.kind, getattr(ev, "node", None)) for ev in env.events(down)]
    assert ("restart", leader) in kinds  # also with no crash budget left
    assert not any(k == "crash" for k, _ in kinds)
    for ev in env.events(down):  # a down node receives nothing and does nothing
        assert getattr(ev, "dst", None) != leader and getattr(ev, "src", None) != leader
        assert not (ev.kind in ("timeout", "heartbeat", "propose") and ev.node == leader)
    # what the others send to it while it is down is lost at send
    for ev, s2, _ in env.successors(down):
        if ev.kind == "deliver":
            assert all(q == () for k, q in enumerate(s2.net) if k % n == leader)


def test_a_restart_runs_the_start_up_for_that_node_only():
    env = env_for(nodes=3, network="fifo", proposals=0, max_crashes=1, depth=40)
    s, _ = env.initial()
    down = env.step(s, next(e for e in env.events(s) if e.kind == "crash" and e.node == 1))[0]
    up, v = env.step(down, next(e for e in env.events(down) if e.kind == "restart"))
    assert v is None and up.budgets[4:] == (0, 0)
    want = env.model.start(down.nodes[1], 3)
    assert up.nodes[1] == want.node
    # its LookForLeader and Vote are now on its links to nodes 0 and 2, after nothing else
    assert up.net[1 * 3 + 0] == tuple(m for d, m in want.outs if d == 0)
    assert up.net[1 * 3 + 2] == tuple(m for d, m in want.outs if d == 2)
    assert up.nodes[0] is down.nodes[0] and up.nodes[2] is down.nodes[2]
    # down and up again after start-up differs from never down: the in-flight messages went
    assert env.fingerprint(up) != env.fingerprint(s)
    assert env.fingerprint(down) != env.fingerprint(s)


def test_zero_crashes_means_no_crash_event_and_the_old_state_json():
    env = env_for(nodes=2, network="fifo", proposals=1, depth=40)
    s, _ = env.initial()
    assert all(ev.kind not in ("crash", "restart") for ev in env.events(s))
    j = env.state_json(s)
    assert "down" not in j and "crashes_left" not in j["budgets"]


def test_shortest_crash_counterexample_db19_2_nodes_fifo():
    """A follower crashes with a Propose in flight to it, restarts, rejoins the same leader by its
    votes (db-19 re-synchronizes only through NewLeader) and accepts the next proposal over the
    gap: the leader delivered zab-0 then zab-1, the follower zab-1 alone."""
    env = env_for(nodes=2, network="fifo", proposals=2, max_crashes=1, depth=40)
    o = bfs(env)
    assert [(f.violation.property, f.depth) for f in o.violations] == [
        ("local-primary-order", 25), ("agreement", 25), ("total-order", 25)]
    trace = rebuild(env, o.violations[0].path)
    kinds = [e.kind for e in trace.events]
    assert kinds.count("crash") == 1 and kinds.count("restart") == 1
    assert [e.describe(env.model) for e in trace.events[12:15]] == [
        "propose zab-0 at node 1", "crash node 0", "restart node 0"]
    # without the crash, the same bounds are clean
    clean = bfs(env_for(nodes=2, network="fifo", proposals=2, depth=40), stop_at_first=False)
    assert not clean.violations


# --- events before states (issue #38): `Env.events` and `Env.successor` -----------------------


@pytest.mark.parametrize("model, network", [("db19", "fifo"), ("db19", "bag"), ("zab", "fifo"),
                                            ("zk", "fifo"), ("zk-fle", "fifo")])
def test_events_and_successor_agree_with_successors_on_every_state_of_a_space(model, network):
    """`Env.events(s)` lists the events of `Env.successors(s)` in its order (traces store indices
    into that list), without building states; `Env.successor(s, ev)` builds exactly the item
    `successors` lists for `ev`: event, next state and violation. Checked on every state of a
    depth-first walk that meets every kind (drops, timeouts, proposals, crashes, restarts, the zk
    models' actions; proposals and heartbeats where a leader gets that far)."""
    from zabmc.core.model import get_model

    env = Env(get_model(model), ExploreConfig(nodes=3, network=network, proposals=1, max_drops=1,
                                              max_timeouts=1, max_heartbeats=1, max_crashes=1),
              Checker(ALL))
    s0, _ = env.initial()
    seen, todo, kinds = {env.fingerprint(s0)}, [s0], set()
    while todo and len(seen) < 1_500:
        s = todo.pop()
        succ = env.successors(s)
        evs = env.events(s)
        assert evs == [ev for ev, _, _ in succ]
        assert [env.successor(s, ev) for ev in reversed(evs)] == succ[::-1]
        for ev, s2, _ in succ:
            kinds.add(ev.kind)
            fp = env.fingerprint(s2)
            if fp not in seen:
                seen.add(fp)
                todo.append(s2)
    # the walk has teeth: it met (almost) every kind (zk-fle's election takes longer than this)
    assert {"deliver", "drop", "timeout", "crash", "restart"} <= kinds
    assert ("propose" in kinds) == (model != "zk-fle")
    assert ("action" in kinds) == model.startswith("zk")


def _node_objects_and_values(states):
    import marshal

    objs = {id(x): x for s in states for x in s.nodes}
    msgs = {id(m): m for s in states for q in s.net for m in q}
    return (len(objs), len({marshal.dumps(tuple(x), 2) for x in objs.values()}),
            len(msgs), len({marshal.dumps(m, 2) for m in msgs.values()}))


def test_each_node_and_message_value_is_one_object_also_after_decoding():
    """`Env._canon`: on zk-fixed, whose actions, crashes and restarts make new objects, every
    successor's nodes and messages are the one object of their value (the identity memos rely on
    it), and states decoded from the codec's bytes get those same objects and one ghost object."""
    from zabmc.explore.codec import make_codec
    from zabmc.spec import CheckSpec

    env = CheckSpec(model="zk-fixed", nodes=3, proposals=2, max_timeouts=1, max_crashes=1).env()
    s0, _ = env.initial()
    seen, level, states = {env.fingerprint(s0)}, [s0], []
    for _ in range(9):
        nxt = []
        for s in level:
            for _ev, s2, _v in env.successors(s):
                states.append(s2)
                fp = env.fingerprint(s2)
                if fp not in seen:
                    seen.add(fp)
                    nxt.append(s2)
        level = nxt
    nobj, nval, mobj, mval = _node_objects_and_values(states)
    assert (nobj, mobj) == (nval, mval) and nval > 50 and mval > 5
    codec = make_codec("canonical", env)
    decoded = [codec.decode(codec.encode(s)) for s in level]
    assert decoded == level and all(d is not s for d, s in zip(decoded, level))
    nobj2, _, mobj2, _ = _node_objects_and_values(decoded + level)
    nobj1, _, mobj1, _ = _node_objects_and_values(level)
    assert (nobj2, mobj2) == (nobj1, mobj1)  # no object the level did not have already
    assert len({id(d.ghost) for d in decoded}) == len(
        {env.checker.encode_ghost(d.ghost) for d in decoded})
