"""The zab handlers: ZAB as DSN 2011 §IV-V describes it, as one pure transition kernel.

Each public function maps (node state, input, rules) to a `Step(node, outs, effects)` and touches
nothing else. Step names in comments are the paper's (l.1.1 = leader, Phase 1, step 1; f.2.1 =
follower, Phase 2, step 1). Every place where the paper leaves a choice, or where this model adds
to it, is listed in `models/zab/README.md` (D<n>); the comments cite those numbers.

The protocol's decision points (vote order, the new-epoch promise, the history selection, proposal
acceptance, zxid order, the commit quorum, and for crashes what the disk keeps and what a restart
recovers from it) are the members of `Rules`, so that a variant of the protocol (the Omega
election, the seeded mutations in tests/test_zab_mutations.py) is a one-member subclass and never a
copy of a handler.

Effects: `("timer",)` for reset_election_deadline() (the seeded simulator's only concern),
`("leading", e)` when the node becomes the prospective leader of epoch e (it chose e, step l.1.1),
`("synced", e)` when it becomes the established leader of e (step l.2.2), `("proposed", txn)`.
"""

from __future__ import annotations

from models.common.ctx import Ctx
from zabmc.core.model import EFF_TIMER, LEADING as EFF_LEADING, PROPOSED, SYNCED, Step

from .state import (
    ACK, ACKEPOCH,
    ACKLEADER,
    CEPOCH,
    COMMIT,
    COMMITLEADER,
    FOLLOWING,
    LEADER_RESET,
    LEADING,
    LFL,
    LOOKING,
    NEWEPOCH,
    NEWLEADER,
    P_ACKEPOCH,
    P_BROADCAST,
    P_CEPOCH,
    P_SYNC,
    PROPOSE,
    VOTE,
    ZERO,
    Node,
    Txn,
    history_last,
    last_zxid,
)


class Rules:
    """The protocol's decision points. Subclasses override one method to make a variant."""

    #: suffix for the model name ("" for the protocol as documented)
    tag = ""

    #: E7: the node fields a crash keeps (the disk): the paper's persistent variables f.a
    #: (`current_epoch`), f.p (`accepted_epoch`) and h_f (`history`), and the delivery point
    #: (`last_committed`). Every other field is lost (D19). `ZabModel.durable` reads this.
    durable = ("current_epoch", "accepted_epoch", "history", "last_committed")

    def recover(self, node: Node) -> Node:
        """E9: what a starting node rebuilds from its disk before it starts (D19): every durable
        field as it was written. At start-up nothing is written yet, so this is a no-op there."""
        return node

    def vote_better(self, peer_zxid: tuple, voter: int, target_zxid: tuple, target: int) -> bool:
        """FastLeaderElection's order: switch the vote to `voter` when this holds (db-19 C5)."""
        return (peer_zxid, voter) > (target_zxid, target)

    def acks_new_epoch(self, node: Node, e: int) -> bool:
        """f.1.2: acknowledge NEWEPOCH(e) only for an epoch later than any acknowledged before."""
        return e > node.accepted_epoch

    def better_history(self, epoch: int, zxid: tuple, best_epoch: int, best_zxid: tuple) -> bool:
        """l.1.2: the initial history is the one with the latest epoch, then the highest zxid."""
        return (epoch, zxid) > (best_epoch, best_zxid)

    def accepts_proposal(self, node: Node, txn: tuple) -> bool:
        """Invariant 1 of the paper: a proposal of epoch e only while f.a = e, and (D10) only while
        no later epoch is promised (f.p = f.a). Epoch e has one established leader, so this also
        names the sender."""
        return txn[0][0] == node.current_epoch == node.accepted_epoch

    def in_zxid_order(self, node: Node, txn: tuple) -> bool:
        """f.3.2: proposals are appended in zxid order with no gap (D11)."""
        le, lc = last_zxid(node)
        e, c = txn[0]
        return c == lc + 1 if e == le else (e > le and c == 1)

    def commit_ready(self, acks: int, q: int) -> bool:
        """l.3.2: commit once a quorum (the leader included) acknowledged."""
        return acks.bit_count() >= q


class OmegaRules(Rules):
    """The election as a plain leader oracle: votes ordered by node id only, blind to the data.

    With db-19's zxid-ordered votes the elected node already holds the most up-to-date history of
    its voters (the paper's "interesting optimization", §V-A), which hides the history selection of
    step l.1.2 from any small check. This order elects nodes regardless of their history, so
    Phases 1 and 2 alone must carry every committed transaction into the new epoch.
    """

    tag = "omega"

    def vote_better(self, peer_zxid, voter, target_zxid, target):
        return voter > target


RULES = Rules()

_PEERS: dict[tuple[int, int], tuple[int, ...]] = {}


def peers(node_id: int, n: int) -> tuple[int, ...]:
    """Every other node, ascending."""
    key = (node_id, n)
    p = _PEERS.get(key)
    if p is None:
        p = _PEERS[key] = tuple(i for i in range(n) if i != node_id)
    return p


def members(mask: int, me: int) -> list[int]:
    """The node ids in a bit set, ascending, `me` excluded."""
    out = []
    i = 0
    while mask:
        if mask & 1 and i != me:
            out.append(i)
        mask >>= 1
        i += 1
    return out


class _Ctx(Ctx):
    """The handler context (models/common/ctx.py) with the rules (`r`) and `multicast`."""
    __slots__ = ("r",)
    peers = staticmethod(peers)  # this module's: see the note below

    def __init__(self, node: Node, n: int, rules: Rules):
        self.node = node
        self.n = n
        self.q = n // 2 + 1
        self.r = rules
        self.outs: list = []
        self.effects: list = []

    def multicast(self, mask: int, msg) -> None:
        """To every node of a bit set but self, ascending."""
        for p in members(mask, self.node.id):
            self.outs.append((p, msg))


# A note on `peers`, `members` and the quorum `q` above. models/common has the same `peers` and
# quorum (db19 takes them from there); zab keeps its own copies on purpose: `zabmc mutate` mutates
# this file only, so the guards and thresholds of zab's election and quorums must stand here to be
# mutated (mutants 24 to 29), and `_Ctx.broadcast` must send through this module's `peers`.
# The mutants are also named by line and column in this file (tests/test_mutate.py and
# reports/verification.md cite them): moving the context's `broadcast`, `send` and `done` to
# models/common left these lines free rather than renumber every mutant below them: this note
# stands where those methods stood.


# --- Phase 0: FastLeaderElection (db-19's, D1-D4) ---------------------------------------------------


def _enter_looking(c: _Ctx) -> None:
    """Start a new iteration: drop any leader state (D5) and ask for votes (D2)."""
    node = c.node
    me, lz = node.id, last_zxid(node)
    view = [None] * c.n
    view[me] = me
    c.node = node._replace(
        role=LOOKING, leader_id=None, vote_target_id=me, vote_target_zxid=lz, vote_view=tuple(view),
        **LEADER_RESET,
    )
    c.broadcast((LFL, me, lz, node.current_epoch))
    _check_election(c)


def _leave_looking(node: Node, **kw) -> Node:
    # D4: the tally means nothing outside Looking; clearing it merges equal protocol states.
    return node._replace(vote_target_zxid=ZERO, vote_view=(None,) * len(node.vote_view), **kw)


def _check_election(c: _Ctx) -> None:  # db-19's, written out again: mutate mutates each apart
    node = c.node
    target = node.vote_target_id
    if sum(1 for v in node.vote_view if v == target) >= c.q:
        if target == node.id:
            _become_leading(c)
        else:
            _become_following(c, target)


def _become_following(c: _Ctx, leader: int) -> None:
    """f.1.1: follow `leader` and send it CEPOCH(f.p)."""
    node = _leave_looking(c.node, role=FOLLOWING, leader_id=leader)
    c.node = node
    c.send(leader, (CEPOCH, node.accepted_epoch))


def _on_vote(c: _Ctx, src: int, voter: int, peer_zxid: tuple, leader_chosen: int,
             is_lfl: bool) -> None:
    node = c.node
    if node.role != LOOKING:
        if not is_lfl:
            return  # D3: only a LookForLeader is answered, so no two nodes answer each other forever
        if node.role == FOLLOWING and src == node.leader_id:
            # D6: our leader is looking again, so its iteration (and ours) is over.
            _enter_looking(c)
            node = c.node
            if node.role != LOOKING:
                return
        else:
            c.send(src, (VOTE, node.id, last_zxid(node), node.current_epoch, node.vote_target_id))
            return
    switched = False
    if c.r.vote_better(peer_zxid, voter, node.vote_target_zxid, node.vote_target_id):
        view = [None] * c.n
        view[node.id] = voter
        node = node._replace(vote_target_id=voter, vote_target_zxid=peer_zxid, vote_view=tuple(view))
        c.node = node
        # D3: the new vote goes to its target only.
        c.send(voter, (VOTE, node.id, last_zxid(node), node.current_epoch, voter))
        switched = True
    view = list(node.vote_view)
    view[voter] = leader_chosen
    node = node._replace(vote_view=tuple(view))
    c.node = node
    if is_lfl and not switched:
        # D3: a newcomer learns our current vote (had we switched to it, our vote told it).
        c.send(src, (VOTE, node.id, last_zxid(node), node.current_epoch, node.vote_target_id))
    _check_election(c)


# --- Phase 1: Discovery ---------------------------------------------------------------------------


def _become_leading(c: _Ctx) -> None:
    """The oracle says we lead: start Phase 1 with fresh leader state (the leader is its own
    follower, so its own CEPOCH counts, D7)."""
    node = _leave_looking(c.node, role=LEADING, leader_id=c.node.id, **LEADER_RESET)
    c.node = node._replace(phase=P_CEPOCH, cepochs=1 << node.id, cepoch_max=node.accepted_epoch)
    c.effects.append(EFF_TIMER)  # D9: a prospective leader gets one election timeout to establish
    _try_choose_epoch(c)


def _try_choose_epoch(c: _Ctx) -> None:
    """l.1.1: with CEPOCH from a quorum, propose an epoch later than all of theirs."""
    node = c.node
    if node.cepochs.bit_count() < c.q:
        return
    e = node.cepoch_max + 1
    node = node._replace(
        phase=P_ACKEPOCH, pending_new_epoch=e, accepted_epoch=e, epoch_acks=1 << node.id,
        best_epoch=node.current_epoch, best_history=node.history,
    )
    c.node = node
    c.effects.append((EFF_LEADING, e))
    c.multicast(node.cepochs, (NEWEPOCH, e))
    _try_finish_discovery(c)


def _on_cepoch(c: _Ctx, src: int, p: int) -> None:
    node = c.node
    if node.role != LEADING:
        return
    if node.phase == P_CEPOCH:
        c.node = node._replace(cepochs=node.cepochs | (1 << src), cepoch_max=max(node.cepoch_max, p))
        _try_choose_epoch(c)
    elif p < node.pending_new_epoch:
        # l.3.3, and D8 before Phase 3: a late follower gets the epoch already proposed (unless it
        # promised that epoch or a later one, when it could not acknowledge it anyway).
        c.send(src, (NEWEPOCH, node.pending_new_epoch))


def _on_new_epoch(c: _Ctx, src: int, e: int) -> None:
    """f.1.2: promise e (f.p := e) and answer ACK-E(f.a, h_f); never twice for one epoch (D10)."""
    node = c.node
    if node.role != FOLLOWING or not c.r.acks_new_epoch(node, e):
        return
    node = node._replace(accepted_epoch=e)
    c.node = node
    if src == node.leader_id:
        c.effects.append(EFF_TIMER)
    c.send(src, (ACKEPOCH, e, node.current_epoch, last_zxid(node), node.history))


def _on_ack_epoch(c: _Ctx, src: int, e: int, f_epoch: int, f_zxid: tuple, f_hist: tuple) -> None:
    node = c.node
    bit = 1 << src
    if node.role != LEADING or e != node.pending_new_epoch or node.epoch_acks & bit:
        return
    if node.phase == P_ACKEPOCH:
        node = node._replace(epoch_acks=node.epoch_acks | bit)
        if c.r.better_history(f_epoch, f_zxid, node.best_epoch, history_last(node.best_history)):
            node = node._replace(best_epoch=f_epoch, best_history=f_hist)
        c.node = node
        _try_finish_discovery(c)
    else:
        # D8: the initial history is chosen; a late follower is synchronized with I_e o beta_e.
        c.node = node._replace(epoch_acks=node.epoch_acks | bit)
        c.send(src, (NEWLEADER, e, node.history))


def _try_finish_discovery(c: _Ctx) -> None:
    """l.1.2 with a quorum of ACK-E (D7), then l.2.1: adopt the best history, send NEWLEADER."""
    node = c.node
    if node.phase != P_ACKEPOCH or node.epoch_acks.bit_count() < c.q:
        return
    e = node.pending_new_epoch
    node = node._replace(
        phase=P_SYNC, current_epoch=e, history=node.best_history, best_epoch=0, best_history=(),
        leader_acks=1 << node.id,
    )
    c.node = node
    c.multicast(node.epoch_acks, (NEWLEADER, e, node.history))
    _try_finish_sync(c)


# --- Phase 2: Synchronization ---------------------------------------------------------------------


def _on_new_leader(c: _Ctx, src: int, e: int, hist: tuple) -> None:
    """f.2.1: only for the epoch we promised (f.p = e, D10): f.a := e, h_f := I_e, answer ACK-LD."""
    node = c.node
    if node.role != FOLLOWING or e != node.accepted_epoch:
        return
    c.node = node._replace(current_epoch=e, history=hist)
    if src == node.leader_id:
        c.effects.append(EFF_TIMER)
    c.send(src, (ACKLEADER, e))


def _on_ack_leader(c: _Ctx, src: int, e: int) -> None:
    node = c.node
    bit = 1 << src
    if (node.role != LEADING or node.phase < P_SYNC or e != node.current_epoch
            or node.leader_acks & bit):
        return
    node = node._replace(leader_acks=node.leader_acks | bit)
    c.node = node
    if node.phase == P_BROADCAST:
        c.send(src, (COMMITLEADER, e, node.last_committed))  # l.3.4
    else:
        _try_finish_sync(c)


def _try_finish_sync(c: _Ctx) -> None:
    """l.2.2: with ACK-LD from a quorum the leader is established and commits I_e (COMMIT-LD)."""
    node = c.node
    if node.phase != P_SYNC or node.leader_acks.bit_count() < c.q:
        return
    lz = last_zxid(node)
    node = node._replace(phase=P_BROADCAST, last_committed=max(node.last_committed, lz))
    c.node = node
    c.effects.append((SYNCED, node.current_epoch))
    c.multicast(node.leader_acks, (COMMITLEADER, node.current_epoch, node.last_committed))


def _holds(node: Node, zxid: tuple) -> bool:
    for t in reversed(node.history):
        if t[0] == zxid:
            return True
        if t[0] < zxid:
            return False
    return False


def _deliver_upto(c: _Ctx, zxid: tuple) -> None:
    """f.2.2 / f.3.3: deliver everything up to `zxid`, and only a transaction we hold (D12)."""
    node = c.node
    if zxid > node.last_committed and _holds(node, zxid):
        c.node = node._replace(last_committed=zxid)


def _on_commit_leader(c: _Ctx, src: int, e: int, zxid: tuple) -> None:
    """f.2.2: the leader of our epoch (f.a = e, D10) is established; deliver I_e (D12)."""
    node = c.node
    if node.role != FOLLOWING or e != node.current_epoch:
        return
    if src == node.leader_id:
        c.effects.append(EFF_TIMER)
    _deliver_upto(c, zxid)


# --- Phase 3: Broadcast ---------------------------------------------------------------------------


def _forward(node: Node) -> int:
    """The followers a leader sends proposals and commits to: those it sent NEWLEADER (D8)."""
    return node.epoch_acks


def _on_propose(c: _Ctx, src: int, txn: tuple) -> None:
    """f.3.2: accept the proposal of our epoch's leader (D10), in zxid order (D11); answer ACK."""
    node = c.node
    if node.role != FOLLOWING or not c.r.accepts_proposal(node, txn):
        return
    if not c.r.in_zxid_order(node, txn):
        return
    c.node = node._replace(history=node.history + (txn,))
    if src == node.leader_id:
        c.effects.append(EFF_TIMER)
    c.send(src, (ACK, txn[0]))


def _with_ack(ack_set: tuple, zxid: tuple, bit: int) -> tuple:
    out = []
    found = False
    for z, mask in ack_set:
        if z == zxid:
            mask |= bit
            found = True
        out.append((z, mask))
    if not found:
        out.append((zxid, bit))
        out.sort()
    return tuple(out)


def _try_commit(c: _Ctx, zxid: tuple) -> None:
    """l.3.2: once a quorum acknowledged `zxid`, commit it and everything before it (D13)."""
    node = c.node
    mask = next((m for z, m in node.ack_set if z == zxid), 0)
    if zxid <= node.last_committed or not c.r.commit_ready(mask, c.q):
        return
    node = node._replace(last_committed=zxid,
                         ack_set=tuple(item for item in node.ack_set if item[0] > zxid))
    c.node = node
    c.multicast(_forward(node), (COMMIT, node.current_epoch, zxid))


def _on_ack(c: _Ctx, src: int, zxid: tuple) -> None:
    node = c.node
    if (node.role != LEADING or node.phase != P_BROADCAST or zxid[0] != node.current_epoch
            or zxid <= node.last_committed or zxid > last_zxid(node)):
        return
    c.node = node._replace(ack_set=_with_ack(node.ack_set, zxid, 1 << src))
    _try_commit(c, zxid)


def _on_commit(c: _Ctx, src: int, e: int, zxid: tuple) -> None:  # f.2.2's code, mutated apart
    """f.3.3: deliver up to zxid; only from our epoch's leader (the epoch names it, D10, D12)."""
    node = c.node
    if node.role != FOLLOWING or e != node.current_epoch:
        return
    if src == node.leader_id:
        c.effects.append(EFF_TIMER)
    _deliver_upto(c, zxid)


# --- public kernel ----------------------------------------------------------------------------------


def start(node: Node, n: int, rules: Rules = RULES) -> Step:
    """Start-up and every restart (E9, D19): the node recovers what its disk holds
    (`Rules.recover`) and begins a new iteration in Looking. Its role is not durable, so a starting
    node is always Looking here; only a variant whose `durable` keeps the role would start in
    another, and it then resumes that role without a word."""
    node = rules.recover(node)
    if node.role != LOOKING:
        return Step(node, (), ())
    return enter_looking(node, n, rules)


def enter_looking(node: Node, n: int, rules: Rules = RULES) -> Step:
    """Every election timeout, and start-up: a new iteration begins in Looking."""
    c = _Ctx(node, n, rules)
    _enter_looking(c)
    return c.done()


def deliver(node: Node, src: int, msg: tuple, n: int, rules: Rules = RULES) -> Step:
    """Handle one message from `src`."""
    c = _Ctx(node, n, rules)
    kind = msg[0]
    if kind == VOTE:
        _on_vote(c, src, msg[1], msg[2], msg[4], False)
    elif kind == LFL:
        _on_vote(c, src, msg[1], msg[2], msg[1], True)
    elif kind == CEPOCH:
        _on_cepoch_rejoin(c, src, msg[1])
    elif kind == NEWEPOCH:
        _on_new_epoch_rejoin(c, src, msg[1])
    elif kind == ACKEPOCH:
        _on_ack_epoch_rejoin(c, src, msg[1], msg[2], msg[3], msg[4])
    elif kind == NEWLEADER:
        _on_new_leader_rejoin(c, src, msg[1], msg[2])
    elif kind == ACKLEADER:
        _on_ack_leader(c, src, msg[1])
    elif kind == COMMITLEADER:
        _on_commit_leader(c, src, msg[1], msg[2])
    elif kind == PROPOSE:
        _on_propose(c, src, msg[1])
    elif kind == ACK:
        _on_ack(c, src, msg[1])
    elif kind == COMMIT:
        _on_commit(c, src, msg[1], msg[2])
    else:
        raise ValueError(f"unknown message kind {kind!r}")
    return c.done()


def timeout(node: Node, n: int, rules: Rules = RULES) -> Step:
    """The election timeout: any node, a leader included, starts a new iteration (D9)."""
    return enter_looking(node, n, rules)


def heartbeat(node: Node, n: int, rules: Rules = RULES) -> Step | None:
    """An established leader re-sends COMMIT(e, last_committed) to its followers (D14)."""
    if node.role != LEADING or node.phase != P_BROADCAST:
        return None
    c = _Ctx(node, n, rules)
    c.multicast(_forward(node), (COMMIT, node.current_epoch, node.last_committed))
    return c.done()


def can_propose(node: Node) -> bool:
    """Only an established leader broadcasts (ready(e) has been called, step f.3.1)."""
    return node.role == LEADING and node.phase == P_BROADCAST


def is_leading(node: Node) -> bool:
    """An established leader runs no election timer (D9)."""
    return node.role == LEADING and node.phase == P_BROADCAST


def propose(node: Node, payload: bytes, n: int, rules: Rules = RULES) -> Step:
    """l.3.1: the next zxid of the epoch; the caller guarantees `can_propose(node)`."""
    c = _Ctx(node, n, rules)
    counter = node.next_counter + 1
    zxid = (node.current_epoch, counter)
    txn = Txn(zxid, payload)
    node = node._replace(
        next_counter=counter, history=node.history + (txn,),
        ack_set=_with_ack(node.ack_set, zxid, 1 << node.id),
    )
    c.node = node
    c.effects.append((PROPOSED, txn))
    c.multicast(_forward(node), (PROPOSE, txn))
    _try_commit(c, zxid)
    return c.done()


# --- A follower that rejoins its leader's epoch (D17) ------------------------------------------------
# These wrappers stand at the end of the file so that every mutant above keeps its line:column name
# (tests/test_mutate.py, reports/verification.md); `deliver` calls them instead of the handlers they
# extend. They are ZooKeeper's answer to a follower that promised the leader's epoch already and
# follows that leader again (after a timeout or a restart): the leader's LearnerHandler sends
# LEADERINFO of the current epoch to every FOLLOWERINFO, the follower answers ACKEPOCH with epoch
# -1 (not an acknowledgement), and the leader synchronises it like any late follower.

#: the current epoch of an ACKEPOCH that does not acknowledge the new epoch (ZooKeeper's -1)
NOT_AN_ACK = -1


def _on_cepoch_rejoin(c: _Ctx, src: int, p: int) -> None:
    """l.1.1 and D8, and D17: once the epoch is chosen, a CEPOCH that promised it already is
    answered with NEWEPOCH of that epoch too (ZooKeeper's LearnerHandler.run sends LEADERINFO of
    the current epoch to every FOLLOWERINFO: Leader.getEpochToPropose returns the epoch once it
    is chosen)."""
    node = c.node
    if node.role == LEADING and node.phase != P_CEPOCH and p == node.pending_new_epoch:
        c.send(src, (NEWEPOCH, p))
    else:
        _on_cepoch(c, src, p)


def _on_new_epoch_rejoin(c: _Ctx, src: int, e: int) -> None:
    """f.1.2, and D17: NEWEPOCH of the epoch already promised, from the leader followed, is
    answered with an ACKEPOCH that does not acknowledge it (current epoch -1), carrying the last
    zxid and history so that the leader can synchronise the follower (Learner.registerWithLeader:
    `newEpoch == self.getAcceptedEpoch()` puts -1). f.p is unchanged."""
    node = c.node
    if (node.role == FOLLOWING and src == node.leader_id and e == node.accepted_epoch
            and not c.r.acks_new_epoch(node, e)):
        c.effects.append(EFF_TIMER)
        c.send(src, (ACKEPOCH, e, NOT_AN_ACK, last_zxid(node), node.history))
    else:
        _on_new_epoch(c, src, e)


def _on_ack_epoch_rejoin(c: _Ctx, src: int, e: int, f_epoch: int, f_zxid: tuple,
                         f_hist: tuple) -> None:
    """l.1.2 and D8, and D17: an ACKEPOCH that does not acknowledge never counts (Leader.
    waitForEpochAck skips a current epoch of -1). Once the initial history is chosen, its sender is
    synchronised with NEWLEADER of the leader's history, even if it was synchronised in this epoch
    before (LearnerHandler.run: syncFollower, then NEWLEADER, whatever the epoch acknowledgement
    said); after establishment its ACK-LD is then awaited again, to be answered with COMMIT-LD
    (UPTODATE). Before the history is chosen the leader ignores it (ZooKeeper's LearnerHandler
    would wait and synchronise it later; here the follower's election timer starts it again)."""
    if f_epoch != NOT_AN_ACK:
        _on_ack_epoch(c, src, e, f_epoch, f_zxid, f_hist)
        return
    node = c.node
    bit = 1 << src
    if node.role != LEADING or e != node.pending_new_epoch or node.phase < P_SYNC:
        return
    if node.phase == P_BROADCAST:
        node = node._replace(leader_acks=node.leader_acks & ~bit)
    c.node = node._replace(epoch_acks=node.epoch_acks | bit)
    c.send(src, (NEWLEADER, e, node.history))


def _on_new_leader_rejoin(c: _Ctx, src: int, e: int, hist: tuple) -> None:
    """f.2.1, and D13: a follower synchronised with I o beta acknowledges beta too, the proposals
    of the new epoch it holds now, by acknowledging the last of them after ACK-LD (an
    acknowledgement covers every earlier zxid, D13). ZooKeeper's follower logs the proposals it was
    sent during the synchronisation when NEWLEADER arrives (Learner.syncWithLeader, NEWLEADER case:
    `fzk.logRequest` for each of `packetsNotCommitted`), and every logged proposal is acknowledged."""
    node = c.node
    _on_new_leader(c, src, e, hist)
    last = history_last(hist)
    if c.node is not node and last[0] == e:  # accepted, and it holds proposals of epoch e
        c.send(src, (ACK, last))
