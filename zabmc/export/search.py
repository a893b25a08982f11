"""The exporter's search: simulator configurations x cut plans, in a fixed order, within a budget.

Order: seeds are the outer loop; for each seed every plan of `plans.plans_for` runs once, each with
a run length and proposal count that rotate with the seed (`candidates`). A run stops at its first
violating step. The first run whose first violating step breaks the trace's property wins. Its
recorded cuts become a static script, which is then run the way `zabmc simulate --check` runs it
(`verify`) and must report the trace's property. When that step broke another checked property
first, the script is verified (and the command line written) with the trace's property alone, so
that `zabmc simulate --check --invariant P` reports P. Finally it is shrunk: cut intervals are
removed one by one while the script still reproduces the property.
Everything depends only on the trace and the budget: the same inputs give the same script.

Traces with crashes: every run crashes and restarts the trace's nodes in the trace's order, placed
by the plan's `Life` (plans.py); a run counts only when all of them happened before its violation,
and the script carries them as `crash`/`restart` directives, which shrinking keeps. Placing them
takes one simulator pass more per crash or restart (`run_plan`); a search run is all of its passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from zabmc.invariants import Checker
from zabmc.sim.script import NODE_ACTIONS, Script, from_link_decisions
from zabmc.sim.simulator import SimConfig, Simulator

from .facts import TraceFacts
from .plans import Life, Place, Run, Stop, plans_for


@dataclass
class Budget:
    max_runs: int = 4000  # simulator runs in the search (verification and shrinking not counted)
    seeds: int = 1000  # seeds 0 .. seeds-1
    max_rounds: int = 1000  # the longest run tried
    shrink: bool = True


@dataclass
class Verified:
    script: Script
    tick: int
    violation: object  # zabmc.invariants.Violation: its `property` is the trace's
    plan: str
    run_index: int  # 1-based index of the winning search run
    runs: int  # search runs made
    shrink_runs: int
    invariants: tuple  # the properties `zabmc simulate --check` must check (the command's flags)


@dataclass
class NotFound:
    runs: int
    budget: Budget
    other: dict  # property -> count of runs that stopped at a different property first
    last_seed: int  # the highest seed tried (-1: none)


def rounds_grid(facts: TraceFacts, max_rounds: int) -> list[int]:
    """Run lengths to try: short ones first for traces without timeouts (no election timer fires
    before tick 150), long ones first when the trace needs election timers."""
    short = [12, 16, 20, 30, 45, 60, 90, 130, 200, 320, 500]
    if facts.timeouts:
        per = 200 + 300 * len(facts.timeouts)
        base = [per, per + 150, per * 2, per * 3] + short
    else:
        base = short
    out = []
    for r in base:
        if r <= max_rounds and r not in out:
            out.append(r)
    return out or [max_rounds]


def proposals_grid(facts: TraceFacts) -> list[int]:
    """Proposal counts: the trace's own first; more proposals spread over the run give more
    chances to land one in a short window."""
    k = facts.proposals_used
    out = [k, 2 * k + 1, 4 * k + 2] if k else [0, 1, 3]
    return out


def candidates(facts: TraceFacts, budget: Budget):
    """Yield (cfg, plan) in search order: for each seed, every plan once, plan i at seed s with
    run length rounds[(s + i) % R] and proposal count proposals[(s // R + i) % K], so that every
    (plan, length, count) combination recurs every R*K seeds."""
    plans = plans_for(facts, budget.max_rounds)
    rounds = rounds_grid(facts, budget.max_rounds)
    props = proposals_grid(facts)
    nr, nk = len(rounds), len(props)
    for seed in range(budget.seeds):
        for i, plan in enumerate(plans):
            r = rounds[(seed + i) % nr]
            if r < plan.rounds_floor:
                r = max(x for x in rounds)
                if r < plan.rounds_floor:
                    continue
            k = props[(seed // nr + i) % nk]
            yield SimConfig(seed, facts.nodes, r, k), plan


def simulate_once(facts: TraceFacts, cfg: SimConfig, run: Run, stop_early: bool = True,
                  node_events: dict | None = None):
    """One simulator run under `run`'s cuts (and the crashes and restarts `node_events`, tick ->
    `((action, node), ...)`); returns (tick, violation) of the first violation. A `Place` raised
    by the run's Life passes through."""
    run.stop_early = stop_early
    sim = Simulator(facts.model, cfg, observer=run, checker=Checker(facts.invariants),
                    link_cut=run.link_cut, node_events=node_events or None)
    try:
        result = sim.run()
    except Stop as s:
        return s.tick, s.violation
    return result.violation_tick, result.violation


def node_event_schedule(placed: list) -> dict:
    """`[(tick, action, node)]` in order as the simulator's `node_events`."""
    out: dict = {}
    for t, action, x in placed:
        out.setdefault(t, []).append((action, x))
    return {t: tuple(v) for t, v in out.items()}


def run_plan(facts: TraceFacts, cfg: SimConfig, plan, stop_early: bool = True):
    """One search run of `plan`: `(run, placed, tick, violation)`, `placed` being the crashes and
    restarts it made, `[(tick, action, node)]`. Without crashes in the trace this is one
    simulator pass, exactly `simulate_once`; with them, one more per node event placed."""
    placed: list = []
    perm = plan.perm or tuple(range(facts.nodes))
    while True:
        run = plan.run(cfg)
        if facts.node_events:
            run.life = Life(facts, perm, plan.gap, placed, cfg.rounds)
        try:
            tick, v = simulate_once(facts, cfg, run, stop_early, node_event_schedule(placed))
        except Place as p:
            placed.append((p.tick, p.action, p.node))
            continue
        return run, placed, tick, v


def properties_of(v) -> list:
    """Every property a violating step broke (the first one, then the others)."""
    if v is None:
        return []
    return [x.property for x in v.all()] if hasattr(v, "all") else [v.property]


def verify(facts: TraceFacts, script: Script, invariants: tuple | None = None):
    """Run `script` exactly as `zabmc simulate --partition-script FILE --check` does (full run, the
    script's own header, the given properties, by default the trace's); (tick, violation) or
    (None, None)."""
    cfg = script.config()
    tl = script.timeline(cfg.nodes)
    names = facts.invariants if invariants is None else invariants
    result = Simulator(facts.model, cfg, checker=Checker(names),
                       link_cut=tl.link_cut if tl.has_cuts else None,
                       node_events=tl.node_events).run()
    return result.violation_tick, result.violation


def _intervals(script: Script) -> list[tuple]:
    """The cut intervals of a cut/heal script: (link, cut directive index, heal index or None)."""
    open_: dict = {}
    out = []
    for k, d in enumerate(script.directives):
        if d.action == "cut":
            open_[d.args] = k
        elif d.action == "heal" and d.args in open_:
            out.append((d.args, open_.pop(d.args), k))
    out.extend((link, k, None) for link, k in open_.items())
    return sorted(out, key=lambda x: x[1])


def shrink(facts: TraceFacts, script: Script, invariants: tuple) -> tuple:
    """Remove cut intervals one at a time (earliest first) while the script still reproduces the
    property; returns (script, tick, violation, runs). Crashes and restarts stay, and a script
    with them must still show the property at or after the last of them."""
    runs = 0
    tick, v = verify(facts, script, invariants)
    last_node = max((d.tick for d in script.directives if d.action in NODE_ACTIONS), default=0)
    k = 0
    while True:
        ivs = _intervals(script)
        if k >= len(ivs):
            break
        _, a, b = ivs[k]
        drop = {a} if b is None else {a, b}
        cand = Script(script.header, [d for j, d in enumerate(script.directives) if j not in drop],
                      script.source)
        runs += 1
        t2, v2 = verify(facts, cand, invariants)
        if v2 is not None and v2.property == facts.property and t2 >= last_node:
            script, tick, v = cand, t2, v2
        else:
            k += 1
    return script, tick, v, runs


def header_for(facts: TraceFacts, cfg: SimConfig) -> dict:
    return {"model": facts.model.name, "seed": cfg.seed, "nodes": cfg.nodes, "rounds": cfg.rounds,
            "proposals": cfg.proposals}


def search(facts: TraceFacts, budget: Budget, progress: Callable | None = None):
    """Find a verified script for the trace's property, or report that none was found."""
    runs = 0
    other: dict = {}
    last_seed = -1
    for cfg, plan in candidates(facts, budget):
        if runs >= budget.max_runs:
            break
        runs += 1
        last_seed = cfg.seed
        if progress:
            progress(runs, cfg, plan)
        run, placed, tick, v = run_plan(facts, cfg, plan)
        if v is None:
            continue
        if facts.property not in properties_of(v):
            other[v.property] = other.get(v.property, 0) + 1
            continue
        if run.life is not None and not run.life.complete:
            continue  # the violation came before the run made every crash and restart the trace makes
        # the step broke the trace's property; when it broke another one first, the command line
        # checks the trace's property alone, so that `zabmc simulate --check` reports it
        names = facts.invariants if v.property == facts.property else (facts.property,)
        script = from_link_decisions(run.decisions, header_for(facts, cfg), placed)
        vt, vv = verify(facts, script, names)
        if vv is None or vv.property != facts.property:
            continue  # cannot happen for a deterministic simulator; never emit it unverified
        shrink_runs = 0
        if budget.shrink:
            script, vt, vv, shrink_runs = shrink(facts, script, names)
        return Verified(script, vt, vv, plan.name, runs, runs, shrink_runs, tuple(names))
    return NotFound(runs, budget, other, last_seed)
