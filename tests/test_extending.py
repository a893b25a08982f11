"""docs/extending.md's worked examples, run as they are written: the page's Python blocks are one
module, `extending_example`, executed in order (issue #35 point 6)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "extending.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_page_has_its_examples():
    assert len(blocks()) == 6  # a check, a model, two properties, a strategy, an event kind


def test_the_examples_run(monkeypatch):
    from zabmc.core import properties

    mod = types.ModuleType("extending_example")
    monkeypatch.setitem(sys.modules, "extending_example", mod)
    from zabmc.core import events

    registry = dict(properties.REGISTRY)
    by_kind = {k: dict(properties.of_kind(k)) for k in properties.Kind}
    kinds = events.KINDS
    try:
        for k, code in enumerate(blocks()):
            exec(compile(code, f"{DOC.name} block {k + 1}", "exec"), mod.__dict__)
        assert "eventually-everyone-delivers" in properties.of_kind(properties.EVENTUALLY)
        assert "epochs-in-order" in properties.of_kind(properties.ALWAYS)
        assert events.KINDS == kinds and "reboot" not in events.BY_NAME  # the example's cleanup
    finally:  # the examples' properties and event kind stay out of the rest of the suite
        properties.REGISTRY.clear()
        properties.REGISTRY.update(registry)
        for kind, saved in by_kind.items():
            properties.of_kind(kind).clear()
            properties.of_kind(kind).update(saved)
        for cls in events.KINDS[len(kinds):]:
            events.unregister_kind(cls)


def test_a_node_check_finds_what_it_states(monkeypatch):
    """The node-check route of `always` is not only quiet: a false statement ("no node ever
    leaves epoch 0") is found, on the step where a node first accepts epoch 1."""
    from zabmc.core import properties
    from zabmc.spec import CheckSpec

    def epoch_zero(node):
        return (None if node.accepted_epoch == 0
                else f"node {node.id} accepted epoch {node.accepted_epoch}")

    prop = properties.always("epoch-zero", "no node leaves epoch 0", "a test", default=False,
                             check=epoch_zero)
    monkeypatch.setitem(properties.REGISTRY, prop.name, prop)
    monkeypatch.setitem(properties.of_kind(properties.ALWAYS), prop.name, prop)
    out = CheckSpec(model="zab", nodes=2, proposals=0, depth=20,
                    invariants=("epoch-zero",)).validate().run()
    [found] = out.violations
    assert found.violation.property == "epoch-zero" and found.violation.nodes == (1,)
    assert found.violation.message == "node 1 accepted epoch 1"
