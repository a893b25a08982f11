"""The interface a protocol model implements so that every engine can drive it.

A model is a transition kernel: pure functions from (node state, input) to a `Step`. The seeded
simulator, the explorer's strategies, replay and the Spark engine all step a protocol only through
these functions, so there is exactly one implementation of every handler (in `models/<name>/`).

Engines know a model only through this module; `zabmc.explore` never imports `models`.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple, Protocol, Sequence

from zabmc.errors import UsageError

# Observable effects a handler reports besides its new state and its messages.
EFF_TIMER = ("timer",)  # reset_election_deadline(): only the seeded simulator gives it meaning


class Step(NamedTuple):
    """What one handler call produced: the node's new state, messages out, observable effects.

    `outs` is a tuple of `(dst, msg)` in send order. `effects` holds tuples such as `("timer",)`,
    `("leading", epoch)`, `("synced", epoch)` and `("proposed", txn)`.
    """

    node: Any
    outs: tuple
    effects: tuple


class Model(Protocol):
    """A protocol model. Node states and messages are immutable, hashable values."""

    name: str
    description: str
    #: "fifo" when the model is only correct on FIFO links (the paper's TCP), "any" otherwise.
    network_assumption: str

    def initial(self, n: int) -> tuple[tuple, list]:
        """The start-up (C6): `(nodes, sends)` where sends are `(src, dst, msg)` in send order."""

    def deliver(self, node: Any, src: int, msg: Any, n: int) -> Step: ...

    def timeout(self, node: Any, n: int) -> Step | None:
        """The election timeout's effect on `node`, or None when it may not fire (C10)."""

    def heartbeat(self, node: Any, n: int) -> Step | None:
        """A leader's heartbeat, or None when `node` may not send one (C10)."""

    def can_propose(self, node: Any) -> bool: ...

    def is_leading(self, node: Any) -> bool:
        """A Leading node runs no election timer (C10)."""

    def initial_steps(self, n: int) -> list[Step]:
        """Start-up as one Step per node, ascending id (C6)."""

    def propose(self, node: Any, payload: bytes, n: int) -> Step: ...

    # --- canonical encodings and views ------------------------------------------------------------
    def encode_node(self, node: Any) -> bytes: ...

    def encode_msg(self, msg: Any) -> bytes: ...

    def dump(self, nodes: Sequence[Any]) -> bytes:
        """The canonical `DSEZAB01` dump of a cluster."""

    def msg_json(self, msg: Any) -> dict: ...

    def node_json(self, node: Any) -> dict: ...

    def describe_msg(self, msg: Any) -> str: ...


# Registered protocol models: name -> "module:attribute". Loaded lazily.
MODELS = {
    "db19": "models.db19:MODEL",
    "zab": "models.zab:MODEL",
    "zab-omega": "models.zab:OMEGA",
}


def get_model(name: str) -> Model:
    """The model registered under `name`; a `UsageError` naming the choices otherwise."""
    target = MODELS.get(name)
    if target is None:
        raise UsageError(f"unknown model {name!r}; choose one of: {', '.join(sorted(MODELS))}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)
