"""Every registered model keeps the contract written down in `zabmc/model.py`."""

from __future__ import annotations

import marshal

import pytest

from zabmc.explore import Env, ExploreConfig
from zabmc.invariants import Checker
from zabmc.model import EFFECT_TAGS, MODELS, Step, crashed, get_model, initial_steps, payload

MEMBERS = ("name", "description", "network_assumption", "durable", "fresh", "start", "deliver",
           "timeout", "heartbeat", "can_propose", "is_leading", "propose", "dump", "msg_json",
           "node_json", "describe_msg")


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


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_has_every_member_of_the_contract(name):
    model = get_model(name)
    for member in MEMBERS:
        assert hasattr(model, member), f"{name} lacks {member}"
    assert model.name == name
    assert model.network_assumption in ("fifo", "any")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_nodes_are_named_tuples_of_marshalable_values_with_the_read_fields(name):
    model = get_model(name)
    node = model.fresh(1, 3)
    assert isinstance(node, tuple) and hasattr(node, "_replace") and hasattr(node, "_fields")
    for f in ("id", "history", "last_committed"):
        assert f in node._fields
    assert node.id == 1
    assert set(model.durable) <= set(node._fields) and "id" not in model.durable
    for s in _steps_of(model):
        for x in s.nodes:
            # marshal refuses anything but built-in values; equal values give equal bytes
            b = marshal.dumps(tuple(x), 2)
            assert marshal.loads(b) == tuple(x)
            assert marshal.dumps(tuple(type(x)._make(marshal.loads(b))), 2) == b


@pytest.mark.parametrize("name", sorted(MODELS))
def test_start_up_is_start_of_fresh_nodes_and_steps_report_known_effects(name):
    model = get_model(name)
    steps = initial_steps(model, 3)
    assert steps == [model.start(model.fresh(i, 3), 3) for i in range(3)]
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


@pytest.mark.parametrize("name", sorted(MODELS))
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
