"""The progress measure that lets the reduced search's proviso pass events by (docs/reduction.md,
"The proviso and a progress measure").

The ignoring proviso exists for cycles: every cycle of the reduced graph must hold a state that is
expanded fully. A function M from states to ordered values says where cycles can be. Around a
cycle M comes back to where it started, so an event that raises M is on a cycle only together with
one that lowers it. Hence the reduced search may:

- let every kept event that raises M go by (the proviso need not look at it);
- expand fully every state with a kept event that lowers M, whatever the levels;
- apply the level proviso (an event back to the state's own level or an earlier one) only to the
  kept events that leave M equal.

A cycle with no fully expanded state then has no lowering event, so M is equal all round it, and
its edge back to an earlier level is one the proviso sees. This holds for every M: M decides only
how much the proviso excuses, never whether the search is sound, because every event's direction
is computed from the two states, not assumed.

M here is, compared in order: the budgets spent (proposals made, and drops, timeouts, heartbeats
and crashes used), the ghost state's size (`Checker.ghost_size`: it only grows), and the model's
own part, `Model.progress(nodes, net)`, an int. A model without `progress` gives no measure, and
the proviso is the level proviso alone.
"""

from __future__ import annotations

from zabmc.core.events import CRASHES, DOWN, DROPS, HEARTBEATS, MADE, TIMEOUTS, Deliver


def spent(b) -> int:
    """The budgets used so far: proposals count up, the other budgets count down."""
    return b[MADE] - b[DROPS] - b[TIMEOUTS] - b[HEARTBEATS] - b[CRASHES]


class Progress:
    """`direction(s, ev, s2)`: whether event `ev` from `s` to `s2` raises (1), keeps (0) or lowers
    (-1) the measure. `Model.progress_delivered`, where a model has it, gives the model's part of a
    delivery's change without two whole evaluations (no node down, so that every message sent is
    on its link)."""

    __slots__ = ("of", "delivered", "ghost_size")

    def __init__(self, model, checker):
        self.of = model.progress
        self.delivered = getattr(model, "progress_delivered", None)
        self.ghost_size = checker.ghost_size

    @staticmethod
    def of_model(model, checker) -> Progress | None:
        """The measure of `model`'s states, or None when the model has none."""
        if getattr(model, "progress", None) is None:
            return None
        return Progress(model, checker)

    def direction(self, s, ev, s2) -> int:
        b, b2 = s.budgets, s2.budgets
        if b is not b2:
            d = spent(b2) - spent(b)
            if d:
                return 1 if d > 0 else -1
        g, g2 = s.ghost, s2.ghost
        if g is not g2:
            d = self.ghost_size(g2) - self.ghost_size(g)
            if d:
                return 1 if d > 0 else -1
        if type(ev) is Deliver and self.delivered is not None and not b[DOWN]:
            d = self.delivered(s.nodes, s.net, ev[0], ev[1], ev[2], s2.nodes, s2.net)
        else:
            d = self.of(s2.nodes, s2.net) - self.of(s.nodes, s.net)
        return 1 if d > 0 else -1 if d < 0 else 0
