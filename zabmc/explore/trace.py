"""Counterexample traces: rebuilt from event indices by replay, saved as versioned JSON, and
re-executed (`zabmc replay`) through the same kernel.

Trace file format `zabmc-trace` version 2 (a JSON object; version 1, from before crashes, still
loads):
- `format`: "zabmc-trace", `version`: 2, `model`: model name;
- `config`: the explorer bounds and semantics (`ExploreConfig` fields); `invariants`: property names;
- `events`: list of events, each `{"kind": ..., ...}` as `zabmc.core.events` writes them;
- `states`: the state after each step (`states[0]` is the initial state, so len = len(events) + 1);
  with a crash budget, each also lists the `down` nodes and the `crashes_left`;
- `violation`: `{"property", "message", "nodes", "txns", "step"}` or null;
- `final_sha256`: SHA-256 of the canonical `DSEZAB01` dump of the last state's nodes.
Replay matches each recorded event against the enabled events by value, so a trace does not depend
on successor order, only on the kernel.

Version 3 is version 2 plus, for a liveness counterexample (a lasso, `check --liveness`), the
object `liveness`: `{"property", "kind": "cycle"|"dead-end", "faults_stop", "loop_start",
"message"}`. The first `faults_stop` events are the faulty prefix; the others are replayed under
the fault-free suffix's rules (docs/liveness.md), from the state whose fault budgets are gone;
`loop_start` is the index into `states` that the last state returns to (null for a dead end).
`violation` is null. Safety traces are still written as version 2.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from zabmc.core.errors import UsageError, parse_json, read_text
from zabmc.invariants import Checker, Violation, resolve
from zabmc.core.model import get_model

from zabmc.core import events as E
from .env import Env, ExploreConfig, State
from .liveness import suffix_start, suffix_successors

TRACE_FORMAT = "zabmc-trace"
TRACE_VERSION = 2
LASSO_VERSION = 3
#: versions this zabmc reads: 1 (before crashes: no `max_crashes` in the config, no crash or
#: restart events) reads as version 2 with `max_crashes` 0; 3 adds lassos
READABLE_VERSIONS = (1, 2, 3)


@dataclass
class Trace:
    env: Env
    events: list  # event tuples
    states: list  # State, len(events) + 1
    violation: Violation | None
    violation_step: int | None  # index into events (1-based step number), 0 = initial state
    lasso: dict | None = None  # a liveness counterexample's shape (the `liveness` object)

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
            "model": env.model.name,
            "config": env.config.to_json(),
            "invariants": list(env.checker.names),
            "violation": v,
        }
        if self.lasso is not None:
            out["liveness"] = dict(self.lasso)
        out.update({
            "events": [e.to_json(env.model) for e in self.events],
            "states": [env.state_json(s) for s in self.states],
            "final_sha256": self.final_sha256,
        })
        return out

    def save(self, path: str) -> None:
        try:
            with open(path, "w") as f:
                json.dump(self.to_json(), f, indent=1)
                f.write("\n")
        except OSError as e:
            raise UsageError(f"cannot write trace file {path}: {e.strerror}") from None


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
        s, v = env.initial()
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
    """Replay event indices from the initial state; record states and the first violation (of
    property `prop`, when given)."""
    walk = _Walk(env, prop)
    s = walk.states[0]
    for idx in path:
        ev, s, v = env.step_index(s, idx)
        walk.add(ev, s, v)
    return walk.trace()


def _need(obj, key, kind, where="trace file"):
    if not isinstance(obj, dict) or key not in obj:
        raise UsageError(f"malformed {where}: missing {key!r}")
    val = obj[key]
    if not isinstance(val, kind) or (kind is int and isinstance(val, bool)):
        raise UsageError(f"malformed {where}: {key!r} must be {kind.__name__}")
    return val


def load(path: str) -> dict:
    try:
        data = parse_json(read_text(path, "trace file"), f"trace file {path}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"trace file {path} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != TRACE_FORMAT:
        raise UsageError(f"{path} is not a zabmc trace (no \"format\": \"{TRACE_FORMAT}\")")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise UsageError(f"{path}: unsupported trace version {version!r} (this zabmc reads "
                         f"versions {', '.join(map(str, READABLE_VERSIONS))})")
    return data


def env_from_json(data: dict) -> Env:
    model = get_model(_need(data, "model", str))
    cfg_json = _need(data, "config", dict)
    fields = ExploreConfig._fields
    unknown = set(cfg_json) - set(fields)
    if unknown:
        raise UsageError(f"malformed trace file: unknown config key {sorted(unknown)[0]!r}")
    for k in fields:
        if k in cfg_json and k != "network":
            _need(cfg_json, k, int, "trace config")
    try:
        cfg = ExploreConfig(**cfg_json).validate()
    except TypeError as e:
        raise UsageError(f"malformed trace config: {e}") from None
    names = _need(data, "invariants", list)
    if not all(isinstance(x, str) for x in names):
        raise UsageError("malformed trace file: 'invariants' must be a list of names")
    checker = Checker(resolve(names, no_invariants=not names))
    return Env(model, cfg, checker)


@dataclass
class ReplayResult:
    trace: Trace
    expected: dict | None  # the recorded violation
    confirmed: bool  # the same property fired at the same step (or none was recorded, none fired)
    reason: str | None = None  # why a lasso is not confirmed


def replay(data: dict) -> ReplayResult:
    """Re-execute a loaded trace through the kernel; events are matched by their JSON value."""
    env = env_from_json(data)
    events_json = _need(data, "events", list)
    expected = data.get("violation")
    if expected is not None and not isinstance(expected, dict):
        raise UsageError("malformed trace file: 'violation' must be an object or null")
    want_prop = expected.get("property") if expected else None
    lasso = _lasso_json(data, len(events_json))
    walk = _Walk(env, want_prop)
    states, events = walk.states, walk.events
    s = states[0]
    for k, want in enumerate(events_json, start=1):
        if not isinstance(want, dict) or "kind" not in want:
            raise UsageError(f"malformed trace file: event {k} is not an event object")
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
    if lasso is not None and lasso["faults_stop"] == len(events_json):
        states[-1] = suffix_start(s)
    recorded_states = data.get("states")
    if isinstance(recorded_states, list) and len(recorded_states) == len(states):
        for k, (got, want) in enumerate(zip(states, recorded_states)):
            if env.state_json(got) != want:
                # bad input, not an internal error: an edited file, or one another version of
                # the model wrote (the kernel's determinism is tested on its own)
                what = "the initial state" if k == 0 else (
                    f"the state after step {k} ({events[k - 1].describe(env.model)})")
                raise UsageError(f"trace does not match the model: {what} differs from the one "
                                 "recorded in the file (edited by hand, or written by another "
                                 "version of the model)")
    trace = walk.trace(lasso)
    first, first_step = walk.first, walk.first_step
    if lasso is not None:
        why = confirm_lasso(env, trace)
        return ReplayResult(trace, None, why is None, why)
    if expected is None:
        confirmed = first is None
    else:
        confirmed = (first is not None and first.property == expected.get("property")
                     and first_step == expected.get("step"))
    return ReplayResult(trace, expected, confirmed)


def _lasso_json(data: dict, n_events: int):
    """The `liveness` object of a lasso trace, checked, or None for a safety trace."""
    lasso = data.get("liveness")
    if lasso is None:
        return None
    from .liveness import PROPERTIES, lasso_message

    if not isinstance(lasso, dict):
        raise UsageError("malformed trace file: 'liveness' must be an object")
    if not isinstance(lasso.get("property"), str) or lasso["property"] not in PROPERTIES:
        raise UsageError(f"malformed trace file: unknown liveness property "
                         f"{lasso.get('property')!r}")
    if lasso.get("kind") not in ("cycle", "dead-end"):
        raise UsageError("malformed trace file: liveness 'kind' must be cycle or dead-end")
    stop = _need(lasso, "faults_stop", int, "liveness object")
    if not 0 <= stop <= n_events:
        raise UsageError(f"malformed trace file: faults_stop {stop} is outside the "
                         f"{n_events} events")
    loop = lasso.get("loop_start")
    if lasso["kind"] == "cycle":
        loop = _need(lasso, "loop_start", int, "liveness object")
        if not stop <= loop < n_events:
            raise UsageError(f"malformed trace file: loop_start {loop} must name a state of the "
                             "fault-free suffix before the last")
    elif loop is not None:
        raise UsageError("malformed trace file: a dead end has no loop_start")
    # the shape is what replay confirms; the message is derived from it, never read from the file
    return {"property": lasso["property"], "kind": lasso["kind"], "faults_stop": stop,
            "loop_start": loop, "message": lasso_message(lasso["property"], lasso["kind"], loop)}


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
