"""Searches that start from a state of a trace: `zabmc check --from TRACE[:K]` and `--scenario
NAME` (a trace a model ships, `zabmc.core.model.Scenario`).

The trace is read by the one reader (`zabmc.core.trace`) and replayed (`zabmc.explore.trace
.replay`); only a trace that replay confirms is a start. The start state is the state after its
first K events (all of them by default), replayed again from the initial state under the check's
own properties, so that its ghost state is the one the check's properties read.

Bounds count from the start, as from a TLC initial state: the depth given is the number of events
after it, and each budget given is the budget left there, spent from the start state (a start after
two proposals with `--proposals 1` may make one more: zab-2). A state holds its budgets (what is
left of each, the proposals made, the nodes down), so the `Env` of the search records the bounds of
the whole run from the initial state: each budget the part the first K events spent plus the part
given, the depth K plus the depth given (`Env.config`); the bounds given are `Env.search_config`,
which the engines count their depth with. Replayed from the initial state under the recorded
bounds, the first K events leave exactly the budgets given, so the states a search meets are the
states a replay of its counterexample meets, and the counterexample (the first K events, then the
search's) is a trace like any other, for `zabmc replay`, `show`, `export` and `real`.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from zabmc.core.errors import UsageError
from zabmc.core.events import CRASHES, DROPS, HEARTBEATS, MADE, TIMEOUTS
from zabmc.invariants import Checker, Violation

from .env import Env, ExploreConfig, State


class Start(NamedTuple):
    """Where a search starts: the state after the first `events` events of the trace `path`."""

    state: State
    violation: Violation | None  # the violation the K-th event caused under the check's properties
    prefix: tuple  # the event indices from the initial state to `state`, under `Env.config`
    given: ExploreConfig  # the bounds given, counted from `state`
    path: str  # the trace file
    events: int  # K
    label: str  # how the start was named ("TRACE:K", or "scenario NAME")

    def to_json(self, env: Env) -> dict:
        """The start as `zabmc check --json` reports it."""
        return {"from": self.label, "trace": self.path, "events": self.events,
                "fingerprint": env.fingerprint(self.state).hex(),
                "recorded_config": env.config.to_json()}


def parse_from(text: str) -> tuple[str, int | None]:
    """`TRACE[:K]` as (path, K or None). A path that names an existing file is the whole text;
    otherwise what follows the last colon, if anything does, must be K, a non-negative integer."""
    if os.path.exists(text) or ":" not in text:
        return text, None
    path, _, k = text.rpartition(":")
    if not k.isdigit() or not k.isascii():
        raise UsageError(f"--from {text}: K (after the last colon) must be a non-negative integer "
                         f"of events, got {k!r}")
    return path, int(k)


def start_env(model, given: ExploreConfig, checker: Checker, path: str, k: int | None,
              label: str, where: str = "--from") -> Env:
    """The `Env` of a search of `model` from the state after `k` events (None: all) of the trace
    at `path`, with the bounds `given` counted from there; a one-line `UsageError` for a trace
    that cannot be a start (missing, unreadable, of another node count or network, not
    confirmed by replay under its own model, a lasso, shorter than `k`, broken by the check's
    properties before its K-th event, or of another model whose first `k` events are not a run
    of `model`: its events are replayed by value under `model`, whose own states they reach)."""
    from zabmc.core.trace import read

    from .trace import replay

    given = given.validate()
    tf = read(path)
    if tf.lasso is not None:
        raise UsageError(f"{where} {path}: a liveness lasso; a search starts from a safety trace "
                         "(its fault-free suffix is not a run of the model's events)")
    result = replay(tf)
    t = result.trace
    _same_cluster(where, path, t.env.config, given)
    if not result.confirmed or result.sha256_differs is not None:
        raise UsageError(f"{where} {path}: replay does not confirm it (`zabmc replay {path}` "
                         "says why): only a trace replay confirms is a start")
    n = len(t.events)
    k = n if k is None else k
    if k > n:
        raise UsageError(f"{where} {path}:{k}: the trace has {n} events, so K must be at most {n}")
    config = recorded_config(t.env.config, t.states[k].budgets, given, k)
    env = Env(model, config, checker)
    state, violation, prefix = _replay_prefix(env, t.events[:k], where, path)
    env.start = Start(state, violation, prefix, given, path, k, label)
    return env


def reach_env(model, given: ExploreConfig, checker: Checker, sc, label: str,
              where: str) -> Env:
    """The `Env` of a search of `model` from a goal scenario `sc` (`zabmc.core.model.Scenario`
    with a `goal`): the first state where the goal holds that a breadth-first search of `model`
    from the initial state reaches within the scenario's bounds (`reach`), with the bounds
    `given` counted from there as from a trace's state; a one-line `UsageError` when no such
    state is within those bounds."""
    given = given.validate()
    if sc.nodes is not None and sc.nodes != given.nodes:
        raise UsageError(f"{where} the scenario is stated for --nodes {sc.nodes}, and this check "
                         f"has --nodes {given.nodes}")
    bounds = given._replace(**dict(sc.bounds or {})).validate()
    found = reach(Env(model, bounds, checker), sc.goal)
    if found is None:
        raise UsageError(f"{where} model {model.name} reaches no such state within the "
                         f"scenario's bounds ({_bounds_text(sc.bounds)}) without breaking the "
                         "check's properties first")
    events, state, visited = found
    k = len(events)
    config = recorded_config(bounds, state.budgets, given, k)
    env = Env(model, config, checker)
    start, violation, prefix = _replay_prefix(env, events, where, label)
    env.start = Start(start, violation, prefix, given, f"(reached by search: {visited:,} states)",
                      k, label)
    return env


def reach(env: Env, goal) -> tuple | None:
    """A breadth-first search of `env` from its initial state for the first state where
    `goal(env, state)` holds, in the explorer's event order (so the same run every time):
    `(events, state, distinct states visited)`, or None within `env`'s bounds. States that
    break one of the checker's properties are not expanded: a start lies before any violation.
    Its states are deduplicated by the same fingerprints as every search."""
    s, v = env.origin()
    if v is not None:
        return None
    root = env.fingerprint(s)
    parent = {root: None}
    layer = [(s, root)]
    for d in range(env.config.depth + 1):
        nxt = []
        for s, key in layer:
            if goal(env, s):
                return _path(parent, key), s, len(parent)
            if d == env.config.depth:
                continue
            for ev in env.events(s):
                _, t, bad = env.successor(s, ev)
                fp = env.fingerprint(t)
                if bad is None and fp not in parent:
                    parent[fp] = (key, ev)
                    nxt.append((t, fp))
        layer = nxt
    return None


def _path(parent: dict, key) -> list:
    events = []
    while parent[key] is not None:
        key, ev = parent[key]
        events.append(ev)
    return events[::-1]


def _bounds_text(bounds) -> str:
    return ", ".join(f"--{f.replace('_', '-')} {v}" for f, v in dict(bounds or {}).items()) or \
        "the check's own"


def _same_cluster(where: str, path: str, recorded: ExploreConfig, given: ExploreConfig) -> None:
    for field, flag in (("nodes", "--nodes"), ("network", "--network")):
        there, here = getattr(recorded, field), getattr(given, field)
        if there != here:
            raise UsageError(f"{where} {path}: a trace with {flag} {there}, and this check has "
                             f"{flag} {here}")


def recorded_config(trace_config: ExploreConfig, budgets: tuple, given: ExploreConfig,
                    k: int) -> ExploreConfig:
    """The bounds of a run from the initial state whose first `k` events left `budgets` under
    `trace_config`, and which has `given` left after them: each budget what was spent plus what
    is given, the depth `k` plus the depth given."""
    spent = {"max_drops": trace_config.max_drops - budgets[DROPS],
             "max_timeouts": trace_config.max_timeouts - budgets[TIMEOUTS],
             "max_heartbeats": trace_config.max_heartbeats - budgets[HEARTBEATS],
             "proposals": budgets[MADE],
             "max_crashes": trace_config.max_crashes - budgets[CRASHES],
             "depth": k}
    return given._replace(**{f: getattr(given, f) + v for f, v in spent.items()}).validate()


def _replay_prefix(env: Env, events, where: str, path: str) -> tuple:
    """The state after `events` (event values, replayed from `env`'s initial state by value),
    the violation its last step caused under `env`'s properties, and their indices; a
    `UsageError` if a property is broken before the last step (a search would start past it)."""
    s, v = env.origin()
    prefix = []
    for j, want in enumerate(events, start=1):
        if v is not None:
            raise UsageError(f"{where} {path}:{len(events)}: the trace breaks {v.property} at step "
                             f"{j - 1}, before its step {len(events)}: start at step {j - 1} or "
                             "before, or check other properties")
        evs = env.events(s)
        if want not in evs:  # a trace of another model: its run need not be this model's
            raise UsageError(f"{where} {path}:{len(events)}: step {j} ({want.describe(env.model)}) is not an "
                             f"event of model {env.model.name} in the state the steps before it "
                             "reach: only a run of this check's model is a start")
        i = evs.index(want)
        _, s, v = env.successor(s, evs[i])
        prefix.append(i)
    return s, v, tuple(prefix)
