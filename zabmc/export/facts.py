"""What the exporter reads from a counterexample trace: the violated property, the cluster, and the
fate of every message the trace sends (delivered at some step, dropped, or still in flight at the end).

Sends are recomputed through the model's own kernel functions (the same calls the explorer made), so
nothing here re-implements a handler.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from zabmc.errors import UsageError
from zabmc.explore.trace import load, replay
from zabmc.model import initial_steps

DELIVERED, DROPPED, PENDING = "delivered", "dropped", "pending"


@dataclass
class TraceFacts:
    path: str
    model: object
    nodes: int
    network: str
    invariants: tuple
    property: str
    message: str
    step: int  # the trace step at which the property fails
    events: list  # explorer event tuples
    proposals_used: int
    proposals_budget: int
    timeouts: list  # [(step, node)] in trace order
    heartbeats: list  # [(step, node)]
    # (src, dst, msg) -> [(fate, step)] in send order; step is where it was delivered/dropped
    fates: dict = field(default_factory=dict)
    # node -> first trace step at which a message from or to it is delivered (None: never)
    first_contact: dict = field(default_factory=dict)

    def fate_queues(self) -> dict:
        """A fresh copy of `fates` as deques, for one steered run to consume."""
        return {k: deque(v) for k, v in self.fates.items()}


def read_trace(path: str) -> TraceFacts:
    """Load, replay (confirming the recorded violation) and analyse a `zabmc-trace` file."""
    data = load(path)
    result = replay(data)
    trace = result.trace
    if result.expected is None:
        raise UsageError(f"{path} records no property violation: there is nothing to reproduce")
    if not result.confirmed:
        raise UsageError(f"{path} does not replay to its recorded violation "
                         f"({result.expected.get('property')} at step {result.expected.get('step')})")
    env = trace.env
    model, n = env.model, env.n
    states = trace.states
    sends: list[list] = [[] for _ in range(len(trace.events) + 1)]
    for i, st in enumerate(initial_steps(model, n)):
        sends[0].extend((i, dst, msg) for dst, msg in st.outs)
    timeouts, heartbeats = [], []
    proposals = 0
    for k, ev in enumerate(trace.events, start=1):
        kind = ev.kind
        if kind == "timeout":
            timeouts.append((k, ev.node))
        elif kind == "heartbeat":
            heartbeats.append((k, ev.node))
        elif kind == "propose":
            proposals += 1
        step = ev.step(model, states[k - 1].nodes, n)
        if step is not None:
            sends[k].extend((ev.actor, dst, msg) for dst, msg in step.outs)

    fates: dict = {}
    open_: dict = {}  # value -> deque of indices into fates[value] still in flight
    first_contact: dict = {i: None for i in range(n)}
    for k in range(len(trace.events) + 1):
        if k > 0:
            ev = trace.events[k - 1]
            if ev.kind in ("deliver", "drop"):
                key = (ev.src, ev.dst, ev.msg)
                idx = open_[key].popleft()
                fates[key][idx] = (DELIVERED if ev.kind == "deliver" else DROPPED, k)
                if ev.kind == "deliver":
                    for x in (ev.src, ev.dst):
                        if first_contact[x] is None:
                            first_contact[x] = k
        for key in sends[k]:
            fates.setdefault(key, []).append((PENDING, None))
            open_.setdefault(key, deque()).append(len(fates[key]) - 1)

    return TraceFacts(
        path=path, model=model, nodes=n, network=env.config.network,
        invariants=tuple(env.checker.names), property=trace.violation.property,
        message=trace.violation.message, step=trace.violation_step, events=list(trace.events),
        proposals_used=proposals, proposals_budget=env.config.proposals, timeouts=timeouts,
        heartbeats=heartbeats, fates=fates, first_contact=first_contact,
    )
