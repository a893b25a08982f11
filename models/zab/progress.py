"""zab's progress measure, for the reduced search's proviso (`Model.progress`; the engine's half is
zabmc/explore/progress.py, the argument docs/reduction.md, "The proviso and a progress measure").

The measure is a sum over nodes and links of packed integers, each a row of counts compared in
order (`_DIGITS` apart, so that an earlier count outweighs every later one):

1. the nodes' current epochs, 2. their accepted epochs, 3. their last committed zxids,
4. their histories' lengths;
5. the nodes settled: leading, or following a leader whose LookForLeader is not on its way to
   them (the LookForLeader would send the follower back to looking, D6);
6. the leaders' phases;
7. how good a looking node's vote is, then how many votes it has seen;
8. the messages in flight, each by the weight of its kind (`_WEIGHTS`), less being more: a delivery
   that only answers sends less weight than it takes, down each chain of the protocol;
9. the leaders' acknowledgement sets (CEPOCH, ACK-E and ACK-LD).

The engine computes every event's direction from both states, so the measure decides only how
many states the proviso expands fully, never whether the search is sound: any function would be
sound. This one leaves few events lowering it, on the graphs measured (reports/benchmarks.md):
deliveries of a LookForLeader whose node goes back to looking and passes it on to nodes that
follow it, and of a vote that makes a looking node follow a leader whose LookForLeader is on its
way to it.
"""

from __future__ import annotations

from .state import (ACK, ACKEPOCH, ACKLEADER, CEPOCH, COMMIT, COMMITLEADER, FOLLOWING, LEADING,
                    LFL, LOOKING, NEWEPOCH, NEWLEADER, PROPOSE, VOTE)

_DIGITS = 1 << 40


def _row(*counts: int) -> int:
    """Counts 1 to 9 of the module's docstring, packed into one int."""
    r = 0
    for c in counts:
        r = r * _DIGITS + c
    return r


#: a message's weight by its kind (count 8): a delivery that answers sends less than it takes
_WEIGHTS = {LFL: 2, VOTE: 1, CEPOCH: 8, NEWEPOCH: 7, ACKEPOCH: 6, NEWLEADER: 5, ACKLEADER: 2,
            COMMITLEADER: 1, PROPOSE: 3, ACK: 2, COMMIT: 1}
#: a message in flight by its kind, packed (count 8, lighter being more)
_MSG = tuple(_row(0, 0, 0, 0, 0, 0, 0, -_WEIGHTS.get(k, 0), 0) for k in range(max(_WEIGHTS) + 1))
#: one node settled (count 5)
_SETTLED = _row(0, 0, 0, 0, 1, 0, 0, 0, 0)
_MEMO_LIMIT = 300_000


class ZabProgress:
    """`progress(nodes, net)` and `progress_delivered(...)` of `zabmc.core.model`'s contract, with their
    memos (per model, so that no two kernels share them)."""

    def __init__(self):
        self._nodes: dict = {}  # id(node) -> (node, its packed counts)
        self._steps: dict = {}  # (id(node), src, id(msg), n) -> what the delivery changes

    def node(self, x) -> int:
        """A node's counts 1-7 and 9, packed; settled (5) as if no LookForLeader were on its way."""
        memo = self._nodes
        e = memo.get(id(x))
        if e is not None and e[0] is x:
            return e[1]
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        look = 0
        if x.role == LOOKING:
            z = x.vote_target_zxid
            look = ((((z[0] * 1000 + z[1]) * 8 + x.vote_target_id) * 8)
                    + sum(v is not None for v in x.vote_view))
        lc = x.last_committed
        v = _row(x.current_epoch, x.accepted_epoch, lc[0] * 1000 + lc[1], len(x.history),
                 x.role != LOOKING, x.phase, look, 0,
                 x.cepochs.bit_count() + x.epoch_acks.bit_count() + x.leader_acks.bit_count())
        memo[id(x)] = (x, v)
        return v

    @staticmethod
    def link(src: int, x, link: tuple) -> int:
        """Link src->x's messages (count 8), and node x unsettled (5) when it follows src and a
        LookForLeader of src's is among them."""
        w = sum(_MSG[m[0]] for m in link)
        if x.role == FOLLOWING and x.leader_id == src and _has_lfl(link):
            w -= _SETTLED
        return w

    def progress(self, nodes, net) -> int:
        n = len(nodes)
        node, link = self.node, self.link
        return (sum(map(node, nodes))
                + sum(link(k // n, nodes[k % n], q) for k, q in enumerate(net) if q))

    def progress_delivered(self, nodes, net, src: int, dst: int, msg, nodes2, net2) -> int:
        """`progress(nodes2, net2) - progress(nodes, net)` for the delivery of `msg` on link
        src->dst, with every message it sends on its link (no node down). What the delivery does
        to its node and the weights is memoised by the node's and the message's identity, as the
        kernel's step is; the LookForLeader terms are read from the links."""
        n = len(nodes)
        y1 = nodes[dst]
        key = (id(y1), src, id(msg), n)
        memo = self._steps
        e = memo.get(key)
        if e is None or e[0] is not y1 or e[1] is not msg:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            y2 = nodes2[dst]
            d = self.node(y2) - self.node(y1) - _MSG[msg[0]]
            told = []  # the nodes it sends a LookForLeader to
            for q in range(n):
                k = dst * n + q
                old = net[k][1:] if k == src * n + dst else net[k]
                for m in net2[k][len(old):]:
                    d += _MSG[m[0]]
                    if m[0] == LFL:
                        told.append(q)
            e = memo[key] = (y1, msg, d, _follows(y1), _follows(y2), tuple(told))
        d, f1, f2, told = e[2], e[3], e[4], e[5]
        if f1 >= 0 or f2 >= 0 or told:
            # the LookForLeader terms of the links into dst (its leader's) and of those it sent on
            if f1 >= 0 and _has_lfl(net[f1 * n + dst]):
                d += _SETTLED
            if f2 >= 0 and _has_lfl(net2[f2 * n + dst]):
                d -= _SETTLED
            for q in told:
                x = nodes[q]
                if x.role == FOLLOWING and x.leader_id == dst and not _has_lfl(net[dst * n + q]):
                    d -= _SETTLED
        return d


def _follows(x) -> int:
    """The leader a follower follows; -1 for a node that does not follow."""
    return x.leader_id if x.role == FOLLOWING else -1


def _has_lfl(link: tuple) -> bool:
    """Whether a LookForLeader is among a link's messages."""
    for m in link:
        if m[0] == LFL:
            return True
    return False

