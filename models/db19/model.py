"""The db-19 model adapter: binds the kernel in `handlers` to the `zabmc.model.Model` interface."""

from __future__ import annotations

from zabmc.model import Step

from . import codec, handlers
from .state import LEADING, fresh_node


class Db19Model:
    name = "db19"
    description = "the db-19 lab design, literal reading of its pseudo-code (seed 000)"
    network_assumption = "any"

    def initial(self, n: int):
        """C6/E3: every node starts fresh and enters Looking, in ascending id."""
        nodes = []
        sends = []
        for i in range(n):
            step = handlers.enter_looking(fresh_node(i, n), n)
            nodes.append(step.node)
            sends.extend((i, dst, msg) for dst, msg in step.outs)
        return tuple(nodes), sends

    def initial_steps(self, n: int) -> list[Step]:
        """Start-up as one Step per node (the simulator needs them one at a time)."""
        return [handlers.enter_looking(fresh_node(i, n), n) for i in range(n)]

    deliver = staticmethod(handlers.deliver)
    timeout = staticmethod(handlers.timeout)
    heartbeat = staticmethod(handlers.heartbeat)
    can_propose = staticmethod(handlers.can_propose)
    propose = staticmethod(handlers.propose)

    @staticmethod
    def is_leading(node) -> bool:
        return node.role == LEADING

    encode_node = staticmethod(codec.encode_node)
    encode_msg = staticmethod(codec.encode_msg)
    dump = staticmethod(codec.dump)
    msg_json = staticmethod(codec.msg_json)
    node_json = staticmethod(codec.node_json)
    describe_msg = staticmethod(codec.describe_msg)


MODEL = Db19Model()
