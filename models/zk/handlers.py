"""The kernel of the `zk` model: ZooKeeper 3.7's ZAB 1.0, at the grain models/zk/README.md sets
(D1-D12 there; the handlers cite them).

Every handler is a pure function from a node (and an input) to a `Step`. The election's outcome,
the SyncThread's writes and the closing of a connection are the model's own actions (`actions`,
`act`); the explorer steps them like any other event.

The variants differ in one decision, `Rules.newleader`: what a follower does with the proposals of
its synchronisation (packetsNotCommitted) when NEWLEADER arrives, before it acknowledges it.
"""

from __future__ import annotations

from zabmc.core.model import LEADING as EFF_LEADING
from zabmc.core.model import FAILED, PROPOSED, SYNCED, Step

from .state import (ACK, ACKEPOCH, ACKLD, COMMIT, DIFF, ELECTION, F_BROADCAST, F_DISCOVERY, F_SYNC,
                    FOLLOWERINFO, FOLLOWING, L_BROADCAST, L_EPOCH, L_INFO, L_SYNC, LEADERINFO,
                    LEADING, LOOKING, NEWLEADER, NONE, NOTIFICATION, PROPOSAL, SYNC, TRUNC,
                    UPTODATE, ZERO, Node, last_zxid, log_of, queued, quorum)

_NO = ()


class Rules:
    """ZooKeeper 3.7.0 as released: at NEWLEADER the follower writes currentEpoch, hands
    packetsNotCommitted to the SyncThread (asynchronous: D6) and acknowledges at once
    (ZOOKEEPER-3911's fix, which ZOOKEEPER-4646 shows is not enough)."""

    tag = ""
    newleader = "async"  # "uptodate": log at UPTODATE; "async": queue at NEWLEADER; "sync": write
    election = "outcome"  # "outcome": the election's result as one action; "fle": FLE's messages
    # the disk (D4), and the connection counter, which stands for TCP's guarantee that a new
    # connection never receives an older one's bytes (D8)
    durable = ("accepted_epoch", "current_epoch", "history", "last_committed", "conn")


class Pre3911Rules(Rules):
    """Before ZOOKEEPER-3911 (apache/zookeeper PR #1445): the follower logs packetsNotCommitted
    only once UPTODATE arrives, after it has acknowledged NEWLEADER."""

    tag = "pre3911"
    newleader = "uptodate"


class FixedRules(Rules):
    """ZOOKEEPER-4785's fix (PR #2111; #2132 in 3.8.5, #2133 in 3.9.2; not the unmerged #1993 and
    #2028, nor 3.9.3's #2152): at NEWLEADER the follower writes packetsNotCommitted to disk, then
    currentEpoch, and only then acknowledges."""

    tag = "fixed"
    newleader = "sync"


class FleRules(Rules):
    """`zk` with the election at Fast Leader Election's grain: notifications, logical clocks,
    recvset and outofelection (D1)."""

    tag = "fle"
    election = "fle"


class FixedFleRules(FixedRules):
    """`zk-fixed` with the election at Fast Leader Election's grain (D1)."""

    tag = "fixed-fle"
    election = "fle"


def bit(i: int) -> int:
    return 1 << i


def count(mask: int) -> int:
    return bin(mask).count("1")


def vote(node: Node) -> tuple:
    """The node's FLE vote: (peer epoch, last zxid, id); FLE elects the greatest (D1)."""
    return (node.current_epoch, last_zxid(log_of(node)), node.id)


def settle(node: Node) -> Node:
    """`node` with last_committed advanced over every transaction it knows committed and holds on
    disk (D5)."""
    h, c, lc = node.history, node.commit, node.last_committed
    for j in range(len(h) - 1, -1, -1):
        z = h[j][0]
        if z <= c:
            if z > lc:
                return node._replace(last_committed=z)
            break
    return node


def shutdown(node: Node, rules: Rules) -> Node:
    """The node leaves its role (D8): the SyncThread finishes what it had queued, memory is
    rebuilt from disk, and every role variable is reset. With FLE, the connection numbers a
    node has seen from each peer are kept (D8)."""
    history = node.history + node.mem if queued(node) else node.history
    lconn = node.lconn if rules.election == "fle" else ()
    return settle(node._replace(
        role=LOOKING, phase=ELECTION, leader=-1, history=history, mem=(),
        commit=max(node.commit, node.last_committed), mode=NONE, pending=(), pcommit=ZERO,
        nl=False, cut=0, learners=0, lconn=lconn, tmax=0, connecting=0, electing=0, peers=(), ackld=0,
        forwarding=0, acks=()))


def look(node: Node, n: int, rules: Rules) -> Step:
    """The node leaves its role and looks for a leader: with FLE it starts a new election round
    (`lookForLeader`); otherwise the election is the model's `elect` action (D1)."""
    node = shutdown(node, rules)
    if rules.election == "fle":
        node, outs = _new_round(node, n)
        return Step(node, outs, _NO)
    return Step(node, _NO, _NO)


def start(node: Node, n: int, rules: Rules) -> Step:
    """Start-up and every restart: load the disk, and look for a leader."""
    node = node._replace(commit=node.last_committed, mem=())
    if rules.election == "fle":
        if not node.lconn:
            node = node._replace(lconn=(0,) * n)
        node, outs = _new_round(node, n)
        return Step(node, outs, _NO)
    return Step(node, _NO, _NO)


def become_leader(node: Node, learners: int, lconn: tuple, n: int) -> Node:
    i = node.id
    return node._replace(role=LEADING, phase=L_INFO, leader=i, learners=learners | bit(i),
                         lconn=lconn, tmax=node.accepted_epoch + 1, connecting=bit(i),
                         electing=bit(i), peers=(None,) * n, ackld=bit(i), forwarding=0, acks=())


def become_follower(node: Node, leader: int) -> Step:
    """The node opens a new connection to `leader` (D8) and registers with FOLLOWERINFO."""
    c = node.conn + 1
    node = node._replace(role=FOLLOWING, phase=F_DISCOVERY, leader=leader, conn=c, cut=0)
    return Step(node, ((leader, (FOLLOWERINFO, c, node.accepted_epoch)),), _NO)


# --- the model's actions (D1, D6, D8) -------------------------------------------------------------


def actions(nodes, down: int, n: int, rules: Rules) -> list:
    """Every enabled action, in a fixed order: elections (or FLE's decisions), joins, writes to
    disk, lost connections."""
    q = quorum(n)
    up = [not down >> i & 1 for i in range(n)]
    looking = [i for i in range(n) if up[i] and nodes[i].role == LOOKING]
    out = []
    if rules.election == "fle":
        out.extend(("decide", i) for i in looking if _agreed(nodes[i], n))
        for i in range(n):  # a follower's connection attempt succeeds once its leader leads
            x = nodes[i]
            if (up[i] and x.role == FOLLOWING and x.phase == ELECTION and up[x.leader]
                    and nodes[x.leader].role == LEADING):
                out.append(("connect", i, x.leader))
        looking = ()  # no outcome-grain elections or joins
    elif len(looking) >= q:
        # any quorum of looking nodes elects the greatest vote among them (D1)
        lmask = sum(bit(i) for i in looking)
        sub = lmask
        subsets = []
        while sub:
            if count(sub) >= q:
                subsets.append(sub)
            sub = (sub - 1) & lmask
        for qm in sorted(subsets):
            members = [i for i in looking if qm >> i & 1]
            leader = max(members, key=lambda i: vote(nodes[i]))
            out.append(("elect", leader, qm))
    for i in looking:
        for j in range(n):
            x = nodes[j]
            if up[j] and x.role == LEADING and not x.learners >> i & 1:
                followers = sum(1 for k in range(n) if up[k] and nodes[k].role == FOLLOWING
                                and nodes[k].leader == j)
                if followers + 1 >= q:
                    out.append(("join", i, j))
    for i in range(n):
        if up[i] and queued(nodes[i]):
            out.append(("log", i))
    for i in range(n):
        x = nodes[i]
        if not up[i]:
            continue
        if x.role == FOLLOWING:
            j = x.leader
            y = nodes[j]
            if not up[j] or y.role != LEADING or x.cut >> j & 1 or (
                    not y.learners >> i & 1 and x.phase != ELECTION):
                out.append(("lost", i, j))
        elif x.role == LEADING:
            for j in range(n):
                if j != i and x.learners >> j & 1:
                    y = nodes[j]
                    if not up[j] or y.role != FOLLOWING or y.leader != i or x.cut >> j & 1:
                        out.append(("lost", i, j))
    return out


def act(nodes, label: tuple, n: int, rules: Rules) -> list:
    kind = label[0]
    if kind == "elect":
        _, leader, qm = label
        lconn = tuple(nodes[i].conn + 1 if qm >> i & 1 and i != leader else 0 for i in range(n))
        steps = []
        for i in range(n):
            if qm >> i & 1:
                if i == leader:
                    steps.append((i, Step(become_leader(nodes[i], qm, lconn, n), _NO, _NO)))
                else:
                    steps.append((i, become_follower(nodes[i], leader)))
        return steps
    if kind == "join":
        _, i, j = label
        lead = nodes[j]
        c = nodes[i].conn + 1
        lconn = lead.lconn[:i] + (c,) + lead.lconn[i + 1:]
        return [(i, become_follower(nodes[i], j)),
                (j, Step(lead._replace(learners=lead.learners | bit(i), lconn=lconn), _NO, _NO))]
    if kind == "decide":
        return [(label[1], _decide(nodes[label[1]], nodes[label[1]].vote, n))]
    if kind == "connect":
        return [(label[1], become_follower(nodes[label[1]], label[2]))]
    if kind == "log":
        return [(label[1], log(nodes[label[1]]))]
    if kind == "lost":
        _, i, j = label
        return [(i, lost(nodes[i], j, n, rules))]
    raise ValueError(f"unknown zk action {label!r}")


def log(node: Node) -> Step:
    """The SyncThread writes what is queued (D6), and a follower acknowledges each proposal of
    the current epoch once it is on disk (SendAckRequestProcessor)."""
    new = node.mem
    node = settle(node._replace(history=node.history + new, mem=()))
    outs = _NO
    if node.role == FOLLOWING and (node.phase == F_BROADCAST or (node.phase == F_SYNC and node.nl)):
        e, c = node.accepted_epoch, node.conn
        outs = tuple((node.leader, (ACK, c, t[0])) for t in new if t[0][0] == e)
    return Step(node, outs, _NO)


def lost(node: Node, j: int, n: int, rules: Rules) -> Step:
    """Node notices that its connection to `j` is gone (D8)."""
    if node.role == FOLLOWING:
        return look(node, n, rules)
    node = _drop_learner(node, j, rules)
    if count(node.learners) < quorum(n):
        return look(node, n, rules)
    return Step(node, _NO, _NO)


def _drop_learner(node: Node, j: int, rules: Rules) -> Node:
    m = ~bit(j)
    peers = node.peers[:j] + (None,) + node.peers[j + 1:]
    lconn = node.lconn if rules.election == "fle" else node.lconn[:j] + (0,) + node.lconn[j + 1:]
    return node._replace(learners=node.learners & m, lconn=lconn, cut=node.cut & m,
                         connecting=node.connecting & m,
                         electing=node.electing & m, ackld=node.ackld & m,
                         forwarding=node.forwarding & m, peers=peers)


# --- the explorer's events --------------------------------------------------------------------------


def timeout(node: Node, n: int, rules: Rules) -> Step | None:
    """A node that is not looking gives up on its leader or followers (a ping or sync timeout);
    with FLE, a looking node that heard nothing for a while sends its notifications again."""
    if node.role == LOOKING:
        if rules.election == "fle":
            return Step(node, _notify_all(node, n), _NO)
        return None
    return look(node, n, rules)


def heartbeat(node: Node, n: int, rules: Rules) -> Step | None:
    return _ping(node, n)  # D10: pings carry nothing the model reads; they keep followers' timers


def can_propose(node: Node) -> bool:
    return node.role == LEADING and node.phase == L_BROADCAST


def is_leading(node: Node) -> bool:
    return node.role == LEADING


def propose(node: Node, payload: bytes, n: int, rules: Rules) -> Step:
    """The leader logs a client's transaction and sends it to its forwarding followers (D7)."""
    e = node.accepted_epoch
    last = last_zxid(node.history)
    z = (e, last[1] + 1) if last[0] == e else (e, 1)
    txn = (z, payload)
    history = node.history + (txn,)
    node = node._replace(history=history, acks=node.acks + ((z, bit(node.id)),))
    outs = tuple((j, (PROPOSAL, node.lconn[j], txn)) for j in range(n)
                 if j != node.id and node.forwarding >> j & 1)
    node, commits = _try_commit(node, n)
    return Step(node, outs + commits, ((PROPOSED, txn),))


def _try_commit(node: Node, n: int):
    """Commit outstanding proposals in order while each has a quorum of acks."""
    q = quorum(n)
    acks = node.acks
    outs = []
    while acks and count(acks[0][1]) >= q:
        z = acks[0][0]
        acks = acks[1:]
        node = node._replace(commit=z)
        outs.extend((j, (COMMIT, node.lconn[j], z)) for j in range(n)
                    if j != node.id and node.forwarding >> j & 1)
    if len(acks) != len(node.acks):
        node = settle(node._replace(acks=acks))
    return node, tuple(outs)


def deliver(node: Node, src: int, msg: tuple, n: int, rules: Rules) -> Step:
    kind = msg[0]
    if kind == NOTIFICATION:
        return _on_notification(node, src, msg[2], msg[3], msg[4], n, rules)
    if node.role == LEADING:
        if node.cut >> src & 1 and msg[1] == node.lconn[src]:
            return Step(node, _NO, _NO)  # the connection lost a message: it is stalled (D8)
        if (kind == FOLLOWERINFO and rules.election == "fle" and msg[1] > node.lconn[src]):
            # a new connection (with FLE, followers connect on their own, D8)
            node = _drop_learner(node, src, rules)
            node = node._replace(learners=node.learners | bit(src),
                                 lconn=node.lconn[:src] + (msg[1],) + node.lconn[src + 1:])
        elif not node.learners >> src & 1 or msg[1] != node.lconn[src]:
            return Step(node, _NO, _NO)  # not on a connection the leader has open: lost (D8)
        if kind == FOLLOWERINFO:
            return _on_followerinfo(node, src, msg[2], n)
        if kind == ACKEPOCH:
            return _on_ackepoch(node, src, msg[2], msg[3], n, rules)
        if kind == ACKLD:
            return _on_ackld(node, src, msg[2], n)
        if kind == ACK:
            return _on_ack(node, src, msg[2], n)
        return Step(node, _NO, _NO)
    if node.role != FOLLOWING or src != node.leader or msg[1] != node.conn or node.cut:
        return Step(node, _NO, _NO)  # not on a live connection to my leader (D8)
    phase = node.phase
    if kind == LEADERINFO and phase == F_DISCOVERY:
        return _on_leaderinfo(node, msg[2], n, rules)
    if phase == F_SYNC:
        if kind == SYNC and node.mode == NONE:
            return Step(_on_sync(node, *msg[2:]), _NO, _NO)
        if kind == NEWLEADER and node.mode != NONE and not node.nl:
            return _on_newleader(node, msg[2], rules)
        if node.nl:
            if kind == PROPOSAL:
                return Step(node._replace(pending=node.pending + (msg[2],)), _NO, _NO)
            if kind == COMMIT:  # with nothing pending, ZOOKEEPER-4394 (`_npe`)
                return Step(node._replace(pcommit=max(node.pcommit, msg[2])), _NO, _npe(node, msg))
            if kind == UPTODATE:
                return Step(_on_uptodate(node), _NO, _NO)
        return Step(node, _NO, _NO)
    if phase == F_BROADCAST:
        if kind == PROPOSAL:
            txn = msg[2]
            if txn[0] > last_zxid(log_of(node)):
                return Step(node._replace(mem=node.mem + (txn,)), _NO, _NO)
        elif kind == COMMIT:
            return Step(settle(node._replace(commit=max(node.commit, msg[2]))), _NO, _NO)
    return Step(node, _NO, _NO)


# --- leader ---------------------------------------------------------------------------------------


def _on_followerinfo(node: Node, j: int, accepted: int, n: int) -> Step:
    connecting = node.connecting | bit(j)
    if node.phase != L_INFO:
        return Step(node._replace(connecting=connecting),
                    ((j, (LEADERINFO, node.lconn[j], node.accepted_epoch)),), _NO)
    tmax = max(node.tmax, accepted + 1)
    node = node._replace(connecting=connecting, tmax=tmax)
    if count(connecting) < quorum(n):
        return Step(node, _NO, _NO)
    # a quorum is connected: the new epoch is chosen and written (acceptedEpoch)
    node = node._replace(accepted_epoch=tmax, phase=L_EPOCH)
    outs = tuple((k, (LEADERINFO, node.lconn[k], tmax)) for k in range(n)
                 if k != node.id and connecting >> k & 1)
    return Step(node, outs, ((EFF_LEADING, tmax),))


def _on_ackepoch(node: Node, j: int, epoch: int, zxid: tuple, n: int, rules: Rules) -> Step:
    if node.phase == L_INFO:
        return Step(node, _NO, _NO)
    if node.phase != L_EPOCH:  # the epoch is settled already: synchronise j now
        node, outs = _sync(node, j, zxid, n)
        return Step(node, outs, _NO)
    peers = node.peers[:j] + (zxid,) + node.peers[j + 1:]
    if epoch == -1:
        return Step(node._replace(peers=peers), _NO, _NO)
    if (epoch, zxid) > (node.current_epoch, last_zxid(log_of(node))):
        return _gives_up(node, j, epoch, zxid, n, rules)  # a follower is more recent (D9)
    node = node._replace(peers=peers, electing=node.electing | bit(j))
    if count(node.electing) < quorum(n):
        return Step(node, _NO, _NO)
    node = node._replace(current_epoch=node.accepted_epoch, phase=L_SYNC)
    outs = ()
    for k in range(n):
        if node.peers[k] is not None:
            node, o = _sync(node, k, node.peers[k], n)
            outs += o
    return Step(node, outs, _NO)


def _sync(node: Node, j: int, peer: tuple, n: int):
    """syncFollower (D3): the sync packets for a follower whose last zxid is `peer`, then
    NEWLEADER; j starts receiving proposals and commits."""
    h = node.history
    if node.phase == L_BROADCAST:
        c = next((k + 1 for k in range(len(h) - 1, -1, -1) if h[k][0] <= node.last_committed), 0)
    else:
        c = len(h)  # a new leader holds everything it has as committed
    max_committed = h[c - 1][0] if c else ZERO
    if peer > max_committed:
        mode, zxid, start = TRUNC, max_committed, c
    else:
        idx = next((k + 1 for k in range(len(h)) if h[k][0] == peer), None)
        if peer == ZERO:
            idx = 0
        if idx is not None:
            mode, zxid, start = DIFF, peer, idx
        else:  # the follower has a transaction the leader does not: truncate, then DIFF
            below = [k + 1 for k in range(len(h)) if h[k][0] < peer]
            start = below[-1] if below else 0
            mode, zxid = TRUNC, (h[start - 1][0] if start else ZERO)
    txns = h[start:]
    committed = max(0, c - start)
    peers = node.peers[:j] + (None,) + node.peers[j + 1:]
    node = node._replace(peers=peers, forwarding=node.forwarding | bit(j))
    c = node.lconn[j]
    return node, ((j, (SYNC, c, mode, zxid, txns, committed)),
                  (j, (NEWLEADER, c, node.accepted_epoch)))


def _on_ackld(node: Node, j: int, epoch: int, n: int) -> Step:
    if epoch != node.accepted_epoch:
        return Step(node, _NO, _NO)
    if node.phase == L_BROADCAST:
        return Step(node, ((j, (UPTODATE, node.lconn[j])),), _NO)
    if node.phase != L_SYNC:
        return Step(node, _NO, _NO)
    node = node._replace(ackld=node.ackld | bit(j))
    if count(node.ackld) < quorum(n):
        return Step(node, _NO, _NO)
    # established: everything the leader holds is committed (startZkServer)
    node = settle(node._replace(phase=L_BROADCAST, commit=last_zxid(node.history)))
    outs = tuple((k, (UPTODATE, node.lconn[k])) for k in range(n)
                 if k != node.id and node.ackld >> k & 1)
    return Step(node, outs, ((SYNCED, node.accepted_epoch),))


def _on_ack(node: Node, j: int, zxid: tuple, n: int) -> Step:
    if node.phase != L_BROADCAST or not node.forwarding >> j & 1:
        return Step(node, _NO, _NO)
    acks = node.acks
    for k, (z, m) in enumerate(acks):
        if z == zxid:
            acks = acks[:k] + ((z, m | bit(j)),) + acks[k + 1:]
            node, outs = _try_commit(node._replace(acks=acks), n)
            return Step(node, outs, _NO)
    return Step(node, _NO, _NO)


# --- follower -------------------------------------------------------------------------------------


def _on_leaderinfo(node: Node, epoch: int, n: int, rules: Rules) -> Step:
    last = last_zxid(log_of(node))
    if epoch > node.accepted_epoch:
        node = node._replace(accepted_epoch=epoch, phase=F_SYNC)
        return Step(node, ((node.leader, (ACKEPOCH, node.conn, node.current_epoch, last)),), _NO)
    if epoch == node.accepted_epoch:
        node = node._replace(phase=F_SYNC)
        return Step(node, ((node.leader, (ACKEPOCH, node.conn, -1, last)),), _NO)
    return look(node, n, rules)  # an older epoch than one accepted: look again


def _on_sync(node: Node, mode: int, zxid: tuple, txns: tuple, committed: int) -> Node:
    """The sync packets before NEWLEADER (D3): DIFF keeps PROPOSAL and COMMIT for later
    (writeToTxnLog); TRUNC cuts the log on disk, then applies committed proposals in memory
    (they reach the disk with the snapshot taken at NEWLEADER)."""
    if mode == DIFF:
        pcommit = txns[committed - 1][0] if committed else ZERO
        return node._replace(mode=DIFF, pending=txns, pcommit=pcommit)
    h = tuple(t for t in node.history if t[0] <= zxid)
    applied = txns[:committed]
    commit = applied[-1][0] if applied else node.commit
    return node._replace(mode=TRUNC, history=h, mem=applied, commit=commit,
                         pending=txns[committed:])


def _on_newleader(node: Node, epoch: int, rules: Rules) -> Step:
    if node.mode == TRUNC:  # snapshotNeeded: the data tree is written
        node = node._replace(history=node.history + node.mem, mem=())
    node = node._replace(current_epoch=epoch, nl=True)
    how, node = _AT_NEWLEADER.get(rules.newleader, _as_is)(node, rules)
    if how != "uptodate" and node.pending:
        if how == "sync":  # written to disk before the acknowledgement
            node = node._replace(history=log_of(node) + node.pending, mem=(), pending=())
        else:  # handed to the SyncThread
            node = node._replace(mem=node.mem + node.pending, pending=())
    return Step(settle(node), ((node.leader, (ACKLD, node.conn, epoch)),), _NO)


def _on_uptodate(node: Node) -> Node:
    pending = node.pending
    if pending:
        node = node._replace(mem=node.mem + pending, pending=())
    commit = max(node.commit, node.pcommit)
    return settle(node._replace(phase=F_BROADCAST, commit=commit, pcommit=ZERO))


# --- Fast Leader Election (D1, with `Rules.election == "fle"`) ---------------------------------------


def _notification(node: Node) -> tuple:
    return (NOTIFICATION, 0, node.vote, node.lclock, node.role)


def _notify_all(node: Node, n: int) -> tuple:
    m = _notification(node)
    return tuple((k, m) for k in range(n) if k != node.id)


def _new_round(node: Node, n: int):
    """lookForLeader's start: the next round, a vote for itself, and notifications to all."""
    lc = node.lclock + 1
    v = vote(node)
    recv = tuple((v, lc, LOOKING) if k == node.id else None for k in range(n))
    node = node._replace(lclock=lc, vote=v, recv=recv, ooe=(None,) * n)
    return node, _notify_all(node, n)


def _same(entry, v: tuple, rnd: int, state: int) -> bool:
    """Vote.equals: a looking vote matches on leader, zxid, round and epoch; two decided votes
    on leader and peer epoch."""
    if entry is None:
        return False
    ev, er, es = entry
    if es == LOOKING or state == LOOKING:
        return ev == v and er == rnd
    return ev[2] == v[2] and ev[0] == v[0]


def _term(votes: tuple, v: tuple, rnd: int, state: int, n: int) -> bool:
    """termPredicate: a quorum of `votes` matches the vote."""
    return sum(1 for e in votes if _same(e, v, rnd, state)) >= quorum(n)


def _agreed(node: Node, n: int) -> bool:
    """A looking node whose own vote has a quorum in its recvset: it may decide once the
    finalize wait passes with nothing better (the `decide` action)."""
    return bool(node.recv) and _term(node.recv, node.vote, node.lclock, LOOKING, n)


def _check_leader(node: Node, votes: tuple, leader: int, rnd: int) -> bool:
    if leader == node.id:
        return rnd == node.lclock
    e = votes[leader]
    return e is not None and e[2] == LEADING


def _decide(node: Node, v: tuple, n: int) -> Step:
    """The election ends for this node: it leads, or follows the vote's leader (D1, D8)."""
    node = node._replace(vote=v, recv=(), ooe=())
    if v[2] == node.id:
        return Step(become_leader(node, 0, node.lconn, n), _NO, _NO)
    # it follows, and connects once the leader accepts connections (the `connect` action)
    return Step(node._replace(role=FOLLOWING, phase=ELECTION, leader=v[2]), _NO, _NO)


def _put(votes: tuple, j: int, entry) -> tuple:
    return votes[:j] + (entry,) + votes[j + 1:]


def _on_notification(node: Node, j: int, v: tuple, rnd: int, state: int, n: int,
                     rules: Rules) -> Step:
    if rules.election != "fle":
        return Step(node, _NO, _NO)
    if node.role != LOOKING:
        if state == LOOKING:  # WorkerReceiver answers a looking peer with the vote it follows
            return Step(node, ((j, _notification(node)),), _NO)
        return Step(node, _NO, _NO)
    if state == LOOKING:
        if rnd < node.lclock:  # an older round: answered with this node's vote, else ignored
            return Step(node, ((j, _notification(node)),), _NO)
        outs = _NO
        if rnd > node.lclock:  # a newer round: join it
            mine = vote(node)
            node = node._replace(lclock=rnd, vote=max(v, mine), recv=(None,) * n)
            outs = _notify_all(node, n)
        elif v > node.vote:  # totalOrderPredicate: a better vote
            node = node._replace(vote=v)
            outs = _notify_all(node, n)
        recv = _put(_put(node.recv, j, (v, rnd, LOOKING)), node.id,
                    (node.vote, node.lclock, LOOKING))
        return Step(node._replace(recv=recv), outs, _NO)
    # a decided peer (FOLLOWING or LEADING)
    if rnd == node.lclock:
        # recvset keeps it as a looking vote (Vote's four-argument constructor), so only a node
        # that the others elected can end its election on this path (checkLeader)
        recv = _put(node.recv, j, (v, rnd, LOOKING))
        node = node._replace(recv=recv)
        if _term(recv, v, rnd, state, n) and _check_leader(node, recv, v[2], rnd):
            return _decide(node, v, n)
    ooe = _put(node.ooe, j, (v, rnd, state))
    node = node._replace(ooe=ooe)
    if _term(ooe, v, rnd, state, n) and _check_leader(node, ooe, v[2], rnd):
        return _decide(node._replace(lclock=rnd), v, n)
    return Step(node, _NO, _NO)


def on_drop(nodes, src: int, dst: int, msg: tuple, n: int, rules: Rules) -> list:
    """The network loses a message (D8). A notification is simply lost (FLE sends again on a
    timeout). A message of a connection stalls it, as TCP does: nothing more arrives on it at the
    receiver, which notices the broken connection (`lost`) at a moment of the explorer's
    choosing; the sender notices once the receiver has closed it."""
    if msg[0] == NOTIFICATION:
        return []
    x, c = nodes[dst], msg[1]
    if x.role == FOLLOWING and x.leader == src and x.conn == c:
        return [(dst, Step(x._replace(cut=x.cut | bit(src)), _NO, _NO))]
    if x.role == LEADING and x.learners >> src & 1 and x.lconn[src] == c:
        return [(dst, Step(x._replace(cut=x.cut | bit(src)), _NO, _NO))]
    return []


# --- failures (zabmc.core.model's FAILED effect) --------------------------------------------------------
# Written last in the file, so that adding them moved no line above (`zabmc mutate` names its
# mutants by line, and reports/verification.md lists them).


def _npe(node: Node, msg: tuple) -> tuple:
    """A COMMIT after NEWLEADER finds packetsNotCommitted empty (NEWLEADER cleared it, and no
    PROPOSAL came since): `Learner.syncWithLeader` reads `packetsNotCommitted.peekFirst().hdr`
    and throws a NullPointerException (3.7.0 to 3.9.2; ZOOKEEPER-4394, fixed in 3.9.3 by #2152).
    The follower would give up this leader; the model goes on as if the COMMIT were recorded
    (its coarser grain), and reports the failure (the `sync-exception` property)."""
    if node.pending:
        return _NO
    zxid = msg[2]
    what = (f"node {node.id} got COMMIT {zxid[0]}.{zxid[1]} after NEWLEADER with "
            "packetsNotCommitted empty: Learner.syncWithLeader throws a NullPointerException "
            "(ZOOKEEPER-4394)")
    return ((FAILED, "sync-exception", what),)


def _gives_up(node: Node, j: int, epoch: int, zxid: tuple, n: int, rules: Rules) -> Step:
    """D9: an ACKEPOCH shows follower `j` ahead of the leader; `Leader.waitForEpochAck` throws
    "Follower is ahead of the leader", and the leader gives up its epoch and looks again."""
    st = look(node, n, rules)
    what = (f"leader {node.id} gives up epoch {node.accepted_epoch}: follower {j} is ahead "
            f"(current epoch {epoch}, last zxid {zxid[0]}.{zxid[1]}; Leader.waitForEpochAck)")
    return Step(st.node, st.outs, st.effects + ((FAILED, "leader-gives-up", what),))


# --- ZooKeeper 3.9.3's NEWLEADER (PR #2152) ---------------------------------------------------------
# Also at the end of the file, for the same reason as the failures above.
from bisect import bisect_right  # noqa: E402


class Committed393Rules(Rules):
    """ZooKeeper 3.9.3 (PR #2152, merged as #2188: ZOOKEEPER-4394, 4643, 4646): at NEWLEADER the
    follower writes the transactions the leader committed in the DIFF (packetsCommitted) to disk
    and applies them, keeps the outstanding proposals (packetsNotLogged) for the SyncThread at
    UPTODATE, then writes currentEpoch and acknowledges."""

    tag = "3.9.3"
    newleader = "committed"


def _as_is(node: Node, rules: Rules) -> tuple:
    return rules.newleader, node


def _persist_committed(node: Node, rules: Rules) -> tuple:
    """3.9.3's NEWLEADER: the committed prefix of the DIFF (its zxids up to `pcommit`, the DIFF's
    last COMMIT) appended, written (`ZKDatabase.commit`) and applied; the outstanding proposals
    stay in `pending`, which UPTODATE hands to the SyncThread as the "uptodate" rule does.
    Returns the rule the rest of NEWLEADER follows, and the node."""
    pending = node.pending
    cut = bisect_right([t[0] for t in pending], node.pcommit)
    if cut:  # pcommit is then a zxid of the DIFF, beyond every zxid the follower held: its commit
        node = node._replace(history=log_of(node) + pending[:cut], mem=(), pending=pending[cut:],
                             commit=node.pcommit)
    return "uptodate", node


#: what NEWLEADER does first under a rule other than the older releases'
_AT_NEWLEADER = {"committed": _persist_committed}


# --- the leader's pings (D10) -------------------------------------------------------------------------
# At the end of the file, for the same reason as the failures above.
from .state import PING  # noqa: E402


def _ping(node: Node, n: int) -> Step | None:
    """D10: an established leader pings the followers it forwards to (`Leader.lead`'s loop calls
    `LearnerHandler.ping` for each learner, which sends only once its sending thread runs, that is
    after NEWLEADER was queued). A PING changes nothing a handler reads; what it does is keep the
    follower's read timeout from expiring (`check --liveness` reads to whom it goes). None when
    there is nobody to ping."""
    if node.role != LEADING or node.phase != L_BROADCAST:
        return None
    outs = tuple((j, (PING, node.lconn[j])) for j in range(n)
                 if j != node.id and node.forwarding >> j & 1)
    return Step(node, outs, _NO) if outs else None
