"""Liveness: the cluster elects a leader and delivers its proposals once faults stop
(docs/liveness.md says what is checked, why the timers behave as they do, and the proof sketch).

The search explores a product graph of two phases:
- phase 0, the faulty prefix: every event the explorer enables (`Env.successors`), within the
  configured budgets of drops, timeouts, heartbeats, crashes and proposals;
- phase 1, the fault-free suffix: from every phase-0 state a silent switch leads to its phase-1
  copy, where no drop or crash happens any more, every in-flight message is eventually delivered,
  every down node eventually restarts, and timers fire only when nothing is in flight and no node
  is down ("quiescence"), without a budget: `suffix_successors`.

A property is a goal (a predicate on states). It fails when some reachable phase-1 state starts a
fair run that never reaches the goal: a fair cycle of non-goal states (a lasso), or a non-goal
state where nothing can happen (a dead end). Fairness is strong, per class of event: a class
enabled infinitely often is taken infinitely often (messages per link or per message, restarts
per node, timers per node); for deliveries and restarts this is the same as weak fairness, since
nothing disables them but themselves. The fair cycles are found with networkx's strongly
connected components, pruned as Emerson and Lei do for strong fairness.

Every step goes through the kernel: phase 1 uses the same event expanders and `Env._apply`; only
which events are enabled, and that timers spend no budget, differ.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from zabmc.core.errors import UsageError
from zabmc.core.goals import leader
from zabmc.core.properties import EVENTUALLY, load_all, of_kind

from zabmc.core import events as E
from .env import Env, State
from .outcome import (DEPTH_BOUND, EXHAUSTED, NULL_OBSERVER, STATE_CAP, TIME_LIMIT, Outcome,
                      StopReason)
from .search import Search

SWITCH = -1  # the parent "event" of a phase-1 copy: faults stop here
DEFAULT_MAX_STATES = 1_000_000


#: the liveness properties: the `eventually` ones of the one registry (`zabmc.core.properties`)
PROPERTIES = of_kind(EVENTUALLY)


def resolve(names) -> tuple:
    load_all()
    names = tuple(names) or tuple(PROPERTIES)
    for x in names:
        if x not in PROPERTIES:
            raise UsageError(f"unknown liveness property {x!r}; choose from "
                             f"{', '.join(PROPERTIES)}")
    return names


def supports(model) -> bool:
    return hasattr(model, "leader_of") and hasattr(model, "established")


# --- the fault-free suffix -------------------------------------------------------------------------
def suffix_start(s: State) -> State:
    """A state's phase-1 copy: the fault budgets are gone (no more drops, crashes, budgeted timers);
    the proposals made and the down nodes stay."""
    b = s.budgets  # a plain tuple in Budgets' order (built once per state: kept cheap)
    return State(s.nodes, s.net, (0, 0, 0, b[E.MADE], 0, b[E.DOWN]), s.ghost)


def kept_alive(env: Env, s: State, i: int) -> bool:
    """Node i hears an established leader's heartbeats, which reset its election timer (C9): the
    leader it follows is up, established and sends its heartbeats to i (the kernel's own
    heartbeat step says to whom), or i is such a leader followed by a quorum."""
    model, n, nodes, down = env.model, env.n, s.nodes, s.budgets[E.DOWN]
    L = model.leader_of(nodes[i])
    if L is None or down >> L & 1 or not model.established(nodes[L]):
        return False
    if L == i:
        return leader(env, s) == i
    step = model.heartbeat(nodes[L], n)
    return step is not None and any(dst == i for dst, _ in step.outs)


def suffix_successors(env: Env, s: State, timers: bool = True) -> list:
    """`(event, next_state, None)` for every event of the fault-free suffix enabled in phase-1
    state `s`, in a fixed order: deliveries, restarts, the proposal, the model's actions, then,
    only at quiescence (nothing in flight, nobody down), election timeouts of the nodes no
    heartbeat keeps alive and heartbeats, neither spending a budget."""
    out: list = []
    heads = env._heads(s.net)
    E.Deliver.expand(env, s, heads, out)
    E.Restart.expand(env, s, heads, out)
    E.Propose.expand(env, s, heads, out)
    E.Action.expand(env, s, heads, out)
    if timers and not heads and not s.budgets[E.DOWN] and not busy(env, s):
        model, n, nodes = env.model, env.n, s.nodes
        for i in range(n):
            step = model.timeout(nodes[i], n)
            if step is not None and not kept_alive(env, s, i):
                out.append(env._apply(E.Timeout(i), s, i, step, s.net, s.budgets))
        for i in range(n):
            step = model.heartbeat(nodes[i], n)
            if step is not None:
                out.append(env._apply(E.Heartbeat(i), s, i, step, s.net, s.budgets))
    return out


def busy(env: Env, s: State) -> bool:
    """Some node has a step of its own that a real thread takes at once, waiting for nothing (a
    model's `busy(node)`, e.g. zk-3.7.0-threads's QuorumPeer thread writing the ACK of NEWLEADER it
    owes): the cluster is not quiescent, so no timer fires yet (docs/liveness.md)."""
    check = getattr(env.model, "busy", None)
    return check is not None and any(check(x) for x in s.nodes)


def timer_pressure(env: Env, s: State) -> tuple:
    """The timers that run in phase-1 state `s` whether or not anything is in flight: the election
    timeout of every up node no heartbeat keeps alive, and the heartbeat of every leader that sends
    them. Time passes during endless message traffic too, so a cycle of such states in which one
    of these never fires is not a run of the real system; they count as enabled for fairness."""
    model, n, nodes, down = env.model, env.n, s.nodes, s.budgets[E.DOWN]
    out = []
    for i in range(n):
        if down >> i & 1:
            continue
        if model.timeout(nodes[i], n) is not None and not kept_alive(env, s, i):
            out.append(("timeout", i))
        if model.heartbeat(nodes[i], n) is not None:
            out.append(("heartbeat", i))
    return tuple(out)


def fairness_class(env: Env, ev):
    """The class of event `ev` under fairness (None: no fairness, a client proposal)."""
    return ev.fairness(env.fifo)


# --- the search -------------------------------------------------------------------------------------
@dataclass
class Lasso:
    """A liveness counterexample: `events` from the initial state; the first `faults_stop` are the
    faulty prefix, the rest the fault-free suffix; `loop_start` is the index into the states
    (0 = initial) that the last state returns to, or None for a dead end."""

    property: str
    kind: str  # "cycle" or "dead-end"
    events: list
    states: list
    faults_stop: int
    loop_start: int | None

    @property
    def message(self) -> str:
        return lasso_message(self.property, self.kind, self.loop_start)


def lasso_message(prop: str, kind: str, loop_start: int | None) -> str:
    """What a lasso of this shape says, derived from the shape alone (a lasso file's own
    `message` is not believed: `zabmc.explore.trace` rebuilds it with this)."""
    if kind == "dead-end":
        what = "nothing can happen any more and the goal is not reached"
    else:
        what = (f"the fault-free run loops forever from step {loop_start} without "
                "reaching the goal, every message delivered and every timer fair")
    return f"{PROPERTIES[prop].name} fails: {what}"


@dataclass
class LivenessOutcome(Outcome):
    """A liveness search's `Outcome`: its findings (`violations`) are `Lasso`es; `generated`
    counts the transitions taken, `distinct` the states of both phases."""

    prefix_states: int = 0  # phase 0: faults possible
    suffix_states: int = 0  # phase 1: fault-free
    suffix_edges: int = 0
    unexpanded: int = 0  # states at the depth bound or the cap, not expanded
    fair_components: dict = field(default_factory=dict)  # property -> number found
    max_states: int = DEFAULT_MAX_STATES

    @property
    def lassos(self) -> list:
        return self.violations

    @property
    def properties(self) -> tuple:
        return self.invariants

    @property
    def transitions(self) -> int:
        return self.generated

    @property
    def signal(self) -> str | None:
        return self.extra.get("signal")

    @property
    def verdict(self) -> str:
        if self.violations:
            return "violation"
        return "ok" if self.complete else "ok-within-bounds"


class _Graph:
    """The explored product graph, by integer id: fingerprint keys, BFS parents (id and the index
    of the event among the phase's successors, SWITCH for a phase-1 copy), depths, the phase-1
    goal bits and the phase-1 edges with their fairness classes."""

    def __init__(self):
        self.ids: dict = {}
        self.keys: list = []
        self.parent: list = []
        self.pindex: list = []
        self.depth: list = []
        self.phase: bytearray = bytearray()
        self.goals: dict = {}  # phase-1 id -> bit set of the properties whose goal holds
        self.pressure: dict = {}  # phase-1 id -> class ids of its running timers
        self._pressure_sets: dict = {}
        self.expanded: set = set()  # phase-1 ids whose successors are known
        self.edges: list = []  # (u, v, class id) among phase-1 states
        self.classes: dict = {}  # class -> id
        self.class_list: list = []

    def add(self, key: bytes, parent: int, index: int, depth: int, phase: int) -> tuple[int, bool]:
        i = self.ids.get(key)
        if i is not None:
            return i, False
        i = len(self.keys)
        self.ids[key] = i
        self.keys.append(key)
        self.parent.append(parent)
        self.pindex.append(index)
        self.depth.append(depth)
        self.phase.append(phase)
        return i, True

    def class_id(self, c) -> int:
        k = self.classes.get(c)
        if k is None:
            k = self.classes[c] = len(self.class_list)
            self.class_list.append(c)
        return k


class Liveness(Search):
    """Explore the two-phase graph breadth-first to `env.config.depth` events (the switch is not
    an event) or exhaustion, then look for fair non-goal cycles and dead ends of each property.
    The frame (`Search`) owns the time limit, interruption and the outcome; the analysis runs
    however the exploration ended (`finish`), on the graph explored so far.

    `timers` and `pressure` exist to show what the timer rules are for (tests/test_liveness.py):
    without suffix timers a lost message leaves a dead end that a real election timeout would
    resolve; without timer pressure an endless exchange of votes counts as a livelock although
    real time would fire a timer during it. Neither is a user option."""

    name = "liveness"

    def __init__(self, env: Env, names=(), *, max_states: int = DEFAULT_MAX_STATES,
                 observer=NULL_OBSERVER, time_limit: float | None = None,
                 timers: bool = True, pressure: bool = True):
        if not supports(env.model):
            raise UsageError(f"model {env.model.name} does not say who leads whom (leader_of, "
                             "established), which --liveness needs")
        if env.checker.active:
            raise UsageError("--liveness checks liveness only: run the safety properties "
                             "without it")
        super().__init__(env, stop_at_first=False, observer=observer, time_limit=time_limit)
        self.props = resolve(names)
        self.out = LivenessOutcome(strategy=self.name, engine=self.engine, model=env.model.name,
                                   config=env.config, invariants=self.props,
                                   max_states=max_states)
        self.goals = [PROPERTIES[p].goal for p in self.props]
        self.max_states = max_states
        self.timers, self.pressure = timers, pressure
        self.g = _Graph()
        self.level: list = []
        self.nxt: list = []
        self.stop: StopReason | None = None

    def _add_suffix(self, s1: State, parent: int, index: int, depth: int, nxt: list) -> int:
        """Add a phase-1 state (with its goal bits and timer pressure) if it is new; its id."""
        env, g = self.env, self.g
        i, new = g.add(env.fingerprint(s1) + b"\x01", parent, index, depth, 1)
        if new:
            bits = 0
            for k, goal in enumerate(self.goals):
                if goal(env, s1):
                    bits |= 1 << k
            g.goals[i] = bits
            p = (tuple(g.class_id(c) for c in timer_pressure(env, s1)) if self.pressure
                 else ())
            if p:
                g.pressure[i] = g._pressure_sets.setdefault(p, p)
            nxt.append((i, s1))
        return i

    def search(self) -> None:
        env, g, out = self.env, self.g, self.out
        s0, _ = env.initial()
        i0, _ = g.add(env.fingerprint(s0) + b"\x00", -1, -1, 0, 0)
        self.level = [(i0, s0)]
        self._add_suffix(suffix_start(s0), i0, SWITCH, 0, self.level)
        depth = 0
        while self.level:
            out.depth_reached = depth
            if depth >= env.config.depth:
                out.unexpanded = len(self.level)
                self.stop = DEPTH_BOUND
                return
            self.nxt = []
            if not self._expand_level(depth):
                self.stop = STATE_CAP
                return
            self.level = self.nxt
            depth += 1

    def _expand_level(self, depth: int) -> bool:
        """Expand the states of one level into `self.nxt`; False at the state cap."""
        env, g, nxt, out = self.env, self.g, self.nxt, self.out
        fp = env.fingerprint
        for i, s in self.level:
            if len(g.keys) >= self.max_states:
                return False
            if g.phase[i] == 0:
                succ = env.successors(s)
                out.generated += len(succ)
                for k, (ev, s2, _) in enumerate(succ):
                    j, new = g.add(fp(s2) + b"\x00", i, k, depth + 1, 0)
                    if new:
                        nxt.append((j, s2))
                        self._add_suffix(suffix_start(s2), j, SWITCH, depth + 1, nxt)
            else:
                succ = suffix_successors(env, s, self.timers)
                out.generated += len(succ)
                g.expanded.add(i)
                for k, (ev, s2, _) in enumerate(succ):
                    j = self._add_suffix(s2, i, k, depth + 1, nxt)
                    c = fairness_class(env, ev)
                    g.edges.append((i, j, -1 if c is None else g.class_id(c)))
            if time.perf_counter() >= self.next_progress:
                self.progress(depth, len(g.keys), len(self.level) + len(nxt))
        return True

    def natural_stop(self) -> StopReason:
        return self.stop or EXHAUSTED

    def finish(self) -> None:
        """The states left unexpanded, the figures, and each property's analysis."""
        out, g = self.out, self.g
        if self.stop == STATE_CAP or out.stop_reason == TIME_LIMIT:
            out.unexpanded = sum(1 for i, _ in self.level
                                 if g.phase[i] == 0 or i not in g.expanded) + len(self.nxt)
        out.prefix_states = len(g.phase) - len(g.goals)
        out.suffix_states = len(g.goals)
        out.distinct = len(g.phase)
        out.suffix_edges = len(g.edges)
        for k, name in enumerate(self.props):
            lasso, count = _analyse(self.env, g, k, name)
            out.fair_components[name] = count
            if lasso is not None:
                out.violations.append(lasso)


def check_liveness(env: Env, names=(), *, max_states: int = DEFAULT_MAX_STATES,
                   observer=NULL_OBSERVER, time_limit: float | None = None,
                   timers: bool = True, pressure: bool = True) -> LivenessOutcome:
    """The `Liveness` search of `env` (see it for the arguments)."""
    return Liveness(env, names, max_states=max_states, observer=observer, time_limit=time_limit,
                    timers=timers, pressure=pressure).run()


# --- the analysis -----------------------------------------------------------------------------------
def _analyse(env: Env, g: _Graph, k: int, name: str):
    """The shortest-stem counterexample of property number k (a fair cycle or a dead end of non-goal
    phase-1 states), and the number of fair components found."""
    import networkx as nx

    bit = 1 << k
    bad = {i for i, bits in g.goals.items() if not bits & bit}
    out_classes: dict = {}
    has_out: set = set()
    G = nx.DiGraph()
    G.add_nodes_from(bad)
    for u, v, c in g.edges:
        if u not in bad:
            continue
        has_out.add(u)
        if c >= 0:
            out_classes.setdefault(u, set()).add(c)
        if v in bad:
            if G.has_edge(u, v):
                G[u][v]["c"].add(c)
            else:
                G.add_edge(u, v, c={c})
    for u in bad:
        p = g.pressure.get(u)
        if p:
            out_classes.setdefault(u, set()).update(p)
    dead = [i for i in bad if i in g.expanded and i not in has_out]
    fair = _fair_components(G, out_classes)
    best = None  # (stem depth, kind, entry, component)
    for comp in fair:
        entry = min(comp, key=lambda i: (g.depth[i], i))
        cand = (g.depth[entry], 1, entry, comp)
        if best is None or cand[:3] < best[:3]:
            best = cand
    for i in dead:
        cand = (g.depth[i], 0, i, None)
        if best is None or cand[:3] < best[:3]:
            best = cand
    count = len(fair) + len(dead)
    if best is None:
        return None, 0
    _, _, entry, comp = best
    return _lasso(env, g, name, entry, comp, G), count


def _fair_components(G, out_classes) -> list:
    """The fair strongly connected components of G (Emerson-Lei for strong fairness): a component
    with a cycle is fair when every class enabled in one of its states is taken by one of its
    edges; otherwise the states that enable an untaken class cannot be visited infinitely often
    by a fair run, and the rest is searched again."""
    import networkx as nx

    found = []
    work = [set(G.nodes)]
    while work:
        S = work.pop()
        H = G.subgraph(S)
        for comp in nx.strongly_connected_components(H):
            if len(comp) == 1:
                (u,) = comp
                if not H.has_edge(u, u):
                    continue
            taken = set()
            for u in comp:
                for v, data in H[u].items():
                    if v in comp:
                        taken |= data["c"]
            drop = {u for u in comp if out_classes.get(u, set()) - taken}
            if not drop:
                found.append(comp)
            elif len(drop) < len(comp):
                work.append(comp - drop)
    return found


def _state_of(env: Env, g: _Graph, i: int) -> tuple[list, list, int | None]:
    """Events and states from the initial state to node i along BFS parents, and the number of
    events before the switch (None when i is in phase 0)."""
    chain = []
    target_phase = g.phase[i]
    while g.parent[i] >= 0:
        chain.append((g.pindex[i], g.phase[i]))
        i = g.parent[i]
    chain.reverse()
    s, _ = env.initial()
    events, states, faults_stop = [], [s], None
    for index, phase in chain:
        if index == SWITCH:
            faults_stop = len(events)
            s = suffix_start(s)
            states[-1] = s
            continue
        succ = env.successors(s) if phase == 0 else suffix_successors(env, s)
        ev, s, _ = succ[index]
        events.append(ev)
        states.append(s)
    assert faults_stop is not None or target_phase == 0
    return events, states, faults_stop


def _lasso(env: Env, g: _Graph, name: str, entry: int, comp, G) -> Lasso:
    events, states, faults_stop = _state_of(env, g, entry)
    if comp is None:
        return Lasso(name, "dead-end", events, states, faults_stop, None)
    loop_start = len(events)
    # a fair loop: from the entry, take an edge of every class the component takes, then return
    need = set()
    for u in comp:
        for v, data in G[u].items():
            if v in comp:
                need |= {c for c in data["c"] if c >= 0}
    cur, s, moved = entry, states[-1], False
    while need:
        for u, v, c in _path_in(G, comp, cur, need, None):
            s = _take(env, g, s, v, c, events, states)
            need.discard(c)
            cur, moved = v, True
    if cur != entry or not moved:
        for u, v, c in _path_in(G, comp, cur, None, entry):
            s = _take(env, g, s, v, c, events, states)
    return Lasso(name, "cycle", events, states, faults_stop, loop_start)


def _path_in(G, comp, start, classes, target) -> list:
    """The shortest path inside `comp` from `start` that ends with an edge of one of `classes`
    (or, classes None, ends at `target` after at least one edge): [(u, v, class), ...]."""
    prev = {}
    queue = deque([start])
    seen = {start}
    while queue:
        u = queue.popleft()
        for v, data in G[u].items():
            if v not in comp:
                continue
            if classes is not None:
                hit = next((c for c in sorted(data["c"]) if c in classes), None)
                if hit is not None:
                    return _unwind(prev, start, u) + [(u, v, hit)]
            elif v == target:
                return _unwind(prev, start, u) + [(u, v, min(data["c"]))]
            if v not in seen:
                seen.add(v)
                prev[v] = (u, min(data["c"]))
                queue.append(v)
    raise AssertionError("no such path inside a strongly connected component")


def _unwind(prev, start, u) -> list:
    out = []
    while u != start:
        p, c = prev[u]
        out.append((p, u, c))
        u = p
    out.reverse()
    return out


def _take(env: Env, g: _Graph, s: State, v: int, c: int, events: list, states: list) -> State:
    """Take from `s` the suffix event of class id `c` that leads to node v."""
    key = g.keys[v]
    want = g.class_list[c] if c >= 0 else None
    for ev, s2, _ in suffix_successors(env, s):
        if fairness_class(env, ev) == want and env.fingerprint(s2) + b"\x01" == key:
            events.append(ev)
            states.append(s2)
            return s2
    raise AssertionError("the suffix edge is not enabled on replay")
