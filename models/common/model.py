"""The adapter of a rules-driven model: one kernel module whose handlers take a `Rules` object
last, and a `Rules` object per variant (zab, zab-omega, zab-1419; zk, zk-pre3911, zk-fixed, ...).

A model's adapter module (`models/<pkg>/model.py`) subclasses `RulesModel` and binds, in the
class body, its kernel (`handlers`) and its views (`codec`). Binding them there, when the adapter
module runs, is what lets `zabmc mutate` build a mutant model: it runs the adapter module afresh
with `handlers` resolving to the mutated kernel (zabmc/mutate).
"""

from __future__ import annotations

from zabmc.core.model import Step


class RulesModel:
    """`zabmc.core.model.Model` for a kernel `handlers` that takes `self.rules` as its last argument.

    Subclasses set `handlers` and `codec` (modules), and their own name and description;
    `can_propose`, `is_leading` and the views `dump`, `msg_json`, `node_json` and `describe_msg`
    are those modules' functions, bound when the subclass is made."""

    network_assumption = "fifo"
    handlers = None  # the kernel module
    codec = None  # the views module

    #: bound, as they are, from `handlers` (the two that take no rules) and from `codec`
    KERNEL_FUNCTIONS = ("can_propose", "is_leading")
    VIEWS = ("dump", "msg_json", "node_json", "describe_msg")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        for name in cls.KERNEL_FUNCTIONS:
            setattr(cls, name, staticmethod(getattr(cls.handlers, name)))
        for name in cls.VIEWS:
            setattr(cls, name, staticmethod(getattr(cls.codec, name)))

    def __init__(self, rules):
        self.rules = rules

    @property
    def durable(self) -> tuple:
        """The fields a crash keeps (E7): the rules'."""
        return self.rules.durable

    # --- the kernel --------------------------------------------------------------------------------
    def start(self, node, n: int) -> Step:
        return self.handlers.start(node, n, self.rules)

    def deliver(self, node, src: int, msg, n: int) -> Step:
        return self.handlers.deliver(node, src, msg, n, self.rules)

    def timeout(self, node, n: int) -> Step | None:
        return self.handlers.timeout(node, n, self.rules)

    def heartbeat(self, node, n: int) -> Step | None:
        return self.handlers.heartbeat(node, n, self.rules)

    def propose(self, node, payload: bytes, n: int) -> Step:
        return self.handlers.propose(node, payload, n, self.rules)
