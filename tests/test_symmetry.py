"""`zabmc check --symmetry` (docs/check.md, "Symmetry"; zabmc/explore/symmetry.py): one state per
orbit of the permutations a model declares, shown sound here rather than assumed.

The independent source of every count is this file's own search and orbits: a plain
breadth-first search over the kernel (`Env.successors`, every state by its own canonical bytes,
`Env.encode`), and each state's orbit computed by renaming its payloads with this file's own
`image` (every permutation of the payloads proposed so far, nodes rebuilt in their own classes, a
bag network sorted again). The reduced search's distinct states must be the number of orbits
among the full space's states, and its verdict and violated properties the full search's.
"""

from __future__ import annotations

import json
from itertools import permutations
from typing import NamedTuple

import pytest
from zabmc.cli import main
from zabmc.core.errors import UsageError
from zabmc.core.events import MADE
from zabmc.core.model import Step, Symmetry, get_model, model_names, payload
from zabmc.explore.env import Env, ExploreConfig, State
from zabmc.explore.outcome import StopReason
from zabmc.invariants import Checker, resolve
from zabmc.spec import CheckSpec

#: properties that read no broadcast order (with it --symmetry is refused: `test_refusals`)
UNORDERED = ("agreement", "total-order", "prefix", "sane-history", "global-primary-order",
             "primary-integrity", "leadership")


# --- this file's own search and orbits ------------------------------------------------------------
def rename(x, table: dict):
    """`x` with each bytes value `table` names replaced; named tuples stay of their class."""
    if type(x) is bytes:
        return table.get(x, x)
    if isinstance(x, tuple):
        items = [rename(y, table) for y in x]
        return type(x)._make(items) if hasattr(type(x), "_make") else tuple(items)
    return x


def image(env: Env, s: State, perm) -> State:
    """State `s` with payload `zab-<i>` renamed `zab-<perm[i]>` everywhere."""
    table = {payload(i): payload(j) for i, j in enumerate(perm)}
    net = rename(s.net, table)
    if not env.fifo:  # a bag is a sorted multiset
        net = tuple(sorted(net))
    return State(rename(s.nodes, table), net, s.budgets, rename(s.ghost, table))


def orbit(env: Env, s: State) -> frozenset:
    """The canonical bytes of every image of `s` under the permutations of its payloads."""
    return frozenset(env.encode(image(env, s, p)) for p in permutations(range(s.budgets[MADE])))


def full_space(env: Env) -> tuple[dict, set, bool]:
    """Every state within the bounds (canonical bytes -> state), the properties violated on the
    way, and whether the space was exhausted: a plain breadth-first search."""
    init, v = env.origin()
    seen, broken = {env.encode(init): init}, set()
    todo, depth = [init], 0
    while todo and depth < env.config.depth:
        nxt = []
        for s in todo:
            for _, s2, v in env.successors(s):
                if v is not None:
                    broken |= {x.property for x in v.all()}
                b = env.encode(s2)
                if b not in seen:
                    seen[b] = s2
                    nxt.append(s2)
        todo, depth = nxt, depth + 1
    return seen, broken, not todo


def orbits(env: Env, space: dict) -> int:
    return len({orbit(env, s) for s in space.values()})


def _env(model: str, props, **bounds) -> Env:
    return Env(get_model(model), ExploreConfig(**bounds), Checker(props))


# --- the declarations -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", model_names())
def test_every_model_declares_payloads_and_says_why_not_node_ids(name):
    """Each model here declares the payloads symmetric and node ids not (its election breaks ties
    by id, and the explorer gives a proposal to the lowest-id node that may take it)."""
    sym = get_model(name).symmetry
    assert isinstance(sym, Symmetry) and sym.payloads is True
    assert "node ids are not" in sym.why


#: (model, bounds) with many states where two or three proposals were made: three nodes, and two
#: with crashes, restarts and resynchronisation (where histories are cut and replaced)
DECLARED = [
    ("db19", dict(nodes=2, network="bag", proposals=2, max_crashes=1, depth=60)),
    ("db19", dict(nodes=2, proposals=2, max_crashes=2, depth=80)),
    ("zab", dict(nodes=2, proposals=3, max_crashes=1, depth=80)),
    ("zab", dict(nodes=3, proposals=2, depth=14)),
    ("zk", dict(nodes=2, proposals=3, max_crashes=1, depth=80)),
    ("zk", dict(nodes=3, proposals=2, depth=22)),
    ("zk-3.7.0-threads", dict(nodes=3, proposals=2, depth=20)),
]


@pytest.mark.parametrize("model,bounds", DECLARED,
                         ids=[f"{m}-{k}" for k, (m, _) in enumerate(DECLARED)])
def test_a_payload_permutation_maps_successors_to_successors(model, bounds):
    """The declaration, checked state by state: for each state with two payloads proposed, the
    successors of its image are the images of its successors, each with the same violated
    properties (every default property, the broadcast order included: the ghost is permuted
    too)."""
    env = _env(model, resolve(None), **bounds)
    space, _, _ = full_space(env)
    states = [s for s in space.values() if s.budgets[MADE] >= 2]
    assert len(states) >= 200
    states = states[::len(states) // 200]  # 200 of them, from every depth
    for s in states:
        for perm in permutations(range(s.budgets[MADE])):
            if list(perm) == sorted(perm):
                continue
            mine = {(env.encode(image(env, s2, perm)), _props(v))
                    for _, s2, v in env.successors(s)}
            theirs = {(env.encode(s2), _props(v)) for _, s2, v in env.successors(image(env, s, perm))}
            assert mine == theirs


def _props(v) -> frozenset:
    return frozenset() if v is None else frozenset(x.property for x in v.all())


def test_the_canonical_fingerprint_is_one_per_orbit():
    """`Env.fingerprint` under --symmetry is the same for a state and each image of it (images
    no run reaches included), and differs between orbits."""
    plain = _env("db19", resolve(None), nodes=2, network="bag", proposals=2, max_crashes=1,
                 depth=60)
    space, _, _ = full_space(plain)
    env = Env(plain.model, plain.config, plain.checker, symmetry=True)
    by_orbit: dict = {}
    for s in space.values():
        if s.budgets[MADE] < 2:
            continue
        fps = {env.fingerprint(image(env, s, p)) for p in permutations(range(s.budgets[MADE]))}
        assert len(fps) == 1
        by_orbit.setdefault(fps.pop(), set()).add(orbit(plain, s))
    assert len(by_orbit) > 50 and all(len(o) == 1 for o in by_orbit.values())


def test_the_broadcast_order_names_each_proposal_by_its_number():
    """Why --symmetry is refused with a property that keeps the broadcast order: in every
    reachable state the k-th proposal there has payload zab-k, so no other state of its orbit is
    reachable."""
    env = _env("zab", resolve(None), nodes=3, proposals=2, depth=14)
    space, _, _ = full_space(env)
    for s in space.values():
        assert [t[1] for t, _ in s.ghost[1]] == [payload(k) for k in range(s.budgets[MADE])]
    assert orbits(env, space) == len(space)


# --- a model whose orbits hold several reachable states ------------------------------------------
class ToyNode(NamedTuple):
    id: int
    role: int
    current_epoch: int
    accepted_epoch: int
    history: tuple
    last_committed: tuple


class Toy:
    """A model no protocol is, made for the engine's test: a node with an empty history takes a
    client proposal (at zxid 1.1, delivered at once) and an election timeout empties it again.
    Proposals go to the lowest-id node that may take one, so a payload a node holds is not its
    proposal number: node 0 holding only `zab-0` (node 1 took `zab-1` and forgot it) and node 0
    holding only `zab-1` (it forgot `zab-0`, then took `zab-1`) are one orbit, both reachable.
    With `agreement` checked, two nodes holding different payloads break it."""

    name = "toy"
    description = "a node takes a proposal when empty and forgets it at a timeout"
    network_assumption = "any"
    durable = ("history",)
    symmetry = Symmetry(True, "payloads only; node ids are not (proposals go to the lowest id)")

    def fresh(self, i, n):
        return ToyNode(i, 0, 0, 0, (), (0, 0))

    def start(self, node, n):
        return Step(node, (), ())

    def deliver(self, node, src, msg, n):
        return Step(node, (), ())

    def timeout(self, node, n):
        return Step(node._replace(history=()), (), ()) if node.history else None

    def heartbeat(self, node, n):
        return None

    def can_propose(self, node):
        return not node.history

    def is_leading(self, node):
        return False

    def propose(self, node, data, n):
        txn = ((1, 1), data)
        return Step(node._replace(history=(txn,), last_committed=(1, 1)), (), ())

    def dump(self, nodes):
        return repr(nodes).encode()

    def msg_json(self, msg):
        return {}

    def node_json(self, node):
        return {"role": "Looking", "current_epoch": 0}

    def describe_msg(self, msg):
        return ""


TOY = dict(nodes=3, network="bag", proposals=4, max_timeouts=3, depth=30)


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "workers"])
def test_the_reduced_search_merges_the_orbits_of_a_model_that_has_them(strategy):
    """Where orbits hold several reachable states (the toy model), the reduced search's distinct
    states are the orbits this file counts, fewer than the states, with the same violations."""
    toy = Toy()
    env = Env(toy, ExploreConfig(**TOY), Checker(("agreement",)))
    space, broken, exhausted = full_space(env)
    assert exhausted and broken == {"agreement"}
    # from this file's own search and orbits (as every run of this test computes them again)
    assert (len(space), orbits(env, space)) == (TOY_STATES, TOY_ORBITS)
    workers = 2 if strategy == "workers" else 1
    spec = CheckSpec.from_config(toy, env.config, ("agreement",), find_all=True,
                                 strategy="dfs" if strategy == "dfs" else "bfs", workers=workers)
    full, reduced = spec.run(), spec.replace(symmetry=True).run()
    assert full.stop_reason == reduced.stop_reason == StopReason.EXHAUSTED
    assert (full.distinct, reduced.distinct) == (TOY_STATES, TOY_ORBITS)
    assert {f.violation.property for f in reduced.violations} == broken


# --- the reduced search against the full one ------------------------------------------------------
#: (model, bounds, properties) exhausted in seconds; the pinned counts come from this file's own
#: search and orbits (the full space's states, then its orbits), computed again by every run of
#: `test_the_reduced_search_counts_the_orbits`: the pins only detect a change of the space
SPACES = [
    ("db19", dict(nodes=2, network="bag", proposals=2, max_crashes=1, depth=60), UNORDERED,
     10_463, 10_463),
    ("db19", dict(nodes=2, proposals=2, max_crashes=2, depth=80), UNORDERED, 5_685, 5_685),
    ("zab", dict(nodes=2, proposals=3, max_crashes=1, depth=80), UNORDERED, 1_911, 1_911),
    ("zk", dict(nodes=2, proposals=3, max_crashes=1, depth=80), UNORDERED, 1_191, 1_191),
]
TOY_STATES, TOY_ORBITS = 95, 58


@pytest.mark.parametrize("model,bounds,props,states,orbit_count", SPACES,
                         ids=[f"{m}-{i}" for i, (m, *_) in enumerate(SPACES)])
@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_the_reduced_search_counts_the_orbits(model, bounds, props, states, orbit_count, strategy):
    """On an exhausted space, the reduced search's distinct states are the full space's orbits,
    and its verdict and violated properties (--all) are the full search's. On these spaces of
    the real models every orbit holds one reachable state (payloads are named in proposal
    order: docs/check.md, "Symmetry"), so the reduction is none, and shown to be."""
    env = _env(model, props, **bounds)
    space, broken, exhausted = full_space(env)
    assert exhausted
    assert (len(space), orbits(env, space)) == (states, orbit_count)
    spec = CheckSpec(model=model, invariants=props, no_invariants=not props, find_all=True,
                     strategy=strategy, **bounds)
    full = spec.run()
    reduced = spec.replace(symmetry=True).run()
    assert full.stop_reason == reduced.stop_reason == StopReason.EXHAUSTED
    assert full.distinct == len(space) and reduced.distinct == orbit_count
    assert {f.violation.property for f in full.violations} == broken
    assert {f.violation.property for f in reduced.violations} == broken


# --- counterexamples ------------------------------------------------------------------------------
#: a db19 run that breaks `prefix` after a crash and a resync (tests/corpus/db19/
#: bag-crash-resync-reorders.trace.json, 18 events)
PREFIX = ["--nodes", "2", "--network", "bag", "--proposals", "2", "--max-crashes", "1",
          "--depth", "18", "--invariant", "prefix"]


def run(args, capsys) -> tuple:
    """`zabmc ARGS`: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_a_counterexample_found_under_symmetry_replays(tmp_path, capsys, strategy):
    """The trace --symmetry writes is a real run: `zabmc replay` confirms it from the initial
    state, and with breadth-first search it is as short as the full search's."""
    lengths = []
    for sym in ([], ["--symmetry"]):
        out = tmp_path / f"t{len(sym)}.json"
        code, _, err = run(["check", *PREFIX, "--strategy", strategy, "-q", "--trace-out",
                            str(out), *sym], capsys)
        assert code == 10, err
        code, out_text, err = run(["replay", "-q", str(out)], capsys)
        assert code == 10 and "confirmed: " in out_text, err  # 10: its violation, confirmed
        doc = json.loads(out.read_text())
        assert doc["violation"]["property"] == "prefix"
        lengths.append(len(doc["events"]))
    if strategy == "bfs":
        assert lengths[0] == lengths[1]


def test_the_json_summary_says_what_a_distinct_state_is(capsys):
    for sym, said in (([], "none"), (["--symmetry"], "payloads")):
        code, out, err = run(["check", "--nodes", "2", "--depth", "6", "--no-invariants",
                              "--json", *sym], capsys)
        assert code == 0, err
        assert json.loads(out)["symmetry"] == said


# --- refusals (each one line, exit 2; tests/support/adversary.py runs them as commands) ----------
class _NoSymmetry:
    """A model that declares nothing: db19 without its `symmetry`."""

    def __init__(self, model, symmetry=None):
        self._model, self.symmetry = model, symmetry

    def __getattr__(self, name):
        return getattr(self._model, name)


@pytest.mark.parametrize("change,words", [
    (dict(), "integrity, local-primary-order"),
    (dict(no_invariants=True, strategy="random"), "bfs or dfs"),
    (dict(no_invariants=True, engine="spark"), "bfs or dfs"),
    (dict(no_invariants=True, reduction="por"), "--reduction por"),
    (dict(no_invariants=True, checkpoint_dir="ck"), "--checkpoint"),
    (dict(liveness=True, model="zab"), "--liveness"),
    (dict(no_invariants=True, model_override=_NoSymmetry(get_model("db19"))),
     "declares no symmetry"),
    (dict(no_invariants=True, model_override=_NoSymmetry(
        get_model("db19"), Symmetry(False, "its election reads every payload"))),
     "admits no permutation: its election reads every payload"),
])
def test_refusals(change, words):
    spec = CheckSpec(nodes=2, depth=4, symmetry=True).replace(**change)
    with pytest.raises(UsageError) as e:
        spec.validate()
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_refusal_names_every_ordered_property_only():
    """Properties that read no broadcast order are allowed."""
    CheckSpec(nodes=2, depth=4, symmetry=True, invariants=UNORDERED).validate()
    with pytest.raises(UsageError, match="would reduce nothing with integrity checked"):
        CheckSpec(nodes=2, depth=4, symmetry=True, invariants=("agreement", "integrity")).validate()


def test_a_search_from_a_scenario_takes_symmetry():
    """--scenario (and so --from) starts the reduced search from the trace's state; here its
    orbits are its states, as everywhere on the real models."""
    spec = CheckSpec(model="zk", scenario="remix-epoch1", invariants=("agreement",), proposals=1,
                     depth=8)
    full, reduced = spec.run(), spec.replace(symmetry=True).run()
    assert reduced.distinct == full.distinct and reduced.extra["symmetry"] == "payloads"
