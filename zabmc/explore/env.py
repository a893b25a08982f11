"""The explorer's environment (docs/semantics.md, E1 to E10): states, events, budgets, network semantics,
the canonical state encoding and its fingerprint.

A `State` is an immutable value `(nodes, net, budgets, ghost)`:
- `nodes`: the model's node states, by id;
- `net`: the in-flight messages in canonical order. Under `bag` a sorted tuple of
  `((src, dst, msg), count)` (E5: identical messages are one multiset element); under `fifo` a
  tuple of n*n message queues, the queue of link (src, dst) at index src*n + dst, oldest first;
- `budgets`: an `events.Budgets` record held as a plain tuple, `(drops_left, timeouts_left,
  heartbeats_left, proposals_made, crashes_left, down)`, `down` the bit set of the nodes that are
  down (E7);
- `ghost`: the invariant checker's ghost state (all `None` parts with invariants off, E6).

Events are the values of `zabmc.core.events` (deliver, drop, timeout, heartbeat, propose, crash,
restart), which
also enumerates them: `successors(state)` lists them in a fixed order, so an event's index in that
list identifies it (traces store indices and rebuild states by replay); `events(state)` lists the
same events in the same order without building their states, and `successor(state, event)` builds
one. Every protocol step goes through the model's kernel functions.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from marshal import dumps as _dumps
from bisect import bisect_left

from xxhash import xxh3_128_digest

from zabmc.core.errors import UsageError
from zabmc.invariants import Checker, Violation
from zabmc.core.model import Model, crashed, initial_steps, payload

from zabmc.core import events as _events
from zabmc.core.events import DOWN, Budgets

NETWORKS = ("bag", "fifo")
_new = tuple.__new__
_KERNEL_CACHE_LIMIT = 500_000
_NODE_BYTES_LIMIT = 200_000


class ExploreConfig(NamedTuple):
    """The bounds and semantics of one exploration (recorded in every trace file)."""

    nodes: int = 3
    network: str = "fifo"
    max_drops: int = 0
    max_timeouts: int = 0
    max_heartbeats: int = 0
    proposals: int = 2
    depth: int = 40
    max_crashes: int = 0

    def validate(self) -> "ExploreConfig":
        if not 1 <= self.nodes <= 9:
            raise UsageError(f"--nodes must be between 1 and 9, got {self.nodes}")
        if self.network not in NETWORKS:
            raise UsageError(f"--network must be one of {', '.join(NETWORKS)}, got {self.network!r}")
        for name in ("max_drops", "max_timeouts", "max_heartbeats", "proposals", "depth",
                     "max_crashes"):
            v = getattr(self, name)
            if v < 0:
                raise UsageError(f"--{name.replace('_', '-')} must not be negative, got {v}")
        if self.proposals > 255 or max(self.max_drops, self.max_timeouts, self.max_heartbeats,
                                       self.max_crashes) > 65535:
            raise UsageError("budgets are limited to 255 proposals and 65535 drops, timeouts, "
                             "heartbeats or crashes")
        return self

    def to_json(self) -> dict:
        return self._asdict()


class State(NamedTuple):
    nodes: tuple
    net: tuple
    budgets: tuple
    ghost: tuple


class Env:
    """Successor generation, stepping and fingerprinting for one (model, config, checker)."""

    def __init__(self, model: Model, config: ExploreConfig, checker: Checker, start=None,
                 symmetry: bool = False):
        self.model = model
        self.config = config.validate()
        #: where searches start (`zabmc check --from`, `--scenario`): a `zabmc.explore.start.Start`,
        #: or None for the initial state. `config` is then the bounds of the whole run from the
        #: initial state (what a trace records): its budgets those used before the start plus
        #: those given, its depth the start's plus the depth given
        self.start = start
        self.checker = checker
        self.n = config.nodes
        self.fifo = config.network == "fifo"
        self._kernel_cache: dict = {}
        # the same for the node-only steps, one table per kind: id(node) -> (node, step or None)
        self._timeout_cache: dict = {}
        self._heartbeat_cache: dict = {}
        # proposals: (id(node), k) -> (node, step of proposal k, or None when it may not propose)
        self._propose_cache: dict = {}
        # the kinds this configuration can ever enable (the others' expanders would only find
        # their budget empty on every state): same events, same order, fewer calls
        kinds = tuple(kind for kind in _events.KINDS if kind.possible(self))
        self._expanders = tuple(kind.expand for kind in kinds)
        self._listers = tuple(kind.enabled for kind in kinds)  # the same, without the states
        # the encoding's tuple header: marshal version 2, TYPE_TUPLE, n nodes + net, budgets, ghost
        self._head = b"(" + (self.n + 3).to_bytes(4, "little")
        self._node_bytes: dict = {}  # id(node) -> (node, its marshal-v2 bytes)
        # one object for each node and message value (`_canon`): bytes -> the canonical object
        self._canon_nodes: dict = {}
        self._canon_msgs: dict = {}
        self._start_cache: dict = {}  # restarts, as the timers: id(node) -> (node, step)
        self._crash_cache: dict = {}  # id(node) -> (node, the node after a crash, canonical)
        # the checker's steps: ids of (ghost, i, node, effects, node before) -> (them, result)
        self._check_cache: dict = {}
        self._action_cache: dict = {}  # (*ids of the nodes, down) -> (nodes, `_actions`)
        self._no_actions = getattr(model, "actions", None) is None
        n = self.n
        self._links = tuple((k, k // n, k % n) for k in range(n * n))  # fifo: (k, src, dst)
        # with no property checked the ghost never changes and no step violates anything
        self._checking = checker.active
        #: `zabmc check --symmetry`: a `symmetry.PayloadSymmetry`, whose fingerprint (of a
        #: state's canonical form under the model's declared permutations) replaces `fingerprint`;
        #: None otherwise. The encoding stays the state's own
        self.symmetry = None
        if symmetry:
            from .symmetry import PayloadSymmetry

            self.symmetry = PayloadSymmetry(self)
            self.fingerprint = self.symmetry.fingerprint

    @property
    def prefix(self) -> tuple:
        """The event indices from the initial state to the start state (empty without a start)."""
        return self.start.prefix if self.start is not None else ()

    @property
    def search_config(self) -> ExploreConfig:
        """The bounds a search counts from its start state: `config` without a start; with one,
        the bounds given (its depth counted from the start, the budgets those left there)."""
        return self.start.given if self.start is not None else self.config

    # --- states ------------------------------------------------------------------------------------
    def initial(self) -> tuple[State, Violation | None]:
        """The state every search starts from, with the violation its last step caused: the
        initial state (`origin`), or with a start (`zabmc check --from`) the state after the
        start's prefix. A search's paths are event indices from here; `prefix` leads here."""
        if self.start is not None:
            return self.start.state, self.start.violation
        return self.origin()

    def origin(self) -> tuple[State, Violation | None]:
        """E3: the simulator's start-up for every node; the start-up steps feed the ghost too."""
        n = self.n
        steps = initial_steps(self.model, n)
        steps = [self._canon_step(s) for s in steps]
        nodes = tuple(s.node for s in steps)
        ghost = self.checker.initial_ghost(n)
        violation = None
        for i, s in enumerate(steps):
            ghost, v = self.checker.step(ghost, i, s.node, s.effects, nodes)
            violation = violation or v
        cfg = self.config
        budgets = Budgets.initial(cfg)
        net = ((),) * (n * n) if self.fifo else ()
        for i, s in enumerate(steps):
            net = self._add(net, i, s.outs)
        return State(nodes, net, budgets, ghost), violation

    def _add(self, net: tuple, src: int, outs) -> tuple:
        """`net` plus the messages `outs` = [(dst, msg), ...] sent by `src`, in canonical order.

        Untouched entries keep their identity (and so their memoised kernel results)."""
        if not outs:
            return net
        if self.fifo:
            links = list(net)
            base = src * self.n
            for dst, msg in outs:
                links[base + dst] += (msg,)
            return tuple(links)
        net = list(net)
        for dst, msg in outs:
            key = (src, dst, msg)
            k = bisect_left(net, (key,))
            if k < len(net) and net[k][0] == key:
                net[k] = (key, net[k][1] + 1)
            else:
                net.insert(k, (key, 1))
        return tuple(net)

    def _take(self, net: tuple, k: int) -> tuple:
        """`net` minus one copy of its k-th element (bag) or the head of link k (fifo)."""
        if self.fifo:
            return (*net[:k], net[k][1:], *net[k + 1:])
        item, count = net[k]
        if count == 1:
            return net[:k] + net[k + 1 :]
        return net[:k] + ((item, count - 1),) + net[k + 1 :]

    def _cut_off(self, net: tuple, i: int) -> tuple:
        """`net` without any message to or from node `i` (its connections close at a crash, E7)."""
        if self.fifo:
            n = self.n
            return tuple(() if k // n == i or k % n == i else q for k, q in enumerate(net))
        return tuple(e for e in net if e[0][0] != i and e[0][1] != i)

    def _link(self, net: tuple, ev) -> int:
        """The position in `net` of the message that delivery or drop `ev` takes: its link's
        queue (fifo) or its multiset element (bag)."""
        if self.fifo:
            return ev[0] * self.n + ev[1]
        return bisect_left(net, ((ev[0], ev[1], ev[2]),))

    def _heads(self, net: tuple):
        """`(k, src, dst, msg)` for every message that may be delivered or dropped next."""
        if self.fifo:
            return [(k, src, dst, net[k][0]) for k, src, dst in self._links if net[k]]
        return [(k, src, dst, msg) for k, ((src, dst, msg), _) in enumerate(net)]

    # --- events --------------------------------------------------------------------------------------
    def events(self, s: State) -> list[tuple]:
        """Every enabled event, in the fixed order successors() uses (the same indices), without
        building their successor states: `successor(s, ev)` builds the one of an event.

        What decides whether an event is enabled is cheap for most kinds (a message at a link's
        head, a budget, a down node); a timeout, heartbeat or proposal is enabled when its kernel
        function gives a step, which this asks of the memoised kernel, as `successors` does."""
        out: list = []
        heads = self._heads(s.net)
        for enabled in self._listers:
            enabled(self, s, heads, out)
        return out

    def successor(self, s: State, ev) -> tuple:
        """`(ev, next_state, violation or None)` for event `ev`, enabled in `s` (one of
        `events(s)`): the item `successors(s)` lists for it."""
        return ev.build(self, s)

    def successors(self, s: State) -> list:
        """`(event, next_state, violation or None)` for every enabled event, in a fixed order: the
        kinds in `events.KINDS` order (deliveries in canonical net order, drops in the same order,
        timeouts, heartbeats, the proposal), each kind's events in ascending node order."""
        out: list = []
        heads = self._heads(s.net)
        for expand in self._expanders:
            expand(self, s, heads, out)
        return out

    def _deliver(self, node, src: int, msg):
        """The kernel's deliver(), memoised by the identity of (node, src, msg).

        Node states and messages are shared between the many global states that contain them, so
        the same delivery recurs often; a hit also returns the same message objects, which keeps
        hitting further down. Entries hold the node and message, so their ids stay unique."""
        cache = self._kernel_cache
        key = (id(node), src, id(msg))
        e = cache.get(key)
        if e is None:
            if len(cache) >= _KERNEL_CACHE_LIMIT:
                cache.clear()
            e = cache[key] = (node, msg,
                              self._canon_step(self.model.deliver(node, src, msg, self.n)))
        return e[2]

    def _node_step(self, cache: dict, handler, node):
        """`handler(node, n)` (a timeout or a heartbeat, a Step or None), memoised by the node's
        identity like `_deliver`: a node state recurs in the many global states that share it."""
        e = cache.get(id(node))
        if e is None:
            if len(cache) >= _KERNEL_CACHE_LIMIT:
                cache.clear()
            e = cache[id(node)] = (node, self._canon_step(handler(node, self.n)))
        return e[1]

    def _propose(self, node, k: int):
        """The step of client proposal `k` at `node`, or None when `node` may not take one;
        memoised by the node's identity and `k`."""
        cache = self._propose_cache
        key = (id(node), k)
        e = cache.get(key)
        if e is None:
            if len(cache) >= _KERNEL_CACHE_LIMIT:
                cache.clear()
            model = self.model
            step = model.propose(node, payload(k), self.n) if model.can_propose(node) else None
            e = cache[key] = (node, self._canon_step(step))
        return e[1]

    def _crashed(self, node):
        """`node` after a crash (E7), canonical; memoised by the node's identity."""
        cache = self._crash_cache
        e = cache.get(id(node))
        if e is None:
            if len(cache) >= _KERNEL_CACHE_LIMIT:
                cache.clear()
            e = cache[id(node)] = (node, self._canon(crashed(self.model, node, self.n)))
        return e[1]

    def _canon(self, x):
        """The one object of node value `x` this environment hands out: `x` itself the first time
        its value is met, the object met first since. Values are told apart by their canonical
        bytes, so the canonical object encodes, and therefore steps, exactly as `x` does.

        The memoised kernel and the encoding are keyed by identity; without this, a node that an
        unmemoised step makes (a model action, a crash) is a new object however often its value
        recurs, and every step from it misses the memos again."""
        known = self._node_bytes
        e = known.get(id(x))
        if e is not None:  # a canonical node (below), or one a state held when it was encoded
            return x
        b = _dumps(tuple(x), 2)
        table = self._canon_nodes
        c = table.get(b)
        if c is None or type(c) is not type(x):
            if len(table) >= _NODE_BYTES_LIMIT:
                table.clear()
            table[b] = x
            if len(known) >= _NODE_BYTES_LIMIT:
                known.clear()
            known[id(x)] = (x, b)
            return x
        if id(c) not in known:  # its entry went with a clearing: put it back
            known[id(c)] = (c, b)
        return c

    def _canon_msg(self, m):
        """The one object of message value `m`, as `_canon` for nodes."""
        table = self._canon_msgs
        b = _dumps(m, 2)
        c = table.get(b)
        if c is None:
            if len(table) >= _NODE_BYTES_LIMIT:
                table.clear()
            table[b] = m
            return m
        return c if type(c) is type(m) else m

    def _canon_step(self, step):
        """`step` (a kernel Step, or None) with its node and messages canonical (`_canon`)."""
        if step is None:
            return None
        node, outs, effects = step
        c = self._canon(node)
        if outs:
            cm = self._canon_msg
            outs2 = tuple([(dst, cm(msg)) for dst, msg in outs])
            if any(a[1] is not b[1] for a, b in zip(outs, outs2)):
                return step._replace(node=c, outs=outs2)
        return step if c is node else step._replace(node=c)

    def _apply(self, ev, s: State, i: int, step, net: tuple, budgets: tuple):
        """The successor `(ev, next_state, violation)` of `s` when node `i` takes `step`."""
        nodes = s.nodes
        prev = nodes[i]
        node, outs, effects = step
        if node is not prev:
            nodes = (*nodes[:i], node, *nodes[i + 1:])
        if outs:
            down = budgets[DOWN]
            if down:  # a message to a down node is lost at send (E8)
                outs = tuple(o for o in outs if not down >> o[0] & 1)
            net = self._add(net, i, outs)
        if not self._checking:
            return ev, _new(State, (nodes, net, budgets, s.ghost)), None
        ghost = s.ghost  # `_check`, inline
        key = (id(ghost), i, id(node), id(effects), id(prev))
        e = self._check_cache.get(key)
        if e is None:
            e = self._check_miss(key, ghost, i, node, effects, nodes, prev)
        ghost, violation = e[4]
        return ev, _new(State, (nodes, net, budgets, ghost)), violation

    def _check(self, ghost, i: int, node, effects: tuple, nodes: tuple, prev):
        """`Checker.step(ghost, i, node, effects, nodes, prev)`, memoised by the identities of
        what it reads: the ghost, node `i` after and before the step, and the step's effects
        (`Checker.step` reads no other node). With canonical nodes (`_canon`) most steps recur:
        92% of them on zk-fixed to depth 14."""
        e = self._check_cache.get((id(ghost), i, id(node), id(effects), id(prev)))
        if e is None:
            e = self._check_miss((id(ghost), i, id(node), id(effects), id(prev)), ghost, i, node,
                                 effects, nodes, prev)
        return e[4]

    def _check_miss(self, key, ghost, i, node, effects, nodes, prev):
        """The entry of `_check` for `key`, computed; it holds the objects whose ids make it."""
        cache = self._check_cache
        if len(cache) >= _KERNEL_CACHE_LIMIT:
            cache.clear()
        e = cache[key] = (ghost, node, effects, prev,
                          self.checker.step(ghost, i, node, effects, nodes, prev))
        return e

    def _actions(self, s: State) -> list:
        """The model's enabled actions in `s` with their steps, `[(Action event, [(i, Step)])]`
        in `Model.actions` order, the steps canonical (`_canon_step`); memoised by the identities
        of the nodes and the set of down nodes, which is all `Model.actions` and `Model.act`
        read. The entry holds the nodes, so their ids stay theirs."""
        if self._no_actions:
            return []
        nodes = s.nodes
        down = s.budgets[DOWN]
        key = (*map(id, nodes), down)
        cache = self._action_cache
        e = cache.get(key)
        if e is None:
            if len(cache) >= _KERNEL_CACHE_LIMIT:
                cache.clear()
            model, n, canon = self.model, self.n, self._canon_steps
            e = cache[key] = (nodes, [
                (_new(_events.Action, (label, "action")), canon(model.act(nodes, label, n)))
                for label in model.actions(nodes, down, n)])
        return e[1]

    def _canon_steps(self, steps) -> list:
        """`[(i, Step)]` with every step canonical (`_canon_step`)."""
        canon = self._canon_step
        return [(i, canon(step)) for i, step in steps]

    def _apply_all(self, ev, s: State, steps):
        """The successor `(ev, next_state, violation)` of `s` when nodes take `steps`, a sequence
        of `(i, Step)` applied in order (a model action that changes several nodes at once), each
        step canonical (`_canon_step`).

        Each step feeds the checker in turn; the first violation found is the step's, carrying
        the others the action caused."""
        nodes, net, ghost = s.nodes, s.net, s.ghost
        down = s.budgets[DOWN]
        found = []
        check = self._check
        for i, step in steps:
            prev = nodes[i]
            if step.node is not prev:
                nodes = nodes[:i] + (step.node,) + nodes[i + 1:]
            outs = step.outs
            if outs:
                if down:
                    outs = tuple(o for o in outs if not down >> o[0] & 1)
                net = self._add(net, i, outs)
            ghost, v = check(ghost, i, step.node, step.effects, nodes, prev)
            if v is not None:
                found.extend(v.all())
        violation = None
        if found:
            violation = found[0]._replace(also=tuple(found[1:]))
        return ev, State(nodes, net, s.budgets, ghost), violation

    def step(self, s: State, event: tuple) -> tuple[State, Violation | None]:
        """Apply one event (matched by value against the enabled ones)."""
        for ev in self.events(s):
            if ev == event:
                return self.successor(s, ev)[1:]
        raise UsageError(f"event {event.describe(self.model)} is not enabled in this state")

    def step_index(self, s: State, index: int) -> tuple[tuple, State, Violation | None]:
        evs = self.events(s)
        if not 0 <= index < len(evs):
            raise UsageError(f"event index {index} is out of range for this state")
        return self.successor(s, evs[index])

    # --- encoding and fingerprint (E1) -----------------------------------------------------------
    def encode(self, s: State) -> bytes:
        """The canonical bytes of the whole state: every node field, the in-flight messages in
        canonical order, the budgets and the ghost.

        The encoding is `marshal` format version 2 of the state as plain tuples, ints, bytes, bools
        and None: `marshal.dumps((*map(tuple, s.nodes), s.net, s.budgets, s.ghost), 2)`. Version 2
        writes no back-references, so equal values give equal bytes however they share objects;
        the format is decodable, hence injective. It runs in C, which matters: encoding is on the
        hot path of every successor.

        Version 2 writes a tuple as its header (`(`, the item count) followed by its items' own
        encodings, so the state's bytes are that header, each node's bytes, and the bytes of the
        rest. A node's bytes are memoised by its identity (`_node_bytes`): most successors share
        all nodes but one with their parent, and the memoised kernel hands out the same node
        objects again and again.
        """
        get = self._node_bytes.get
        parts = [self._head]
        for x in s[0]:
            e = get(id(x))
            parts.append(e[1] if e is not None else self._encode_node(x))
        # (net, budgets, ghost) in one call, without its own 5-byte tuple header
        parts.append(_dumps(s[1:], 2)[5:])
        return b"".join(parts)

    def fingerprint(self, s: State) -> bytes:
        """xxh3-128 of the canonical encoding: 16 bytes (with `symmetry`, of the least one over
        the state's orbit: `symmetry.PayloadSymmetry.fingerprint`)."""
        return xxh3_128_digest(self.encode(s))

    def _encode_node(self, x) -> bytes:
        """A node's marshal-v2 bytes, memoised by identity (the entry keeps the node alive, so its
        id stays its own)."""
        cache = self._node_bytes
        if len(cache) >= _NODE_BYTES_LIMIT:
            cache.clear()
        b = _dumps(tuple(x), 2)
        cache[id(x)] = (x, b)
        return b

    # --- views -------------------------------------------------------------------------------------
    def state_json(self, s: State) -> dict:
        model = self.model
        if self.fifo:
            n = self.n
            net = [{"src": k // n, "dst": k % n, "msgs": [model.msg_json(m) for m in msgs]}
                   for k, msgs in enumerate(s.net) if msgs]
        else:
            net = [{"src": src, "dst": dst, "msg": model.msg_json(msg), "count": cnt}
                   for (src, dst, msg), cnt in s.net]
        b = Budgets.of(s.budgets)
        budgets = {"drops_left": b.drops, "timeouts_left": b.timeouts,
                   "heartbeats_left": b.heartbeats, "proposals_made": b.made}
        if self.config.max_crashes:
            budgets["crashes_left"] = b.crashes
        down = b.down
        out: dict[str, Any] = {
            "nodes": [model.node_json(x) for x in s.nodes],
            "network": net,
            "budgets": budgets,
        }
        if self.config.max_crashes:
            out["down"] = [i for i in range(self.n) if down >> i & 1]
        if self.checker.active:
            out["ghost"] = self.checker.ghost_json(s.ghost)
        return out
