"""What the exporter reads from a counterexample trace: the violated property, the cluster, the
fate of every message the trace sends (delivered at some step, dropped, lost with a crash, or still
in flight at the end), and the crashes and restarts with the point of the run each follows.

Sends are recomputed through the model's own kernel functions (the same calls the explorer made), so
nothing here re-implements a handler. They follow the explorer's crash rules exactly: a message sent
to a node that is down after the step never enters the network (E8), and every message in flight to
or from a node when it crashes is lost (E7).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from zabmc.core.errors import UsageError
from zabmc.core.events import (  # noqa: F401  (DROPPED: re-exported)
    DELIVERED,
    DOWN,
    DROPPED,
    Crash,
    Heartbeat,
    Propose,
    Restart,
    Timeout,
)
from zabmc.explore.trace import load, replay
from zabmc.core.model import initial_steps

PENDING = "pending"
LOST = "lost"  # in flight to or from a node when it crashed (E7)
# An event's `fate` says what became of the message it takes off the network (DELIVERED,
# DROPPED); the kinds the simulator can be seen to take are `observable`, and `signature()` is
# what identifies one among the simulator's steps, in trace node ids (zabmc/core/events.py).


def signature(ev) -> tuple:
    """What identifies a trace event among the simulator's steps, in trace node ids."""
    return ev.signature()


class NodeEvent(NamedTuple):
    """A crash or restart of the trace, with the point of the run it follows."""

    step: int
    action: str  # "crash" or "restart"
    node: int
    anchor: tuple | None  # signature() of the last observable event before it; None: start-up
    count: int  # occurrences of `anchor` in the trace up to and including that event
    anchor_step: int  # the trace step of that event (0: the start-up)


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
    # (src, dst, msg) -> [(fate, step)] in send order; step is where it was delivered, dropped or
    # lost with a crash
    fates: dict = field(default_factory=dict)
    # node -> first trace step at which a message from or to it is delivered (None: never)
    first_contact: dict = field(default_factory=dict)
    crashes: list = field(default_factory=list)  # [(step, node)]
    restarts: list = field(default_factory=list)  # [(step, node)]
    # every crash and restart in trace order: NodeEvent(step, action, node, anchor, count), where
    # `anchor` is the signature of the last observable event before it (None: the start-up) and
    # `count` how many events with that signature the trace has up to and including it
    node_events: list = field(default_factory=list)

    def fate_queues(self) -> dict:
        """A fresh copy of `fates` as deques, for one steered run to consume."""
        return {k: deque(v) for k, v in self.fates.items()}


def read_trace(path: str) -> TraceFacts:
    """Read, replay (confirming the recorded violation) and analyse a `zabmc-trace` file."""
    result = replay(load(path))
    if hasattr(result.trace.env.model, "actions"):
        raise UsageError(f"{path} is a trace of model {result.trace.env.model.name}, which the "
                         "seeded simulator cannot run (it has actions of its own): there is no "
                         "partition script to export; --format zookeeper makes a fault schedule "
                         "for `zabmc real`")
    trace = result.trace
    if result.expected is None:
        raise UsageError(f"{path} records no property violation: there is nothing to reproduce")
    if not result.confirmed:
        raise UsageError(f"{path} does not replay to its recorded violation "
                         f"({result.expected['property']} at step {result.expected['step']})")
    if result.sha256_differs is not None:
        raise UsageError(f"{path} does not replay to its recorded final state (final_sha256 "
                         f"{result.sha256_differs}, replay found {trace.final_sha256})")
    return analyse(trace, path)


def analyse(trace, path: str = "<trace>") -> TraceFacts:
    """The facts of a replayed `Trace` (with or without a violation: without one, `property`,
    `message` and `step` are None)."""
    env = trace.env
    model, n = env.model, env.n
    states = trace.states
    sends: list[list] = [[] for _ in range(len(trace.events) + 1)]
    for i, st in enumerate(initial_steps(model, n)):
        sends[0].extend((i, dst, msg) for dst, msg in st.outs)
    by_kind: dict = {}  # event class -> [(step, acting node)] in trace order
    node_events = []
    seen: dict = {}  # signature -> occurrences so far
    last, last_step = None, 0  # signature and step of the last observable event
    for k, ev in enumerate(trace.events, start=1):
        by_kind.setdefault(type(ev), []).append((k, ev.actor))
        if ev.lifecycle:
            node_events.append(NodeEvent(k, ev.kind, ev.node, last, seen.get(last, 0), last_step))
        if ev.observable:
            last, last_step = ev.signature(), k
            seen[last] = seen.get(last, 0) + 1
        step = ev.step(model, states[k - 1].nodes, n)
        if step is not None and step.outs:
            down = states[k].budgets[DOWN]  # what goes to a down node is lost at send (E8)
            sends[k].extend((ev.actor, dst, msg) for dst, msg in step.outs
                            if not down >> dst & 1)

    fates: dict = {}
    open_: dict = {}  # value -> deque of indices into fates[value] still in flight
    first_contact: dict = {i: None for i in range(n)}
    for k in range(len(trace.events) + 1):
        if k > 0:
            ev = trace.events[k - 1]
            if ev.fate is not None:  # it takes a message off the network: delivered or dropped
                key = (ev.src, ev.dst, ev.msg)
                idx = open_[key].popleft()
                fates[key][idx] = (ev.fate, k)
                if ev.fate == DELIVERED:
                    for x in (ev.src, ev.dst):
                        if first_contact[x] is None:
                            first_contact[x] = k
            elif ev.cuts_off:  # its connections close: everything in flight is lost (E7)
                i = ev.node
                for key in [key for key in open_ if i in key[:2]]:
                    for idx in open_.pop(key):
                        fates[key][idx] = (LOST, k)
        for key in sends[k]:
            fates.setdefault(key, []).append((PENDING, None))
            open_.setdefault(key, deque()).append(len(fates[key]) - 1)

    v = trace.violation
    return TraceFacts(
        path=path, model=model, nodes=n, network=env.config.network,
        invariants=tuple(env.checker.names), property=v.property if v else None,
        message=v.message if v else None, step=trace.violation_step, events=list(trace.events),
        proposals_used=len(by_kind.get(Propose, ())), proposals_budget=env.config.proposals,
        timeouts=by_kind.get(Timeout, []), heartbeats=by_kind.get(Heartbeat, []),
        fates=fates, first_contact=first_contact, crashes=by_kind.get(Crash, []),
        restarts=by_kind.get(Restart, []), node_events=node_events,
    )
