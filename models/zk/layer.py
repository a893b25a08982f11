"""A grain of the `zk` kernel as a layer over another (models/zk/README.md, "Releases: the grains
stacked").

fine.py is a layer over the coarse kernel (`handlers`), bound as a module; forward.py,
shutdown.py and epoch.py are each a `Layer` over a parent kernel: fine.py, storage.py or another
`Layer`. Stacked, they make a release's model (models/zk/releases.py): every grain at once,
each adding its fields to the parent's node type and its steps to the parent's.

A layer's entry points take the coarse kernel `h` first, as fine.py's do, so that `zabmc
mutate`'s mutants of handlers.py reach every stack. Its node type is its parent's with the
layer's fields after them (`state.extend_node`), and its normal form is its parent's, then its
own (`own_norm`).
"""

from __future__ import annotations

from zabmc.core.model import Step

from .codec import describe_msg, dump, msg_json


class Layer:
    """A grain over `parent` (a kernel module or a `Layer`: an object with fine.py's entry points,
    views and `norm`), whose nodes are `node`. Every entry point is the parent's, normalised;
    a subclass overrides those its grain changes. It is also its models' codec: the parent's
    views, and its own fields' (`node_json`)."""

    dump = staticmethod(dump)
    msg_json = staticmethod(msg_json)
    describe_msg = staticmethod(describe_msg)
    #: the fields this layer adds, with their defaults (the node type's last fields)
    FIELDS: dict = {}

    def __init__(self, parent, node):
        assert node._fields[-len(self.FIELDS):] == tuple(self.FIELDS) if self.FIELDS else True
        assert set(getattr(parent, "node", node)._fields) <= set(node._fields)
        self.parent, self.node = parent, node

    def __repr__(self) -> str:
        p = self.parent
        return f"{type(self).__name__}({getattr(p, '__name__', None) or repr(p)})"

    def fresh(self, node_id: int, n: int):
        return self.node(node_id)

    def own_norm(self, node):
        """This layer's fields in their one form (none by default)."""
        return node

    def norm(self, node):
        return self.own_norm(self.parent.norm(node))

    def _step(self, st: Step | None) -> Step | None:
        return None if st is None else Step(self.norm(st.node), st.outs, st.effects)

    def _steps(self, pairs: list) -> list:
        return [(i, self._step(st)) for i, st in pairs]

    def has(self, field: str) -> bool:
        return field in self.node._fields

    # --- the model's entry points (the adapter calls these with its kernel `h`) ------------------

    def start(self, h, node, n: int, rules) -> Step:
        return self._step(self.parent.start(h, node, n, rules))

    def timeout(self, h, node, n: int, rules) -> Step | None:
        return self._step(self.parent.timeout(h, node, n, rules))

    def propose(self, h, node, payload: bytes, n: int, rules) -> Step:
        return self._step(self.parent.propose(h, node, payload, n, rules))

    def on_drop(self, h, nodes, src: int, dst: int, msg: tuple, n: int, rules) -> list:
        return self._steps(self.parent.on_drop(h, nodes, src, dst, msg, n, rules))

    def actions(self, h, nodes, down: int, n: int, rules) -> list:
        return self.parent.actions(h, nodes, down, n, rules)

    def act(self, h, nodes, label: tuple, n: int, rules) -> list:
        return self._steps(self.parent.act(h, nodes, label, n, rules))

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        return self._step(self.parent.deliver(h, node, src, msg, n, rules))

    # --- views -----------------------------------------------------------------------------------

    def node_json(self, node) -> dict:
        return self.parent.node_json(node)

    def describe_action(self, label: tuple) -> str:
        return self.parent.describe_action(label)


class Tracking(Layer):
    """A layer whose fields follow every step of its parent: `_track(x, st, rules)` (the node
    before, the parent's step from it) is applied to each node a timeout, a proposal, a drop or
    an action makes (shutdown.py's disk, storage.py's committed log and data tree)."""

    def _track(self, x, st: Step | None, rules) -> Step | None:
        raise NotImplementedError

    def timeout(self, h, node, n: int, rules) -> Step | None:
        return self._track(node, self.parent.timeout(h, node, n, rules), rules)

    def propose(self, h, node, payload: bytes, n: int, rules) -> Step:
        return self._track(node, self.parent.propose(h, node, payload, n, rules), rules)

    def on_drop(self, h, nodes, src: int, dst: int, msg: tuple, n: int, rules) -> list:
        return [(i, self._track(nodes[i], st, rules))
                for i, st in self.parent.on_drop(h, nodes, src, dst, msg, n, rules)]

    def act(self, h, nodes, label: tuple, n: int, rules) -> list:
        return [(i, self._track(nodes[i], st, rules))
                for i, st in self.parent.act(h, nodes, label, n, rules)]

