"""Counterexample traces: rebuilt from event indices by replay, saved as versioned JSON, and
re-executed (`zabmc replay`) through the same kernel.

The file format (`zabmc-trace`, versions 1 to 3) is docs/traces.md's; `zabmc.core.trace` reads
and checks it (`load` here is its `read`), and `replay` re-executes what it read. Replay matches
each recorded event against the enabled events by value, so a trace does not depend on successor
order, only on the kernel; it then checks that the states it reached are the ones recorded, that
the recorded violation (or lasso) is the one it finds, and that the last state's digest is the
recorded `final_sha256`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from zabmc.core import events as E
from zabmc.core import files
from zabmc.core.errors import UsageError
from zabmc.core.model import get_model
from zabmc.core.model import known_issues as model_known_issues
from zabmc.core.trace import FORMAT as TRACE_FORMAT
from zabmc.core.trace import LASSO_VERSION, READABLE_VERSIONS, Replayed, TraceFile, need
from zabmc.core.trace import VERSION as TRACE_VERSION
from zabmc.core.trace import read as load
from zabmc.invariants import Checker, Violation, resolve

from .env import Env, ExploreConfig, State
from .liveness import suffix_start, suffix_successors

__all__ = ["LASSO_VERSION", "READABLE_VERSIONS", "TRACE_FORMAT", "TRACE_VERSION", "Trace",
           "ReplayResult", "env_of", "load", "name_issues", "rebuild", "replay", "shorten",
           "to_trace"]


@dataclass
class Trace:
    env: Env
    events: list  # event tuples
    states: list  # State, len(events) + 1
    violation: Violation | None
    violation_step: int | None  # index into events (1-based step number), 0 = initial state
    lasso: dict | None = None  # a liveness counterexample's shape (the `liveness` object)
    #: the known issues of the implementation the model follows whose windows the run passes
    #: through (`zabmc.core.model.KnownIssue`s; `()`: none), once `name_issues` has looked; None
    #: when it has not, or the model follows no implementation (nothing is then written or said)
    known_issues: tuple | None = None
    #: how the trace was made (the exact command, or "written by hand"), written as the file's
    #: `origin` after its format header; None writes none
    origin: str | None = None

    @property
    def final_sha256(self) -> str:
        return hashlib.sha256(self.env.model.dump(self.states[-1].nodes)).hexdigest()

    def to_json(self) -> dict:
        env = self.env
        v = None
        if self.violation is not None:
            v = dict(self.violation.to_json(), step=self.violation_step)
        out = {
            "format": TRACE_FORMAT,
            "version": TRACE_VERSION if self.lasso is None else LASSO_VERSION,
        }
        if self.origin is not None:
            out["origin"] = self.origin
        out.update({
            "model": env.model.name,
            "config": env.config.to_json(),
            "invariants": list(env.checker.names),
            "violation": v,
        })
        if self.lasso is not None:
            out["liveness"] = dict(self.lasso)
        if self.known_issues is not None:
            out["known_issues"] = [x.to_json() for x in self.known_issues]
        out.update({
            "events": [e.to_json(env.model) for e in self.events],
            "states": [env.state_json(s) for s in self.states],
            "final_sha256": self.final_sha256,
        })
        return out

    def text(self) -> str:
        """The trace file's text: `to_json()` indented, with a final newline."""
        return json.dumps(self.to_json(), indent=1) + "\n"

    def save(self, path: str) -> None:
        """Write the trace file through the one writer (`zabmc.core.files.write`)."""
        files.write(path, self.text(), "trace file")


def _pick(v, prop: str | None):
    """The violation of `prop` among those a step caused (any, when prop is None)."""
    if v is None:
        return None
    if prop is None:
        return v
    return next((x for x in v.all() if x.property == prop), None)


class _Walk:
    """A run being replayed: its events, its states and its first violation (of property `prop`,
    when given), for `rebuild` and `replay`."""

    def __init__(self, env: Env, prop: str | None):
        s, v = env.origin()
        self.env, self.prop = env, prop
        self.states: list[State] = [s]
        self.events: list = []
        self.first = _pick(v, prop)
        self.first_step = 0 if self.first is not None else None

    def add(self, ev, s: State, v) -> None:
        self.events.append(ev)
        self.states.append(s)
        if self.first is None:
            self.first = _pick(v, self.prop)
            if self.first is not None:
                self.first_step = len(self.events)

    def trace(self, lasso=None) -> Trace:
        return Trace(self.env, self.events, self.states, self.first, self.first_step, lasso)


def rebuild(env: Env, path: tuple, prop: str | None = None) -> Trace:
    """Replay event indices from the search's start; record states and the first violation (of
    property `prop`, when given). The trace begins at the initial state: with a start (`zabmc
    check --from`), the events that lead there (`Env.prefix`) come first."""
    walk = _Walk(env, prop)
    s = walk.states[0]
    for idx in env.prefix + tuple(path):
        ev, s, v = env.step_index(s, idx)
        walk.add(ev, s, v)
    return walk.trace()


def env_of(model: str, config: dict, invariants) -> Env:
    """The explorer that wrote a trace: its model, its config (whose fields and values are the
    explorer's to check) and its invariants."""
    model = get_model(model)
    fields = ExploreConfig._fields
    unknown = set(config) - set(fields)
    if unknown:
        raise UsageError(f"malformed trace file: unknown config key {sorted(unknown)[0]!r}")
    for k in fields:
        if k in config and k != "network":
            need(config, k, int, "trace config")
    try:
        cfg = ExploreConfig(**config).validate()
    except TypeError as e:
        raise UsageError(f"malformed trace config: {e}") from None
    names = list(invariants)
    checker = Checker(resolve(names, no_invariants=not names))
    return Env(model, cfg, checker)


@dataclass
class ReplayResult:
    trace: Trace
    expected: dict | None  # the recorded violation
    confirmed: bool  # the same property fired at the same step (or none was recorded, none fired)
    reason: str | None = None  # why a lasso is not confirmed
    #: the file's final_sha256 when the replayed last state's differs from it (else None)
    sha256_differs: str | None = None

    def replayed(self) -> Replayed:
        """The replayed run as JSON, for what translates it without replaying (zabmc.real)."""
        env, t = self.trace.env, self.trace
        return Replayed(tuple(env.state_json(s) for s in t.states),
                        tuple(e.to_json(env.model) for e in t.events),
                        tuple(e.describe(env.model) for e in t.events), t.final_sha256)


def replay(tf: TraceFile) -> ReplayResult:
    """Re-execute a read trace file through the kernel; events are matched by their JSON value."""
    env = env_of(tf.model, tf.config, tf.invariants)
    expected = tf.violation
    lasso = _with_message(tf.lasso)
    walk = _Walk(env, expected["property"] if expected else None)
    states = walk.states
    s = states[0]
    for k, want in enumerate(tf.events, start=1):
        if lasso is not None and k - 1 == lasso["faults_stop"]:
            s = states[-1] = suffix_start(s)
        if lasso is not None and k > lasso["faults_stop"]:
            E.check_json(want)
            item = next((x for x in suffix_successors(env, s) if x[0].to_json(env.model) == want),
                        None)
        else:
            item = E.from_json(env, s, want)
        if item is None:
            raise UsageError(f"trace does not apply: step {k} ({E.brief(want)}) is not enabled "
                             "in the replayed state")
        ev, s, v2 = item
        walk.add(ev, s, v2)
    if lasso is not None and lasso["faults_stop"] == len(tf.events):
        states[-1] = suffix_start(s)
    _check_states(env, walk, tf.states)
    if expected is not None and expected["property"] not in env.checker.names:
        raise UsageError(f"malformed trace file: the violation's property "
                         f"{expected['property']!r} is not one of the trace's 'invariants'")
    return _verdict(env, name_issues(walk.trace(lasso)), tf)


def name_issues(trace: Trace) -> Trace:
    """`trace` with its `known_issues` found (zabmc.core.model.known_issues): the run is walked
    again with every property of the model's own checked (its failures and windows, whatever the
    trace checked), and the model names the issues those violations mark. A model that follows
    no implementation is left as it is (None)."""
    model = trace.env.model
    if getattr(model, "known_issues", None) is None:
        return trace
    broken = _broken_along(trace, tuple(getattr(model, "properties", ())))
    trace.known_issues = model_known_issues(model, [s.nodes for s in trace.states], broken)
    return trace


def _broken_along(trace: Trace, names: tuple) -> tuple:
    """Every violation of the properties `names` along `trace`'s run: `(step, property, nodes,
    message)`, in step order (step 0: the start-up)."""
    if not names:
        return ()
    env = Env(trace.env.model, trace.env.config, Checker(names))
    s, v = env.initial()
    out = [(0, x.property, x.nodes, x.message) for x in (v.all() if v else ())]
    lasso = trace.lasso
    for k, ev in enumerate(trace.events, start=1):
        if lasso is not None and k - 1 == lasso["faults_stop"]:
            s = suffix_start(s)
        if lasso is not None and k > lasso["faults_stop"]:
            item = next((x for x in suffix_successors(env, s) if x[0] == ev), None)
        else:
            item = next((env.successor(s, x) for x in env.events(s) if x == ev), None)
        if item is None or item[1].nodes != trace.states[k].nodes:
            raise RuntimeError(f"step {k} of the trace does not apply again")  # a kernel bug
        _, s, v = item
        out.extend((k, x.property, x.nodes, x.message) for x in (v.all() if v else ()))
    return tuple(out)


def _check_states(env: Env, walk: _Walk, recorded: tuple | None) -> None:
    """The replayed states are the ones recorded in the file (when it records them)."""
    for k, (got, want) in enumerate(zip(walk.states, recorded or ())):
        if env.state_json(got) != want:
            # bad input, not an internal error: an edited file, or one another version of
            # the model wrote (the kernel's determinism is tested on its own)
            what = "the initial state" if k == 0 else (
                f"the state after step {k} ({walk.events[k - 1].describe(env.model)})")
            raise UsageError(f"trace does not match the model: {what} differs from the one "
                             "recorded in the file (edited by hand, or written by another "
                             "version of the model)")


def _verdict(env: Env, trace: Trace, tf: TraceFile) -> ReplayResult:
    """Whether the replayed `trace` is what the file says: its violation (or lasso) and its
    final state's digest."""
    differs = tf.final_sha256 if tf.final_sha256 not in (None, trace.final_sha256) else None
    if trace.lasso is not None:
        why = confirm_lasso(env, trace)
        return ReplayResult(trace, None, why is None, why, differs)
    expected = tf.violation
    if expected is None:
        confirmed = trace.violation is None
    else:
        confirmed = (trace.violation is not None
                     and trace.violation.property == expected["property"]
                     and trace.violation_step == expected["step"])
    return ReplayResult(trace, expected, confirmed, None, differs)


def _with_message(lasso: dict | None) -> dict | None:
    """A lasso's shape as read, with its message (derived from it, never read from the file)."""
    if lasso is None:
        return None
    from .liveness import lasso_message

    return dict(lasso, message=lasso_message(lasso["property"], lasso["kind"],
                                             lasso["loop_start"]))


def confirm_lasso(env: Env, trace: Trace) -> str | None:
    """None when `trace` is the liveness counterexample it says it is; otherwise why not. A cycle
    must return to the fingerprint of its loop start, no state of it may reach the goal, and it
    must be fair (every fairness class enabled in one of its states, a running timer included,
    is taken by one of its steps); a dead end must miss the goal with nothing enabled."""
    from .liveness import PROPERTIES, fairness_class, suffix_successors, timer_pressure

    lasso = trace.lasso
    goal = PROPERTIES[lasso["property"]].goal
    states = trace.states
    if lasso["kind"] == "dead-end":
        if goal(env, states[-1]):
            return "the last state reaches the goal"
        if suffix_successors(env, states[-1]):
            return "an event is enabled in the last state: not a dead end"
        return None
    j = lasso["loop_start"]
    if env.fingerprint(states[-1]) != env.fingerprint(states[j]):
        return f"the last state is not the state after step {j}"
    loop_states = states[j:-1]
    if any(goal(env, x) for x in loop_states):
        return "a state of the loop reaches the goal"
    taken = {fairness_class(env, ev) for ev in trace.events[j:]}
    for x in loop_states:
        enabled = {fairness_class(env, ev) for ev, _, _ in suffix_successors(env, x)}
        enabled |= set(timer_pressure(env, x))
        missing = enabled - taken - {None}
        if missing:
            return f"the loop is not fair: {sorted(missing)[0]} is enabled but never taken"
    return None


def _replay_events(env: Env, events: list, prop: str):
    """Apply events by value; return the step at which `prop` first fails, or None."""
    s, v = env.initial()
    if _pick(v, prop) is not None:
        return 0
    for k, want in enumerate(events, start=1):
        for ev, s2, v2 in env.successors(s):
            if ev == want:
                break
        else:
            return None
        s = s2
        if _pick(v2, prop) is not None:
            return k
    return None


def shorten(env: Env, path: tuple, prop: str) -> tuple:
    """Shorten a counterexample by replay (as DSLabs does): drop events one at a time, keeping a
    removal whenever the remaining events still apply and still violate `prop`; cut the tail after
    the violation. Returns event indices of the shorter path (BFS paths are already shortest)."""
    trace = rebuild(env, path, prop)
    events = list(trace.events[: trace.violation_step or len(trace.events)])
    changed = True
    while changed:
        changed = False
        k = len(events) - 1
        while k >= 0:
            cand = events[:k] + events[k + 1 :]
            step = _replay_events(env, cand, prop)
            if step is not None:
                events = cand[:step]
                changed = True
                k = min(k, len(events))
            k -= 1
    # back to indices
    s, _ = env.initial()
    out = []
    for want in events:
        for idx, (ev, s2, _) in enumerate(env.successors(s)):
            if ev == want:
                out.append(idx)
                s = s2
                break
    return tuple(out)


def to_trace(env: Env, lasso) -> Trace:
    """A `zabmc.explore.liveness.Lasso` as a `Trace` (format version 3), for saving, printing,
    drawing and replay."""
    return Trace(env, list(lasso.events), list(lasso.states), None, None,
                 {"property": lasso.property, "kind": lasso.kind,
                  "faults_stop": lasso.faults_stop, "loop_start": lasso.loop_start,
                  "message": lasso.message})
