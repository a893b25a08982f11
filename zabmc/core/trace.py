"""The counterexample trace file (`zabmc-trace`), read and checked once: `read(path)` gives a
`TraceFile`, a frozen value every command that takes a trace works from (`zabmc replay`, `show`,
`export`, `real`). docs/traces.md describes the format.

Reading checks every field's JSON type (an integer is never a boolean, a version never a float)
and every index against the events, so that what follows never meets a wrong type: a bad file is
one line and exit 2 (`UsageError`). What only the explorer knows is checked where it is used: the
config's fields and values (`zabmc.explore.env.ExploreConfig`), the invariants' names, each
event's fields (`zabmc.core.events`), and whether the events apply and the states recorded are
the ones replay reaches (`zabmc.explore.trace.replay`).

`Replayed` is what replay confirmed, as JSON: the states, events and their texts that the parts
of zabmc which must not import the explorer (`zabmc.real`) are handed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .errors import UsageError
from .files import parse_json, read_text
from .model import KnownIssue, get_model
from .properties import ALWAYS, EVENTUALLY, of_kind

FORMAT = "zabmc-trace"
#: the version a safety trace is written as; a liveness lasso is LASSO_VERSION
VERSION = 2
LASSO_VERSION = 3
#: versions this zabmc reads: 1 (before crashes: no `max_crashes` in the config, no crash or
#: restart events) reads as version 2 with `max_crashes` 0; 3 adds lassos
READABLE_VERSIONS = (1, 2, 3)
LASSO_KINDS = ("cycle", "dead-end")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class TraceFile:
    """A trace file as read: every field of the right JSON type, every index in range."""

    version: int
    model: str  # a registered model's name (or alias)
    config: dict  # the explorer's bounds and semantics, as in the file
    invariants: tuple  # property names
    events: tuple  # each a JSON object with a "kind"
    #: len(events) + 1 JSON values: the state before the first event, then after each (replay
    #: compares them with its own); None when the file records none
    states: tuple | None
    #: {"property", "step", ...}: a known safety property, at a step in 0..len(events)
    violation: dict | None
    lasso: dict | None  # {"property", "kind", "faults_stop", "loop_start"} of a liveness lasso
    final_sha256: str | None  # 64 lowercase hex digits, or None when the file has none
    path: str
    #: the known issues the file names (`KnownIssue`s, in the order their windows open), or None
    #: when it names none (written by an older zabmc, or of a model that follows no
    #: implementation). Replay names them afresh from the run (`zabmc.explore.trace.name_issues`):
    #: what the file says is read and checked, not trusted.
    known_issues: tuple | None = None


@dataclass(frozen=True)
class Replayed:
    """A run that replay confirmed, as JSON: what zabmc.real translates (it does not replay)."""

    states: tuple  # JSON objects, len(events) + 1
    events: tuple  # JSON objects
    texts: tuple  # each event described for people
    final_sha256: str


def read(path: str) -> TraceFile:
    """The trace file at `path`, read once and checked, or a one-line `UsageError`."""
    return parse(read_document(path), path)


def read_document(path: str):
    """The JSON document in the trace file at `path` (not yet checked), or a `UsageError`."""
    try:
        return parse_json(read_text(path, "trace file"), f"trace file {path}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"trace file {path} is not valid JSON: {e}") from None


def is_trace(data) -> bool:
    """Whether a JSON document says it is a zabmc trace."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def parse(data, path: str) -> TraceFile:
    """The `TraceFile` of a JSON document read from `path`, or a one-line `UsageError`."""
    version = check_header(data, path)
    model = need(data, "model", str)
    get_model(model)  # a registered model (its own properties registered with it)
    config = need(data, "config", dict)
    names = need(data, "invariants", list)
    if not all(isinstance(x, str) for x in names):
        raise UsageError("malformed trace file: 'invariants' must be a list of names")
    events = need(data, "events", list)
    violation = data.get("violation")
    if violation is not None and not isinstance(violation, dict):
        raise UsageError("malformed trace file: 'violation' must be an object or null")
    lasso = _lasso(data.get("liveness"), len(events))
    for k, ev in enumerate(events, start=1):
        if not isinstance(ev, dict) or "kind" not in ev:
            raise UsageError(f"malformed trace file: event {k} is not an event object")
    if violation is not None:
        violation = _violation(violation, len(events), lasso)
    return TraceFile(version, model, dict(config), tuple(names), tuple(events),
                     _states(data, len(events)), violation, lasso, _sha256(data), path,
                     _known_issues(data.get("known_issues"), len(events)))


def check_header(data, path: str) -> int:
    """That a JSON document read from `path` is a zabmc trace of a version this zabmc reads
    (which it returns), before the rest is read."""
    if not is_trace(data):
        raise UsageError(f"{path} is not a zabmc trace (no \"format\": \"{FORMAT}\")")
    version = data.get("version")
    if not _is_int(version) or version not in READABLE_VERSIONS:
        raise UsageError(f"{path}: unsupported trace version {version!r} (this zabmc reads "
                         f"versions {', '.join(map(str, READABLE_VERSIONS))})")
    return version


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def need(obj, key: str, kind: type, where: str = "trace file"):
    """`obj[key]`, which must be of JSON type `kind` (an int is never a bool)."""
    if not isinstance(obj, dict) or key not in obj:
        raise UsageError(f"malformed {where}: missing {key!r}")
    val = obj[key]
    if not isinstance(val, kind) or (kind is int and isinstance(val, bool)):
        raise UsageError(f"malformed {where}: {key!r} must be {kind.__name__}")
    return val


def _violation(v: dict, n_events: int, lasso) -> dict:
    """The recorded violation, checked: a known safety property, at a step of the events
    (whether the trace checks that property, replay says once it has resolved the trace's
    invariants)."""
    if lasso is not None:
        raise UsageError("malformed trace file: a liveness lasso records no 'violation' (null)")
    prop = v.get("property")
    if not isinstance(prop, str) or prop not in of_kind(ALWAYS):
        raise UsageError(f"malformed trace file: the violation's property {prop!r} is not a "
                         "known safety property")
    step = need(v, "step", int, "violation")
    if not 0 <= step <= n_events:
        raise UsageError(f"malformed trace file: the violation's step {step} is outside the "
                         f"{n_events} events")
    if not isinstance(v.get("message", ""), str):
        raise UsageError("malformed violation: 'message' must be str")
    nodes = v.get("nodes", [])
    if not isinstance(nodes, list) or not all(_is_int(i) and i >= 0 for i in nodes):
        raise UsageError("malformed violation: 'nodes' must be a list of node ids")
    if not isinstance(v.get("txns", []), list):
        raise UsageError("malformed violation: 'txns' must be list")
    return dict(v)


def _lasso(lasso, n_events: int) -> dict | None:
    """The `liveness` object of a lasso trace, checked, or None for a safety trace."""
    if lasso is None:
        return None
    if not isinstance(lasso, dict):
        raise UsageError("malformed trace file: 'liveness' must be an object")
    if not isinstance(lasso.get("property"), str) or lasso["property"] not in of_kind(EVENTUALLY):
        raise UsageError(f"malformed trace file: unknown liveness property "
                         f"{lasso.get('property')!r}")
    if lasso.get("kind") not in LASSO_KINDS:
        raise UsageError("malformed trace file: liveness 'kind' must be cycle or dead-end")
    stop = need(lasso, "faults_stop", int, "liveness object")
    if not 0 <= stop <= n_events:
        raise UsageError(f"malformed trace file: faults_stop {stop} is outside the "
                         f"{n_events} events")
    loop = lasso.get("loop_start")
    if lasso["kind"] == "cycle":
        loop = need(lasso, "loop_start", int, "liveness object")
        if not stop <= loop < n_events:
            raise UsageError(f"malformed trace file: loop_start {loop} must name a state of the "
                             "fault-free suffix before the last")
    elif loop is not None:
        raise UsageError("malformed trace file: a dead end has no loop_start")
    # the shape is what replay confirms; its message is derived from it, never read from the file
    return {"property": lasso["property"], "kind": lasso["kind"], "faults_stop": stop,
            "loop_start": loop}


def _states(data: dict, n_events: int) -> tuple | None:
    """The recorded states, or None when the file has none (replay then has nothing to compare
    its states with)."""
    states = data.get("states")
    if states is None:
        return None
    if not isinstance(states, list):
        raise UsageError("malformed trace file: 'states' must be list")
    if len(states) != n_events + 1:
        raise UsageError(f"malformed trace file: {len(states)} 'states' for {n_events} events "
                         f"(one before the first event and one after each: {n_events + 1})")
    # each is compared with the state replay reaches (which says which one differs)
    return tuple(states)


def _known_issues(known, n_events: int) -> tuple | None:
    """The file's `known_issues` (optional: zabmc writes it for a model that names the issues of
    the implementation it follows), checked: a list of {"issue", "step", "why"}, each step one of
    the run's states."""
    if known is None:
        return None
    if not isinstance(known, list):
        raise UsageError("malformed trace file: 'known_issues' must be a list")
    out = []
    for x in known:
        issue, step, why = (need(x, "issue", str, "known issue"), need(x, "step", int, "known issue"),
                            need(x, "why", str, "known issue"))
        if not 0 <= step <= n_events:
            raise UsageError(f"malformed trace file: known issue {issue}'s step {step} is outside "
                             f"the {n_events} events")
        out.append(KnownIssue(issue, step, why))
    return tuple(out)


def _sha256(data: dict) -> str | None:
    sha = data.get("final_sha256")
    if sha is not None and not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        raise UsageError("malformed trace file: 'final_sha256' must be 64 lowercase hex digits")
    return sha
