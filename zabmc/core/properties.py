"""The one registry of the properties zabmc checks, safety and liveness, each with its kind, as
Stateright's `Property::always` and `Property::eventually`:

- `always` (safety): holds in every reachable state; evaluated after every step by
  `zabmc.invariants.Checker`, which keeps only the ghost state (`needs`) the enabled ones read;
  a counterexample is a path (`zabmc check`);
- `eventually` (liveness): once faults stop, every fair run reaches the property's goal, a
  predicate on states (`goal`, "module:function", loaded when first used, as models and
  strategies are); a counterexample is a lasso (`zabmc check --liveness`).

`zabmc invariants` lists the `always` properties; `--invariant NAME` picks among those of the
run's kind. This module is a leaf: it imports nothing of zabmc, so the checker and the explorer
can both read it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    ALWAYS = "always"
    EVENTUALLY = "eventually"


ALWAYS, EVENTUALLY = Kind


@dataclass(frozen=True)
class Property:
    """One property: its name, kind, statement and source; `default`: checked when no
    `--invariant` is given; `needs`: the ghost parts an `always` property reads ("logs",
    "broadcast", "established", "prospective"; "failures" for one that a model's FAILED effect
    breaks, which reads none); `goal`: where an `eventually` property's
    goal(env, state) -> bool is."""

    name: str
    kind: Kind
    statement: str
    source: str
    default: bool = True
    needs: frozenset = frozenset()
    goal_ref: str | None = None
    check_ref: str | None = None

    @property
    def goal(self):
        """The goal predicate of an `eventually` property (None for `always`)."""
        return _load(self.goal_ref)

    @property
    def check(self):
        """An `always` property's check of one node, `check(node) -> message or None`, when it
        is one (None for the built-in ones, which `zabmc.invariants.Checker` evaluates itself)."""
        return _load(self.check_ref)


def _load(ref: str | None):
    if ref is None:
        return None
    module, attr = ref.split(":")
    return getattr(importlib.import_module(module), attr)


def always(name: str, statement: str, source: str, default: bool = True,
           needs=(), check: str | None = None) -> Property:
    """A safety property. The built-in ones read ghost state (`needs`) and are evaluated by the
    checker's own code; `check` ("module:function") makes one a predicate on each node instead,
    evaluated on every node a step changes: `function(node)` returns None when the node is fine,
    otherwise what is wrong, in words."""
    if check is not None and needs:
        raise ValueError("a node check reads the node only: it needs no ghost state")
    return Property(name, ALWAYS, statement, source, default, frozenset(needs), None, check)


def eventually(name: str, statement: str, source: str, goal: str) -> Property:
    return Property(name, EVENTUALLY, statement, source, True, frozenset(), goal)


REGISTRY: dict[str, Property] = {
    p.name: p
    for p in (
        always("integrity", "every delivered transaction was broadcast by some primary",
               "DSN 2011 §III-A", needs={"logs", "broadcast"}),
        always("total-order", "if a node delivers a before b, every node that delivers b "
               "delivers a before b", "DSN 2011 §III-A", needs={"logs"}),
        always("agreement", "any two nodes' delivery logs are prefix-related",
               "DSN 2011 §III-A", needs={"logs"}),
        always("prefix", "nothing delivered is ever retracted or reordered in a node's "
               "delivered sequence", "LADIS 2008 §2", needs={"logs"}),
        always("local-primary-order", "within one epoch, deliveries follow proposal order "
               "with no gap", "DSN 2011 §III-A", needs={"logs", "broadcast"}),
        always("global-primary-order", "no node delivers an epoch-e transaction after one of "
               "a later epoch", "DSN 2011 §III-A", needs={"logs"}),
        always("primary-integrity", "a proposing leader of epoch e holds every delivered "
               "transaction of earlier epochs", "DSN 2011 §III-A", needs={"logs"}),
        always("leadership", "at most one node becomes an established leader of any epoch",
               "DSN 2011 §V-A", needs={"established"}),
        always("single-prospective-leader", "at most one node becomes a prospective leader "
               "of any epoch", "DSN 2011 §V-A", default=False, needs={"prospective"}),
        always("sane-history", "history zxids strictly increase and last_committed <= "
               "last_zxid()", "db-19 model"),
        # failures of the implementation a model follows: a step that reports a FAILED effect
        # naming one of these breaks it (zabmc/core/model.py); models that follow no implementation
        # report none. Off by default: a failure is a finding of its own, asked for by name.
        always("sync-exception", "a follower's synchronisation with its leader never throws",
               "ZooKeeper 3.7.0-3.9.2 Learner.syncWithLeader (ZOOKEEPER-4394)", default=False,
               needs={"failures"}),
        always("leader-gives-up", "a leader never abandons its epoch because a follower is "
               "ahead of it", "ZooKeeper 3.7.0 Leader.waitForEpochAck (\"Follower is ahead of "
               "the leader\")", default=False, needs={"failures"}),
        always("load-exception", "a restarted server loads its disk: the epoch of its last "
               "zxid is never beyond its currentEpoch", "ZooKeeper 3.7.0-3.9.4 "
               "QuorumPeer.loadDataBase (ZOOKEEPER-2354)", default=False, needs={"failures"}),
        always("leader-unexpected-ack", "a leader never takes a proposal's ACK for a follower's "
               "NEWLEADER ack", "ZooKeeper 3.7.0 LearnerHandler.run and Leader.waitForNewLeaderAck "
               "(ZOOKEEPER-4685)", default=False, needs={"failures"}),
        # the windows of ZooKeeper's synchronisation bugs (models/zk/README.md, D18): states a
        # JIRA issue names as its cause, each a check of one node; off by default, as failures
        always("ack-before-logging", "a follower acknowledges NEWLEADER only once the committed "
               "transactions of its synchronisation are written or queued for its log",
               "ZooKeeper Learner.syncWithLeader before PR #1445 (ZOOKEEPER-3911)",
               default=False, check="models.zk.windows:ack_before_logging"),
        always("ack-before-disk", "a follower acknowledges NEWLEADER only once the committed "
               "transactions of its synchronisation are on disk",
               "ZooKeeper 3.7.0-3.8.4 Learner.syncWithLeader (ZOOKEEPER-4646)",
               default=False, check="models.zk.windows:ack_before_disk"),
        always("epoch-before-disk", "a follower writes the new currentEpoch only once the "
               "committed transactions of its synchronisation are on disk",
               "ZooKeeper 3.7.0-3.8.4 Learner.syncWithLeader (ZOOKEEPER-4643)",
               default=False, check="models.zk.windows:epoch_before_disk"),
        always("sync-loses-committed", "a leader never synchronises a follower without a "
               "transaction the leader has applied", "ZooKeeper 3.9.3 LearnerHandler.syncFollower "
               "over ZKDatabase.committedLog (ZOOKEEPER-4925)", default=False, needs={"failures"}),
        always("committed-log-hole", "a node's in-memory committed log holds every transaction "
               "it has applied beyond the log's first entry", "ZooKeeper 3.9.3 "
               "Learner.syncWithLeader's processTxn(TxnHeader, Record) (ZOOKEEPER-4925)",
               default=False, check="models.zk.storage:committed_log_hole"),
        always("ack-from-memory", "a follower acknowledges NEWLEADER only once the committed "
               "transactions its data tree holds are on disk", "ZooKeeper 3.7.0-3.9.2 "
               "Learner.shutdown's zk.shutdown(boolean), which leaves the SyncRequestProcessor "
               "running (ZOOKEEPER-4712); a TRUNC synchronisation's memory kept (ZOOKEEPER-5094)",
               default=False, check="models.zk.shutdown:ack_from_memory"),
        always("stale-log-write", "no node's log gets a transaction that its data tree lacks "
               "and has moved past", "ZooKeeper 3.7.0-3.9.2 Learner.shutdown, whose "
               "SyncRequestProcessor keeps writing the queue of the role left "
               "(ZOOKEEPER-4712)", default=False, check="models.zk.shutdown:stale_log_write"),
        always("leader-log-completeness", "a node that becomes leader holds every transaction "
               "any node has delivered: the election picks the latest history, as ZooKeeper's "
               "FastLeaderElection does (`zab-omega`'s election is blind to the data: its "
               "leader learns the history later, in discovery)", "DSN 2011 §IV (an election "
               "that provides the initial history); ZooKeeper 3.8.0 "
               "FastLeaderElection.totalOrderPredicate; Remix's leaderLogCompleteness "
               "(EuroSys 2025)",
               default=False, needs={"logs"}),
        eventually(
            "eventually-leader",
            "once faults stop (no drop, timeout budget or crash; every message delivered, every "
            "down node restarted), some node becomes an established leader followed by a quorum",
            "DSN 2011 §III (liveness, under a quorum up and eventually reliable links); "
            "ZOOKEEPER-1419", "zabmc.explore.liveness:goal_leader"),
        eventually(
            "eventually-commit",
            "once faults stop, whenever a leader is established, every transaction of its "
            "history is eventually delivered by every up node that follows it",
            "DSN 2011 §III (liveness: a proposal of an established leader is delivered)",
            "zabmc.explore.liveness:goal_commit"),
    )
}


_BY_KIND: dict[Kind, dict[str, Property]] = {
    k: {name: p for name, p in REGISTRY.items() if p.kind == k} for k in Kind}


def of_kind(kind: Kind) -> dict[str, Property]:
    """The registered properties of one kind, in registration order: one dict per kind, the same
    object every time, which `register` keeps up to date."""
    return _BY_KIND[kind]


def register(prop: Property) -> Property:
    """Add a property to the registry (docs/extending.md): `check --invariant NAME` (with
    `--liveness` for an `eventually` one) then checks it; an `always` one given as a node check
    needs nothing else, one that reads ghost state also needs its code in zabmc.invariants'
    Checker. Names are unique."""
    if prop.name in REGISTRY:
        raise ValueError(f"a property named {prop.name!r} is registered already")
    REGISTRY[prop.name] = prop
    _BY_KIND[prop.kind][prop.name] = prop
    return prop
