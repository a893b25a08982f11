"""The explorer: environment, fingerprints, seen-sets and search strategies over a model's kernel.

This package knows protocol models only through `zabmc.core.model`; it never imports `models`.
"""

from .bfs import BFS, bfs
from .dfs import DFS, dfs
from .env import NETWORKS, Env, ExploreConfig, State
from .outcome import Found, Observer, Outcome, Progress, StopReason, exit_code
from .random_walk import RandomWalks, random_walks
from .search import Search, Stopped

__all__ = ["bfs", "dfs", "random_walks", "Env", "ExploreConfig", "State", "NETWORKS", "Found",
           "Observer", "Outcome", "Progress", "exit_code", "Search", "Stopped", "StopReason",
           "BFS", "DFS", "RandomWalks"]
