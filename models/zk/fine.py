"""The `zk` kernel at the grain of ZooKeeper 3.7.0's follower threads (models/zk/README.md, "A finer
grain: F1-F8"): `zk-3.7.0-threads` and `zk-3.9.2-threads`.

The coarse kernel (`handlers`) takes a follower's NEWLEADER as one step: currentEpoch written, the
synchronised proposals queued for the SyncThread, the ACK sent. Here the ACK is a step of its own
(the action `ack-newleader i`), so the SyncThread (`log i`) can write the queue and send its
acknowledgements first, as it can in 3.7.0; its flush acknowledges every transaction it wrote
(SendAckRequestProcessor); and the leader takes the first ACK it reads from a follower after
NEWLEADER as that follower's NEWLEADER ack (LearnerHandler.run), discarding it when it is a
proposal's (Leader.waitForNewLeaderAck): ZOOKEEPER-4685, the failure `leader-unexpected-ack`.

Every function takes the kernel module `h` (the coarse handlers) first: the adapter passes the one
it is bound to, so that `zabmc mutate`, which runs the adapter with a mutated kernel, mutates these
variants too. Nothing here changes a coarse variant: their nodes, steps and counts are untouched.
"""

from __future__ import annotations


from zabmc.core.model import FAILED, Step

from . import codec
from .codec import describe_msg, dump, msg_json  # noqa: F401  (the views: `FineZkModel.codec`)
from .state import (ACK, ACKLD, F_BROADCAST, F_SYNC, FOLLOWING, L_BROADCAST, L_SYNC, LEADING,
                    NEWLEADER, NONE, UPTODATE, Node, bits, extend_node)

_NO = ()


FineNode = extend_node(
    "FineNode", __name__,
    """`state.Node`'s fields, in its order, and three more (memory only: a crash forgets them):
    `owed`, a follower that handled NEWLEADER up to its ACK, which is not written yet (F1);
    `toack`, a 3.9.2 follower's requestsToAck, the zxids it acknowledges after UPTODATE (F6);
    `nlread`, a leader's connection, per node, whose first ACK after NEWLEADER it read (F4).""",
    owed=False, toack=(), nlread=())


assert FineNode._fields[:len(Node._fields)] == Node._fields
assert FineNode._field_defaults == {**Node._field_defaults, "owed": False, "toack": (),
                                    "nlread": ()}


#: this kernel's node type (a `layer.Layer` over it extends it)
node = FineNode


def fresh(node_id: int, n: int) -> FineNode:
    return FineNode(node_id)


def norm(node: FineNode) -> FineNode:
    """The finer fields in their one form: a follower that left its synchronisation (the coarse
    kernel's `shutdown` clears `nl`) owes no ACK; a leader's `nlread` holds, per node, the
    learner's connection when it read that connection's first ACK, and 0 otherwise."""
    if (node.owed or node.toack) and not node.nl:
        node = node._replace(owed=False, toack=())
    if node.role != LEADING:
        return node._replace(nlread=()) if node.nlread else node
    read = node.nlread
    if read:
        keep = tuple(r if r and r == c else 0 for r, c in zip(read, node.lconn))
        if keep != read:
            node = node._replace(nlread=keep)
    return node


def _step(st: Step | None) -> Step | None:
    return None if st is None else Step(norm(st.node), st.outs, st.effects)


def _steps(pairs: list) -> list:
    return [(i, _step(st)) for i, st in pairs]


def _ack_newleader(node: FineNode) -> tuple:
    """F1: the QuorumPeer thread writes NEWLEADER's ACK (Learner.syncWithLeader, 3.7.0 line 766)."""
    out = ((node.leader, (ACKLD, node.conn, node.current_epoch)),)
    return node._replace(owed=False), out


def _live(node: FineNode, src: int, msg: tuple) -> bool:
    """A message on the follower's live connection to its leader (D8)."""
    return node.role == FOLLOWING and src == node.leader and msg[1] == node.conn and not node.cut


# --- the model's entry points (the adapter calls these with its kernel `h`) ----------------------


def start(h, node, n: int, rules) -> Step:
    return _step(h.start(node, n, rules))


def timeout(h, node, n: int, rules) -> Step | None:
    return _step(h.timeout(node, n, rules))


def propose(h, node, payload: bytes, n: int, rules) -> Step:
    return _step(h.propose(node, payload, n, rules))


def on_drop(h, nodes, src: int, dst: int, msg: tuple, n: int, rules) -> list:
    return _steps(h.on_drop(nodes, src, dst, msg, n, rules))


def actions(h, nodes, down: int, n: int, rules) -> list:
    """The coarse kernel's actions, then each follower's owed NEWLEADER ACK (F1)."""
    out = h.actions(nodes, down, n, rules)
    out.extend(("ack-newleader", i) for i in range(n) if not down >> i & 1 and nodes[i].owed)
    return out


def act(h, nodes, label: tuple, n: int, rules) -> list:
    kind, i = label[0], label[1]
    if kind == "ack-newleader":
        node, out = _ack_newleader(nodes[i])
        return [(i, Step(node, out, _NO))]
    if kind == "log":
        return [(i, _step(log(h, nodes[i])))]
    return _steps(h.act(nodes, label, n, rules))


def log(h, node) -> Step:
    """F3: the SyncThread writes what is queued, and SendAckRequestProcessor acknowledges every
    transaction written (3.7.0: `processRequest` sends an ACK for each request that is not a
    sync, whatever its epoch), once the follower has handed it anything (NEWLEADER or after)."""
    new = node.mem
    node = h.settle(node._replace(history=node.history + new, mem=()))
    outs = _NO
    if node.role == FOLLOWING and (node.phase == F_BROADCAST or (node.phase == F_SYNC and node.nl)):
        c = node.conn
        outs = tuple((node.leader, (ACK, c, t[0])) for t in new)
    return Step(node, outs, _NO)


def deliver(h, node, src: int, msg: tuple, n: int, rules) -> Step:
    pre = _NO
    if node.owed:  # F2: the QuorumPeer thread writes the ACK before it reads the next packet
        node, pre = _ack_newleader(node)
    kind = msg[0]
    if node.role == LEADING and kind in (ACK, ACKLD):
        st = _leader_ack(h, node, src, msg, n, rules)
    elif (kind == NEWLEADER and _live(node, src, msg) and node.phase == F_SYNC
          and node.mode != NONE and not node.nl):
        st = _newleader(h, node, msg[2], rules)
    elif kind == UPTODATE and _live(node, src, msg) and node.phase == F_SYNC and node.nl:
        st = h.deliver(node, src, msg, n, rules)
        if node.toack:  # F6 (3.9.2): the NEWLEADER proposals' ACKs, after UPTODATE's
            c = node.conn
            st = Step(st.node._replace(toack=()),
                      st.outs + tuple((node.leader, (ACK, c, z)) for z in node.toack), st.effects)
    else:
        st = h.deliver(node, src, msg, n, rules)
    st = _step(st)
    return Step(st.node, pre + st.outs, st.effects) if pre else st


def _newleader(h, node, epoch: int, rules) -> Step:
    """3.7.0 (F1): the coarse NEWLEADER (snapshot under TRUNC, currentEpoch, the proposals queued
    for the SyncThread) without its ACK, which the follower now owes. 3.9.2 (F6): the coarse
    NEWLEADER as it is (the proposals written, currentEpoch, the ACK, in the QuorumPeer thread,
    with nothing queued for the SyncThread), remembering what it wrote to acknowledge later."""
    st = h._on_newleader(node, epoch, rules)
    if rules.newleader == "sync":
        return Step(st.node._replace(toack=tuple(t[0] for t in node.pending)), st.outs, st.effects)
    return Step(st.node._replace(owed=True), _NO, st.effects)


def _leader_ack(h, node, src: int, msg: tuple, n: int, rules) -> Step:
    """F4, F5: what the LearnerHandler of follower `src` does with an ACK. The first ACK it reads
    after NEWLEADER goes to Leader.waitForNewLeaderAck as the NEWLEADER ack; every later one to
    Leader.processAck."""
    c = node.lconn[src] if node.lconn else 0
    if (not node.learners >> src & 1 or msg[1] != c or node.cut >> src & 1
            or not node.forwarding >> src & 1):
        return h.deliver(node, src, msg, n, rules)  # not on a live, synchronised connection
    read = node.nlread or (0,) * n
    if read[src] == c:  # processAck: a NEWLEADER or UPTODATE ack (counter 0) is no proposal's
        return Step(node, _NO, _NO) if msg[0] == ACKLD else h.deliver(node, src, msg, n, rules)
    node = node._replace(nlread=read[:src] + (c,) + read[src + 1:])
    if msg[0] == ACKLD:
        st = h.deliver(node, src, msg, n, rules)
        if node.phase == L_SYNC and st.node.phase == L_BROADCAST:
            # established: every LearnerHandler past waitForNewLeaderAck queues UPTODATE, the
            # ones whose first ACK was not NEWLEADER's too (waitForStartup, then UPTODATE)
            lead = st.node
            late = tuple((k, (UPTODATE, lead.lconn[k])) for k in range(n)
                         if k != lead.id and lead.lconn[k] and lead.nlread[k] == lead.lconn[k]
                         and not lead.ackld >> k & 1)
            st = Step(lead, st.outs + late, st.effects)
        return st
    if node.phase == L_BROADCAST:  # quorumFormed: waitForNewLeaderAck returns, UPTODATE follows
        return Step(node, ((src, (UPTODATE, c)),), _NO)
    return Step(node, _NO, _unexpected_ack(node, src, msg[2]))


def _unexpected_ack(node, j: int, zxid: tuple) -> tuple:
    """ZOOKEEPER-4685: the LearnerHandler reads a proposal's ACK where it waits for the NEWLEADER
    ack, and Leader.waitForNewLeaderAck drops it ("NEWLEADER ACK from sid ... is from a different
    epoch"); the follower's NEWLEADER ack, which comes next, goes to processAck, which ignores it.
    The leader then establishes only if a quorum acknowledges NEWLEADER without this follower, and
    otherwise gives up after initLimit (the explorer's timeout)."""
    e = node.accepted_epoch
    what = (f"leader {node.id} reads ACK {zxid[0]}.{zxid[1]} from follower {j} where it waits for "
            f"the ACK of NEWLEADER {e}.0: Leader.waitForNewLeaderAck discards it and never counts "
            f"follower {j} towards NEWLEADER's quorum (ZOOKEEPER-4685)")
    return ((FAILED, "leader-unexpected-ack", what),)


# --- views ----------------------------------------------------------------------------------------


def node_json(node: FineNode) -> dict:
    out = codec.node_json(node)
    out.update(newleader_ack_owed=node.owed, requests_to_ack=[list(z) for z in node.toack],
               first_ack_read=bits(sum(1 << k for k, r in enumerate(node.nlread) if r)))
    return out


def describe_action(label: tuple) -> str:
    if label[0] == "ack-newleader":
        return f"ack-newleader node {label[1]} (the QuorumPeer thread writes NEWLEADER's ACK)"
    return codec.describe_action(label)
