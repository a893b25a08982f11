"""The explored state graph as a networkx multigraph: one node per distinct state (its
fingerprint), one edge per enabled event, built breadth-first over the same kernel as `check`.

Nothing here prints; `zabmc graph` writes the graph with networkx's writers.
"""

from __future__ import annotations

from zabmc.core.errors import UsageError

from .env import Env


def state_graph(env: Env, max_states: int):
    """The graph of every state within the depth bound. Node `k` is the k-th distinct state
    met (0 the initial one), with its `depth`, `fingerprint` (hex), per-node `roles` and
    `epochs`, and the properties `violated` by the step that first reached it; each edge has the
    `event` (its description) and `kind`. A one-line `UsageError` above `max_states` states."""
    import networkx as nx

    model = env.model
    g = nx.MultiDiGraph()
    ids: dict = {}

    def add(s, depth: int, v) -> int:
        k = len(ids)
        if k >= max_states:
            raise UsageError(f"the state graph has more than {max_states:,} states "
                             "(--max-states): give smaller bounds or a larger cap")
        ids[env.fingerprint(s)] = k
        views = [model.node_json(x) for x in s.nodes]
        g.add_node(k, depth=depth, fingerprint=env.fingerprint(s).hex(),
                   roles=",".join(str(x.get("role", "")) for x in views),
                   epochs=",".join(str(x.get("current_epoch", "")) for x in views),
                   violated=",".join(x.property for x in v.all()) if v is not None else "")
        return k

    for depth, src, ev, s2, f, v, new in breadth_first(env):
        dst = add(s2, depth, v) if new else ids[f]
        if src is not None:
            g.add_edge(ids[src], dst, event=ev.describe(model), kind=ev.kind)
    return g


def breadth_first(env: Env):
    """Every edge of the state graph within the depth bound, level by level in `successors`
    order: `(depth, parent fingerprint, event, state, fingerprint, violation, new)`, `new` when
    the state is met for the first time. The initial state comes first, with no parent or
    event. A caller may stop at any edge."""
    s0, v0 = env.initial()
    f0 = env.fingerprint(s0)
    seen = {f0}
    yield 0, None, None, s0, f0, v0, True
    frontier = [(f0, s0)]
    for depth in range(1, env.config.depth + 1):
        nxt = []
        for src, s in frontier:
            for ev, s2, v in env.successors(s):
                f = env.fingerprint(s2)
                new = f not in seen
                if new:
                    seen.add(f)
                    nxt.append((f, s2))
                yield depth, src, ev, s2, f, v, new
        if not nxt:
            break
        frontier = nxt
