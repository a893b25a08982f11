"""The gate can fail: seeded mutations of the zab model, each a one-line protocol bug, and the
property the explorer names when it finds it.

A mutation is a `Rules` subclass overriding one decision of the protocol with one line
(`models/zab/handlers.py` routes every such decision through `Rules`), run by the same kernel,
explorer and checker as the correct model: BFS over FIFO links with every default property, bounds
chosen as the smallest that reach the bug. Each test pins the property and the depth of the
shortest counterexample (three of them, the costliest, are found in CI with the partial-order
reduction instead: `SHORTEST_NOT_IN_CI`).

The crash mutations change what a node keeps on disk or what it does when it restarts
(`Rules.durable`, `Rules.recover`; models/zab/README.md, D19-D21); they need a crash budget
(`max_crashes`) to show, and are invisible without one.

The mutation "skip the history selection" runs on `zab-omega` (votes ordered by node id): with the
zxid-ordered votes of `zab` the elected node already holds the most up-to-date history of its
voters, so in a cluster of three no bounded run can tell the mutant from the protocol
(models/zab/README.md, D1).
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from models.zab import OmegaRules, Rules, ZabModel
from models.zab.state import last_zxid
from zabmc.explore.bfs import bfs
from zabmc.explore.env import Env, ExploreConfig
from zabmc.invariants import DEFAULT_PROPERTIES, Checker


class AckEpochTwice(Rules):
    """f.1.2: acknowledge NEWEPOCH(e) also when e equals the epoch already promised."""

    tag = "ack-epoch-twice"

    def acks_new_epoch(self, node, e):
        return e >= node.accepted_epoch  # the protocol: e > node.accepted_epoch


class SkipHistorySelection(OmegaRules):
    """l.1.2: the prospective leader keeps its own history instead of the quorum's best."""

    tag = "skip-history-selection"

    def better_history(self, epoch, zxid, best_epoch, best_zxid):
        return False  # the protocol: (epoch, zxid) > (best_epoch, best_zxid)


class StaleEpochProposal(Rules):
    """f.3.2: accept a proposal of the current epoch after promising a later one (f.p > f.a)."""

    tag = "stale-epoch-proposal"

    def accepts_proposal(self, node, txn):
        return txn[0][0] == node.current_epoch  # the protocol: ... == node.accepted_epoch too


class CommitBeforeQuorum(Rules):
    """l.3.2: commit one acknowledgement short of a quorum (the leader alone, in three nodes)."""

    tag = "commit-before-quorum"

    def commit_ready(self, acks, q):
        return acks.bit_count() >= q - 1  # the protocol: >= q


class NoZxidOrder(Rules):
    """f.3.2: append any proposal later than the last zxid, gaps included (db-19's C25)."""

    tag = "no-zxid-order"

    def in_zxid_order(self, node, txn):
        return txn[0] > last_zxid(node)  # the protocol: the next zxid, no gap


# --- crash mutations: what survives a crash, and what a restart does -------------------------------


class AcceptedEpochVolatile(Rules):
    """E7: f.p (`accepted_epoch`, the last NEWEPOCH acknowledged) is not durable: lost at a crash."""

    tag = "accepted-epoch-volatile"

    durable = ("current_epoch", "history", "last_committed")  # the protocol: f.p too


class HistoryTailVolatile(Rules):
    """E9: the history is not durable past `last_committed`: a restart finds only the committed
    prefix of its log."""

    tag = "history-tail-volatile"

    def recover(self, node):
        return node._replace(history=tuple(t for t in node.history if t[0] <= node.last_committed))


class RestartResumesRole(Rules):
    """E9: a node keeps its role, its leader and its phase on disk and, restarting, resumes them
    instead of looking again; the rest of its leader state (the proposal counter) is lost."""

    tag = "restart-resumes-role"

    durable = Rules.durable + ("role", "leader_id", "phase")  # the protocol: a restart looks


class CommitPointVolatile(Rules):
    """E7: the delivery point (`last_committed`) is not durable: lost at a crash."""

    tag = "commit-point-volatile"

    durable = ("current_epoch", "accepted_epoch", "history")  # the protocol: last_committed too


class CurrentEpochVolatile(Rules):
    """E7: f.a (`current_epoch`, the last NEWLEADER acknowledged) is not durable: lost at a crash."""

    tag = "current-epoch-volatile"

    durable = ("accepted_epoch", "history", "last_committed")  # the protocol: f.a too


class Mutation(NamedTuple):
    rules: type
    config: ExploreConfig
    prop: str  # the property the shortest counterexample violates first
    depth: int  # its length in events
    slow: bool


def _cfg(nodes, proposals=0, timeouts=0, drops=0, crashes=0):
    return ExploreConfig(nodes=nodes, network="fifo", max_drops=drops, max_timeouts=timeouts,
                         max_heartbeats=0, proposals=proposals, depth=60, max_crashes=crashes)


MUTATIONS = {
    # Node 0 promises epoch 1 to node 1, times out, follows node 2 (which also chose epoch 1 from
    # node 0's earlier CEPOCH) and promises epoch 1 again: two established leaders of epoch 1.
    "ack-epoch-twice": Mutation(AckEpochTwice, _cfg(3, timeouts=1), "leadership", 23, True),
    # The new leader keeps its own empty history over a follower's with a committed transaction;
    # NEWLEADER then erases what that follower had delivered.
    "skip-history-selection": Mutation(SkipHistorySelection, _cfg(3, proposals=1, timeouts=1),
                                       "sane-history", 24, True),
    # A follower that promised epoch 2 still acknowledges epoch 1's proposal; epoch 1 commits it
    # with that acknowledgement, epoch 2's initial history (chosen without it) erases it.
    "stale-epoch-proposal": Mutation(StaleEpochProposal, _cfg(3, proposals=1, timeouts=1),
                                     "sane-history", 27, True),
    # Two leaders of consecutive epochs each commit their own proposal alone.
    "commit-before-quorum": Mutation(CommitBeforeQuorum, _cfg(3, proposals=2, timeouts=1),
                                     "agreement", 23, True),
    # The first proposal to node 0 is lost; node 0 appends the second and delivers it first.
    "no-zxid-order": Mutation(NoZxidOrder, _cfg(2, proposals=2, drops=1), "local-primary-order", 16,
                              False),
    # Both nodes crash and forget f.p; the re-elected leader proposes epoch 1 again and reuses
    # zxid 1.1 for a second transaction. (With three nodes one crash is enough: the restarted node
    # acknowledges epoch 1 a second time, for a second leader; see the test below.)
    "accepted-epoch-volatile": Mutation(AcceptedEpochVolatile, _cfg(2, proposals=2, crashes=2),
                                        "sane-history", 22, False),
    # The prospective leader of epoch 2 adopts its own history 1.1 1.2, crashes before delivering
    # and restarts with an empty log but f.a = 2: it is re-elected, its empty history wins the
    # selection (latest f.a) and NEWLEADER erases 1.1, which the other node had delivered.
    "history-tail-volatile": Mutation(HistoryTailVolatile, _cfg(2, proposals=2, crashes=2),
                                      "sane-history", 33, False),
    # The established leader proposes 1.1, crashes and resumes leading epoch 1 with its proposal
    # counter back at 0: its next proposal is 1.1 again.
    "restart-resumes-role": Mutation(RestartResumesRole, _cfg(2, proposals=2, crashes=1),
                                     "sane-history", 13, False),
    # A node that delivered 1.1 crashes and comes back having delivered nothing.
    "commit-point-volatile": Mutation(CommitPointVolatile, _cfg(2, proposals=1, crashes=1),
                                      "prefix", 14, False),
}
CRASH_MUTATIONS = ("accepted-epoch-volatile", "history-tail-volatile", "restart-resumes-role",
                   "commit-point-volatile")


#: the mutations whose shortest counterexample the suite does not search for: the full
#: breadth-first search of three nodes with a proposal and a timeout to 23-27 events costs one to
#: two CPU minutes each (four in all with these three). CI still finds each of them, with the
#: partial-order reduction (tests/test_reduction.py's SEEDED: commit-before-quorum; gate runs 9
#: and 10 in tests/test_mutate.py: the other two), at a depth never shorter than the one pinned
#: here; reports/verification.md ("Seeded mutations") has the full search's figures, from
#: `python benchmarks/verify_zab.py --mutations`, which runs every mutation of MUTATIONS.
SHORTEST_NOT_IN_CI = ("stale-epoch-proposal", "commit-before-quorum", "skip-history-selection")


def _param(name):
    m = MUTATIONS[name]
    return pytest.param(name, marks=[pytest.mark.slow] if m.slow else [], id=name)


def test_the_mutations_searched_only_with_the_reduction_are_found_by_it_in_ci():
    import test_mutate as tmu
    import test_reduction as tr

    for name in SHORTEST_NOT_IN_CI:
        assert name in tr.SEEDED and tr.SEEDED[name][1] >= MUTATIONS[name].depth
        assert tr.SEEDED[name][0] == MUTATIONS[name].prop
        # run by test_reduction itself, or by test_mutate as the gate run it is
        assert (name not in tr.IN_THE_GATE) or name in dict(tmu.SEEDED_IN_THE_GATE)


@pytest.mark.parametrize("name", [_param(name) for name in MUTATIONS
                                  if name not in SHORTEST_NOT_IN_CI])
def test_mutation_is_found(name):
    m = MUTATIONS[name]
    model = ZabModel(m.rules())
    assert model.name == f"zab-{name}"
    out = bfs(Env(model, m.config, Checker(DEFAULT_PROPERTIES)), stop_at_first=True)
    assert out.stop_reason == "violation"
    first = out.violations[0]
    assert (first.violation.property, first.depth) == (m.prop, m.depth)


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_each_mutation_overrides_exactly_one_decision(name):
    """A mutation is one decision of `Rules` changed, nothing else (the tag names it)."""
    rules = MUTATIONS[name].rules
    base = OmegaRules if issubclass(rules, OmegaRules) else Rules
    own = {k for k in vars(rules) if not k.startswith("__")}
    assert own - {"tag"} and len(own - {"tag"}) == 1
    assert all(hasattr(base, k) for k in own)


def test_no_zxid_order_is_clean_without_the_mutation():
    """The control: the same bounds on the protocol exhaust with no violation."""
    out = bfs(Env(ZabModel(), MUTATIONS["no-zxid-order"].config._replace(depth=10_000),
                  Checker(DEFAULT_PROPERTIES)), stop_at_first=False)
    assert (out.stop_reason, out.violations) == ("exhausted", [])


@pytest.mark.parametrize("name", CRASH_MUTATIONS)
def test_crash_mutations_need_a_crash(name):
    """A crash mutation is invisible without crashes: the same bounds with no crash budget give
    exactly the protocol's state space, with no violation."""
    m = MUTATIONS[name]
    cfg = m.config._replace(max_crashes=0, depth=10_000)
    mutant = bfs(Env(ZabModel(m.rules()), cfg, Checker(DEFAULT_PROPERTIES)), stop_at_first=False)
    protocol = bfs(Env(ZabModel(), cfg, Checker(DEFAULT_PROPERTIES)), stop_at_first=False)
    assert (mutant.stop_reason, mutant.violations) == ("exhausted", [])
    assert (mutant.distinct, mutant.depth_reached) == (protocol.distinct, protocol.depth_reached)


@pytest.mark.slow
def test_accepted_epoch_volatile_breaks_leadership_with_three_nodes():
    """With three nodes one crash suffices: node 1 acknowledges epoch 1 for node 2, crashes, forgets
    f.p and, restarted, is elected by node 0 and chooses epoch 1 again: two established leaders."""
    cfg = _cfg(3, crashes=1)._replace(depth=20)
    out = bfs(Env(ZabModel(AcceptedEpochVolatile()), cfg, Checker(DEFAULT_PROPERTIES)),
              stop_at_first=True)
    first = out.violations[0]
    assert (first.violation.property, first.depth) == ("leadership", 18)


def test_crash_mutations_are_clean_with_the_protocol():
    """The control: the crash mutations' bounds on the protocol exhaust with no violation."""
    for cfg in {MUTATIONS[name].config._replace(depth=10_000) for name in CRASH_MUTATIONS}:
        out = bfs(Env(ZabModel(), cfg, Checker(DEFAULT_PROPERTIES)), stop_at_first=False)
        assert (out.stop_reason, out.violations) == ("exhausted", [])


# Losing f.a is a bug too, but its shortest counterexample is out of reach of a bounded search here:
# it needs three nodes, a proposal, a crash and a timeout, and about 33 events, where BFS of that
# space takes 9 minutes to depth 22 alone. So the test replays one: node 2 leads epoch 1 with nodes
# 0 and 1; node 1 acknowledges and delivers 1.1 (committed by nodes 1 and 2), crashes and forgets
# f.a; node 0, which never saw 1.1, times out; the two elect node 1 (the higher zxid), whose own
# history now ranks below node 0's (f.a 0 < 1) in step l.1.2, and its NEWLEADER erases 1.1.
FA_LOST = [
    "deliver 2->0 LookForLeader", "deliver 2->1 LookForLeader", "deliver 0->2 LookForLeader",
    "deliver 0->2 Vote", "deliver 0->2 CEpoch", "deliver 2->0 Vote", "deliver 2->0 NewEpoch",
    "deliver 0->2 AckEpoch", "deliver 1->2 LookForLeader", "deliver 1->2 Vote", "deliver 1->2 CEpoch",
    "deliver 2->0 NewLeader", "deliver 0->2 AckLeader", "deliver 2->1 Vote", "deliver 2->1 NewEpoch",
    "deliver 1->2 AckEpoch", "deliver 2->1 NewLeader", "deliver 1->2 AckLeader", "propose zab-0",
    "deliver 2->1 CommitLeader", "deliver 2->1 Propose", "deliver 1->2 Ack", "deliver 2->1 Commit",
    "crash node 1", "restart node 1", "timeout node 0", "deliver 0->1 LookForLeader",
    "deliver 1->0 LookForLeader", "deliver 1->0 Vote", "deliver 0->1 Vote", "deliver 0->1 CEpoch",
    "deliver 1->0 NewEpoch", "deliver 0->1 AckEpoch",
]


def _replay(rules, script):
    """Take the events of `script` (each the start of one enabled event's description) from the
    initial state; the first violation and its step, or (None, None)."""
    model = ZabModel(rules)
    env = Env(model, _cfg(3, proposals=1, timeouts=1, crashes=1)._replace(depth=100),
              Checker(DEFAULT_PROPERTIES))
    s, _ = env.initial()
    for k, want in enumerate(script, 1):
        succ = [item for item in env.successors(s) if item[0].describe(model).startswith(want)]
        assert len(succ) == 1, want
        _, s, v = succ[0]
        if v is not None:
            return v, k
    return None, None


def test_current_epoch_volatile_erases_a_delivered_transaction():
    v, step = _replay(CurrentEpochVolatile(), FA_LOST)
    assert (v.property, step) == ("sane-history", 33)
    assert [x.property for x in v.all()] == ["sane-history", "prefix"]
    assert _replay(Rules(), FA_LOST) == (None, None)  # with f.a on disk node 1's history wins
