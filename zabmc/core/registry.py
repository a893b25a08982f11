"""Where models come from: the packages that register themselves.

A model package (this repository's `models/db19`, `models/zab`, `models/zk`, or a user's own)
declares an entry point in the group `zabmc.models` (pyproject.toml,
`[project.entry-points."zabmc.models"]`) naming a function `register()`. The first time a model
or a property is looked up, `load` calls every such function once, in the order of the entry
points' names, and each adds its models (`zabmc.core.model.register_model`), their other names
(`register_alias`) and its own properties (`zabmc.core.properties.register`). The core thus
names no model, not even in a string; the import test (tests/test_imports.py) checks that.

Entry points are Python's standard plugin mechanism (`importlib.metadata`): any installed
distribution can add a model, and every process (a Spark executor too) finds the same ones.
"""

from __future__ import annotations

from importlib.metadata import entry_points

GROUP = "zabmc.models"

_loaded = False


def load() -> None:
    """Call every registered model package's `register()` once (later calls return at once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True  # first: a package's register() may look a model up
    for ep in sorted(entry_points(group=GROUP), key=lambda ep: ep.name):
        ep.load()()

