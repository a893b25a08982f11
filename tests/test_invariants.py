"""The safety properties of docs/semantics.md as `zabmc.invariants.Checker` evaluates them:
one firing and one holding case per property (each checked alone, so that the case shows that
property and no other), violations planted in copies of real simulator states, and the simulator's
`--check` path reporting the first violation with its tick.
"""

from __future__ import annotations

import pytest

from models.db19 import MODEL
from models.db19.state import FOLLOWING, LEADING, Txn, fresh_node
from zabmc.core.errors import UsageError
from zabmc.invariants import DEFAULT_PROPERTIES, PROPERTIES, Checker, Violation, delivered, resolve
from zabmc.sim import SimConfig, Simulator, simulate

N = 3


def T(e, c, p=None):
    return Txn((e, c), (p if p is not None else f"zab-{e}.{c}").encode())


A, B, C = T(1, 1), T(1, 2), T(1, 3)


def nd(i, history=(), lc=(0, 0), n=N):
    return fresh_node(i, n)._replace(history=tuple(history), last_committed=lc)


class Cluster:
    """A cluster of plain nodes plus the ghost of one checker; `step` replaces a node and folds
    the change into the ghost like an engine would."""

    def __init__(self, names, n=N):
        self.checker = Checker(names)
        self.nodes = [nd(i, n=n) for i in range(n)]
        self.ghost = self.checker.initial_ghost(n)

    def step(self, i, history=None, lc=None, effects=()):
        x = self.nodes[i]
        if history is not None:
            x = x._replace(history=tuple(history))
        if lc is not None:
            x = x._replace(last_committed=lc)
        self.nodes[i] = x
        self.ghost, v = self.checker.step(self.ghost, i, x, tuple(effects), list(self.nodes))
        return v

    def propose(self, i, txn):
        """Node i proposes txn (appends it, as propose() does) without delivering it."""
        return self.step(i, history=self.nodes[i].history + (txn,), effects=(("proposed", txn),))


def only(name):
    return Cluster((name,))


# --- the property table ---------------------------------------------------------------------------


def test_property_names_and_defaults():
    """The papers' properties first (the core's, zabmc/core/properties.py), then those the zk
    models own (models/zk/properties.py), registered when zabmc loads its models."""
    from zabmc.core.properties import load_all

    load_all()
    assert list(PROPERTIES) == [
        "integrity", "total-order", "agreement", "prefix", "local-primary-order",
        "global-primary-order", "primary-integrity", "leadership", "single-prospective-leader",
        "sane-history", "leader-log-completeness",
        "sync-exception", "leader-gives-up", "load-exception", "leader-unexpected-ack",
        "ack-before-logging", "ack-before-disk", "epoch-before-disk", "sync-loses-committed",
        "committed-log-hole", "ack-from-memory", "ack-from-applied-memory", "stale-log-write",
        "truncate-keeps",
    ]
    assert DEFAULT_PROPERTIES == tuple(p for p in PROPERTIES if p not in (
        "single-prospective-leader", "sync-exception", "leader-gives-up", "load-exception",
        "leader-unexpected-ack", "ack-before-logging", "ack-before-disk", "epoch-before-disk",
        "sync-loses-committed", "committed-log-hole", "ack-from-memory", "ack-from-applied-memory",
        "stale-log-write", "truncate-keeps", "leader-log-completeness"))


def test_a_failed_effect_breaks_the_property_it_names_when_enabled():
    failed = ("failed", "sync-exception", "node 0 threw")
    c = only("sync-exception")
    v = c.step(0, effects=(failed,))
    assert v == Violation("sync-exception", "node 0 threw", (0,), ())
    assert Cluster(DEFAULT_PROPERTIES).step(0, effects=(failed,)) is None  # off by default


def test_resolve():
    assert resolve(None) == DEFAULT_PROPERTIES
    assert resolve([]) == DEFAULT_PROPERTIES
    assert resolve(["prefix", "leadership", "prefix"]) == ("prefix", "leadership")
    assert resolve(["prefix"], no_invariants=True) == ()
    with pytest.raises(UsageError, match="nope"):
        resolve(["nope"])


def test_ghost_holds_only_what_the_enabled_properties_read():
    assert Checker(()).active is False
    assert Checker(()).step("g", 0, nd(0), (), []) == ("g", None)
    assert Checker(("sane-history",)).initial_ghost(2) == (None, None, None, None)  # E6
    assert Checker(("leadership",)).initial_ghost(2) == (None, None, (), None)
    assert Checker(("single-prospective-leader",)).initial_ghost(2) == (None, None, None, ())
    assert Checker(("agreement",)).initial_ghost(2) == (((), ()), None, None, None)
    assert Checker(("integrity",)).initial_ghost(2) == (((), ()), (), None, None)


def test_delivered_sequence():
    assert delivered(nd(0, [A, B, C], (1, 2))) == (A, B)
    assert delivered(nd(0, [A, B, C], (0, 0))) == ()
    assert delivered(nd(0, [A, B, C], (9, 9))) == (A, B, C)
    assert delivered(nd(0, [A, C, B], (1, 2))) == (A,)  # the longest prefix, not a filter


def test_delivery_log_is_append_only_first_delivery_order():
    cl = Cluster(("agreement",))
    cl.step(0, [A, B], (1, 2))
    cl.step(0, [T(2, 1)], (2, 1))  # history replaced; A, B stay in the log
    assert cl.ghost[0][0] == (A, B, T(2, 1))
    cl.step(0, [A, T(2, 1)], (2, 1))  # A again: not appended twice
    assert cl.ghost[0][0] == (A, B, T(2, 1))


# --- one firing and one holding case per property ------------------------------------------------


def test_integrity_fires_for_a_txn_never_broadcast():
    cl = only("integrity")
    v = cl.step(0, [A], (1, 1))
    assert v == Violation("integrity", "node 0 delivered 1.1:zab-1.1, which no primary ever "
                          "broadcast", (0,), (A,))


def test_integrity_holds_for_broadcast_txns():
    cl = only("integrity")
    assert cl.propose(2, A) is None
    assert cl.step(2, lc=(1, 1)) is None
    assert cl.step(0, [A], (1, 1)) is None
    # same zxid, other payload: not the broadcast transaction
    assert cl.step(1, [T(1, 1, "forged")], (1, 1)).property == "integrity"


def test_total_order_fires_when_a_later_txn_is_delivered_without_the_earlier():
    cl = only("total-order")
    assert cl.step(0, [A, B], (1, 2)) is None
    v = cl.step(1, [B], (1, 2))
    assert v.property == "total-order" and v.nodes == (0, 1) and v.txns == (A, B)
    assert v.message == "node 0 delivered 1.1:zab-1.1 before 1.2:zab-1.2, but node 1 never " \
                        "delivered 1.1:zab-1.1"


def test_total_order_fires_for_reversed_order():
    cl = only("total-order")
    assert cl.step(1, [B], (1, 2)) is None
    assert cl.step(1, [A, B], (1, 2)) is None  # node 1's log is now B, A
    assert cl.ghost[0][1] == (B, A)
    v = cl.step(0, [A, B], (1, 2))
    assert (v.property, v.nodes, v.txns) == ("total-order", (0, 1), (A, B))
    assert v.message.startswith("node 0 delivered 1.1:zab-1.1 before 1.2:zab-1.2, but node 1 ")


def test_total_order_holds_for_prefixes():
    cl = only("total-order")
    assert cl.step(0, [A, B], (1, 2)) is None
    assert cl.step(1, [A], (1, 1)) is None
    assert cl.step(1, [A, B, C], (1, 3)) is None


def test_agreement_fires_on_different_txns_at_the_same_position():
    cl = only("agreement")
    assert cl.step(0, [A], (1, 1)) is None
    other = T(1, 1, "other")
    v = cl.step(1, [other], (1, 1))
    assert v == Violation("agreement", "nodes 1 and 0 delivered different transactions at "
                          "position 1: 1.1:other vs 1.1:zab-1.1", (1, 0), (other, A))


def test_agreement_holds_for_prefix_related_logs():
    cl = only("agreement")
    assert cl.step(0, [A, B, C], (1, 3)) is None
    assert cl.step(1, [A], (1, 1)) is None
    assert cl.step(2, [A, B], (1, 2)) is None


def test_prefix_fires_when_a_delivered_txn_disappears():
    cl = only("prefix")
    assert cl.step(0, [A, B], (1, 2)) is None
    v = cl.step(0, [A], (1, 2))  # NewLeader truncated the history, last_committed kept (C19)
    assert v == Violation("prefix", "node 0's delivered sequence dropped 1.2:zab-1.2 of its "
                          "delivery log", (0,), (B,))


def test_prefix_fires_when_delivered_txns_are_reordered():
    cl = only("prefix")
    cl.step(0, [A, B], (1, 2))
    v = cl.step(0, [B, A], (1, 2))
    assert v.property == "prefix" and "reordered" in v.message and v.txns == (A, B)


def test_prefix_holds_while_the_delivered_sequence_grows():
    cl = only("prefix")
    assert cl.step(0, [A, B, C], (1, 1)) is None
    assert cl.step(0, lc=(1, 3)) is None
    assert cl.step(0, [A, B, C, T(2, 1)], (2, 1)) is None


def test_local_primary_order_fires_on_a_gap():
    cl = only("local-primary-order")
    v = cl.step(0, [B], (1, 2))  # the seed-42 bug: 1.2 as epoch 1's first delivery
    assert v == Violation("local-primary-order", "node 0 delivered 1.2:zab-1.2 as epoch 1's "
                          "transaction number 1", (0,), (B,))
    cl = only("local-primary-order")
    v = cl.step(0, [A, C], (1, 3))
    assert v.txns == (A, C) and "right after 1.1:zab-1.1" in v.message


def test_local_primary_order_fires_against_proposal_order():
    cl = only("local-primary-order")
    cl.propose(2, B)  # the primary proposed 1.2 before 1.1
    cl.propose(2, A)
    v = cl.step(0, [A, B], (1, 2))
    assert v.property == "local-primary-order" and v.txns == (A, B)
    assert "which was proposed later" in v.message


def test_local_primary_order_holds_in_order_across_epochs():
    cl = only("local-primary-order")
    for x in (A, B, T(2, 1)):
        cl.propose(2, x)
    assert cl.step(0, [A, B], (1, 2)) is None
    assert cl.step(0, [A, B, T(2, 1)], (2, 1)) is None  # epoch 2 starts again at counter 1


def test_global_primary_order_fires_on_an_older_epoch_after_a_newer_one():
    cl = only("global-primary-order")
    x, y = T(2, 1), T(1, 1)
    assert cl.step(0, [x], (2, 1)) is None
    v = cl.step(0, [y], (2, 1))
    assert v == Violation("global-primary-order", "node 0 delivered 1.1:zab-1.1 after "
                          "2.1:zab-2.1 of a later epoch", (0,), (x, y))


def test_global_primary_order_holds_for_increasing_epochs():
    cl = only("global-primary-order")
    assert cl.step(0, [T(1, 5)], (1, 5)) is None
    assert cl.step(0, [T(1, 5), T(2, 1), T(3, 7)], (3, 7)) is None


def test_primary_integrity_fires_when_a_leader_lacks_a_delivered_older_txn():
    cl = only("primary-integrity")
    cl.step(1, [A], (1, 1))
    p = T(2, 1)
    v = cl.propose(0, p)  # node 0 leads epoch 2 with history [p], without A
    assert v == Violation("primary-integrity", "node 0 proposed 2.1:zab-2.1 as leader of "
                          "epoch 2 without 1.1:zab-1.1, which node 1 delivered", (0, 1), (p, A))


def test_primary_integrity_holds_with_the_older_txns_or_same_epoch_ones():
    cl = only("primary-integrity")
    cl.step(1, [A, T(2, 1)], (2, 1))
    cl.step(0, [A])
    assert cl.propose(0, T(2, 5)) is None  # (2, 1) is of the same epoch: not required
    assert cl.step(2, [A], (1, 1)) is None


def become_leader(cl, i, history=None):
    """Node i becomes leader (with `history`, if given): the step as an engine folds it, with
    the node before it."""
    before = cl.nodes[i]
    x = before._replace(role=LEADING)
    if history is not None:
        x = x._replace(history=tuple(history))
    cl.nodes[i] = x
    cl.ghost, v = cl.checker.step(cl.ghost, i, x, (), list(cl.nodes), before)
    return v


def test_leader_log_completeness_fires_when_a_node_becomes_leader_without_a_delivered_txn():
    cl = only("leader-log-completeness")
    assert cl.step(1, [A, B], (1, 2)) is None  # node 1 delivers A and B
    v = become_leader(cl, 0, [A])  # node 0 is elected with A only
    assert v == Violation("leader-log-completeness", "node 0 became leader without 1.2:zab-1.2, "
                          "which node 1 delivered", (0, 1), (B,))


def test_leader_log_completeness_holds_for_a_complete_leader_and_is_read_at_the_election():
    cl = only("leader-log-completeness")
    cl.step(1, [A], (1, 1))
    assert become_leader(cl, 0, [A, B]) is None  # it holds A (and more, undelivered)
    # once leading, the node is not asked again: a stale leader lags behind a later epoch's
    # deliveries, which the next election answers for
    assert cl.step(2, [A, B, C], (1, 3)) is None
    assert become_leader(cl, 0) is None
    # without the node before the step (the start-up), nobody became leader
    x = cl.nodes[1]._replace(role=LEADING)
    assert cl.checker.step(cl.ghost, 1, x, (), list(cl.nodes))[1] is None


def test_leadership_fires_on_two_established_leaders_of_one_epoch():
    cl = only("leadership")
    assert cl.step(0, effects=(("synced", 3),)) is None
    v = cl.step(2, effects=(("synced", 3),))
    assert v == Violation("leadership", "epoch 3 has 2 established leaders: nodes 0, 2", (0, 2), ())


def test_leadership_holds_for_one_leader_per_epoch():
    cl = only("leadership")
    assert cl.step(0, effects=(("synced", 3),)) is None
    assert cl.step(0, effects=(("synced", 3),)) is None  # the same node again
    assert cl.step(1, effects=(("synced", 4),)) is None
    assert cl.step(2, effects=(("leading", 4),)) is None  # prospective is not established
    assert cl.ghost[2] == ((3, 0), (4, 1))


def test_single_prospective_leader_fires_only_when_asked_for():
    cl = only("single-prospective-leader")
    assert cl.step(0, effects=(("leading", 2),)) is None
    v = cl.step(1, effects=(("leading", 2),))
    assert v == Violation("single-prospective-leader", "epoch 2 has 2 prospective leaders: "
                          "nodes 0, 1", (0, 1), ())
    default = Cluster(DEFAULT_PROPERTIES)
    assert default.step(0, effects=(("leading", 2),)) is None
    assert default.step(1, effects=(("leading", 2),)) is None


def test_single_prospective_leader_holds_for_distinct_epochs():
    cl = only("single-prospective-leader")
    assert cl.step(0, effects=(("leading", 1),)) is None
    assert cl.step(1, effects=(("leading", 2),)) is None
    assert cl.step(1, effects=(("leading", 2),)) is None


@pytest.mark.parametrize("history, lc, message", [
    ([B, A], (0, 0), "node 0's history has 1.1:zab-1.1 after 1.2:zab-1.2"),
    ([A, T(1, 1, "dup")], (0, 0), "node 0's history has 1.1:dup after 1.1:zab-1.1"),
    ([A], (1, 2), "node 0 has last_committed 1.2 beyond its last zxid 1.1"),
    ([], (1, 1), "node 0 has last_committed 1.1 beyond its last zxid 0.0"),
])
def test_sane_history_fires(history, lc, message):
    v = only("sane-history").step(0, history, lc)
    assert v.property == "sane-history" and v.message == message and v.nodes == (0,)


def test_sane_history_holds():
    cl = only("sane-history")
    assert cl.step(0, [A, C, T(2, 1)], (1, 3)) is None  # gaps are fine here (C25)
    assert cl.step(1, [A], (1, 1)) is None
    assert cl.step(2, [], (0, 0)) is None


def test_violation_json():
    v = Violation("agreement", "m", (1, 0), (A, T(1, 1, "x")))
    assert v.to_json() == {"property": "agreement", "message": "m", "nodes": [1, 0],
                           "txns": [{"zxid": [1, 1], "payload": "zab-1.1"},
                                    {"zxid": [1, 1], "payload": "x"}]}


# --- violations planted in copies of real simulator states ----------------------------------------

CLEAN = SimConfig(1, 5, 1000, 3)  # no violation under the default properties


def _clean_run(names=DEFAULT_PROPERTIES):
    checker = Checker(names)
    sim = Simulator(MODEL, CLEAN, checker=checker)
    result = sim.run()
    assert result.violation is None
    return checker, sim.ghost, list(result.nodes)


def test_planted_out_of_order_history_is_caught():
    checker, ghost, nodes = _clean_run()
    x = nodes[1]
    assert [t[0] for t in x.history] == [(1, 1), (1, 2), (1, 3)]
    planted = x._replace(history=(x.history[0], x.history[2], x.history[1]))
    nodes[1] = planted
    _, v = checker.step(ghost, 1, planted, (), nodes)
    assert v.property == "sane-history" and v.nodes == (1,)
    assert v.txns == (x.history[2], x.history[1])


def test_planted_rewritten_delivery_is_caught():
    checker, ghost, nodes = _clean_run()
    x = nodes[2]
    forged = Txn(x.history[1][0], b"forged")
    planted = x._replace(history=(x.history[0], forged, x.history[2]))
    nodes[2] = planted
    _, v = checker.step(ghost, 2, planted, (), nodes)
    # node 2 rewrote what it had delivered: its delivery log still holds the original
    assert v.property == "prefix" and v.nodes == (2,) and v.txns == (x.history[1],)


def test_planted_disagreeing_logs_are_caught():
    checker, ghost, nodes = _clean_run(("agreement",))
    tx, ty = Txn((1, 4), b"x"), Txn((1, 4), b"y")
    nodes[2] = nodes[2]._replace(history=nodes[2].history + (tx,), last_committed=(1, 4))
    ghost, v = checker.step(ghost, 2, nodes[2], (), nodes)
    assert v is None  # an extension of everybody's log
    nodes[3] = nodes[3]._replace(history=nodes[3].history + (ty,), last_committed=(1, 4))
    _, v = checker.step(ghost, 3, nodes[3], (), nodes)
    assert v == Violation("agreement", "nodes 3 and 2 delivered different transactions at "
                          "position 4: 1.4:y vs 1.4:x", (3, 2), (ty, tx))
    # with every default property, the forged txn is first of all one nobody broadcast
    checker, ghost, nodes = _clean_run()
    nodes[2] = nodes[2]._replace(history=nodes[2].history + (tx,), last_committed=(1, 4))
    _, v = checker.step(ghost, 2, nodes[2], (), nodes)
    assert v.property == "integrity" and v.txns == (tx,)


def test_planted_second_leader_is_caught():
    checker, ghost, nodes = _clean_run()
    assert [x.role for x in nodes] == [FOLLOWING] * 4 + [2]
    _, v = checker.step(ghost, 0, nodes[0], (("synced", 1),), nodes)
    assert v == Violation("leadership", "epoch 1 has 2 established leaders: nodes 0, 4", (0, 4), ())


class _Buggy:
    """The db-19 model with one planted bug: node 1 keeps its history in reverse order."""

    def __init__(self, victim):
        self.victim = victim

    def __getattr__(self, name):
        return getattr(MODEL, name)

    def deliver(self, node, src, msg, n):
        step = MODEL.deliver(node, src, msg, n)
        if node.id == self.victim and len(step.node.history) >= 2:
            step = step._replace(node=step.node._replace(history=step.node.history[::-1]))
        return step


def test_simulator_check_catches_a_planted_kernel_bug_with_its_tick():
    ticks = []

    class Rec:
        def on_step(self, t, kind, node, detail, before, step):
            if node == 1 and len(step.node.history) >= 2 and not ticks:
                ticks.append(t)

        def on_violation(self, t, v):
            pass

    r = Simulator(_Buggy(1), CLEAN, observer=Rec(), checker=Checker()).run()
    assert r.violation.property == "sane-history" and r.violation.nodes == (1,)
    assert r.violation_tick == ticks[0]


def test_simulator_reports_the_seed_42_local_primary_order_violation():
    r = simulate(MODEL, SimConfig(42, 3, 2000, 10), checker=Checker())
    assert r.violation_tick == 369
    first, *others = r.violation.all()
    assert first == Violation(
        "local-primary-order", "node 0 delivered 1.2:zab-1 as epoch 1's transaction number 1",
        (0,), (Txn((1, 2), b"zab-1"),))
    # the same step also breaks agreement and total order with the leader's log
    assert [v.property for v in others] == ["agreement", "total-order"]
    # the checker does not change the run
    assert r.digest == simulate(MODEL, SimConfig(42, 3, 2000, 10)).digest


def test_simulator_reports_two_established_leaders():
    cfg = SimConfig(62, 5, 2000, 20, frozenset({(3, 4), (4, 3)}))
    r = simulate(MODEL, cfg, checker=Checker())
    assert r.violation_tick == 14
    assert r.violation == Violation("leadership", "epoch 1 has 2 established leaders: nodes 3, 4",
                                    (3, 4), ())


def test_simulator_with_one_property_reports_only_that_one():
    r = simulate(MODEL, SimConfig(42, 3, 2000, 10), checker=Checker(("leadership",)))
    assert r.violation is None and r.violation_tick is None
    r = simulate(MODEL, SimConfig(42, 3, 2000, 10), checker=Checker(("sane-history",)))
    assert r.violation is None
