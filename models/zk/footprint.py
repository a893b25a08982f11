"""What the `zk` models' actions read and write, for partial-order reduction (`zabmc check
--reduction por`; docs/reduction.md, "Models with actions of their own").

Three functions, each read off the kernel (models/zk/handlers.py `actions`, `act`, `deliver`;
fine.py for `zk-3.7.0-threads` and `zk-3.9.2-threads`; forward.py for `zk-3.7.0-fwd`; shutdown.py for the
`-shutdown` variants; epoch.py for the `-epoch` ones). Node sets are bit sets (node i is bit i); "S" is the set of nodes a stubborn set is built from, and "before S acts"
means along any run of events that change no node of S. Every action sends only from the nodes it
writes (the explorer adds a step's messages to the links out of the step's node), so what an
action sends needs no field of its own: its messages leave the nodes in its write set, and
`may_send` says to whom a node can send at all.

The module is not the kernel: `zabmc mutate` mutates handlers.py, not this file. A mutant kernel
whose actions read other nodes than these is caught by the tests that compare every mutant's
verdict with and without the reduction (tests/test_reduction.py).
"""

from __future__ import annotations

from .state import (ELECTION, F_BROADCAST, F_SYNC, FOLLOWING, L_BROADCAST, L_SYNC, LEADING,
                    LOOKING)

_FLE = "fle"


def footprint(nodes, down: int, label: tuple, n: int, rules) -> tuple:
    """`(reads, writes)` of enabled action `label`: the nodes whose states decide whether it is
    enabled and what it does, and the nodes it changes."""
    everyone = (1 << n) - 1
    kind = label[0]
    if kind == "elect":
        # ("elect", L, Q) is listed iff every member of Q is up and looking, Q holds a quorum, and
        # L has the greatest vote (current epoch, last zxid, id) in Q; `len(looking) >= q` follows
        # from Q being a quorum of looking nodes. `act` makes L leader of Q (its lconn from the
        # members' `conn`) and every other member a follower of L. Only Q is read and written: a
        # node outside Q changes which other `elect` labels exist, never this one.
        q = label[2]
        return q, q
    if kind == "join":
        # ("join", i, j): i up and looking, j up and leading without i among its learners, and
        # the up nodes following j (every node's role and leader: a count over the cluster) at
        # least a quorum less one. `act` changes i (a follower of j) and j (learners, lconn).
        return everyone, 1 << label[1] | 1 << label[2]
    if kind in ("log", "decide", "ack-newleader", "newleader", "flush", "epoch"):
        # log i: i up and `queued`; `log` reads and writes i only, and sends i's ACKs to its leader.
        # decide i (FLE): i up, looking, its own vote with a quorum in its recvset (`_agreed`).
        # ack-newleader i (fine.py, F1): i up and owing the ACK; it sends ACKLD to i's leader.
        # newleader i j (forward.py, F9): i up, leading and owing j NEWLEADER (`nlq`, which
        # forward.norm keeps within i's `forwarding`); it sends NEWLEADER to j, a learner of i.
        # flush i (shutdown.py, H2): i up with a leaked queue; it writes i's disk, sends nothing.
        # epoch i (epoch.py, E1): i up and owing currentEpoch; it writes i and, for 3.9.2, sends
        # the NEWLEADER ACK to i's leader.
        i = 1 << label[1]
        return i, i
    if kind == "lost":
        # ("lost", i, j): enabled by i's role, leader, learners, cut and phase and by j's being up,
        # its role, leader and learners; `lost` changes i only (a follower looks again; a leader
        # drops j and looks again below a quorum). With FLE, looking again sends i's notifications.
        return 1 << label[1] | 1 << label[2], 1 << label[1]
    if kind == "connect":
        # ("connect", i, L) (FLE): i a follower of L in phase ELECTION, L up and leading; it
        # changes i (and i sends FOLLOWERINFO to L).
        return 1 << label[1] | 1 << label[2], 1 << label[1]
    return everyone, everyone  # an action this module does not know: it touches everything


def may_send(nodes, down: int, n: int, rules) -> int:
    """The links `q -> x` (bit q*n + x) on which node q may send a message before any event
    changes x. With the election at FLE's grain, every link: a looking node notifies everyone.

    Otherwise a node sends only to its leader (a follower: FOLLOWERINFO, ACKEPOCH, the ACKs,
    NEWLEADER's ACK; `become_follower`, `log`, fine.py's ack-newleader) or to its learners (a
    leader: LEADERINFO to `connecting`, the sync packets to `peers`, PROPOSAL, COMMIT and PING to
    `forwarding`, UPTODATE to `ackld` or to those with a `lconn`), and a looking node sends nothing.
    q comes to follow or lead x only by `elect` or `join`, which change x; a follower's leader
    changes only with its role, and a leader's learners grow only by `join`, which changes the
    joining node. So the links below are all on which q can send to x before x is changed."""
    if rules.election == _FLE:
        return (1 << n * n) - 1
    out = 0
    for q, x in enumerate(nodes):
        if down >> q & 1:
            continue
        if x.role == FOLLOWING:
            if x.leader >= 0:
                out |= 1 << (q * n + x.leader)
        elif x.role == LEADING:
            to = x.learners | x.connecting | x.electing | x.ackld | x.forwarding
            for k, c in enumerate(x.lconn):
                if c:
                    to |= 1 << k
            to &= ~(1 << q)
            for k in range(n):
                if to >> k & 1:
                    out |= 1 << (q * n + k)
    return out


def steady(nodes, down: int, n: int, left) -> int:
    """The nodes of the *steady* groups: a leader and all its learners that no event can take
    apart, so long as no node looking joins the leader (`join`, which changes the leader).

    With no timeouts, drops or crashes left, a node leaves its role only by `lost` (its leader or a
    learner gone, or a connection cut), a LEADERINFO of an older epoch in F_DISCOVERY
    (`_on_leaderinfo`), or a leader's giving up in L_EPOCH (`_gives_up`); a learner leaves a
    leader's set only by `lost`; `cut` changes only at a drop. A group is steady when its leader is
    up in L_SYNC or L_BROADCAST with nothing cut, and each learner is up, follows it, is past
    F_DISCOVERY (F_SYNC or F_BROADCAST) with nothing cut: then none of these is enabled, and none
    becomes enabled, since each needs a member to have changed first."""
    if "timeout" in left or "drop" in left:
        return 0
    out = 0
    for i, x in enumerate(nodes):
        if down >> i & 1 or x.role != LEADING or x.cut or x.phase not in (L_SYNC, L_BROADCAST):
            continue
        ok = True
        for j in range(n):
            if j == i or not x.learners >> j & 1:
                continue
            y = nodes[j]
            if (down >> j & 1 or y.role != FOLLOWING or y.leader != i or y.cut
                    or y.phase not in (F_SYNC, F_BROADCAST)):
                ok = False
                break
        if ok:
            out |= x.learners | 1 << i
    return out


def couplings(nodes, down: int, n: int, left, rules) -> tuple:
    """Per node x, the nodes y such that an action that reads or writes both x and y is enabled,
    or may become enabled before any event changes x (`left`: the kinds of budgeted event with
    budget left, of "timeout", "drop", "heartbeat"; no crash is left where this is asked).

    - `elect` needs every member looking: a looking x is coupled with every node that is looking
      or may come to look (all but the steady ones).
    - `join i j` reads every up node (the count of j's followers): if any join may become
      enabled, every up node is coupled with every other.
    - `lost` couples a follower with its leader and a leader with its learners (its guard reads
      both), unless the other is steady: a steady leader keeps leading and keeps its learners, a
      steady follower keeps following, and no cut appears without a drop.
    - with FLE every node is coupled with every other (notifications go everywhere, a decided
      follower connects to whichever node comes to lead).
    A down node takes part in no action: it is coupled with none."""
    everyone = (1 << n) - 1
    up = everyone & ~down
    if rules.election == _FLE:
        return tuple(everyone if up >> i & 1 else 0 for i in range(n))
    st = steady(nodes, down, n, left)
    looking = may_look = leading = 0
    for i, x in enumerate(nodes):
        if not up >> i & 1:
            continue
        if x.role == LOOKING:
            looking |= 1 << i
        elif x.role == LEADING:
            leading |= 1 << i
        if not st >> i & 1:
            may_look |= 1 << i  # a node not steady may come to look (a looking one does already)
    # join i j may become enabled: i looks or may, j leads (or, not steady, may come to lead
    # after an election), and i is no learner of j or j, not steady, may drop it
    may_lead = leading | may_look
    join = False
    for j in range(n):
        if not may_lead >> j & 1:
            continue
        for i in range(n):
            if i != j and may_look >> i & 1 and not (st >> j & 1 and nodes[j].learners >> i & 1):
                join = True
                break
        if join:
            break
    if join:
        return tuple(up if up >> i & 1 else 0 for i in range(n))
    out = [0] * n
    for i, x in enumerate(nodes):
        if not up >> i & 1:
            continue
        if x.role == LOOKING:
            out[i] |= may_look & ~(1 << i)
        partners = 0
        if x.role == FOLLOWING and x.leader >= 0:
            partners = 1 << x.leader
        elif x.role == LEADING:
            partners = x.learners & ~(1 << i)
        for j in range(n):
            if partners >> j & 1 and not (st >> i & 1 and st >> j & 1):
                out[i] |= 1 << j
                out[j] |= 1 << i
    return tuple(m & everyone for m in out)


#: A follower's fields that no action of another node reads (handlers.actions reads a node's
#: role, leader, cut and conn, and whether its phase is ELECTION; `elect` a looking node's vote),
#: nor any event of its own but its leaving (`log` reads `mem`; the finer kernels' own actions
#: read fields of their own, which are not here). A delivery that changes no other field, and
#: whose changes the follower's leaving resets, may be undone (`undone`).
UNDOABLE = frozenset({"phase", "mode", "pending", "pcommit", "nl", "commit"})


def undone(model, nodes, down: int, n: int, ev, after, rules) -> bool:
    """Whether the enabled delivery `ev` (leader L to follower F; `after`: the nodes after it) is
    one that F's leaving undoes, so that it commutes with every run that does not take it
    (docs/reduction.md, "A delivery that leaving undoes"):

    - F follows L, and the delivery changes only fields of `UNDOABLE`, and not whether F's phase
      is ELECTION: no action of another node reads what it changes, so none is enabled or
      disabled by it, and none reads it;
    - no action that writes F is enabled but F's `lost`: F's own actions read only F, so while F
      is unchanged, none becomes enabled, and F changes first by its timeout or its `lost`;
    - F's timeout, and F's `lost` of L, give the same step (node, messages, failures) from F as
      from F after the delivery: leaving resets what the delivery changed.

    After leaving, F ignores the message: as a follower, because a leader's kind carries F's old
    connection number (a new one is greater: `act`'s elect and join count up F's `conn`) and a
    learner's kind is never read by a follower; as a leader, because a leader's kind is never
    read by a leader, and a learner's kind, sent while L followed F, carries a number below any
    connection F leads L on later. The explorer checks the rest: the delivery sends nothing,
    changes no ghost state, reports nothing, and no drop or crash is left (a drop of the message,
    taken late, can cut F's connection as a leader: the numbers of the two directions come from
    different counters and can be equal)."""
    if rules.election == _FLE:
        return False
    d, src = ev.dst, ev.src
    f, g = nodes[d], after[d]
    if down >> d & 1 or f.role != FOLLOWING or f.leader != src:
        return False
    for name, a, b in zip(f._fields, f, g):
        if a != b and name not in UNDOABLE:
            return False
    if (f.phase == ELECTION) != (g.phase == ELECTION):
        return False
    for label in model.actions(nodes, down, n):
        if label[0] != "lost" and model.footprint(nodes, down, label, n)[1] >> d & 1:
            return False
    lost = ("lost", d, src)
    try:
        return (model.timeout(f, n) == model.timeout(g, n)
                and model.act(nodes, lost, n) == model.act(nodes[:d] + (g,) + nodes[d + 1:],
                                                           lost, n))
    except Exception:  # noqa: BLE001
        # F's lost is asked for before it is enabled. A kernel that cannot answer (a mutant whose
        # act no longer knows `lost`: zabmc mutate) gets no such set, rather than making the
        # reduced search raise where the full one does not
        return False
