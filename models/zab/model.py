"""The zab model adapter: binds the kernel in `handlers`, with one `Rules` object, to the
`zabmc.model.Model` interface.

`ZabModel(rules)` is the whole variation mechanism: `MODEL` uses `Rules()` (db-19's zxid-ordered
election), `OMEGA` uses `OmegaRules()` (a data-blind leader oracle), and the seeded mutations in
tests/test_zab_mutations.py pass a `Rules` subclass that overrides one decision. That includes what
a crash keeps (`durable`, read from the rules) and what a restart recovers (`start`, through
`Rules.recover`; models/zab/README.md, D19-D21).
"""

from __future__ import annotations

from zabmc.model import Step

from . import codec, handlers
from .handlers import OmegaRules, Rules
from .state import fresh_node


class ZabModel:
    network_assumption = "fifo"
    fresh = staticmethod(fresh_node)

    def __init__(self, rules: Rules | None = None, name: str | None = None,
                 description: str | None = None):
        self.rules = rules if rules is not None else Rules()
        tag = self.rules.tag
        self.name = name or ("zab" if not tag else f"zab-{tag}")
        self.description = description or (
            "ZAB as DSN 2011 §IV-V describes it, with db-19's FastLeaderElection"
            + (f" ({tag})" if tag else "")
        )

    def __repr__(self) -> str:
        return f"ZabModel({type(self.rules).__name__}(), name={self.name!r})"

    @property
    def durable(self) -> tuple:
        """The fields a crash keeps (E7): the rules' (the paper's persistent variables, D19)."""
        return self.rules.durable

    # --- the kernel --------------------------------------------------------------------------------
    def start(self, node, n: int) -> Step:
        """A starting node (start-up, and every restart) recovers its disk and enters Looking (D20)."""
        return handlers.start(node, n, self.rules)

    def deliver(self, node, src: int, msg, n: int) -> Step:
        return handlers.deliver(node, src, msg, n, self.rules)

    def timeout(self, node, n: int) -> Step:
        return handlers.timeout(node, n, self.rules)

    def heartbeat(self, node, n: int) -> Step | None:
        return handlers.heartbeat(node, n, self.rules)

    def propose(self, node, payload: bytes, n: int) -> Step:
        return handlers.propose(node, payload, n, self.rules)

    can_propose = staticmethod(handlers.can_propose)
    is_leading = staticmethod(handlers.is_leading)

    # --- encodings and views -----------------------------------------------------------------------
    dump = staticmethod(codec.dump)
    msg_json = staticmethod(codec.msg_json)
    node_json = staticmethod(codec.node_json)
    describe_msg = staticmethod(codec.describe_msg)


MODEL = ZabModel()
OMEGA = ZabModel(
    OmegaRules(),
    description="zab with a data-blind leader oracle (votes ordered by node id only)",
)
