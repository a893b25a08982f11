"""The one registry of the properties zabmc checks, safety and liveness, each with its kind, as
Stateright's `Property::always` and `Property::eventually`:

- `always` (safety): holds in every reachable state; evaluated after every step by
  `zabmc.invariants.Checker`, which keeps only the ghost state (`needs`) the enabled ones read;
  a counterexample is a path (`zabmc check`);
- `eventually` (liveness): once faults stop, every fair run reaches the property's goal, a
  predicate on states (`goal`); a counterexample is a lasso (`zabmc check --liveness`).

The registry holds the papers' properties (this module) and those each model package adds when
it registers (`zabmc.core.registry`): ZooKeeper's failures and the windows of its bugs are
`models/zk`'s. A model says which properties its runs can break (`can_break`).
`zabmc invariants` lists the `always` properties; `--invariant NAME` picks among those of the
run's kind. This module imports only the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Callable

from . import goals


class Kind(StrEnum):
    ALWAYS = "always"
    EVENTUALLY = "eventually"


ALWAYS, EVENTUALLY = Kind


@dataclass(frozen=True)
class Property:
    """One property: its name, kind, statement and source; `default`: checked when no
    `--invariant` is given; `needs`: the ghost parts an `always` property reads ("logs",
    "broadcast", "established", "prospective"; "failures" for one that a model's FAILED effect
    breaks, which reads none); `goal`: an `eventually` property's goal(env, state) -> bool;
    `check`: an `always` property's check of one node, `check(node) -> message or None`, when it
    is one (None for those that `zabmc.invariants.Checker` evaluates on the ghost itself)."""

    name: str
    kind: Kind
    statement: str
    source: str
    default: bool = True
    needs: frozenset = frozenset()
    goal: Callable | None = None
    check: Callable | None = None


def always(name: str, statement: str, source: str, default: bool = True,
           needs=(), check: Callable | None = None) -> Property:
    """A safety property. The built-in ones read ghost state (`needs`) and are evaluated by the
    checker's own code; `check` makes one a predicate on each node instead, evaluated on every
    node a step changes: `check(node)` returns None when the node is fine, otherwise what is
    wrong, in words."""
    if check is not None and needs:
        raise ValueError("a node check reads the node only: it needs no ghost state")
    if check is not None and not callable(check):
        raise ValueError("a node check is a function of the node")
    return Property(name, ALWAYS, statement, source, default, frozenset(needs), None, check)


def eventually(name: str, statement: str, source: str, goal: Callable) -> Property:
    """A liveness property: `goal(env, state)` says whether a state reaches it."""
    if not callable(goal):
        raise ValueError("a goal is a function of the environment and a state")
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
               "last_zxid()", "zabmc's well-formedness check of a node (docs/semantics.md)"),
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
            "ZOOKEEPER-1419", goals.goal_leader),
        eventually(
            "eventually-commit",
            "once faults stop, whenever a leader is established, every transaction of its "
            "history is eventually delivered by every up node that follows it",
            "DSN 2011 §III (liveness: a proposal of an established leader is delivered)",
            goals.goal_commit),
    )
}


#: the properties of the papers, which the core registers itself and every model can break
CORE: tuple = tuple(REGISTRY)

_BY_KIND: dict[Kind, dict[str, Property]] = {
    k: {name: p for name, p in REGISTRY.items() if p.kind == k} for k in Kind}


def of_kind(kind: Kind) -> dict[str, Property]:
    """The registered properties of one kind, in registration order: one dict per kind, the same
    object every time, which `register` keeps up to date. The models' own properties are in it
    once `load_all` (or any model look-up) has run."""
    return _BY_KIND[kind]


def load_all() -> None:
    """Let every model package register its properties (`zabmc.core.registry`)."""
    from .registry import load

    load()


def register(prop: Property) -> Property:
    """Add a property to the registry (docs/extending.md): `check --invariant NAME` (with
    `--liveness` for an `eventually` one) then checks it; an `always` one given as a node check
    needs nothing else, one that reads ghost state also needs its code in zabmc.invariants'
    Checker. Names are unique (registering the same property again changes nothing)."""
    if REGISTRY.get(prop.name) is prop:
        return prop
    if prop.name in REGISTRY:
        raise ValueError(f"a property named {prop.name!r} is registered already")
    REGISTRY[prop.name] = prop
    _BY_KIND[prop.kind][prop.name] = prop
    return prop


def can_break(model) -> tuple:
    """The `always` properties that runs of `model` can break: every property no registered
    model claims (the papers', the core's, and any registered for all models, as
    docs/extending.md does), and, of those the models claim as their own (`properties`: a
    package's failures and windows), the ones `model` claims."""
    from .model import MODELS

    load_all()
    claimed = {p for entry in MODELS.values() for p in getattr(entry.model, "properties", ())}
    own = set(getattr(model, "properties", ()))
    return tuple(name for name in of_kind(ALWAYS) if name not in claimed or name in own)
