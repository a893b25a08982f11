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
    assert len(blocks()) == 4  # a check, a model, a property, a strategy


def test_the_examples_run(monkeypatch):
    from zabmc import properties

    mod = types.ModuleType("extending_example")
    monkeypatch.setitem(sys.modules, "extending_example", mod)
    registry = dict(properties.REGISTRY)
    live = dict(properties.of_kind(properties.EVENTUALLY))
    try:
        for k, code in enumerate(blocks()):
            exec(compile(code, f"{DOC.name} block {k + 1}", "exec"), mod.__dict__)
        assert "eventually-everyone-delivers" in properties.of_kind(properties.EVENTUALLY)
    finally:  # the example's property stays out of the rest of the suite
        properties.REGISTRY.clear()
        properties.REGISTRY.update(registry)
        properties.of_kind(properties.EVENTUALLY).clear()
        properties.of_kind(properties.EVENTUALLY).update(live)
