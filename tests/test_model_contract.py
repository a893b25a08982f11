"""Every registered model keeps the contract written down in `zabmc/core/model.py`."""

from __future__ import annotations

import marshal

import pytest

from zabmc.explore import Env, ExploreConfig
from zabmc.invariants import Checker
from zabmc.core.model import (
    EFFECT_TAGS,
    MEMBERS,
    NODE_FIELDS,
    OPTIONAL_MEMBERS,
    OPTIONAL_NODE_FIELDS,
    ROLE_NAMES,
    Step,
    crashed,
    get_model,
    initial_steps,
    model_names,
    payload,
    registered,
)


def _steps_of(model, n=3, limit=400):
    """Every Step taken while exploring the first `limit` states of a small space (BFS order)."""
    env = Env(model, ExploreConfig(nodes=n, network="fifo", max_timeouts=1, max_heartbeats=1,
                                   max_drops=1, proposals=2), Checker(()))
    init, _ = env.initial()
    todo, seen, states = [init], {env.fingerprint(init)}, []
    while todo and len(states) < limit:
        s = todo.pop(0)
        states.append(s)
        for _ev, s2, _v in env.successors(s):
            fp = env.fingerprint(s2)
            if fp not in seen:
                seen.add(fp)
                todo.append(s2)
    return states


@pytest.mark.parametrize("name", sorted(model_names()))
def test_model_has_every_member_of_the_contract(name):
    model = get_model(name)
    for member in MEMBERS:
        assert hasattr(model, member), f"{name} lacks {member}"
    assert model.name == name
    assert model.network_assumption in ("fifo", "any")


@pytest.mark.parametrize("name", sorted(model_names()))
def test_nodes_are_named_tuples_of_marshalable_values_with_the_read_fields(name):
    model = get_model(name)
    node = model.fresh(1, 3)
    assert isinstance(node, tuple) and hasattr(node, "_replace") and hasattr(node, "_fields")
    for f in NODE_FIELDS:
        assert f in node._fields, f"{name}'s nodes lack {f}"
    assert node.id == 1
    assert set(model.durable) <= set(node._fields) and "id" not in model.durable
    for s in _steps_of(model):
        for x in s.nodes:
            # marshal refuses anything but built-in values; equal values give equal bytes
            b = marshal.dumps(tuple(x), 2)
            assert marshal.loads(b) == tuple(x)
            assert marshal.dumps(tuple(type(x)._make(marshal.loads(b))), 2) == b


def _start_up(name: str, i: int, n: int = 3):
    """Node `i`'s start-up as each model's text describes it, written out by hand: the fields it
    sets beside a fresh node's (role Looking, epochs 0, empty history, nothing committed) and the
    messages it sends, in order. Message kinds are the models' numbering (tag first)."""
    peers = [p for p in range(n) if p != i]
    own = tuple(i if k == i else None for k in range(n))  # a tally holding only its own vote
    if name == "db19":  # C6: LookForLeader{i, (0,0), 0}, then Vote{i, (0,0), 0, leader=i}
        fields = dict(vote_target_id=i, vote_target_zxid=(0, 0), vote_view=own, leader_id=None)
        outs = [(p, (0, i, (0, 0), 0)) for p in peers] + [(p, (1, i, (0, 0), 0, i)) for p in peers]
    elif name.startswith("zab"):  # models/zab/README.md D2: a LookForLeader only, no Vote
        fields = dict(vote_target_id=i, vote_target_zxid=(0, 0), vote_view=own, leader_id=None,
                      phase=0)
        outs = [(p, (0, i, (0, 0), 0)) for p in peers]
    elif name.endswith("-fle"):
        # models/zk/README.md D1: logicalclock 0 -> 1, a vote (epoch, zxid, id) for itself, kept
        # in its own recvset slot with its round and state LOOKING (0), and one NOTIFICATION
        # (kind 10, no connection: 0) with that vote, round 1 and state LOOKING to every peer
        vote = (0, (0, 0), i)
        fields = dict(lclock=1, vote=vote, leader=-1, phase=0,
                      recv=tuple((vote, 1, 0) if k == i else None for k in range(n)))
        outs = [(p, (10, 0, vote, 1, 0)) for p in peers]
    else:  # zk, zk-fixed, zk-pre3911 (D1): the election is an action (`elect`); start-up is silent
        fields = dict(leader=-1, phase=0, lclock=0, vote=())
        outs = []
    return dict(id=i, role=0, current_epoch=0, accepted_epoch=0, history=(),
                last_committed=(0, 0), **fields), outs


@pytest.mark.parametrize("name", sorted(model_names()))
def test_start_up_is_each_models_written_start_and_steps_report_known_effects(name):
    model = get_model(name)
    steps = initial_steps(model, 3)
    assert [st.node.id for st in steps] == [0, 1, 2]
    for i, st in enumerate(steps):
        fields, outs = _start_up(name, i)
        assert {f: getattr(st.node, f) for f in fields} == fields
        assert list(st.outs) == outs
        assert st.effects == ()
    for st in steps:
        assert isinstance(st, Step) and isinstance(st.outs, tuple) and isinstance(st.effects, tuple)
        for eff in st.effects:
            assert eff[0] in EFFECT_TAGS
    for s in _steps_of(model, limit=150):
        for i, node in enumerate(s.nodes):
            for st in (model.timeout(node, 3), model.heartbeat(node, 3),
                       model.propose(node, payload(0), 3) if model.can_propose(node) else None):
                if st is not None:
                    assert all(e[0] in EFFECT_TAGS for e in st.effects)
                    assert all(0 <= dst < 3 and dst != i for dst, _ in st.outs)


@pytest.mark.parametrize("name", sorted(model_names()))
def test_a_crash_keeps_exactly_the_durable_fields(name):
    model = get_model(name)
    for s in _steps_of(model):
        for node in s.nodes:
            down = crashed(model, node, 3)
            fresh = model.fresh(node.id, 3)
            for f in node._fields:
                want = getattr(node, f) if f in model.durable else getattr(fresh, f)
                assert getattr(down, f) == want, (name, f)
            assert crashed(model, down, 3) == down


def test_payload_is_spelled_once():
    assert payload(0) == b"zab-0" and payload(12) == b"zab-12"


@pytest.mark.parametrize("name", sorted(model_names()))
def test_the_fields_reports_read_have_the_contracts_types(name):
    """`role` indexes ROLE_NAMES, epochs are ints, `history` holds `(zxid, payload)` and the
    optional fields, where a model has them, are what the reports print; `node_json` names the
    role and the epoch the state graph reads."""
    model = get_model(name)
    for s in _steps_of(model, limit=150):
        for x in s.nodes:
            assert type(x.role) is int and 0 <= x.role < len(ROLE_NAMES)
            assert type(x.current_epoch) is int and type(x.accepted_epoch) is int
            assert type(x.last_committed) is tuple and len(x.last_committed) == 2
            for t in x.history:
                assert type(t[0]) is tuple and len(t[0]) == 2 and type(t[1]) is bytes
            if "synced" in x._fields:
                assert type(x.synced) is bool
            if "next_counter" in x._fields:
                assert type(x.next_counter) is int
            j = model.node_json(x)
            assert j["role"] == ROLE_NAMES[x.role] and j["current_epoch"] == x.current_epoch
    assert set(OPTIONAL_NODE_FIELDS).isdisjoint(NODE_FIELDS)


@pytest.mark.parametrize("name", sorted(model_names()))
def test_optional_members_come_in_their_groups(name):
    """A model has all of a group of optional members or none: actions with act and
    describe_action, and both liveness hooks; `progress_delivered` only beside `progress`; each
    one it has is callable."""
    model = get_model(name)
    have = {m for m in OPTIONAL_MEMBERS if getattr(model, m, None) is not None}
    for group in (("actions", "act", "describe_action"), ("leader_of", "established")):
        assert set(group) <= have or not set(group) & have, (name, group)
    assert "progress" in have or "progress_delivered" not in have, name  # its fast path
    for m in have - {"properties", "scenarios", "release", "patched", "symmetry"}:
        assert callable(getattr(model, m))
    if {"leader_of", "established"} <= have:
        for s in _steps_of(model, limit=100):
            for x in s.nodes:
                assert model.leader_of(x) is None or 0 <= model.leader_of(x) < len(s.nodes)
                assert type(model.established(x)) is bool
    if "busy" in have:
        for s in _steps_of(model, limit=100):
            assert all(type(model.busy(x)) is bool for x in s.nodes)


@pytest.mark.parametrize("name", sorted(model_names()))
def test_mutation_finds_the_kernel_and_adapter_where_the_contract_says(name):
    """`zabmc mutate` reads models/<pkg>/handlers.py and re-runs models/<pkg>/model.py against a
    mutant of it: the registered attribute is made by that adapter from that kernel."""
    import importlib

    from zabmc.mutate import build

    entry = registered(name)
    pkg = entry.module.rpartition(".")[0]
    assert importlib.util.find_spec(f"{pkg}.handlers") is not None
    assert entry.module == f"{pkg}.model"
    control = build(name, None)
    model = get_model(name)
    assert control.name == name and type(control).__name__ == type(model).__name__
    assert [control.start(control.fresh(i, 3), 3) for i in range(3)] == initial_steps(model, 3)


def _corpus():
    import json
    import pathlib

    root = pathlib.Path(__file__).resolve().parent / "corpus"
    for path in sorted(root.glob("*/*.trace.json")):
        data = json.loads(path.read_text())
        yield path.name, data["model"], (data.get("violation") or {}).get("property")


@pytest.mark.parametrize("name", sorted(model_names()))
def test_a_model_names_only_registered_properties_as_its_own(name):
    """`properties` (the contract's) names properties its package registered, none of the
    core's, and none that another package owns alone."""
    from zabmc.core.properties import ALWAYS, CORE, load_all, of_kind

    load_all()
    own = tuple(getattr(get_model(name), "properties", ()))
    assert len(set(own)) == len(own)
    assert all(p in of_kind(ALWAYS) and p not in CORE for p in own), own


@pytest.mark.parametrize("trace,model,prop", [x for x in _corpus() if x[2]])
def test_every_corpus_violation_is_one_its_model_says_it_can_break(trace, model, prop):
    from zabmc.core.properties import can_break

    assert prop in can_break(get_model(model)), (trace, model, prop)


def test_can_break_on_models_with_and_without_their_own():
    """A model without its own properties can break the papers' alone; zk-3.7.0-threads (the threads'
    grain, models/zk/fine.py) adds ZooKeeper's NEWLEADER failures and windows, not the storage
    grain's (hand-written from models/zk/properties.py)."""
    from zabmc.core.properties import ALWAYS, CORE, REGISTRY, can_break

    papers = tuple(p for p in CORE if REGISTRY[p].kind == ALWAYS)
    assert can_break(get_model("db19")) == papers == can_break(get_model("zab"))
    assert set(can_break(get_model("zk-3.7.0-threads"))) - set(CORE) == {
        "sync-exception", "leader-gives-up", "ack-before-logging", "ack-before-disk",
        "epoch-before-disk", "leader-unexpected-ack"}
    assert "leader-unexpected-ack" not in can_break(get_model("zk"))  # the coarse grain
    # a release's model has every grain of its stack, so every property of each (issue #62)
    assert {"leader-unexpected-ack", "ack-from-memory", "stale-log-write", "load-exception"} <= set(
        can_break(get_model("zk-3.8.0")))


def test_the_core_alone_registers_only_the_papers_properties():
    """Issue #61: the core owns the papers' properties; ZooKeeper's are the zk package's and
    appear only once the models are loaded (a fresh interpreter, nothing else imported)."""
    import subprocess
    import sys

    code = ("from zabmc.core import properties as p; a = list(p.REGISTRY); p.load_all(); "
            "print(a); print([x for x in p.REGISTRY if x not in a])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert eval(out[0]) == [
        "integrity", "total-order", "agreement", "prefix", "local-primary-order",
        "global-primary-order", "primary-integrity", "leadership", "single-prospective-leader",
        "sane-history", "leader-log-completeness", "eventually-leader", "eventually-commit"]
    # the zk models register 13 (models/zk/properties.py PROPERTIES, counted by hand)
    assert "ack-before-disk" in eval(out[1]) and len(eval(out[1])) == 13


def test_a_process_without_the_entry_points_finds_a_model_from_where():
    """A Spark executor given zabmc as --py-files has no entry points: the driver hands it
    `zabmc.core.model.where(name)` (zabmc/spark/engine.py `env_spec`), from which `ensure` registers the
    model and its package's properties. Shown in a fresh interpreter whose entry points are
    hidden."""
    import subprocess
    import sys

    from zabmc.core.model import where

    code = ("import importlib.metadata as md; md.entry_points = lambda **k: (); "
            "from zabmc.core import model, properties; "
            "print(model.model_names()); "
            f"model.ensure('zk-3.7.0-threads', {where('zk-3.7.0-threads')!r}); "
            "print(model.get_model('zk-3.7.0-threads').name, 'leader-unexpected-ack' in properties.REGISTRY)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["()", "zk-3.7.0-threads True"]
