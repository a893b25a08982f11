"""The explorer's events: one vocabulary, one module.

An event is an immutable value of one of the classes below. Each class knows, in one place:
- its fields, and its `kind` (the name it has in traces, on the console and in `--json`);
- `expand(env, s, heads, out)`: append `(event, next_state, violation)` for every event of the
  kind enabled in state `s`, in a fixed order; `KINDS` fixes the order of the kinds, so an event's
  index in `Env.successors(s)` identifies it (traces store indices and rebuild states by replay);
- `possible(env)`: whether the kind can be enabled at all under `env`'s configuration and model
  (a kind whose budget is zero never is); `Env.successors` skips the others;
- `step(model, nodes, n)`: the kernel call it makes, as a `Step` of the node that acts (`actor`),
  or None for an event that runs no handler (a drop); replay-side tools (export) use it;
- `describe(model)` for people and `to_json(model)` / `from_json` for files.

Adding a kind of event is adding one class here and naming it in `KINDS` (and its budget in
`ExploreConfig`, when it has one).

Events are named tuples whose last field is the kind's name, so that two events of different kinds
never compare equal (`Timeout(1) != Crash(1)`) and equal events are equal values; the events of one
node and the events of one message share their views (`_NodeEvent`, `_MessageEvent`). Successor
generation builds them with `tuple.__new__`, at C speed.
"""

from __future__ import annotations

from collections import namedtuple

from zabmc.errors import UsageError
from zabmc.model import Step, crashed, payload

_new = tuple.__new__

# Positions in `State.budgets`: what is left of each budget, the proposals made, and the set of
# down nodes (a bit mask, E7). The last one is not a budget, but like the budgets it is a small
# counter that every event reads and few change.
DROPS, TIMEOUTS, HEARTBEATS, MADE, CRASHES, DOWN = range(6)


def _node_arg(d: dict, key: str = "node") -> int:
    v = d.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise UsageError(f"malformed trace event: {key!r} must be a node id, got {v!r}")
    return v


def _each_node(env, s, out, budget: int, cls, kind: str, handler, cache: dict) -> None:
    """The events of a budgeted kind that any node may take when `handler(node, n)` gives a
    step: one per such node, ascending, each spending one unit of budget number `budget`.
    `cache` is the kind's memo table (`Env._node_step`)."""
    b = s.budgets
    if not b[budget]:
        return
    b2 = b[:budget] + (b[budget] - 1,) + b[budget + 1:]
    nodes, down, step_of = s.nodes, b[DOWN], env._node_step
    for i, node in enumerate(nodes):
        if down >> i & 1:  # a down node does nothing (E8)
            continue
        step = step_of(cache, handler, node)
        if step is not None:
            out.append(env._apply(_new(cls, (i, kind)), s, i, step, s.net, b2))


class _MessageEvent:
    """What the events about one in-flight message share: `(src, dst, msg, kind)`."""

    __slots__ = ()

    def describe(self, model) -> str:
        return f"{self.kind} {self.src}->{self.dst} {model.describe_msg(self.msg)}"

    def to_json(self, model) -> dict:
        return {"kind": self.kind, "src": self.src, "dst": self.dst, "msg": model.msg_json(self.msg)}


class _NodeEvent:
    """What the events of one node share: `(node, kind)`, the node being the one that acts."""

    __slots__ = ()

    @property
    def actor(self) -> int:
        return self.node

    def describe(self, model) -> str:
        return f"{self.kind} node {self.node}"

    def to_json(self, model) -> dict:
        return {"kind": self.kind, "node": self.node}


def _fields(name: str, fields: str, kind: str):
    """The immutable value behind an event class: a named tuple whose last field, `kind`,
    defaults to the kind's name."""
    return namedtuple(name, fields + " kind", defaults=(kind,))


class Deliver(_MessageEvent, _fields("Deliver", "src dst msg", "deliver")):
    """The network delivers message `msg` from `src` to `dst` (E4)."""

    __slots__ = ()

    @property
    def actor(self) -> int:
        return self.dst

    @staticmethod
    def possible(env) -> bool:
        return True

    @staticmethod
    def expand(env, s, heads, out) -> None:
        deliver, apply = env._deliver, env._apply
        net, budgets = s.net, s.budgets
        nodes = s.nodes
        if env.fifo:  # `Env._take`, inline: the link's queue without its head
            for k, src, dst, msg in heads:
                out.append(apply(_new(Deliver, (src, dst, msg, "deliver")), s, dst,
                                 deliver(nodes[dst], src, msg),
                                 (*net[:k], net[k][1:], *net[k + 1:]), budgets))
            return
        take = env._take
        for k, src, dst, msg in heads:
            out.append(apply(_new(Deliver, (src, dst, msg, "deliver")), s, dst,
                             deliver(nodes[dst], src, msg), take(net, k), budgets))

    def step(self, model, nodes, n):
        return model.deliver(nodes[self.dst], self.src, self.msg, n)


class Drop(_MessageEvent, _fields("Drop", "src dst msg", "drop")):
    """The network loses message `msg` from `src` to `dst` (budget `max_drops`). A model with
    connections says what the loss does to them (`Model.on_drop`, optional)."""

    __slots__ = ()
    actor = None

    @staticmethod
    def possible(env) -> bool:
        return env.config.max_drops > 0

    @staticmethod
    def expand(env, s, heads, out) -> None:
        b = s.budgets
        if not b[DROPS]:
            return
        b2 = (b[0] - 1,) + b[1:]
        take, state = env._take, type(s)
        nodes, net, ghost = s.nodes, s.net, s.ghost
        on_drop = getattr(env.model, "on_drop", None)
        for k, src, dst, msg in heads:
            ev = _new(Drop, (src, dst, msg, "drop"))
            s2 = _new(state, (nodes, take(net, k), b2, ghost))
            steps = on_drop(nodes, src, dst, msg, env.n) if on_drop is not None else None
            out.append(env._apply_all(ev, s2, steps) if steps else (ev, s2, None))

    def step(self, model, nodes, n):
        return None


class Timeout(_NodeEvent, _fields("Timeout", "node", "timeout")):
    """Node `node`'s election timeout fires (budget `max_timeouts`, shared by all nodes)."""

    __slots__ = ()

    @staticmethod
    def possible(env) -> bool:
        return env.config.max_timeouts > 0

    @staticmethod
    def expand(env, s, heads, out) -> None:
        _each_node(env, s, out, TIMEOUTS, Timeout, "timeout", env.model.timeout,
                   env._timeout_cache)

    def step(self, model, nodes, n):
        return model.timeout(nodes[self.node], n)



class Heartbeat(_NodeEvent, _fields("Heartbeat", "node", "heartbeat")):
    """Leader `node` sends a heartbeat (budget `max_heartbeats`)."""

    __slots__ = ()

    @staticmethod
    def possible(env) -> bool:
        return env.config.max_heartbeats > 0

    @staticmethod
    def expand(env, s, heads, out) -> None:
        _each_node(env, s, out, HEARTBEATS, Heartbeat, "heartbeat", env.model.heartbeat,
                   env._heartbeat_cache)

    def step(self, model, nodes, n):
        return model.heartbeat(nodes[self.node], n)



class Propose(_NodeEvent, _fields("Propose", "node k", "propose")):
    """Client proposal number `k` (payload `zab-<k>`) goes to the lowest-id up node that may take
    it (budget `proposals`)."""

    __slots__ = ()

    @staticmethod
    def possible(env) -> bool:
        return env.config.proposals > 0

    @staticmethod
    def expand(env, s, heads, out) -> None:
        b = s.budgets
        made = b[MADE]
        if made >= env.config.proposals:
            return
        nodes, down, propose = s.nodes, b[DOWN], env._propose
        for i, node in enumerate(nodes):
            if down >> i & 1:
                continue
            step = propose(node, made)  # None unless the node may take it
            if step is not None:
                b2 = b[:3] + (made + 1,) + b[4:]
                out.append(env._apply(_new(Propose, (i, made, "propose")), s, i, step, s.net, b2))
                return

    def step(self, model, nodes, n):
        return model.propose(nodes[self.node], payload(self.k), n)

    def describe(self, model) -> str:
        return f"propose {payload(self.k).decode()} at node {self.node}"

    def to_json(self, model) -> dict:
        return {"kind": "propose", "node": self.node, "payload": payload(self.k).decode()}


class Crash(_NodeEvent, _fields("Crash", "node", "crash")):
    """Node `node` crashes (E7; budget `max_crashes`, shared by all nodes): it keeps its durable
    fields, loses the rest and every message in flight to or from it, and is down."""

    __slots__ = ()

    @staticmethod
    def possible(env) -> bool:
        return env.config.max_crashes > 0

    @staticmethod
    def expand(env, s, heads, out) -> None:
        b = s.budgets
        if not b[CRASHES]:
            return
        model, n, nodes, down = env.model, env.n, s.nodes, b[DOWN]
        for i in range(n):
            if down >> i & 1:
                continue
            b2 = b[:4] + (b[CRASHES] - 1, down | 1 << i)
            node = crashed(model, nodes[i], n)
            nodes2 = nodes if node == nodes[i] else nodes[:i] + (node,) + nodes[i + 1:]
            ghost, v = env.checker.step(s.ghost, i, node, (), nodes2, nodes[i])
            out.append((_new(Crash, (i, "crash")),
                        type(s)(nodes2, env._cut_off(s.net, i), b2, ghost), v))

    def step(self, model, nodes, n):
        return Step(crashed(model, nodes[self.node], n), (), ())



class Restart(_NodeEvent, _fields("Restart", "node", "restart")):
    """Down node `node` restarts (E9; no budget): with its durable fields, it runs the start-up for
    itself; what it sends to down nodes is lost."""

    __slots__ = ()

    @staticmethod
    def possible(env) -> bool:
        return env.config.max_crashes > 0  # only a crash makes a node down

    @staticmethod
    def expand(env, s, heads, out) -> None:
        b = s.budgets
        down = b[DOWN]
        if not down:
            return
        model, n, nodes = env.model, env.n, s.nodes
        for i in range(n):
            if down >> i & 1:
                b2 = b[:5] + (down & ~(1 << i),)
                step = model.start(nodes[i], n)
                out.append(env._apply(_new(Restart, (i, "restart")), s, i, step, s.net, b2))

    def step(self, model, nodes, n):
        return model.start(nodes[self.node], n)



class Action(_fields("Action", "label", "action")):
    """A step of the model's own (`Model.actions`): one the explorer's kinds above do not cover,
    such as an election outcome, a write to disk or a lost connection. `label` is the model's
    plain tuple naming it; `Model.act` says which nodes it changes and how. No budget: a model
    enables an action only when it changes something, so the space stays finite."""

    __slots__ = ()

    @property
    def actor(self):
        return self.label[1] if len(self.label) > 1 and type(self.label[1]) is int else None

    @staticmethod
    def possible(env) -> bool:
        return getattr(env.model, "actions", None) is not None

    @staticmethod
    def expand(env, s, heads, out) -> None:
        model = env.model
        actions = getattr(model, "actions", None)
        if actions is None:
            return
        n, nodes = env.n, s.nodes
        for label in actions(nodes, s.budgets[DOWN], n):
            out.append(env._apply_all(_new(Action, (label, "action")), s,
                                      model.act(nodes, label, n)))

    def step(self, model, nodes, n):
        return None

    def describe(self, model) -> str:
        return model.describe_action(self.label)

    def to_json(self, model) -> dict:
        return {"kind": "action", "action": list(self.label)}


#: Every kind of event, in the order `Env.successors` lists them. New kinds go at the end, so that
#: the indices of the older ones, and every trace made before, stay what they were.
KINDS = (Deliver, Drop, Timeout, Heartbeat, Propose, Crash, Restart, Action)
BY_NAME = {k._field_defaults["kind"]: k for k in KINDS}


def check_json(d) -> str:
    """The kind of a JSON event, after checking its shape; a one-line `UsageError` otherwise."""
    if not isinstance(d, dict):
        raise UsageError("malformed trace event: not an object")
    kind = d.get("kind")
    cls = BY_NAME.get(kind)
    if cls is None:
        raise UsageError(f"malformed trace event: unknown kind {kind!r} "
                         f"(known: {', '.join(BY_NAME)})")
    if cls is Action:
        if not isinstance(d.get("action"), list) or not d["action"]:
            raise UsageError("malformed trace event: an action needs a non-empty 'action' list")
    elif cls in (Deliver, Drop):
        _node_arg(d, "src")
        _node_arg(d, "dst")
        if not isinstance(d.get("msg"), dict):
            raise UsageError(f"malformed trace event: a {kind} needs a 'msg' object")
    else:
        _node_arg(d)
        if cls is Propose and not isinstance(d.get("payload"), str):
            raise UsageError("malformed trace event: a propose needs a 'payload' string")
    return kind


def from_json(env, s, d: dict):
    """The event enabled in state `s` whose JSON form is `d`, with its successor:
    `(event, next_state, violation)`, or None when no enabled event has that form."""
    kind = check_json(d)
    model = env.model
    for item in env.successors(s):
        ev = item[0]
        if ev.kind == kind and ev.to_json(model) == d:
            return item
    return None


def brief(d: dict) -> str:
    """A short description of a JSON event (for error messages about one that does not apply)."""
    kind = d.get("kind")
    if kind in ("deliver", "drop"):
        msg = d.get("msg", {})
        name = msg.get("type") if isinstance(msg, dict) else msg
        return f"{kind} {d.get('src')}->{d.get('dst')} {name}"
    if kind == "propose":
        return f"propose {d.get('payload')}"
    if kind == "action":
        return " ".join(str(x) for x in d.get("action") or ["action"])
    return f"{kind} node {d.get('node')}"
