"""Counterexample traces as partition scripts (`zabmc export`).

`export(path, budget)` reads a `zabmc-trace` file, searches simulator configurations and link-cut
schedules (`search`; for a trace with crashes, with the trace's crashes and restarts placed in
every run), and returns a script that has been verified to reproduce the trace's property
violation in the seeded simulator, or a `NotFound` saying what was tried. Nothing unverified is
ever returned as a script.
"""

from __future__ import annotations

import shlex

from zabmc.invariants import DEFAULT_PROPERTIES
from zabmc.sim.script import NODE_ACTIONS

from .facts import TraceFacts, read_trace
from .search import Budget, NotFound, Verified, search

__all__ = ["Budget", "NotFound", "TraceFacts", "Verified", "export", "read_trace",
           "simulate_command", "script_comments", "json_document"]


def export(path: str, budget: Budget, progress=None):
    facts = read_trace(path)
    return facts, search(facts, budget, progress)


def simulate_command(invariants: tuple, header: dict, script_path: str) -> str:
    """The `zabmc simulate` command line that reproduces the violation with the written script."""
    parts = ["zabmc", "simulate"]
    if header.get("model", "db19") != "db19":
        parts += ["--model", header["model"]]
    for key in ("seed", "nodes", "rounds", "proposals"):
        parts += [f"--{key}", str(header[key])]
    parts += ["--partition-script", script_path, "--check"]
    if tuple(invariants) != DEFAULT_PROPERTIES:
        for name in invariants:
            parts += ["--invariant", name]
    return " ".join(shlex.quote(p) for p in parts)


def _node_directives(script) -> list:
    return [d for d in script.directives if d.action in NODE_ACTIONS]


def _cut_summary(result: Verified) -> str:
    k = len(result.script.directives)
    m = len(_node_directives(result.script))
    if not m:
        return f"{k} directive{'s' if k != 1 else ''}"
    return (f"{k - m} cut directive{'s' if k - m != 1 else ''} and {m} crash/restart "
            f"directive{'s' if m != 1 else ''}")


def script_comments(facts: TraceFacts, result: Verified, command: str) -> list[str]:
    v = result.violation
    lines = [
        f"zabmc partition script, made by `zabmc export` from {facts.path}",
        f"trace: {facts.property} at step {facts.step} (model {facts.model.name}, "
        f"{facts.nodes} nodes, network {facts.network}): {facts.message}",
        f"verified: the simulator reproduces {v.property} at tick {result.tick} with this script:",
        f"  {command}",
        f"  violation: {v.property} at tick {result.tick}: {v.message}",
        f"search: run {result.run_index} (plan {result.plan}), {_cut_summary(result)} after "
        f"shrinking",
    ]
    also = [x.property for x in v.all()[1:]] if hasattr(v, "all") else []
    if also:
        lines.append(f"the same step also breaks: {', '.join(also)}")
    nodes = _node_directives(result.script)
    for d, ev in zip(nodes, facts.node_events):
        anchor = ("the start-up" if ev.anchor is None else
                  f"step {ev.anchor_step} ({facts.events[ev.anchor_step - 1].describe(facts.model)})")
        lines.append(f"{d.text()}: the trace's step {ev.step} ({ev.action} node {ev.node}), placed "
                     f"after the run's counterpart of {anchor}")
    if len(result.script.directives) == len(nodes):
        lines.append("no link cut is needed: the seed's own delays and timers produce the violation"
                     + (", with these crashes and restarts" if nodes else ""))
    return lines


def json_document(facts: TraceFacts, result: Verified, command: str) -> dict:
    v = result.violation
    return result.script.to_json({
        "invariants": list(result.invariants),
        "expected_violation": dict(v.to_json(), tick=result.tick,
                                   also=[x.property for x in v.all()[1:]]
                                   if hasattr(v, "all") else []),
        "verified": True,
        "source": {"trace": facts.path, "property": facts.property, "step": facts.step,
                   "nodes": facts.nodes, "network": facts.network},
        "search": {"plan": result.plan, "run": result.run_index,
                   "shrink_runs": result.shrink_runs},
        "command": command,
    })
