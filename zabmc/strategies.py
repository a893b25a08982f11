"""The registry of search strategies: name -> the `zabmc.explore.search.Search` subclass that runs
it. `zabmc check --strategy` offers exactly these names. Classes load lazily (as models do), so the
CLI starts without importing the explorer."""

from __future__ import annotations

import importlib

from zabmc.core.errors import UsageError

STRATEGIES = {
    "bfs": "zabmc.explore.bfs:BFS",
    "dfs": "zabmc.explore.dfs:DFS",
    "random": "zabmc.explore.random_walk:RandomWalks",
}


def get_strategy(name: str):
    """The `Search` subclass registered under `name`; a `UsageError` naming the choices otherwise."""
    target = STRATEGIES.get(name)
    if target is None:
        raise UsageError(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)
