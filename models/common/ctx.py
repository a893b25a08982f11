"""The handler context: scratch space for one handler call of a model built the db-19 way (a
kernel of small functions that each update the evolving node, append sends and effects)."""

from __future__ import annotations

from zabmc.core.model import Step

from .state import peers


class Ctx:
    """The evolving node, the cluster size `n`, the quorum `q`, the sends and the effects of one
    handler call. `done()` is its `Step`.

    `peers(node_id, n)` (every other node, ascending) is a class attribute, so that a model may
    bind its own: zab does, so that `zabmc mutate` finds and mutates it in zab's handlers
    (models/zab/handlers.py)."""

    __slots__ = ("node", "n", "q", "outs", "effects")

    peers = staticmethod(peers)

    def __init__(self, node, n: int):
        self.node = node
        self.n = n
        self.q = n // 2 + 1  # quorum(n), inline: one context per handler call
        self.outs: list = []
        self.effects: list = []

    def broadcast(self, msg) -> None:
        for p in self.peers(self.node.id, self.n):
            self.outs.append((p, msg))

    def send(self, dst: int, msg) -> None:
        self.outs.append((dst, msg))

    def done(self) -> Step:
        return Step(self.node, tuple(self.outs), tuple(self.effects))
