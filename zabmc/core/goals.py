"""The goals of the papers' liveness properties (`zabmc.core.properties`, kind `eventually`):
predicates on a state, read through the model's liveness hooks (`leader_of`, `established`).

`env` is any value with the run's `model` and its number of nodes `n` (the explorer's `Env`);
`s` any state with `nodes` and `budgets` (`zabmc.core.events.DOWN` indexes the down nodes).
"""

from __future__ import annotations

from .events import DOWN


def quorum(n: int) -> int:
    return n // 2 + 1


def leader(env, s):
    """The established leader followed by a quorum of up nodes (itself included), or None."""
    model, n, nodes, down = env.model, env.n, s.nodes, s.budgets[DOWN]
    for L in range(n):
        if down >> L & 1 or not model.established(nodes[L]):
            continue
        if sum(1 for i in range(n) if not down >> i & 1 and model.leader_of(nodes[i]) == L) \
                >= quorum(n):
            return L
    return None


def goal_leader(env, s) -> bool:
    """`eventually-leader`: an established leader followed by a quorum."""
    return leader(env, s) is not None


def goal_commit(env, s) -> bool:
    """`eventually-commit`: every up follower of the established leader has delivered its
    whole history (true while there is no such leader: eventually-leader covers the election)."""
    L = leader(env, s)
    if L is None:
        return True
    nodes, down = s.nodes, s.budgets[DOWN]
    history = nodes[L].history
    if not history:
        return True
    last = history[-1][0]
    leader_of = env.model.leader_of
    return all(nodes[i].last_committed >= last for i in range(env.n)
               if not down >> i & 1 and leader_of(nodes[i]) == L)
