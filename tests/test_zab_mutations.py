"""The gate can fail: seeded mutations of the zab model, each a one-line protocol bug, and the
property the explorer names when it finds it.

A mutation is a `Rules` subclass overriding one decision of the protocol with one line
(`models/zab/handlers.py` routes every such decision through `Rules`), run by the same kernel,
explorer and checker as the correct model: BFS over FIFO links with every default property, bounds
chosen as the smallest that reach the bug. Each test pins the property and the depth of the
shortest counterexample.

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


class Mutation(NamedTuple):
    rules: type
    config: ExploreConfig
    prop: str  # the property the shortest counterexample violates first
    depth: int  # its length in events
    slow: bool


def _cfg(nodes, proposals=0, timeouts=0, drops=0):
    return ExploreConfig(nodes=nodes, network="fifo", max_drops=drops, max_timeouts=timeouts,
                         max_heartbeats=0, proposals=proposals, depth=60)


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
}


def _param(name):
    m = MUTATIONS[name]
    return pytest.param(name, marks=[pytest.mark.slow] if m.slow else [], id=name)


@pytest.mark.parametrize("name", [_param(name) for name in MUTATIONS])
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
