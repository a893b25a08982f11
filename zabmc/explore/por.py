"""Partial-order reduction for the breadth-first search (`zabmc check --reduction por`).

At each state the search expands a *stubborn set* of the enabled events instead of all of them: the
events of a set of nodes S that no sequence of events of the other nodes can interfere with before
S itself acts. docs/reduction.md states the method and why it keeps every verdict; in brief:

- Two events of one node never commute. Events of different nodes commute on FIFO links: one takes
  the head of a link into its node, the other appends to the tail of links out of its own, and the
  properties' ghost state is per node (delivery logs) or a sorted set (leaders per epoch).
- The nodes outside S can still disturb S's events in four ways, and each is closed off:
  - a node q outside S may later send to x in S on the empty link q->x, enabling a delivery that
    competes with S's: then q joins S (S is closed under "has an empty link into S");
  - a crash cuts links and a down node loses what is sent to it: a state with crashes left in its
    budget, or with a down node, is expanded fully or puts the down node in S;
  - a client proposal goes to the lowest-id node that may take it, is appended to the ghost's
    broadcast order and is checked against every delivery log (primary integrity): while
    proposals are left, S contains no node that may take one (not only the lowest, to which an
    enabled proposal goes now: an event outside S can take the right from that node, and the
    proposal would then go to the next, inside S), and no event of S may change a delivery
    log or whether its node may propose (a proposal outside S must see the same);
  - a model's own actions (`Model.actions`) and drops that act on connections (`Model.on_drop`)
    change several nodes at once: S takes every node an enabled action touching it reads or
    writes (`Model.footprint`), every node coupled with S's by an action that may become enabled
    before S acts (`Model.couplings`), and the nodes at both ends of every drop it contains.
- S must contain a delivery or a restart: an event nothing outside S can disable (the key event).
- Where no set of nodes will do, and no drop or crash is left, a single delivery may still be
  stubborn: one that its node's leaving undoes (`Model.undone`), which every run that avoids it
  either leaves alone or makes a no-op, by taking its node out of the role it was sent to.
- The ignoring proviso, for a level-synchronous BFS: a state whose stubborn set leads back to a
  state of its own level or an earlier one is expanded fully (every cycle of the reduced graph
  then contains a fully expanded state). "Earlier or same level" does not depend on the order the
  level is expanded in, so the reduced state space is a function of the configuration.

The reduction needs FIFO links: on a bag, any node's send enables a new delivery at once, so no set
smaller than the whole cluster is stubborn.
"""

from __future__ import annotations

from zabmc.core.errors import UsageError

from zabmc.core.events import (CRASHES, DOWN, DROPS, HEARTBEATS, MADE, TIMEOUTS, Action, Deliver, Drop,
                     Heartbeat, Propose, Restart, Timeout)
from .progress import Progress

REDUCTIONS = ("none", "por", "por+sleep")
_CLOSURE_MEMO = 100_000  # closures memoised by (empty links, seed set); few patterns recur


#: properties whose check the reduction's argument does not cover (docs/reduction.md, "Why the
#: verdict is kept"): leader-log-completeness compares a node's election with every other node's
#: log at that step only, and the reduction may move another node's delivery past the election
UNKEPT = ("leader-log-completeness",)


def refuse(reduction: str, *, network: str, model, strategy: str = "bfs",
           engine: str = "in-process", liveness: bool = False, properties=()) -> None:
    """A one-line `UsageError` when `--reduction` cannot be used with the rest of the run."""
    if reduction not in REDUCTIONS:
        raise UsageError(f"--reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    if reduction == "none":
        return
    if liveness:
        raise UsageError(f"--reduction {reduction} checks safety only: not with --liveness")
    for name in UNKEPT:
        if name in properties:
            raise UsageError(f"--reduction {reduction} does not keep {name}: the property reads "
                             "every node's log at a node's election only, and the reduction may "
                             "move another node's delivery past that election")
    if strategy != "bfs" or engine != "in-process":
        raise UsageError(f"--reduction {reduction} works with the in-process breadth-first search "
                         "(--strategy bfs --engine in-process)")
    if network != "fifo":
        raise UsageError(f"--reduction {reduction} needs --network fifo: on a bag any send "
                         "enables a delivery at once, so nothing can be left out")
    if getattr(model, "actions", None) is not None and (
            getattr(model, "footprint", None) is None or getattr(model, "couplings", None) is None):
        raise UsageError(f"--reduction {reduction} cannot reduce model {model.name}: its own "
                         "steps (actions) change several nodes at once, and it does not say "
                         "which (Model.footprint, Model.couplings)")


#: the budgeted kinds with budget left that `Model.couplings` is told of, by (timeouts, drops,
#: heartbeats) left
_LEFT = {(t, d, h): frozenset(k for k, on in (("timeout", t), ("drop", d), ("heartbeat", h)) if on)
         for t in (False, True) for d in (False, True) for h in (False, True)}


def _empty_links(net: tuple) -> int:
    """The empty links of a network, as bits src*n + dst."""
    empty = 0
    for k, q in enumerate(net):
        if not q:
            empty |= 1 << k
    return empty


def _size_then_seed(c: tuple) -> tuple:
    return c[0], c[1]


class Stubborn:
    """Chooses, per state, the events a reduced search expands (`choose`)."""

    def __init__(self, env, sleep: bool = False):
        refuse("por", network=env.config.network, model=env.model,
               properties=env.checker.names)
        self.sleep = Sleep() if sleep else None  # sleep sets beside the stubborn sets
        # the model's progress measure, which the proviso asks where a kept event goes (None: the
        # level proviso alone)
        self.progress = Progress.of_model(env.model, env.checker)
        self.env = env
        self.n = env.n
        self.proposals = env.config.proposals
        self.on_drop = getattr(env.model, "on_drop", None) is not None
        self.can_propose = env.model.can_propose
        self.checking_logs = env.checker.active and env.checker.need_logs
        # a model with actions of its own: what they read and write (`_choose_acting`)
        model = env.model
        self.acting = getattr(model, "actions", None) is not None
        if self.acting:
            self.footprint = model.footprint
            self.couplings = model.couplings
            every = (1 << self.n * self.n) - 1
            self.may_send = getattr(model, "may_send", None) or (lambda nodes, down, n: every)
        # a model that says which deliveries their node's leaving undoes (`_undone`)
        self.undone = getattr(model, "undone", None) if self.acting else None
        self._closures: dict = {}
        # the candidate sets by what decides them (`choose`): few patterns recur
        self._candidates: dict = {}
        # counts of the states expanded in part and in full (what the summary reports)
        self.reduced = 0
        self.full = 0

    def choose(self, s, x: Expansion) -> list | None:
        """The indices (into `x.events`, every event enabled in `s`, in `Env.successors`' order)
        of a stubborn set's events, smallest first among the candidate node sets; None when `s`
        must be expanded fully. It builds the successors of only the events it must look into
        (`_guarded`), through `x`.

        The proviso (no event of the set may lead back to the same or an earlier level) is the
        caller's: it knows the levels."""
        b = s.budgets
        if b[CRASHES]:
            return None
        if self.acting:
            return self._choose_acting(s, x)
        evs = x.events
        empty = _empty_links(s.net)
        # The events are the deliveries, one per non-empty link in link order, then the others:
        # the empty links and the others (kind, node) say what every candidate set is.
        busy = len(s.net) - empty.bit_count()
        key = (empty, b[DOWN], *[(type(ev), ev[0]) for ev in evs[busy:]])
        memo = self._candidates
        cands = memo.get(key)
        if cands is None:
            if len(memo) > _CLOSURE_MEMO:
                memo.clear()
            cands = memo[key] = self._sets(evs, empty, b[DOWN], b[DROPS] > 0)
        if not cands or not b[MADE] < self.proposals:
            return cands[0][1] if cands else None
        # proposals are left: S holds no node that may take one (an event outside S can take
        # that right from a lower node, and the proposal then goes to S's), and what a proposal
        # reads must not move
        may = self._may_propose(s.nodes, b[DOWN])
        for S, keep in cands:
            if not S & may and self._guarded(s, x, keep):
                return keep
        return None

    def _sets(self, evs, empty: int, down: int, drops_left: bool) -> tuple:
        """The candidate stubborn sets of a state whose enabled events are `evs` (with `empty`
        links and `down` nodes), as kept indices, the fewest events first and the lowest seed on
        a tie; all but `_guarded`, which reads the successors. () when there is none: the state
        is expanded fully."""
        n = self.n
        actors = []  # the node each event belongs to (a drop: the node its link leads to)
        seeds = 0  # nodes with a delivery or restart enabled: an event no other node can disable
        proposer = 0  # the node an enabled proposal goes to, as a bit: it stays outside S
        for ev in evs:
            t = type(ev)
            if t is Deliver:
                a = ev.dst
                seeds |= 1 << a
            elif t is Drop:
                a = ev.dst
            elif t is Propose:
                a = ev.node
                proposer = 1 << a
            elif t is Action:
                return ()
            else:
                a = ev.node
                if t is Restart:
                    seeds |= 1 << a
            actors.append(a)
        closures = self._closures
        if len(closures) > _CLOSURE_MEMO:
            closures.clear()
        everyone = (1 << n) - 1
        drops = self.on_drop and drops_left
        cands = []  # (events, seed, S, kept indices)
        for p in range(n):
            if not seeds >> p & 1:
                continue
            start = 1 << p | down
            S = closures.get((empty, start))
            if S is None:
                S = closures[(empty, start)] = self._closure(start, empty)
            if S == everyone or S & proposer or any(S == c[2] for c in cands):
                continue
            if drops and not self._drops_inside(evs, S):
                continue
            keep = [i for i, a in enumerate(actors) if S >> a & 1]
            cands.append((len(keep), p, S, keep))
        cands.sort(key=_size_then_seed)
        return tuple((c[2], c[3]) for c in cands)

    def _choose_acting(self, s, x: Expansion) -> list | None:
        """`choose` for a model with actions of its own (docs/reduction.md, "Models with actions
        of their own"). An event's nodes are its node's (a delivery's: its destination; a drop's:
        its link's destination), an action's those it reads or writes (`Model.footprint`). S is
        closed under the links on which a node outside may still send into S (empty, and
        `Model.may_send`), the nodes of every enabled action that touches S, and the nodes
        coupled with S's (`Model.couplings`: actions not enabled yet that may become so before S
        acts). T(s) is every enabled event whose nodes meet S. The seeds are the nodes with a
        delivery or a restart, and those an enabled action writes (after the closure that action
        lies inside S, where nothing outside can disable it: a key event). While proposals are
        left, S holds no node that may take one."""
        b, evs, n = s.budgets, x.events, self.n
        nodes, down = s.nodes, b[DOWN]
        left = _LEFT[(b[TIMEOUTS] > 0, b[DROPS] > 0, b[HEARTBEATS] > 0)]
        couple = self.couplings(nodes, down, n, left)
        everyone = (1 << n) - 1
        if not down and all(c | 1 << i == everyone for i, c in enumerate(couple)):
            # every node is coupled with every other: S could only be everyone
            return self._undone(s, x)
        open_ = _empty_links(s.net) & self.may_send(nodes, down, n)
        footprint = self.footprint
        scopes, acts = [], []  # each event's nodes; the enabled actions' nodes
        seeds = 0
        for ev in evs:
            t = type(ev)
            if t is Deliver:
                m = 1 << ev.dst
                seeds |= m
            elif t is Drop:
                m = 1 << ev.dst
            elif t is Action:
                reads, writes = footprint(nodes, down, ev.label, n)
                m = reads | writes
                seeds |= writes
                acts.append(m)
            else:
                m = 1 << ev.node
                if t is Restart:
                    seeds |= m
            scopes.append(m)
        proposals_left = b[MADE] < self.proposals
        # nodes that may take a proposal: a proposal would write them
        may_propose = self._may_propose(nodes, down) if proposals_left else 0
        drops = self.on_drop and b[DROPS] > 0
        cands = []
        for p in range(n):
            if not seeds >> p & 1:
                continue
            S = self._acting_closure(1 << p | down, open_, acts, couple)
            if S == everyone or S & may_propose or any(S == c[2] for c in cands):
                continue
            if drops and not self._drops_inside(evs, S):
                continue
            keep = [i for i, m in enumerate(scopes) if m & S]
            cands.append((len(keep), p, S, keep))
        cands.sort(key=_size_then_seed)
        for c in cands:
            if not proposals_left or self._guarded(s, x, c[3]):
                return c[3]
        return self._undone(s, x)

    def _undone(self, s, x: Expansion) -> list | None:
        """Where no set of nodes will do: a set of one delivery that its node's leaving undoes
        (docs/reduction.md, "A delivery that leaving undoes"), as `[index]`, the first in the
        events' order; None if there is none. The model says which (`Model.undone`); here, what
        every such set needs besides: no drop or crash left (either could take the message or
        cut the connection), and the delivery invisible (it sends nothing, changes no ghost state,
        reports nothing, and, while proposals are left, does not change who may take one)."""
        b = s.budgets
        if self.undone is None or b[DROPS]:
            return None
        nodes, down, n, net = s.nodes, b[DOWN], self.n, s.net
        proposals_left = b[MADE] < self.proposals
        may = self._may_propose(nodes, down) if proposals_left else 0
        for i, ev in enumerate(x.events):
            if type(ev) is not Deliver or may >> ev.dst & 1:
                continue
            _, s2, bad = x.get(i)
            if bad is not None or s2.ghost != s.ghost:
                continue
            link = ev.src * n + ev.dst
            net2 = s2.net
            if (net2[link] != net[link][1:] or net2[:link] != net[:link]
                    or net2[link + 1:] != net[link + 1:]):
                continue  # it sends something
            if proposals_left and not self._guarded(s, x, [i]):
                continue
            if self.undone(nodes, down, n, ev, s2.nodes):
                return [i]
        return None

    def _may_propose(self, nodes, down: int) -> int:
        """The up nodes that may take a client proposal, as bits."""
        can, may = self.can_propose, 0
        for i, node in enumerate(nodes):
            if not down >> i & 1 and can(node):
                may |= 1 << i
        return may

    def _acting_closure(self, S: int, open_: int, acts: list, couple: tuple) -> int:
        """The smallest superset of `S` closed under: a node with a link in `open_` into S; the
        nodes of an enabled action (`acts`) that meets S; the nodes `couple` couples with S's."""
        n = self.n
        while True:
            S2 = self._closure(S, open_)
            for m in acts:
                if m & S2:
                    S2 |= m
            for i in range(n):
                if S2 >> i & 1:
                    S2 |= couple[i]
            if S2 == S:
                return S
            S = S2

    def _closure(self, S: int, empty: int) -> int:
        """The smallest superset of node set `S` (a bit mask) that has no empty link into it from
        outside (`empty`: the empty links, bit src*n + dst): a node that may still send to S over
        an empty link belongs to S."""
        n = self.n
        work = [x for x in range(n) if S >> x & 1]
        while work:
            x = work.pop()
            for q in range(n):
                if not S >> q & 1 and empty >> (q * n + x) & 1:
                    S |= 1 << q
                    work.append(q)
        return S

    def _drops_inside(self, evs, S) -> bool:
        """With `Model.on_drop`, a drop changes the nodes at both ends of its link: no enabled
        drop may join S to a node outside it (later messages on such a link queue behind the
        head, so the enabled drops are the only ones that can happen before S acts)."""
        for ev in evs:
            if type(ev) is Drop and (S >> ev.src & 1) != (S >> ev.dst & 1):
                return False
        return True

    def _guarded(self, s, x: Expansion, keep) -> bool:
        """While proposals are left, a proposal may happen outside S before S acts; it must not
        see a different cluster for S having acted first: no event of S may change a delivery
        log (a proposal is checked against them, and appended to the broadcast order deliveries
        are checked against) or whether its node may take a proposal (the lowest-id such node
        takes it)."""
        nodes, logs = s.nodes, s.ghost[0]
        can = self.can_propose
        for i in keep:
            s2 = x.get(i)[1]
            if self.checking_logs and s2.ghost[0] != logs:
                return False
            for old, new in zip(nodes, s2.nodes):
                if new is not old and can(new) != can(old):
                    return False
        return True


class Expansion:
    """One state's enabled events (`events`, `Env.events`: the indices of `Env.successors`), and
    the successors of those a reduced search asks for, each built once (`get`): the events a
    stubborn set leaves out cost no state, encoding or fingerprint."""

    __slots__ = ("built", "env", "events", "s")

    def __init__(self, env, s):
        self.env = env
        self.s = s
        self.events = env.events(s)
        self.built: dict = {}

    def get(self, i: int) -> tuple:
        """`(event, next_state, violation)` of event number `i`."""
        built = self.built
        item = built.get(i)
        if item is None:
            item = built[i] = self.events[i].build(self.env, self.s)  # `Env.successor`
        return item

    def pairs(self, indices) -> list:
        """`(i, get(i))` for each of `indices`."""
        get = self.get
        return [(i, get(i)) for i in indices]

    def everything(self):
        """`(i, successor)` for every enabled event, in order (a full expansion): in one pass of
        `Env.successors` when none is built yet."""
        if not self.built and getattr(self.env.model, "actions", None) is None:
            return enumerate(self.env.successors(self.s))
        # (a model with actions: `Env.successors` would list its actions a second time)
        return self.pairs(range(len(self.events)))


#: the kinds whose events a sleep set may hold (the others are dependent on every event), and the
#: budget two events of the same kind share (two of them commute only while it has two units)
_SLEEPY = {Deliver: None, Timeout: TIMEOUTS, Heartbeat: HEARTBEATS, Drop: DROPS}


def independent(s, a, b) -> bool:
    """Whether events `a` and `b`, both enabled in state `s`, commute there in the sense the
    reduction's argument needs (docs/reduction.md, "Sleep sets"): either order reaches the same
    state (ghost included), neither disables the other, and each fires the same property checks.

    Deliveries, timeouts, heartbeats and drops of disjoint nodes (a delivery's node is its
    destination, a drop's are both ends of its link) commute on FIFO links: each changes only its
    own node, takes the head of one link and appends to the tails of others. Two events of one
    kind that share a budget commute only while the budget has two units left. Proposals, crashes,
    restarts and actions are dependent on everything: a proposal reads who may propose and every
    log, a crash cuts links, a restart's sends reach nodes that were down."""
    ka, kb = type(a), type(b)
    if ka not in _SLEEPY or kb not in _SLEEPY:
        return False
    if ka is kb and ka is not Deliver and s.budgets[_SLEEPY[ka]] < 2:
        return False
    na = 1 << a[1] | 1 << a[0] if ka is Drop else 1 << a[1] if ka is Deliver else 1 << a[0]
    nb = 1 << b[1] | 1 << b[0] if kb is Drop else 1 << b[1] if kb is Deliver else 1 << b[0]
    return not na & nb


class Sleep:
    """Sleep sets of depth one for the level-synchronous search (`--reduction por+sleep`).

    When state P of level d has two events a and b, independent in P, whose successors it
    reaches (offered, or asleep itself), Y = P.a and X = P.b commute into one state: X.a = Y.b.
    If Y and X are both first found at level d + 1, Y comes first in the level, and Y's edge b
    reaches Y.b (offered, or asleep with its end known), then X need not build X.a: that state is
    reached already, and its fingerprint is known. X's event a is *asleep*. So no state is left
    out, and the proviso sees X's asleep events of its stubborn set as edges to that state: the
    reduced space is the one `--reduction por` explores, with fewer transitions built, encoded and
    fingerprinted. docs/reduction.md says why every verdict is kept.

    Per level: `note` collects, during level d, for each state of level d + 1 (by fingerprint)
    the pairs (a, fingerprint of Y, b) its parents give it; `start_level` turns them into
    indices in the level once it is complete; `asleep(i)` then gives state i's asleep events,
    from what the earlier states of the level reached (`expanded`)."""

    def __init__(self):
        self.offered: dict = {}  # fp of X -> [(a, fp of Y, b)], arrivals of the level being built
        self.index: dict = {}  # fp -> index in the level being built, for the states found in it
        self.pairs: dict = {}  # index of X -> [(a, index of Y, b)], the level being expanded
        self.watched: set = set()  # indices of Y some X of this level asks about
        self.done: dict = {}  # index of Y -> {event: fp of its end}, what it reached (if watched)
        self.pruned = 0  # events left asleep (edges not built), over the run

    def note(self, s, items) -> None:
        """State `s` (P) of level d reached `items`, `(event, fingerprint of its successor)`:
        for every two of them, a and b, independent in `s`, P.b may sleep on a if P.a reaches
        P.a.b first, and P.a on b if P.b reaches P.b.a first (`start_level` keeps the one whose
        other state comes first in the level)."""
        if len(items) < 2:
            return
        masks = []  # the nodes of each event, as bits; 0 for a kind dependent on every event
        for ev, _ in items:
            k = type(ev)
            masks.append(1 << ev[1] if k is Deliver else 1 << ev[0] | 1 << ev[1] if k is Drop
                         else 1 << ev[0] if k is Timeout or k is Heartbeat else 0)
        offered = self.offered
        for k in range(1, len(items)):
            mb = masks[k]
            if not mb:
                continue
            b, fx = items[k]
            for j in range(k):
                ma = masks[j]
                if not ma or ma & mb:
                    continue
                a, fy = items[j]
                if fx == fy or not independent(s, a, b):
                    continue
                offered.setdefault(fx, []).append((a, fy, b))
                offered.setdefault(fy, []).append((b, fx, a))

    def found(self, fp: bytes, index: int) -> None:
        """State `fp` is new at level d + 1, at `index` in it."""
        self.index[fp] = index

    def start_level(self) -> None:
        """Level d + 1 is complete: its pairs by index; what level d kept is dropped."""
        index, pairs, watched = self.index, {}, set()
        for fx, lst in self.offered.items():
            ix = index.get(fx)
            if ix is None:
                continue  # X was found at an earlier level: expanded already
            for a, fy, b in lst:
                iy = index.get(fy)
                if iy is not None and iy < ix:  # Y is expanded first
                    pairs.setdefault(ix, []).append((a, iy, b))
                    watched.add(iy)
        self.pairs, self.watched = pairs, watched
        self.offered, self.index, self.done = {}, {}, {}

    def asleep(self, i: int) -> dict:
        """The events state `i` of the level need not expand, each with the fingerprint of the
        state it leads to: each `a` of a pair whose Y, an earlier state of the level, reached
        Y.b, the same state."""
        lst = self.pairs.pop(i, None)
        out: dict = {}
        if lst:
            done = self.done
            for a, iy, b in lst:
                fp = done.get(iy, {}).get(b)
                if fp is not None and a not in out:
                    out[a] = fp
        return out

    def expanded(self, i: int, items) -> None:
        """State `i` of the level reached `items`, `(event, fingerprint of its successor)`, in
        its first pass: the events it offered and those asleep."""
        if i in self.watched:
            self.done[i] = dict(items)


def counter_run(env, s, keep, depth: int, memo: dict | None = None, tally: list | None = None):
    """The definition of a stubborn set, checked by brute force on the runs of up to `depth`
    events from state `s` that avoid the events `keep` (enabled at `s`): along each run some event
    of `keep` is still enabled (a key event), and every event `t` of `keep` enabled at the run's
    end commutes with the whole run (`t` first, then the run, is possible and reaches the state
    the run followed by `t` reaches). None when every such run passes, else the first that fails:
    `(why, t, run)`, `why` one of "key" (no event of `keep` is enabled after the run), "order"
    (after `t` an event of the run is not enabled) or "state" (the two orders reach different
    states). A failing run refutes the set; passing runs of a bounded length are evidence only.
    `memo` (shared between calls on one `env`) keeps successors and enabled events by
    fingerprint; `tally[0]` counts the (run, event) pairs compared. Used by the tests of the
    reduction and by benchmarks/stubborn_room.py; the search never calls it."""
    memo = {} if memo is None else memo
    fp = env.fingerprint

    def events(x, f):
        got = memo.get(f)
        if got is None:
            got = memo[f] = env.events(x)
        return got

    def step(x, f, e):
        got = memo.get((f, e))
        if got is None:
            y = env.successor(x, e)[1]
            got = memo[(f, e)] = (y, fp(y))
        return got

    keep = set(keep)
    f0 = fp(s)
    frontier = [(s, f0, ())]
    for _ in range(depth):
        nxt = []
        for cur, fc, run in frontier:
            for u in events(cur, fc):
                if u in keep:
                    continue
                end, fe = step(cur, fc, u)
                path = run + (u,)
                nxt.append((end, fe, path))
                enabled = events(end, fe)
                if not any(t in enabled for t in keep):
                    return "key", None, path
                for t in keep:
                    if t not in enabled:
                        continue
                    x, fx = step(s, f0, t)
                    for v in path:
                        if v not in events(x, fx):
                            return "order", t, path
                        x, fx = step(x, fx, v)
                    if fx != step(end, fe, t)[1]:
                        return "state", t, path
                    if tally is not None:
                        tally[0] += 1
        frontier = nxt
    return None
