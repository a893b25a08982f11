"""The seeded tick simulator (seed document "Simulator loop", C6 to C11).

It owns time: election deadlines, heartbeat clocks, the delivery heap, the partition set and which
nodes are down. Every protocol decision is the kernel's (`zabmc.core.model.Model`); the simulator only
schedules. Observers see each step; an optional invariant `Checker` folds every step into its ghost
state and records the first violation with its tick (`zabmc simulate --check`).

Crashes and restarts (E7-E9, E11) come from a partition script's `node_events` (tick -> the
`(action, node)` pairs of that tick in file order) and apply at the start of their tick, before
anything else of it. A crash replaces the node by `zabmc.core.model.crashed` (durable fields kept, the
rest fresh) and removes every message in flight to or from it; while down the node takes no step,
and a send to it is dropped at send time like a cut link (no sequence number). A restart runs the
model's start-up (`Model.start`) for the node alone, with a fresh election deadline and heartbeat
clock.
"""

from __future__ import annotations

import hashlib
from heapq import heapify, heappop, heappush
from typing import Any, Callable, NamedTuple

from zabmc.core.errors import UsageError
from zabmc.core.events import Crash, Deliver, Drop, Heartbeat, Propose, Restart, Start, Timeout
from zabmc.invariants import Checker, Violation
from zabmc.core.model import Model, Step, TIMER, crashed, payload

from .rng import delivery_delay, election_deadline

_new = tuple.__new__

HEARTBEAT_INTERVAL = 50
MAX_NODES = 9
#: --proposals of one simulator run: the histories are immutable tuples, so a run's time grows with
#: the square of its proposals (10,000 take about 2 s here, 100,000 several minutes)
MAX_PROPOSALS = 10_000
#: --rounds of one simulator run: a billion ticks (hours of simulation), far past any run that
#: finds anything, and a bound that no mistyped number passes silently
MAX_ROUNDS = 1_000_000_000


def proposal_schedule(rounds: int, proposals: int) -> list[int]:
    """schedule[i] = (i+1) * rounds / (K+1), integer division."""
    return [(i + 1) * rounds // (proposals + 1) for i in range(proposals)]


class SimConfig(NamedTuple):
    seed: int
    nodes: int
    rounds: int
    proposals: int
    partition: frozenset = frozenset()  # directed links (src, dst) cut for the whole run

    def validate(self) -> "SimConfig":
        if not 1 <= self.nodes <= MAX_NODES:
            raise UsageError(f"--nodes must be between 1 and {MAX_NODES}, got {self.nodes}")
        if self.rounds < 0:
            raise UsageError(f"--rounds must not be negative, got {self.rounds}")
        if self.rounds > MAX_ROUNDS:
            raise UsageError(f"--rounds is limited to {MAX_ROUNDS:,}, got {self.rounds:,}")
        if self.proposals < 0:
            raise UsageError(f"--proposals must not be negative, got {self.proposals}")
        if self.proposals > MAX_PROPOSALS:
            raise UsageError(f"--proposals is limited to {MAX_PROPOSALS:,} in the simulator, got "
                             f"{self.proposals:,} (a run's time grows with the square of the "
                             "proposals; zabmc check's limit is 255)")
        if not 0 <= self.seed < 1 << 64:
            raise UsageError(f"--seed must be an unsigned 64-bit integer, got {self.seed}")
        for s, d in self.partition:
            for x in (s, d):
                if not 0 <= x < self.nodes:
                    raise UsageError(
                        f"--partition names node {x}, but node ids are 0..{self.nodes - 1}"
                    )
        return self


class SimStats(NamedTuple):
    sent: int
    dropped: int
    delivered: int
    in_flight: int
    pending_proposals: int
    proposed: int
    ticks: int
    events: int


class SimResult(NamedTuple):
    nodes: tuple
    stats: SimStats
    dump: bytes
    violation: Violation | None
    violation_tick: int | None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.dump).hexdigest()


class SimObserver:
    """Receives every step the simulator takes, as the explorer's event values
    (`zabmc.core.events`): `on_event(t, ev, before, step, lost)`, `ev` one of `Start`,
    `Deliver`, `Drop`, `Timeout`, `Heartbeat`, `Propose`, `Crash`, `Restart`. A `Drop` is a send
    dropped at send time, over a cut link or to a node that is down (its `before` and `step` are
    None); a `Propose`'s `k` is the proposal's number (payload `zab-<k>`). A crash's `step` has the
    crashed node and no messages or effects, and `lost` holds the messages in flight to or from
    the node that it loses, `((src, dst, msg), ...)` in delivery order; a restart's step is the
    node's start-up.

    `on_step(t, kind, node, detail, before, step)` is the same step in the older vocabulary (what
    `Event.on_step_args` gives); the default `on_event` calls it, so an observer may override
    either."""

    def on_event(self, t: int, ev: Any, before: Any, step: Step | None, lost: tuple = ()) -> None:
        kind, node, detail = ev.on_step_args(lost)
        self.on_step(t, kind, node, detail, before, step)

    def on_step(self, t: int, kind: str, node: int, detail: Any, before: Any, step: Step) -> None:
        pass

    def on_violation(self, t: int, violation: Violation) -> None:
        pass


class _OnStep(SimObserver):
    """An observer with only `on_step` (and `on_violation`), not made from `SimObserver`."""

    def __init__(self, inner):
        self.on_step = inner.on_step
        self.on_violation = inner.on_violation


def require_simulable(model: Model) -> Model:
    """`model`, or a one-line UsageError when the simulator cannot run it: a model with its own
    actions (`Model.actions`: the zk family's election outcome, log writes, ...) takes steps this
    simulator never schedules, so a run would be some other protocol's, not the model's."""
    if hasattr(model, "actions"):
        raise UsageError(f"the seeded simulator cannot run model {model.name}: it has actions of "
                         "its own (such as its log writes) that the simulator does not schedule; "
                         "explore it with `zabmc check`")
    return model


class Simulator:
    def __init__(self, model: Model, cfg: SimConfig, observer: SimObserver | None = None,
                 checker: Checker | None = None,
                 link_cut: Callable[[int, int, int], bool] | None = None,
                 fifo: bool | None = None, node_events: dict | None = None):
        self.model = require_simulable(model)
        # FIFO links (TCP): a message is never delivered before an earlier one on its directed link.
        # By default on for models that assume it (network_assumption "fifo"); db-19 assumes "any",
        # so its schedule, and every digest, is exactly C8's.
        if fifo is None:
            fifo = getattr(model, "network_assumption", "any") == "fifo"
        self.link_free: dict | None = {} if fifo else None
        self.cfg = cfg.validate()
        self.n = cfg.nodes
        if observer is not None and not hasattr(observer, "on_event"):
            observer = _OnStep(observer)
        self.observer = observer
        self.checker = checker if checker is not None and checker.active else None
        # link_cut(t, src, dst) -> bool, on top of the static partition (partition scripts use it)
        self.link_cut = link_cut
        # node_events: tick -> ((action, node), ...) crashes and restarts (Timeline.node_events)
        self.node_events = _check_node_events(node_events or {}, self.n)
        self.down: set = set()
        # the nodes that tick, in id order (mutated in place at a crash or a restart)
        self.up: list = list(range(self.n))
        # The send-time drop test beyond the static partition. Without crashes it is `link_cut`
        # itself, so the per-message path is exactly what it was; with them a send to a down
        # node is dropped too (E8).
        self._send_cut = link_cut
        if self.node_events:
            down = self.down
            if link_cut is None:
                self._send_cut = lambda t, src, dst: dst in down
            else:
                self._send_cut = lambda t, src, dst: dst in down or link_cut(t, src, dst)
        self.nodes: list = []
        self.deadline = [0] * self.n
        self.last_hb = [0] * self.n
        self.heap: list = []
        self.seq = 0
        self.sent = self.dropped = self.delivered = self.events = self.proposed = 0
        self.ghost = self.checker.initial_ghost(self.n) if self.checker else None
        self.violation: Violation | None = None
        self.violation_tick: int | None = None
        self._started = False

    # --- plumbing ------------------------------------------------------------------------------------
    # `_apply` runs once per event (1.6 million times in the 5-node, 100,000-round benchmark), so
    # the per-message loop works on locals.
    def _apply(self, t: int, i: int, ev, step: Step) -> None:
        node, outs, effects = step
        nodes = self.nodes
        before = nodes[i] if i < len(nodes) else None
        if before is not None:
            nodes[i] = node
        else:
            nodes.append(node)
        self.events += 1
        for eff in effects:
            if eff[0] == TIMER:
                self.deadline[i] = election_deadline(self.cfg.seed, i, t)
        observer = self.observer
        if observer:
            observer.on_event(t, ev, before, step)
        if outs:  # C8: in send order; a cut link drops at send time and consumes no seq
            seed, heap, part, cut = self.cfg.seed, self.heap, self.cfg.partition, self._send_cut
            seq = self.seq
            self.sent += len(outs)
            for dst, msg in outs:
                if (part and (i, dst) in part) or (cut is not None and cut(t, i, dst)):
                    self.dropped += 1
                    if observer:
                        observer.on_event(t, _new(Drop, (i, dst, msg, "drop")), None, None)
                    continue
                seq += 1
                when = t + delivery_delay(seed, i, dst, t)
                if self.link_free is not None:
                    # Same time, same sender: the heap's seq tie-break keeps send order.
                    when = max(when, self.link_free.get((i, dst), 0))
                    self.link_free[(i, dst)] = when
                heappush(heap, (when, i, seq, dst, msg))
            self.seq = seq
        if self.checker and self.violation is None and self._started:
            self.ghost, v = self.checker.step(self.ghost, i, step.node, step.effects, self.nodes,
                                              before)
            if v is not None:
                self.violation, self.violation_tick = v, t
                if self.observer:
                    self.observer.on_violation(t, v)

    # --- crashes and restarts (E7-E9, E11) --------------------------------------------------------
    def _set_down(self, i: int, is_down: bool) -> None:
        if is_down:
            self.down.add(i)
        else:
            self.down.discard(i)
        self.up[:] = [j for j in range(self.n) if j not in self.down]

    def _crash(self, t: int, i: int) -> None:
        """Node i goes down: durable fields kept, the rest fresh; its in-flight messages lost."""
        before = self.nodes[i]
        node = crashed(self.model, before, self.n)
        self.nodes[i] = node
        self._set_down(i, True)
        self.last_hb[i] = 0
        self.events += 1
        heap = self.heap
        lost = [e for e in heap if e[1] == i or e[3] == i]
        if lost:
            heap[:] = [e for e in heap if e[1] != i and e[3] != i]
            heapify(heap)
            self.dropped += len(lost)
        if self.link_free is not None:
            # The FIFO clock of a link only orders messages on it; the crash emptied the node's
            # links, so a later message on one waits for nothing.
            for link in [k for k in self.link_free if i in k]:
                del self.link_free[link]
        step = Step(node, (), ())
        if self.observer:
            lost.sort()
            self.observer.on_event(t, Crash(i), before, step,
                                   tuple((e[1], e[3], e[4]) for e in lost))
        if self.checker and self.violation is None:
            self.ghost, v = self.checker.step(self.ghost, i, node, (), self.nodes, before)
            if v is not None:
                self.violation, self.violation_tick = v, t
                if self.observer:
                    self.observer.on_violation(t, v)

    def _restart(self, t: int, i: int) -> None:
        """Node i comes back as it is down (durable fields, the rest fresh) and starts (E9)."""
        self._set_down(i, False)
        self.deadline[i] = election_deadline(self.cfg.seed, i, t)
        self.last_hb[i] = 0
        self._apply(t, i, Restart(i), self.model.start(self.nodes[i], self.n))

    def _node_events(self, t: int, events) -> None:
        for action, i in events:
            if action == "crash":
                self._crash(t, i)
            else:
                self._restart(t, i)

    # --- the run -------------------------------------------------------------------------------------
    def _start_up(self) -> None:
        """Tick 0: its directives, then every node's start-up (C6), folded into the ghost."""
        cfg, model, n = self.cfg, self.model, self.n
        events = self.node_events
        # Directives of tick 0 apply before the start-up (C6): a node down after them does not
        # start; one crashed and restarted at 0 starts with the others.
        down0: set = set()
        for action, i in events.get(0, ()):
            if action == "crash":
                down0.add(i)
            else:
                down0.discard(i)
        down_nodes = {}
        for i in sorted(down0):  # down before anyone sends: start-up messages to it are dropped
            self._set_down(i, True)
            down_nodes[i] = crashed(model, model.fresh(i, n), n)
            self.events += 1
            if self.observer:
                self.observer.on_event(0, Crash(i), None, Step(down_nodes[i], (), ()), ())
        start_effects = []
        for i in range(n):  # C6
            if i in down0:
                self.nodes.append(down_nodes[i])
                continue
            step = model.start(model.fresh(i, n), n)
            self.deadline[i] = election_deadline(cfg.seed, i, 0)
            self._apply(0, i, Start(i), step)
            start_effects.append((i, step))
        if self.checker:  # fold the start-up into the ghost now that every node exists
            for i, step in start_effects:
                if self.violation is None:
                    self.ghost, v = self.checker.step(
                        self.ghost, i, self.nodes[i], step.effects, self.nodes
                    )
                    if v is not None:
                        self.violation, self.violation_tick = v, 0

    def run(self) -> SimResult:
        cfg, model, n = self.cfg, self.model, self.n
        events = self.node_events
        self._start_up()
        self._started = True
        schedule = proposal_schedule(cfg.rounds, cfg.proposals)
        pending: list[int] = []  # the numbers of the proposals not yet taken
        k = 0
        heap = self.heap
        nodes = self.nodes
        deliver = model.deliver
        apply = self._apply
        observed = self.observer is not None
        up = self.up
        for t in range(cfg.rounds):
            if events and t and t in events:  # E11: crashes and restarts first
                self._node_events(t, events[t])
            while k < len(schedule) and schedule[k] == t:  # (1)
                pending.append(k)
                k += 1
            if pending:  # (2)
                for i in up:
                    if model.can_propose(self.nodes[i]):
                        for p in pending:
                            self.proposed += 1
                            self._apply(t, i, Propose(i, p),
                                        model.propose(self.nodes[i], payload(p), n))
                        pending.clear()
                        break
            while heap and heap[0][0] <= t:  # (3)
                _, src, _, dst, msg = heappop(heap)
                self.delivered += 1
                apply(t, dst, _new(Deliver, (src, dst, msg, "deliver")) if observed else None,
                      deliver(nodes[dst], src, msg, n))
            for i in up:  # (4): a down node neither times out nor sends heartbeats (E8)
                node = self.nodes[i]
                if not model.is_leading(node):
                    if t >= self.deadline[i]:
                        self.deadline[i] = election_deadline(cfg.seed, i, t)
                        self._apply(t, i, Timeout(i), model.timeout(node, n))
                elif t - self.last_hb[i] >= HEARTBEAT_INTERVAL:
                    step = model.heartbeat(node, n)
                    if step is not None:
                        self.last_hb[i] = t
                        self._apply(t, i, Heartbeat(i), step)
        pending.extend(range(k, len(schedule)))
        stats = SimStats(
            sent=self.sent, dropped=self.dropped, delivered=self.delivered,
            in_flight=len(heap), pending_proposals=len(pending), proposed=self.proposed,
            ticks=cfg.rounds, events=self.events,
        )
        nodes = tuple(self.nodes)
        return SimResult(nodes, stats, model.dump(nodes), self.violation, self.violation_tick)


def _check_node_events(node_events: dict, n: int) -> dict:
    """`node_events` as a dict of tuples, refused (UsageError) when it names a node outside the
    cluster, crashes a down node or restarts an up one. Partition scripts check this with line
    numbers first (`Script.timeline`); this guards other callers."""
    down: set = set()
    out = {}
    for t in sorted(node_events):
        evs = tuple(node_events[t])
        for action, i in evs:
            if action not in ("crash", "restart"):
                raise UsageError(f"tick {t}: unknown node event {action!r}")
            if not 0 <= i < n:
                raise UsageError(f"tick {t}: {action} {i}: node ids are 0..{n - 1}")
            if (action == "crash") == (i in down):
                raise UsageError(f"tick {t}: {action} {i}: node {i} is "
                                 f"{'already down' if i in down else 'up'}")
            if action == "crash":
                down.add(i)
            else:
                down.discard(i)
        if evs:
            out[t] = evs
    return out


def simulate(model: Model, cfg: SimConfig, **kw) -> SimResult:
    return Simulator(model, cfg, **kw).run()
