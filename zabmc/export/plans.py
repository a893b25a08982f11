"""Cut plans: the ways the exporter turns a trace into link cuts for one simulator run.

A plan is built once per trace and asked, for every candidate run, for a `Run` object: a
`SimObserver` (it may watch the run) with a `link_cut(t, src, dst)` method the simulator calls at
every send. Every answer is recorded per `(tick, src, dst)`, and the same answer is given to every
message of that link in that tick, so that the recorded answers, written as a static partition script
(`script.from_link_decisions`), make the simulator take exactly the same run again.

The levers (issue 4): cutting a link drops the messages sent over it, which removes or delays a
message class (a later copy may still pass); isolating a node long enough stops the messages that
reset its election timer, so its timer fires (150 to 300 ticks, C9).

Crashes and restarts (E7-E9, E11). When the trace crashes or restarts nodes, every plan's runs do
the same, in the trace's order, each placed by a `Life`: it watches the run for the simulator's
counterpart of the last event the trace took before the crash or restart (its *anchor*: the same
delivery, proposal, timeout, heartbeat, crash or restart, counted as often as in the trace) and asks
for the node event `gap` ticks after the tick where it saw it: 1 tick after an ordinary event (the
tick right after: what that step sent is still in flight, and a crash takes it, E7), `plan.gap`
ticks (0, 1 or 3) after a crash or restart. The simulator takes crashes and restarts from a static
schedule only, so the search runs the simulator again with every node event it has placed (`Place`
ends a pass); the runs are deterministic, so each pass repeats the one before up to the new event.
"""

from __future__ import annotations

import copy
from itertools import permutations

from zabmc.core.events import BY_NAME, Timeout
from zabmc.sim.simulator import SimObserver

from .facts import DELIVERED, LOST, TraceFacts

STARVE_TICKS = 300  # an election deadline is at most 299 ticks after its last reset (C9)


class Stop(Exception):
    """Raised from the observer to end a search run at its first violation."""

    def __init__(self, tick, violation):
        super().__init__(tick, violation)
        self.tick = tick
        self.violation = violation


class Place(Exception):
    """Raised from the observer when a run reaches the point of the trace's next crash or restart:
    the search runs the simulator again with that node event at `tick`."""

    def __init__(self, tick, action, node):
        super().__init__(tick, action, node)
        self.tick = tick
        self.action = action
        self.node = node


GAPS = (0, 1, 3)  # ticks between a crash or restart and a node event the trace takes right after


class Life:
    """Places the trace's crashes and restarts in one simulator pass (see the module docstring).

    `placed` holds the node events earlier passes placed, `(tick, action, simulator node)` in trace
    order; this pass runs with them and raises `Place` for the next one when its anchor shows."""

    def __init__(self, facts: TraceFacts, perm: tuple, gap: int, placed: list, rounds: int):
        self.events = facts.node_events
        self.perm = perm
        self.inv = {sim: tr for tr, sim in enumerate(perm)}  # sim node -> trace node
        self.gap = gap
        self.placed = placed
        self.rounds = rounds
        self.applied = 0  # node events applied so far in this pass
        self.seen: dict = {}  # signature (trace ids) -> occurrences so far

    @property
    def complete(self) -> bool:
        """Every crash and restart of the trace has happened in this pass."""
        return self.applied == len(self.events)

    def observe(self, t, ev) -> None:
        """The simulator took event `ev` (simulator node ids) at tick `t`."""
        if ev.lifecycle:
            self.applied += 1
        if ev.observable:  # not the start-up, nor a drop at send time
            sig = ev.renamed(self.inv).signature()
            self.seen[sig] = self.seen.get(sig, 0) + 1
        j = self.applied
        if j != len(self.placed) or j >= len(self.events):
            return  # the next one is placed already (not yet reached), or none is left
        ev = self.events[j]
        if ev.anchor is not None and self.seen.get(ev.anchor, 0) < ev.count:
            return
        after_node_event = _follows_node_event(ev)
        tick = t + (self.gap if after_node_event else 1)
        if tick < self.rounds:
            raise Place(tick, ev.action, self.perm[ev.node])


def _follows_node_event(ev) -> bool:
    """Whether the trace's crash or restart `ev` comes right after another one: its anchor (a
    signature, whose first element names its kind) is a crash or a restart."""
    return ev.anchor is not None and bool(BY_NAME[ev.anchor[0]].lifecycle)


class Run(SimObserver):
    """One run's cut policy and its record of answers. Subclasses decide `want(t, src, dst, msg)`.

    With a `life` (traces with crashes) it also places the trace's crashes and restarts, and asks
    nothing about messages to a node that is down: the simulator drops those at send (E8)."""

    stop_early = True
    life: Life | None = None

    def __init__(self):
        self.decisions: dict = {}  # (tick, src, dst) -> cut?
        self.down: set = set()  # simulator nodes that are down

    def want(self, t, src, dst, msg) -> bool:
        """True to cut the link for this message (subclasses)."""
        return False

    def on_event(self, t, ev, before, step, lost=()):
        if self.life is not None:
            if ev.lifecycle == "down":
                self.down.add(ev.node)
            elif ev.lifecycle == "up":
                self.down.discard(ev.node)
            self.life.observe(t, ev)
        if step is None or not step.outs:  # a drop at send time, or a step that sends nothing
            return
        node = ev.actor
        # one answer per destination and tick: a link stays open if any of this step's messages
        # over it should pass, and a (tick, link) answered before keeps its answer
        down = self.down
        wants: dict = {}
        for dst, msg in step.outs:
            if down and dst in down:
                continue  # lost at send: the link is not asked
            w = self.want(t, node, dst, msg)
            wants[dst] = wants.get(dst, True) and w
        decisions = self.decisions
        for dst, w in wants.items():
            decisions.setdefault((t, node, dst), w)

    def link_cut(self, t, src, dst) -> bool:
        """The simulator's hook: every send follows the on_event that decided its link."""
        return self.decisions.setdefault((t, src, dst), False)

    def on_violation(self, t, violation):
        if self.stop_early:
            raise Stop(t, violation)


class Plan:
    """A named family of runs; `run(cfg)` makes the Run for one simulator configuration.

    `perm` maps trace node ids onto simulator ids (None: the identity) and `gap` is the Life's gap
    after a crash or restart; both matter only for traces with crashes."""

    name = "none"
    rounds_floor = 0  # runs shorter than this cannot show the plan's effect
    perm: tuple | None = None
    gap = 1

    def run(self, cfg) -> Run:
        return Run()

    def __repr__(self):
        return self.name


class SteerRun(Run):
    """Fate steering: each message the simulator sends is matched (by sender, receiver and value,
    in send order, under the node mapping `perm`: trace node i is simulator node perm[i]; message
    contents are compared as they are) to the next unmatched copy the trace sends. It passes if the
    trace delivers that copy, or loses it with a crash (the run's crash takes it: the Life places
    the crash right after), and is cut if the trace drops it or leaves it in flight.

    Messages the trace never sends pass, unless `extra_cut` (then they are cut until every copy the
    trace delivers has been matched) or `timers` and they go to a node whose election timeouts in the
    trace have not all happened in the simulator yet (then they are cut, so its timer runs out)."""

    def __init__(self, facts: TraceFacts, perm: tuple, extra_cut: bool, timers: bool):
        super().__init__()
        self.queues = facts.fate_queues()
        self.inv = {sim: tr for tr, sim in enumerate(perm)}  # sim node -> trace node
        self.extra_cut = extra_cut
        self.to_match = sum(1 for v in facts.fates.values() for f, _ in v if f == DELIVERED)
        # sim node -> election timeouts the trace still expects of it
        self.starve = {}
        if timers:
            for _, i in facts.timeouts:
                self.starve[perm[i]] = self.starve.get(perm[i], 0) + 1

    def on_event(self, t, ev, before, step, lost=()):
        if isinstance(ev, Timeout) and self.starve.get(ev.node):
            self.starve[ev.node] -= 1
        super().on_event(t, ev, before, step, lost)

    def want(self, t, src, dst, msg):
        q = self.queues.get((self.inv[src], self.inv[dst], msg))
        if q:
            fate, _ = q.popleft()
            if fate == DELIVERED:
                self.to_match -= 1
                return False
            return fate != LOST
        if self.starve.get(dst):
            return True  # keep the node's election timer running out, as in the trace
        return self.extra_cut and self.to_match > 0


class Steer(Plan):
    def __init__(self, facts: TraceFacts, perm: tuple, extra_cut: bool = False,
                 timers: bool = False):
        self.facts = facts
        self.perm = perm
        self.extra_cut = extra_cut
        self.timers = timers
        tag = "steer-strict" if extra_cut else "steer-timers" if timers else "steer"
        ident = perm == tuple(range(len(perm)))
        self.name = tag if ident else f"{tag}[{','.join(map(str, perm))}]"

    def run(self, cfg):
        return SteerRun(self.facts, self.perm, self.extra_cut, self.timers)


class WindowRun(Run):
    def __init__(self, links: frozenset, start: int, end: int):
        super().__init__()
        self.links = links
        self.start = start
        self.end = end

    def want(self, t, src, dst, msg):
        return self.start <= t < self.end and (src, dst) in self.links


class CutLink(Plan):
    """Cut one directed link over [start, start+length): drops a whole message class (and starves
    the receiver's election timer when the sender is its leader)."""

    def __init__(self, link: tuple, start: int, length: int):
        self.links = frozenset({link})
        self.start = start
        self.length = length
        self.rounds_floor = start + 1
        self.name = f"cut({link[0]}->{link[1]}@{start}+{length})"

    def run(self, cfg):
        return WindowRun(self.links, self.start, self.start + self.length)


class Isolate(Plan):
    """Isolate one node (both directions) over [start, start+length): a late joiner when `start`
    is 0, a node whose election timer must fire otherwise."""

    def __init__(self, n: int, node: int, start: int, length: int, inbound_only: bool = False):
        self.node = node
        self.start = start
        self.length = length
        links = {(y, node) for y in range(n) if y != node}
        if not inbound_only:
            links |= {(node, y) for y in range(n) if y != node}
        self.links = frozenset(links)
        self.rounds_floor = start + 1
        what = "starve" if inbound_only else "isolate"
        self.name = f"{what}({node}@{start}+{length})"

    def run(self, cfg):
        return WindowRun(self.links, self.start, self.start + self.length)


def node_perms(n: int) -> list[tuple]:
    """Identity first, then the other mappings of trace ids onto simulator ids (small n only)."""
    ident = tuple(range(n))
    if n > 3:
        return [ident]
    return [ident] + [p for p in permutations(range(n)) if p != ident]


def plans_for(facts: TraceFacts, max_rounds: int) -> list[Plan]:
    """The plans derived from a trace, most trace-like first (deterministic). For a trace with a
    crash or restart right after another one, each plan comes once per gap of `GAPS`."""
    out = _cut_plans(facts, max_rounds)
    if not any(_follows_node_event(ev) for ev in facts.node_events):
        return out
    with_gaps = []
    for plan in out:
        for gap in GAPS:
            p = copy.copy(plan)
            p.gap = gap
            p.name = f"{plan.name}/gap{gap}"
            with_gaps.append(p)
    return with_gaps


def _cut_plans(facts: TraceFacts, max_rounds: int) -> list[Plan]:
    n = facts.nodes
    out: list[Plan] = []
    perms = node_perms(n)
    for perm in perms:
        out.append(Steer(facts, perm))
    out.append(Plan())
    out.append(Steer(facts, perms[0], extra_cut=True))
    if facts.timeouts:
        for perm in perms:
            out.append(Steer(facts, perm, timers=True))
    # message classes the trace never delivers: cut their link from tick 1 (after start-up) on
    undelivered: dict = {}
    for (src, dst, _), fates in facts.fates.items():
        lost = sum(1 for f, _ in fates if f not in (DELIVERED, LOST))  # a crash takes the LOST
        if lost:
            undelivered[(src, dst)] = undelivered.get((src, dst), 0) + lost
    length = STARVE_TICKS + 100
    for link in sorted(undelivered, key=lambda lk: (-undelivered[lk], lk)):
        out.append(CutLink(link, 1, length))
    # late joiners: nodes whose first delivered message comes late in the trace
    late = sorted((k, i) for i, k in facts.first_contact.items() if k is not None and k > 1)
    for _, i in late:
        for length in (2, 4, 8):
            out.append(Isolate(n, i, 0, length))
    # election timers: every node that times out in the trace, starved from early on or later
    seen = []
    for _, i in facts.timeouts:
        if i not in seen:
            seen.append(i)
    for i in seen:
        for start in (1, 20, 60):
            if start + STARVE_TICKS <= max_rounds:
                out.append(Isolate(n, i, start, STARVE_TICKS, inbound_only=True))
                out.append(Isolate(n, i, start, STARVE_TICKS))
    return out
