"""The `zk` kernel at the grain of ZooKeeper 3.9's in-memory database (models/zk/README.md, "The
storage grain: S1-S10"): `zk-3.9.3-store` and `zk-3.9.4-store`.

The coarse kernel (`handlers`) keeps one `history` per node for the data tree, the transaction
log, the snapshot and the committed log, and rebuilds memory from disk at every role change (D8).
Here a node also holds what `ZKDatabase` keeps in memory: `clog`, the zxids of its `committedLog`
(the proposals `LearnerHandler.syncFollower` sends a DIFF from), and `dt`, its data tree's
lastProcessedZxid. Both survive a role change (`ZooKeeperServer.shutdown(false)` keeps the
database and calls `fastForwardDataBase`) and are rebuilt from disk at a restart
(`loadDataBase`). What adds to `clog` is what calls `ZKDatabase.addCommittedProposal`: the load,
the fast-forward, and `ZooKeeperServer.processTxn(Request)` (the leader's commits, a follower's
COMMITs, those after UPTODATE); not 3.9.3's `processTxn(TxnHeader, Record)`, with which
`Learner.syncWithLeader` applies the transactions its synchronisation committed
(ZOOKEEPER-4925; 3.9.4 applies them as Requests). The leader chooses DIFF, TRUNC or SNAP as
3.9's `syncFollower` does, from `clog`, and reports `sync-loses-committed` when what it sends
leaves out a transaction it has applied.

Every function takes the kernel module `h` first, as models/zk/fine.py does, so that `zabmc
mutate`'s mutants reach these variants too. Nothing here changes a coarse variant.
"""

from __future__ import annotations


from zabmc.core.model import FAILED, Step

from . import codec, shutdown
from .codec import describe_action, describe_msg, dump, msg_json  # noqa: F401  (the views)
from .state import (ACKEPOCH, COMMIT, DIFF, F_SYNC, FOLLOWING, L_BROADCAST, L_EPOCH, L_SYNC,
                    LEADERINFO, LEADING, LOOKING, MODE_NAMES, NEWLEADER, NONE, SNAP, SYNC, TRUNC,
                    ZERO, Node, cut, extend_node, last_zxid, log_of, snap_clears, truncate_keeps,
                    truncation)
from .layer import Tracking

_NO = ()


StoreNode = extend_node(
    "StoreNode", __name__,
    """`state.Node`'s fields, in its order, and two more (memory only: a crash forgets them, a
    restart loads them from disk, S1): `clog`, the zxids `ZKDatabase.committedLog` holds, oldest
    first; `dt`, the data tree's lastProcessedZxid.""",
    clog=(), dt=ZERO)


assert StoreNode._fields[:len(Node._fields)] == Node._fields
assert StoreNode._field_defaults == {**Node._field_defaults, "clog": (), "dt": ZERO}


#: this kernel's node type (a `layer.Layer` over it extends it)
node = StoreNode


def fresh(node_id: int, n: int) -> StoreNode:
    return StoreNode(node_id)


def norm(node: StoreNode) -> StoreNode:
    """The storage grain's fields have one form already."""
    return node


def _zx(txns) -> tuple:
    return tuple(t[0] for t in txns)


def _last(txns) -> tuple:
    return txns[-1][0] if txns else ZERO


def _track(x, y, rules, path: str = "request"):
    """`y`, the coarse kernel's node after a step from `x`, with its committed log and data tree
    brought along (S2-S5). `path` says how the step applies transactions: "request" through
    `processTxn(Request)` (S3), "sync" as Learner.syncWithLeader does under DIFF at NEWLEADER or
    under TRUNC (S4), "snap" for a SNAP (S4)."""
    if x.role != LOOKING and y.role == LOOKING:
        # S5: shutdown(false) keeps the database; fastForwardDataBase replays the log beyond
        # the data tree and adds each replayed transaction to the committed log
        last = _last(y.history)
        if x.dt > last:  # memory the coarse shutdown drops (D8: a TRUNC/SNAP sync's applied)
            return y._replace(clog=tuple(z for z in x.clog if z <= last), dt=last)
        new = tuple(z for z in _zx(y.history) if z > x.dt)
        return y._replace(clog=x.clog + new, dt=last) if new else y
    if path == "snap":  # S4: deserializeSnapshot clears the database; the snapshot is the tree
        return y._replace(clog=(), dt=_last(y.mem))
    if path == "sync" and y.mode == TRUNC and x.mode == NONE:
        # S4: truncateLog is clear() then loadDataBase(); the committed proposals that follow
        # are applied with processTxn(hdr, txn) (3.9.3) or processTxn(Request) (3.9.4)
        applied = _zx(y.mem)
        base = _zx(y.history)
        clog = base + applied if rules.sync_in_clog else base
        return y._replace(clog=clog, dt=applied[-1] if applied else _last(y.history))
    c = y.commit
    if c <= x.dt:
        return y
    applied = tuple(z for z in _zx(log_of(y)) if x.dt < z <= c)
    if not applied:
        return y
    clog = x.clog + applied if path == "request" or rules.sync_in_clog else x.clog
    return y._replace(clog=clog, dt=applied[-1])


def _tracked(pairs, nodes, rules) -> list:
    return [(i, None if st is None else Step(_track(nodes[i], st.node, rules), st.outs,
                                             st.effects)) for i, st in pairs]


# --- the model's entry points (the adapter calls these with its kernel `h`) ----------------------


def start(h, node, n: int, rules) -> Step:
    """Start-up and every restart: loadDataBase fills the data tree and the committed log with
    every transaction on disk (S2)."""
    st = h.start(node, n, rules)
    y = st.node
    return Step(y._replace(clog=_zx(y.history), dt=_last(y.history)), st.outs, st.effects)


def timeout(h, node, n: int, rules) -> Step | None:
    st = h.timeout(node, n, rules)
    return None if st is None else Step(_track(node, st.node, rules), st.outs, st.effects)


def propose(h, node, payload: bytes, n: int, rules) -> Step:
    st = h.propose(node, payload, n, rules)
    return Step(_track(node, st.node, rules), st.outs, st.effects)


def on_drop(h, nodes, src: int, dst: int, msg: tuple, n: int, rules) -> list:
    return _tracked(h.on_drop(nodes, src, dst, msg, n, rules), nodes, rules)


def actions(h, nodes, down: int, n: int, rules) -> list:
    return h.actions(nodes, down, n, rules)


def act(h, nodes, label: tuple, n: int, rules) -> list:
    return _tracked(h.act(nodes, label, n, rules), nodes, rules)


def _live(node, src: int, msg: tuple) -> bool:
    return node.role == FOLLOWING and src == node.leader and msg[1] == node.conn and not node.cut


def deliver(h, node, src: int, msg: tuple, n: int, rules) -> Step:
    kind = msg[0]
    if node.role == LEADING and kind == ACKEPOCH:
        return _leader_ackepoch(h, node, src, msg, n, rules)
    path = "request"
    if _live(node, src, msg) and node.phase == F_SYNC:
        if kind == SYNC and node.mode == NONE:
            path = "sync"
            if msg[2] == SNAP:  # S7: the follower's SNAP is the coarse TRUNC to nothing
                path = "snap"
                msg = (SYNC, msg[1], TRUNC, ZERO, msg[4], msg[5])
        elif kind == NEWLEADER and node.mode != NONE and not node.nl:
            path = "sync"  # 3.9.x: the DIFF's committed transactions applied at NEWLEADER
    st = h.deliver(node, src, msg, n, rules)
    y = st.node
    if (path == "sync" and kind == SYNC and msg[2] == TRUNC and y.mode == TRUNC
            and truncation(rules) != "exact"):  # a real TRUNC, not a SNAP's
        y = y._replace(history=cut(node.history, msg[3], "file"))
        keeps = truncate_keeps(node.id, msg[3], y.history, msg[4])
        st = Step(y, st.outs, st.effects + keeps)
    return Step(_track(node, y, rules, path), st.outs, st.effects)


# --- the leader: LearnerHandler.syncFollower over the committed log (S6-S8) ----------------------


def _leader_ackepoch(h, x, src: int, msg: tuple, n: int, rules) -> Step:
    """The coarse ACKEPOCH, with each SYNC it sends chosen again from the committed log."""
    return resync(x, h.deliver(x, src, msg, n, rules), src, msg, rules)


def resync(x, st: Step, src: int, msg: tuple, rules) -> Step:
    """`st`, the step of leader `x` that took ACKEPOCH `msg` from `src` at a coarser grain, with
    the leader's committed log brought along and each SYNC it sends chosen again from it (S6)."""
    y = _track(x, st.node, rules)
    outs, effects = [], st.effects
    for k, m in st.outs:
        if m[0] == SYNC:
            peer = msg[3] if k == src else x.peers[k]
            mode, zxid, txns, committed, missing = sync_follower(y, peer)
            m = (SYNC, m[1], mode, zxid, txns, committed)
            if missing:
                effects = effects + (_loses(y, k, peer, mode, missing),)
        outs.append((k, m))
    return Step(y, tuple(outs), effects)


def _queue(entries, peer: tuple, upto, op):
    """LearnerHandler.queueCommittedProposals (release-3.9.3 lines 951-1042) over `entries`
    (zxids, oldest first) for a learner at `peer`: (op, queued, last queued), where op is the
    (mode, zxid) packet chosen first (None while none is: the caller then sends a SNAP)."""
    queued, last, prev = [], peer, ZERO
    for z in entries:
        if upto is not None and z > upto:
            break
        if z < peer:
            prev = z
            continue
        if op is None:
            if z == peer:  # the learner's zxid is in our history: DIFF
                op = (DIFF, None)
                continue
            if peer[1] == 0:  # a new epoch's zxid: DIFF and fall through
                op = (DIFF, None)
            elif z[0] != peer[0]:  # "Cannot send TRUNC to peer ... from different epoch"
                return None, queued, last
            else:
                op = (TRUNC, prev)
        if z <= last:
            continue
        queued.append(z)
        last = z
    if op is None and peer[1] == 0:
        op = (DIFF, None)
    return op, queued, last


def sync_follower(lead, peer: tuple):
    """LearnerHandler.syncFollower (release-3.9.3 lines 780-938) for a learner whose last zxid
    is `peer`, from the leader's data tree `dt`, committed log `clog` and log on disk (`history`),
    then `Leader.startForwarding` (its outstanding proposals beyond what was queued):
    (mode, zxid, txns, committed, missing). `txns` are the sync's proposals, of which the first
    `committed` carry a COMMIT; `missing` the transactions the leader has applied that the
    learner will not hold."""
    h, dt, clog = lead.history, lead.dt, lead.clog
    lo, hi = (clog[0], clog[-1]) if clog else (dt, dt)  # an empty committedLog: lines 815-828
    op, queued, cur = None, [], peer
    if peer == dt:  # already in sync: an empty DIFF (849-857)
        op = (DIFF, peer)
    elif peer > hi and peer[1] != 0:  # newer than the committed log: TRUNC (858-867)
        op, cur = (TRUNC, hi), hi
    elif lo <= peer <= hi:  # within the committed log (868-873)
        op, queued, cur = _queue(clog, peer, None, None)
    elif peer < lo and peer in set(_zx(h)):
        # the on-disk log, then the committed log (874-902); the size limit is not modelled (S8)
        op, queued, cur = _queue(_zx(h), peer, lo, None)
        if op is not None and cur >= lo:
            op, more, cur = _queue(clog, cur, None, op)
            queued += more
        else:  # "Detected gap between end of txnlog and start of committedLog": SNAP
            op, queued, cur = None, [], peer
    # otherwise (a learner below the log on disk, or a TRUNC across epochs) no op packet: SNAP
    by = {t[0]: t for t in h}
    if op is None:
        op, queued, cur = (SNAP, dt), [z for z in _zx(h) if z <= dt], dt
    mode, zxid = op
    if zxid is None:
        zxid = hi  # DIFF names maxCommittedLog (lastCommittedZxid)
    sent = [by[z] for z in queued]
    base = {DIFF: peer, TRUNC: zxid, SNAP: ZERO}[mode]
    have = set(queued)
    missing = tuple(t for t in h if base < t[0] <= dt and t[0] not in have)
    outstanding = [by[z] for z, _ in lead.acks if z > cur] if lead.phase == L_BROADCAST else []
    return mode, zxid, tuple(sent + outstanding), len(sent), missing


def _loses(lead, k: int, peer: tuple, mode: int, missing: tuple) -> tuple:
    """`sync-loses-committed`: the leader's synchronisation leaves the learner without
    transactions the leader has applied (ZOOKEEPER-4925: they are not in its committed log)."""
    zs = ", ".join(f"{t[0][0]}.{t[0][1]}" for t in missing)
    what = (f"leader {lead.id} synchronises node {k} (last zxid {peer[0]}.{peer[1]}) by "
            f"{MODE_NAMES[mode]} without {zs}, which it has applied: its committed log "
            f"({' '.join(f'{z[0]}.{z[1]}' for z in lead.clog) or 'empty'}) lacks "
            f"{'it' if len(missing) == 1 else 'them'} (LearnerHandler.syncFollower, "
            "ZOOKEEPER-4925)")
    return (FAILED, "sync-loses-committed", what)


# --- 4925's window (models/zk/README.md, S10; a node check, as D18's windows) ----------------------


def committed_log_hole(node) -> str | None:
    """ZOOKEEPER-4925's window: the node has applied a transaction (on disk, at or below its data
    tree's last zxid) beyond its committed log's first entry that the log lacks. A DIFF this node
    sends as leader to a learner at or beyond that entry skips it (S6). None for nodes of other
    models, which keep no committed log."""
    clog = getattr(node, "clog", None)
    if not clog:
        return None
    have = set(clog)
    gaps = [t[0] for t in node.history if clog[0] < t[0] <= node.dt and t[0] not in have]
    if not gaps:
        return None
    return (f"node {node.id} applied {', '.join(f'{z[0]}.{z[1]}' for z in gaps)} outside its "
            f"committed log ({' '.join(f'{z[0]}.{z[1]}' for z in clog)}; ZOOKEEPER-4925)")


# --- views ----------------------------------------------------------------------------------------


def node_json(node: StoreNode) -> dict:
    out = codec.node_json(node)
    out.update(committed_log=[list(z) for z in node.clog],
               data_tree_last_processed=list(node.dt))
    return out


# --- the storage grain as a layer over the THREADS stack (models/zk/README.md, S11-S15) ----------


class Storage(Tracking):
    """S11-S15: the storage grain over `parent`, a stack whose nodes keep memory (`history`: the
    data tree with its role's log) and disk (`disk`) apart (shutdown.py, H1): `clog` and `dt`
    tracked over memory as `_track` does (S2-S5), the leader's SYNCs chosen from them (S6-S8),
    and a SNAP as the releases of that stack take it: memory replaced at once, the disk at
    NEWLEADER's snapshot (S12), the database cleared by a shutdown before then (S13), and a
    COMMIT forwarded before NEWLEADER under TRUNC or SNAP applied outside the committed log, as
    the sync's own committed proposals are (S15)."""

    FIELDS = {"clog": (), "dt": ZERO, "snap": False, "logbase": ZERO}

    def dump(self, nodes) -> bytes:
        """The canonical encoding, `logbase` left out where it is ZERO (no SNAP's snapshot): a
        node's tuple is one field longer when it holds one, so the encoding stays one-to-one and
        every state without one keeps its bytes (the corpus recorded before `logbase`)."""
        return self.parent.dump([x[:-1] if x[-1] == ZERO else x for x in nodes])

    def own_norm(self, node):
        """`snap` in its one form: only a follower between a SNAP and its NEWLEADER holds it."""
        if node.snap and (node.role != FOLLOWING or node.nl or node.mode != TRUNC):
            node = node._replace(snap=False)
        return node

    def _track(self, x, st: Step | None, rules, path: str = "request") -> Step | None:
        if st is None:
            return None
        y = st.node
        left = x.role != LOOKING and y.role == LOOKING
        if left and x.snap and snap_clears(rules):
            # S13: Learner.shutdown's zk.shutdown(syncMode == SNAP) clears the database before
            # NEWLEADER (ZooKeeperServer.shutdown(true): zkDb.clear()); the next read loads it
            y = y._replace(history=y.disk, clog=_zx(y.disk), dt=_last(y.disk))
        elif left and x.dt > _last(y.history):
            # S14: a leader's data tree at its epoch's X.0 (below); fastForwardDataBase finds
            # nothing past it, and shutdown(false) keeps the database
            y = y._replace(clog=x.clog, dt=x.dt)
        else:
            y = _track(x, y, rules, path)
            if x.role == LEADING and x.phase == L_SYNC and y.phase == L_BROADCAST:
                # S14: Leader.startZkServer, once a quorum acknowledged NEWLEADER: "setting last
                # processed zxid" to zk.getZxid(), the epoch's X.0 (Leader.lead sets it with
                # makeZxid(epoch, 0); release-3.6.2 to release-3.9.3)
                y = y._replace(dt=(y.accepted_epoch, 0))
        return self._step(Step(y, st.outs, st.effects))

    def start(self, h, node, n: int, rules) -> Step:
        """S2: loadDataBase fills the data tree and the committed log from the disk."""
        st = self.parent.start(h, node, n, rules)
        y = st.node
        return self._step(Step(y._replace(clog=_zx(y.history), dt=_last(y.history)), st.outs,
                               st.effects))

    def actions(self, h, nodes, down: int, n: int, rules) -> list:
        """R5: the parent's actions, each election's leader the greatest vote as FLE reads it
        (`vote`: the data tree's lastProcessedZxid, `logged`)."""
        return [_elected(a, nodes) if a[0] == "elect" else a
                for a in self.parent.actions(h, nodes, down, n, rules)]

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        kind = msg[0]
        if node.role == LEADING and kind == ACKEPOCH:  # S6-S8; D9 against the data tree (R5)
            read = _epoch_ack(node, src, msg)
            st = self.parent.deliver(h, node, src, read, n, rules)
            if read is not msg and st.node.peers[src] is not None:
                y = st.node
                st = Step(y._replace(peers=y.peers[:src] + (msg[3],) + y.peers[src + 1:]),
                          st.outs, st.effects)
            return self._step(resync(node, st, src, msg, rules))
        path = "request"
        if _live(node, src, msg) and node.phase == F_SYNC:
            if kind == SYNC and node.mode == NONE:
                if msg[2] == SNAP:
                    return self._step(_snap(h, node, msg))
                path = "sync"
            elif kind == NEWLEADER and node.mode != NONE and not node.nl:
                path = "sync"
            elif kind == COMMIT and node.mode == TRUNC and not node.nl:
                # S15: a COMMIT forwarded before NEWLEADER under TRUNC or SNAP (F10) is applied
                # with processTxn(TxnHeader, Record) (writeToTxnLog false), outside the
                # committed log; 3.9.4 with processTxn(Request), into it (sync_in_clog)
                path = "sync"
        st = self._track(node, self.parent.deliver(h, node, src, msg, n, rules), rules, path)
        if kind == LEADERINFO and st.outs:  # R5: ACKEPOCH names the data tree's last zxid
            z = logged(node)
            st = Step(st.node, tuple((k, m[:3] + (z,)) if m[0] == ACKEPOCH else (k, m)
                                     for k, m in st.outs), st.effects)
        if node.snap and st.node.nl:  # S12: NEWLEADER's snapshot replaces the log below it
            y = st.node
            last = _last(y.history)
            disk = y.history + tuple(t for t in node.disk if t[0] > last)
            # the log files begin after the snapshot: a TRUNC cuts only past it (state.truncate_log)
            y = y._replace(disk=disk, logbase=last)
            st = Step(shutdown._durable(y), st.outs, st.effects)
        return st

    def node_json(self, node) -> dict:
        out = self.parent.node_json(node)
        out.update(committed_log=[list(z) for z in node.clog],
                   data_tree_last_processed=list(node.dt), snapshot_pending=node.snap)
        if node.logbase != ZERO:  # shown only where it is set, as `dump` keeps it
            out.update(log_begins_after=list(node.logbase))
        return out


# --- R5: what QuorumPeer.getLastLoggedZxid reads (models/zk/README.md, R5) -----------------------


def logged(node) -> tuple:
    """`QuorumPeer.getLastLoggedZxid`: the data tree's lastProcessedZxid (`dt`; loaded from disk
    first when the database is not initialised, which S13's clear sets `dt` to already), read by
    FLE's vote, by `Learner.registerWithLeader`'s ACKEPOCH and, as `zk.getLastProcessedZxid()`,
    by `Leader.lead`'s own state summary that `waitForEpochAck` compares an ACKEPOCH with (D9).
    Where these are read (a looking node, a follower before LEADERINFO, a leader before its
    epoch is acknowledged) `dt` is the kernel's last zxid (the fast-forward and the load bring the
    tree to the log's end, S2, S5) or beyond it at a former leader's X.0 (S14): the maximum is
    `dt` on every state of the spaces tests/test_zk_storage.py explores for it."""
    return max(node.dt, last_zxid(log_of(node)))


def vote(node) -> tuple:
    """FLE's vote (D1) as ZooKeeper reads it: (currentEpoch, `logged`, id)."""
    return (node.current_epoch, logged(node), node.id)


def _elected(label: tuple, nodes) -> tuple:
    """The election `label` (("elect", leader, quorum)) with its leader the quorum's greatest
    `vote`."""
    qm = label[2]
    return ("elect", max((i for i in range(len(nodes)) if qm >> i & 1),
                         key=lambda i: vote(nodes[i])), qm)


def _epoch_ack(lead, src: int, msg: tuple) -> tuple:
    """ACKEPOCH `msg` from `src` as the kernel's D9 should read it at leader `lead`:
    `Leader.waitForEpochAck` gives up when the follower's (currentEpoch, zxid) is beyond the
    leader's (currentEpoch, its data tree's lastProcessedZxid: `leaderStateSummary`,
    Leader.lead), where the kernel compares with its last zxid. A zxid between the two, which
    the leader's X.0 (S14) makes possible, is read as the kernel's last zxid: not beyond, and
    otherwise taken alike (the caller puts the real zxid back into `peers`, where this step
    alone put it, and the SYNC is chosen from it, `resync`). Only on the connection the leader
    has open with `src` (handlers.deliver ignores the others, D8)."""
    if (lead.phase != L_EPOCH or msg[2] != lead.current_epoch or not lead.learners >> src & 1
            or msg[1] != lead.lconn[src] or lead.cut >> src & 1):
        return msg
    last = last_zxid(log_of(lead))
    return msg[:3] + (last,) if last < msg[3] <= logged(lead) else msg


def _snap(h, node, msg: tuple) -> Step:
    """S12: a follower's SNAP (Learner.syncWithLeader: `deserializeSnapshot` clears the database
    and reads the leader's, `setlastProcessedZxid` to the SNAP's zxid; the committed proposals
    after it are applied in memory, writeToTxnLog being false) is the coarse TRUNC to nothing
    in memory, the leader's data tree applied: memory (`history`, H1) keeps the prefix it shares
    with the snapshot, so that what the node delivered stays (D5), and the rest is applied
    (`mem`), as a TRUNC's committed proposals are. The disk stays as it is until NEWLEADER's
    snapshot (`takeSnapshot(syncSnapshot)`): a crash before then loads the old disk. The
    committed log is empty (S4) and the data tree at the SNAP's zxid. No layer below does
    anything else with a SYNC (nothing is owed before NEWLEADER)."""
    y = h._on_sync(node, TRUNC, ZERO, msg[4], msg[5])
    tree = y.mem
    k = 0
    while k < min(len(tree), len(node.history)) and tree[k] == node.history[k]:
        k += 1
    return Step(y._replace(history=tree[:k], mem=tree[k:], snap=True, clog=(), dt=msg[3]),
                _NO, _NO)
