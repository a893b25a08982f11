"""The explorer's events: one vocabulary, one module.

An event is an immutable value of one of the classes below. Each class knows, in one place:
- its fields, and its `kind` (the name it has in traces, on the console and in `--json`);
- `expand(env, s, heads, out)`: append `(event, next_state, violation)` for every event of the
  kind enabled in state `s`, in a fixed order; `KINDS` fixes the order of the kinds, so an event's
  index in `Env.successors(s)` identifies it (traces store indices and rebuild states by replay);
- `enabled(env, s, heads, out)`: the same events without their states, and `event.build(env, s)`:
  the item `expand` lists for one of them (`Env.events`, `Env.successor`: a reduced search builds
  only the successors it keeps); a kind that does not define them gets defaults that run `expand`;
- `possible(env)`: whether the kind can be enabled at all under `env`'s configuration and model
  (a kind whose budget, its `bound`, is zero never is); `Env.successors` skips the others;
- `step(model, nodes, n)`: the kernel call it makes, as a `Step` of the node that acts (`actor`),
  or None for an event that runs no handler (a drop); replay-side tools (export) use it;
- `describe(model)` for people (`subject(model)`: what it is about, after its kind) and
  `to_json(model)` / `from_json` for files;
- what the consumers of a trace need to know of it, so that none of them tells kinds apart by
  name: `observable` (whether the seeded simulator can be seen to take it) and `signature()` (what
  identifies it among the simulator's steps), `fairness(fifo)` (its class under liveness's
  fairness, None for none), `fate` (for an event that takes an in-flight message off the network:
  what became of it), `cuts_off` (it loses every message in flight to or from its node, E7),
  `lifecycle` (it takes its node down or up) and `renamed(ids)` (the same event between other
  node ids).

The seeded simulator reports its steps as these values too (`zabmc.sim.SimObserver.on_event`),
with one kind of its own, `Start` (a node's start-up, which the explorer's initial state holds);
`on_step_args()` gives an event in the simulator's older `on_step` vocabulary.

Adding a kind of event is adding one class here and naming it in `KINDS` (and its budget in
`ExploreConfig` and `Budgets`, when it has one), or, from outside, `register_kind(cls)` for a kind
that spends an existing budget (docs/extending.md has one).

Events are named tuples whose last field is the kind's name, so that two events of different kinds
never compare equal (`Timeout(1) != Crash(1)`) and equal events are equal values; the events of one
node and the events of one message share their views (`_NodeEvent`, `_MessageEvent`). Successor
generation builds them with `tuple.__new__`, at C speed.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

from .errors import UsageError
from .model import Step, crashed, payload

_new = tuple.__new__


class Budgets(NamedTuple):
    """The record `State.budgets` holds: what is left of each budget, the proposals made, and the
    set of down nodes (a bit mask, E7). The last one is not a budget, but like the budgets it is a
    small counter that every event reads and few change.

    A state holds it as a plain tuple in this order (the fingerprint is the marshal encoding of the
    state, and marshal writes no named tuple): `Budgets.initial` makes one, `Budgets.of` reads one
    by name, and events change one with `spend` and `put` at the positions named below."""

    drops: int  # drops left (`max_drops`)
    timeouts: int  # election timeouts left (`max_timeouts`)
    heartbeats: int  # heartbeats left (`max_heartbeats`)
    made: int  # client proposals made so far (up to `proposals`)
    crashes: int  # crashes left (`max_crashes`)
    down: int  # the down nodes, a bit set

    @staticmethod
    def initial(cfg) -> tuple:
        """A run's budgets at its start (`cfg` an `ExploreConfig`), as a state holds them."""
        return (cfg.max_drops, cfg.max_timeouts, cfg.max_heartbeats, 0, cfg.max_crashes, 0)

    @classmethod
    def of(cls, b: tuple) -> "Budgets":
        """A state's budgets, by name."""
        return cls._make(b)


# Positions in `State.budgets` (the fields of `Budgets`).
DROPS, TIMEOUTS, HEARTBEATS, MADE, CRASHES, DOWN = range(len(Budgets._fields))


def spend(b: tuple, k: int) -> tuple:
    """Budgets `b` with one unit of budget `k` (DROPS, TIMEOUTS, ...) spent."""
    return b[:k] + (b[k] - 1,) + b[k + 1:]


def put(b: tuple, k: int, value: int) -> tuple:
    """Budgets `b` with `value` at position `k` (MADE, DOWN, ...)."""
    return b[:k] + (value,) + b[k + 1:]


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
    b2 = spend(b, budget)
    nodes, down, step_of = s.nodes, b[DOWN], env._node_step
    for i, node in enumerate(nodes):
        if down >> i & 1:  # a down node does nothing (E8)
            continue
        step = step_of(cache, handler, node)
        if step is not None:
            out.append(env._apply(_new(cls, (i, kind)), s, i, step, s.net, b2))


#: what became of an in-flight message that an event takes off the network (`fate`)
DELIVERED, DROPPED = "delivered", "dropped"


class _Event:
    """What every event says of itself by default: not seen in the simulator, no fairness, takes no
    message, loses none, leaves its node up or down as it was."""

    __slots__ = ()

    observable = False
    fate = None
    cuts_off = False
    lifecycle = None  # "down" for an event that takes its node down, "up" for one that brings it up
    bound = None  # the `ExploreConfig` field that bounds the kind (None: nothing does)

    @classmethod
    def possible(cls, env) -> bool:
        """Whether the kind can be enabled at all under `env`'s configuration (a kind whose budget
        is zero never is)."""
        return cls.bound is None or getattr(env.config, cls.bound) > 0

    def fairness(self, fifo: bool):
        return None

    def renamed(self, ids):
        """The same event with its node ids mapped through `ids` (old id -> new id)."""
        return self

    @classmethod
    def enabled(cls, env, s, heads, out) -> None:
        """Append the kind's events enabled in state `s` (the values `expand` lists, in its order)
        without building their successor states. This default runs `expand`: a kind of zabmc's
        own lists them more cheaply."""
        found: list = []
        cls.expand(env, s, heads, found)
        out.extend(ev for ev, _, _ in found)

    def build(self, env, s):
        """The `(event, next_state, violation)` that `expand` lists for this event in state `s`
        (the event is enabled there). This default runs `expand`."""
        found: list = []
        type(self).expand(env, s, env._heads(s.net), found)
        for item in found:
            if item[0] == self:
                return item
        raise ValueError(f"{self!r} is not enabled")  # pragma: no cover - callers pass enabled ones


class _MessageEvent(_Event):
    """What the events about one in-flight message share: `(src, dst, msg, kind)`."""

    __slots__ = ()

    def signature(self) -> tuple:
        """What identifies the event among the simulator's steps: its message."""
        return (self.kind, self.src, self.dst, self.msg)

    def renamed(self, ids):
        return _new(type(self), (ids[self.src], ids[self.dst], self.msg, self.kind))

    def subject(self, model) -> str:
        """What the event is about, for people: `describe` after the kind (the simulator's trace
        prints it after its own kind column)."""
        return f"{self.src}->{self.dst} {model.describe_msg(self.msg)}"

    def describe(self, model) -> str:
        return f"{self.kind} {self.subject(model)}"

    def to_json(self, model) -> dict:
        return {"kind": self.kind, "src": self.src, "dst": self.dst, "msg": model.msg_json(self.msg)}


class _NodeEvent(_Event):
    """What the events of one node share: `(node, kind)`, the node being the one that acts."""

    __slots__ = ()
    observable = True
    fair = False  # whether the kind is fair for its node under liveness (its class: kind, node)

    def signature(self) -> tuple:
        """What identifies the event among the simulator's steps: its kind and node."""
        return (self.kind, self.node)

    def fairness(self, fifo: bool):
        return (self.kind, self.node) if self.fair else None

    def renamed(self, ids):
        return _new(type(self), (ids[self.node], *self[1:]))

    def on_step_args(self, lost=()) -> tuple:
        """`(kind, node, detail)`: the event as the simulator's `SimObserver.on_step` gets it."""
        return (self.kind, self.node, None)

    @property
    def actor(self) -> int:
        return self.node

    def subject(self, model) -> str:
        return f"node {self.node}"

    def describe(self, model) -> str:
        return f"{self.kind} {self.subject(model)}"

    def to_json(self, model) -> dict:
        return {"kind": self.kind, "node": self.node}


def _fields(name: str, fields: str, kind: str):
    """The immutable value behind an event class: a named tuple whose last field, `kind`,
    defaults to the kind's name."""
    return namedtuple(name, fields + " kind", defaults=(kind,))


class Deliver(_MessageEvent, _fields("Deliver", "src dst msg", "deliver")):
    """The network delivers message `msg` from `src` to `dst` (E4)."""

    __slots__ = ()
    observable = True
    fate = DELIVERED

    @property
    def actor(self) -> int:
        return self.dst

    def fairness(self, fifo: bool):
        """Under FIFO links a link's head is one class; otherwise each message is."""
        return ("deliver", self.src, self.dst) if fifo else ("deliver", self.src, self.dst, self.msg)

    def on_step_args(self, lost=()) -> tuple:
        return (self.kind, self.dst, (self.src, self.dst, self.msg))

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

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        out.extend([_new(Deliver, (src, dst, msg, "deliver")) for _, src, dst, msg in heads])

    def build(self, env, s):
        src, dst, msg = self[0], self[1], self[2]
        net = s.net
        if env.fifo:  # `Env._take`, inline
            k = src * env.n + dst
            net = (*net[:k], net[k][1:], *net[k + 1:])
        else:
            net = env._take(net, env._link(net, self))
        return env._apply(self, s, dst, env._deliver(s.nodes[dst], src, msg), net, s.budgets)

    def step(self, model, nodes, n):
        return model.deliver(nodes[self.dst], self.src, self.msg, n)


class Drop(_MessageEvent, _fields("Drop", "src dst msg", "drop")):
    """The network loses message `msg` from `src` to `dst` (budget `max_drops`). A model with
    connections says what the loss does to them (`Model.on_drop`, optional)."""

    __slots__ = ()
    actor = None
    bound = "max_drops"
    fate = DROPPED  # an explorer drop has no simulator step: the simulator drops at send time

    def on_step_args(self, lost=()) -> tuple:
        """The simulator's drop at send time: reported with its sender."""
        return (self.kind, self.src, (self.src, self.dst, self.msg))

    @staticmethod
    def expand(env, s, heads, out) -> None:
        b = s.budgets
        if not b[DROPS]:
            return
        b2 = spend(b, DROPS)
        take, state = env._take, type(s)
        nodes, net, ghost = s.nodes, s.net, s.ghost
        on_drop = getattr(env.model, "on_drop", None)
        for k, src, dst, msg in heads:  # `_one`, inline
            ev = _new(Drop, (src, dst, msg, "drop"))
            s2 = _new(state, (nodes, take(net, k), b2, ghost))
            steps = on_drop(nodes, src, dst, msg, env.n) if on_drop is not None else None
            out.append(env._apply_all(ev, s2, env._canon_steps(steps)) if steps
                       else (ev, s2, None))

    @staticmethod
    def _one(env, s, ev, k: int, b2: tuple, on_drop):
        """The successor of `s` when drop `ev` takes the message at net position `k`."""
        nodes = s.nodes
        s2 = _new(type(s), (nodes, env._take(s.net, k), b2, s.ghost))
        steps = on_drop(nodes, ev[0], ev[1], ev[2], env.n) if on_drop is not None else None
        return env._apply_all(ev, s2, env._canon_steps(steps)) if steps else (ev, s2, None)

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        if s.budgets[DROPS]:
            out.extend([_new(Drop, (src, dst, msg, "drop")) for _, src, dst, msg in heads])

    def build(self, env, s):
        return Drop._one(env, s, self, env._link(s.net, self), spend(s.budgets, DROPS),
                         getattr(env.model, "on_drop", None))

    def step(self, model, nodes, n):
        return None


class _TimerEvent(_NodeEvent):
    """A timer of one node: a budgeted step any up node may take when its kernel function (the
    model's `handler`) gives one; fair for its node."""

    __slots__ = ()
    fair = True
    budget: int  # its position in `State.budgets`
    bound: str  # the `ExploreConfig` field that sets the budget
    handler: str  # the model's kernel function, `handler(node, n)`
    cache: str  # the `Env` memo table of that function

    @classmethod
    def expand(cls, env, s, heads, out) -> None:
        _each_node(env, s, out, cls.budget, cls, cls._field_defaults["kind"],
                   getattr(env.model, cls.handler), getattr(env, cls.cache))

    @classmethod
    def enabled(cls, env, s, heads, out) -> None:
        b = s.budgets
        if not b[cls.budget]:
            return
        cache = getattr(env, cls.cache)
        get, down = cache.get, b[DOWN]
        for i, node in enumerate(s.nodes):
            if down >> i & 1:
                continue
            e = get(id(node))  # `Env._node_step`'s memo, read inline
            step = e[1] if e is not None else \
                env._node_step(cache, getattr(env.model, cls.handler), node)
            if step is not None:
                out.append(_new(cls, (i, cls._field_defaults["kind"])))

    def build(self, env, s):
        cls, i = type(self), self[0]
        step = env._node_step(getattr(env, cls.cache), getattr(env.model, cls.handler),
                              s.nodes[i])
        return env._apply(self, s, i, step, s.net, spend(s.budgets, cls.budget))

    def step(self, model, nodes, n):
        return getattr(model, self.handler)(nodes[self.node], n)


class Timeout(_TimerEvent, _fields("Timeout", "node", "timeout")):
    """Node `node`'s election timeout fires (budget `max_timeouts`, shared by all nodes)."""

    __slots__ = ()
    budget, bound, handler, cache = TIMEOUTS, "max_timeouts", "timeout", "_timeout_cache"


class Heartbeat(_TimerEvent, _fields("Heartbeat", "node", "heartbeat")):
    """Leader `node` sends a heartbeat (budget `max_heartbeats`)."""

    __slots__ = ()
    budget, bound, handler, cache = HEARTBEATS, "max_heartbeats", "heartbeat", "_heartbeat_cache"


class Propose(_NodeEvent, _fields("Propose", "node k", "propose")):
    """Client proposal number `k` (payload `zab-<k>`) goes to the lowest-id up node that may take
    it (budget `proposals`)."""

    __slots__ = ()
    bound = "proposals"

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
                b2 = put(b, MADE, made + 1)
                out.append(env._apply(_new(Propose, (i, made, "propose")), s, i, step, s.net, b2))
                return

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        b = s.budgets
        made = b[MADE]
        if made >= env.config.proposals:
            return
        down, get = b[DOWN], env._propose_cache.get
        for i, node in enumerate(s.nodes):
            if down >> i & 1:
                continue
            e = get((id(node), made))  # `Env._propose`'s memo, read inline
            if (e[1] if e is not None else env._propose(node, made)) is not None:
                out.append(_new(Propose, (i, made, "propose")))
                return

    def build(self, env, s):
        i, k = self[0], self[1]
        return env._apply(self, s, i, env._propose(s.nodes[i], k), s.net,
                          put(s.budgets, MADE, k + 1))

    def step(self, model, nodes, n):
        return model.propose(nodes[self.node], payload(self.k), n)

    def signature(self) -> tuple:
        """A proposal by its number: the simulator proposes payload k to whichever node leads."""
        return (self.kind, self.k)

    def on_step_args(self, lost=()) -> tuple:
        return (self.kind, self.node, payload(self.k))

    def subject(self, model) -> str:
        return f"node {self.node} proposes {payload(self.k).decode()}"

    def describe(self, model) -> str:
        return f"propose {payload(self.k).decode()} at node {self.node}"

    def to_json(self, model) -> dict:
        return {"kind": "propose", "node": self.node, "payload": payload(self.k).decode()}


def _build_enabled(kind, env, s, heads, out) -> None:
    """`kind.expand` as `kind.enabled`, each event built: for the kinds whose events are few
    (crashes, restarts), where listing them twice costs nothing worth a second loop."""
    events: list = []
    kind.enabled(env, s, heads, events)
    out.extend([ev.build(env, s) for ev in events])


class Crash(_NodeEvent, _fields("Crash", "node", "crash")):
    """Node `node` crashes (E7; budget `max_crashes`, shared by all nodes): it keeps its durable
    fields, loses the rest and every message in flight to or from it, and is down."""

    __slots__ = ()
    bound = "max_crashes"
    cuts_off = True
    lifecycle = "down"

    @classmethod
    def expand(cls, env, s, heads, out) -> None:
        _build_enabled(cls, env, s, heads, out)

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        b = s.budgets
        if not b[CRASHES]:
            return
        down = b[DOWN]
        for i in range(env.n):
            if not down >> i & 1:
                out.append(_new(Crash, (i, "crash")))

    def build(self, env, s):
        i, b, nodes = self[0], s.budgets, s.nodes
        b2 = put(spend(b, CRASHES), DOWN, b[DOWN] | 1 << i)
        node = env._crashed(nodes[i])
        nodes2 = nodes if node == nodes[i] else nodes[:i] + (node,) + nodes[i + 1:]
        ghost, v = env._check(s.ghost, i, node, (), nodes2, nodes[i])
        return self, type(s)(nodes2, env._cut_off(s.net, i), b2, ghost), v

    def step(self, model, nodes, n):
        return Step(crashed(model, nodes[self.node], n), (), ())

    def on_step_args(self, lost=()) -> tuple:
        """With the messages in flight to or from the node that the crash loses."""
        return (self.kind, self.node, lost)



class Restart(_NodeEvent, _fields("Restart", "node", "restart")):
    """Down node `node` restarts (E9; no budget): with its durable fields, it runs the start-up for
    itself; what it sends to down nodes is lost."""

    __slots__ = ()
    bound = "max_crashes"  # only a crash makes a node down
    lifecycle = "up"
    fair = True

    @classmethod
    def expand(cls, env, s, heads, out) -> None:
        _build_enabled(cls, env, s, heads, out)

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        down = s.budgets[DOWN]
        for i in range(env.n):
            if down >> i & 1:
                out.append(_new(Restart, (i, "restart")))

    def build(self, env, s):
        i, b = self[0], s.budgets
        step = env._node_step(env._start_cache, env.model.start, s.nodes[i])
        return env._apply(self, s, i, step, s.net, put(b, DOWN, b[DOWN] & ~(1 << i)))

    def step(self, model, nodes, n):
        return model.start(nodes[self.node], n)



class Start(_NodeEvent, _fields("Start", "node", "start")):
    """Node `node` starts up (C6): the seeded simulator's first step of each node. Not a kind of
    `KINDS`: the explorer's initial state is the start-up of every node."""

    __slots__ = ()
    observable = False

    def step(self, model, nodes, n):
        return model.start(nodes[self.node], n)


class Action(_Event, _fields("Action", "label", "action")):
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
        apply_all = env._apply_all
        for ev, steps in env._actions(s):
            out.append(apply_all(ev, s, steps))

    @staticmethod
    def enabled(env, s, heads, out) -> None:
        out.extend([ev for ev, _ in env._actions(s)])

    def build(self, env, s):
        for ev, steps in env._actions(s):
            if ev == self:
                return env._apply_all(self, s, steps)
        return env._apply_all(self, s, env._canon_steps(env.model.act(s.nodes, self[0], env.n)))

    def step(self, model, nodes, n):
        return None

    def fairness(self, fifo: bool):
        return ("action", self.label)

    def describe(self, model) -> str:
        return model.describe_action(self.label)

    def to_json(self, model) -> dict:
        return {"kind": "action", "action": list(self.label)}


#: Every kind of event, in the order `Env.successors` lists them. New kinds go at the end, so that
#: the indices of the older ones, and every trace made before, stay what they were.
KINDS = (Deliver, Drop, Timeout, Heartbeat, Propose, Crash, Restart, Action)
BY_NAME = {k._field_defaults["kind"]: k for k in KINDS}


def register_kind(cls) -> type:
    """Add a kind of event after the others (docs/extending.md): environments made from then on
    list its events last, and trace files may name it. A process registers it before it builds an
    `Env` (Spark executors too: from a module they import). Kind names are unique."""
    global KINDS
    kind = cls._field_defaults["kind"]
    if kind in BY_NAME:
        raise ValueError(f"an event kind named {kind!r} exists already")
    KINDS = KINDS + (cls,)
    BY_NAME[kind] = cls
    return cls


def unregister_kind(cls) -> None:
    """Take a kind `register_kind` added away again (for tests and examples)."""
    global KINDS
    KINDS = tuple(k for k in KINDS if k is not cls)
    BY_NAME.pop(cls._field_defaults["kind"], None)


def check_json(d) -> str:
    """The kind of a JSON event, after checking its shape; a one-line `UsageError` otherwise."""
    if not isinstance(d, dict):
        raise UsageError("malformed trace event: not an object")
    kind = d.get("kind")
    cls = BY_NAME.get(kind) if isinstance(kind, str) else None
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
