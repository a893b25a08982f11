"""currentEpoch written a step after NEWLEADER's writes to disk, and the start-up's epoch check
(models/zk/README.md, "The epoch grain: K1-K4"): `zk-3.7.0-epoch` and `zk-3.9.2-epoch` over
fine.py, `zk-3.9.3-epoch` and `zk-3.9.4-epoch` over storage.py.

The kernels below take a follower's NEWLEADER as one step: whatever it writes to disk and the new
currentEpoch land together. ZooKeeper writes them in order, in the QuorumPeer thread of
`Learner.syncWithLeader`:
- 3.7.0 and 3.8.0 (Learner.java 746-749 and 749-752): a TRUNC's or SNAP's snapshot
  (`zk.takeSnapshot(syncSnapshot)`), then `self.setCurrentEpoch(newEpoch)`;
- 3.8.5 and 3.9.2 (ZOOKEEPER-4785's fix, PR #2111; 3.9.2 Learner.java 746-775): the snapshot, then
  the synchronisation's proposals appended and `ZKDatabase.commit()`ed, then `setCurrentEpoch`;
- 3.9.3 and 3.9.4 (PR #2152; 3.9.4 Learner.java 759-813): the snapshot, then the DIFF's committed
  transactions appended, applied and committed to the log, then `setCurrentEpoch`.
A crash between them leaves a disk whose last zxid is of the new epoch beside a currentEpoch
file of an older one, and `QuorumPeer.loadDataBase` refuses to start such a server ("The current
epoch, X, is older than the last zxid, Y"): ZOOKEEPER-2354, whose fixes (PRs #1109, #1110) were
never merged. That is the failure property `load-exception`.

Here NEWLEADER's step stops after its writes to disk when they wrote anything and the epoch
changes (K1): the node holds the epoch it owes (`snapped`) and has sent nothing; the action
`epoch i` writes currentEpoch and goes on as the kernel below does (3.7.0: the ACK owed, F1;
3.9.2 and later: the ACK sent). Where NEWLEADER writes nothing before currentEpoch (a 3.7.0 DIFF),
a crash between is a crash before NEWLEADER, and the step stays whole. The thread that owes the
epoch reads no packet and times out on no read until it has written it (K2): a delivery, timeout
or lost connection of the node first completes `epoch i`. Its SyncThread is handed nothing
before (K3).

A `Kernel` is this grain over one kernel module (`parent`: fine.py or storage.py), with that
module's node type and one field more. Every function takes the coarse kernel `h` first, as
fine.py's do (so `zabmc mutate` reaches these variants too). Nothing here changes another
variant: their nodes, steps and counts are untouched.
"""

from __future__ import annotations

from zabmc.core.model import FAILED, Step

from . import fine, storage
from .codec import describe_msg, dump, msg_json  # noqa: F401  (the views, each Kernel's)
from .fine import FineNode
from .layer import Layer
from .state import ACKLD, FOLLOWING, NEWLEADER, extend_node, last_zxid
from .storage import StoreNode

_NO = ()
_DOC = ("`{base}`'s fields, in its order, and one more (memory only): `snapped`, a follower "
        "whose NEWLEADER has written the disk and not yet currentEpoch: the epoch it owes (0: "
        "none).")

EpochNode = extend_node("EpochNode", __name__, _DOC.format(base="fine.FineNode"),
                        base=FineNode, snapped=0)
StoreEpochNode = extend_node("StoreEpochNode", __name__, _DOC.format(base="storage.StoreNode"),
                             base=StoreNode, snapped=0)

assert EpochNode._fields[:len(FineNode._fields)] == FineNode._fields
assert StoreEpochNode._fields[:len(StoreNode._fields)] == StoreNode._fields


class Kernel(Layer):
    """The epoch grain over `parent` (a kernel module with the entry points of fine.py, or a
    `layer.Layer`), whose nodes are `node` (the parent's node type with `snapped`)."""

    FIELDS = {"snapped": 0}

    def __init__(self, parent, node):
        super().__init__(parent, node)
        self.owes_ack = "owed" in node._fields  # fine.py's F1: the ACK a step of its own
        #: what a restart loads: the disk apart from memory (shutdown.py, H1), or `history`
        self.disk = "disk" if "disk" in node._fields else "history"

    def __repr__(self) -> str:
        return f"epoch.Kernel({getattr(self.parent, '__name__', None) or self.parent!r})"

    def own_norm(self, node):
        """`snapped` in its one form: only a follower inside NEWLEADER owes the epoch."""
        if node.snapped and (node.role != FOLLOWING or not node.nl):
            node = node._replace(snapped=0)
        return node

    def set_epoch(self, node, rules) -> tuple:
        """K1: the QuorumPeer thread writes currentEpoch (`QuorumPeer.setCurrentEpoch`) and goes
        on with NEWLEADER: 3.7.0 hands the proposals to the SyncThread and owes the ACK (F1);
        the later releases have written them and send the ACK. Returns the node and what it
        sends."""
        e = node.snapped
        node = node._replace(current_epoch=e, snapped=0)
        if self.owes_ack and rules.newleader != "sync":
            return node._replace(owed=True), _NO
        return node, ((node.leader, (ACKLD, node.conn, e)),)

    def _settled(self, node, rules) -> tuple:
        """K2: the node with the epoch it owes written, and what that sent."""
        if not node.snapped:
            return node, _NO
        return self.set_epoch(node, rules)

    # --- the model's entry points (the adapter calls these with its kernel `h`) ------------------

    def start(self, h, node, n: int, rules) -> Step:
        """Start-up and every restart, and K4: `QuorumPeer.loadDataBase` compares the epoch of
        the disk's last zxid with the currentEpoch file and throws when the file is older and no
        currentEpoch.tmp is left (3.8.0 QuorumPeer.java 1165-1176, the same in 3.7.0-3.9.4: "The
        current epoch, X, is older than the last zxid, Y"): the server does not start
        (`load-exception`). The model goes on as if it had started: after a failure only the
        finding counts (an operator has to mend the disk)."""
        st = self._step(self.parent.start(h, node, n, rules))
        z = last_zxid(getattr(node, self.disk))
        if z[0] <= node.current_epoch:
            return st
        what = (f"node {node.id} restarts with its disk's last zxid {z[0]}.{z[1]} of an epoch "
                f"beyond its currentEpoch {node.current_epoch}: QuorumPeer.loadDataBase throws "
                "\"The current epoch is older than the last zxid\" and the server does not start "
                "(ZOOKEEPER-2354)")
        return Step(st.node, st.outs, st.effects + ((FAILED, "load-exception", what),))

    def timeout(self, h, node, n: int, rules) -> Step | None:
        node, pre = self._settled(node, rules)
        st = self.parent.timeout(h, node, n, rules)
        if st is None:
            return None if not pre else Step(self.norm(node), pre, _NO)
        return self._step(Step(st.node, pre + st.outs, st.effects))

    def actions(self, h, nodes, down: int, n: int, rules) -> list:
        """The parent's actions without the SyncThread's write of a node that owes the epoch
        (K3), then each such node's `epoch i` (K1)."""
        out = self.parent.actions(h, nodes, down, n, rules)
        owing = [i for i in range(n) if not down >> i & 1 and nodes[i].snapped]
        if owing:
            out = [a for a in out if not (a[0] == "log" and nodes[a[1]].snapped)]
            out.extend(("epoch", i) for i in owing)
        return out

    def act(self, h, nodes, label: tuple, n: int, rules) -> list:
        kind, i = label[0], label[1]
        if kind == "epoch":
            node, out = self.set_epoch(nodes[i], rules)
            return [(i, Step(node, out, _NO))]
        if kind == "lost" and nodes[i].snapped:  # K2: noticed at the thread's next read
            node, pre = self._settled(nodes[i], rules)
            pairs = self.parent.act(h, nodes[:i] + (node,) + nodes[i + 1:], label, n, rules)
            return self._steps([(k, Step(st.node, pre + st.outs, st.effects) if k == i else st)
                                for k, st in pairs])
        return self._steps(self.parent.act(h, nodes, label, n, rules))

    def deliver(self, h, node, src: int, msg: tuple, n: int, rules) -> Step:
        if node.snapped:  # K2: the thread writes the epoch before it reads the next packet
            node, pre = self._settled(node, rules)
            st = self._step(self.parent.deliver(h, node, src, msg, n, rules))
            return Step(st.node, pre + st.outs, st.effects)
        st = self.parent.deliver(h, node, src, msg, n, rules)
        if (msg[0] == NEWLEADER and st.node.nl and not node.nl and st.node.history != node.history
                and st.node.current_epoch != node.current_epoch):
            # K1: NEWLEADER wrote the disk; currentEpoch and what follows it wait for `epoch i`
            y = st.node._replace(current_epoch=node.current_epoch, snapped=st.node.current_epoch)
            if self.owes_ack:
                y = y._replace(owed=False)
            held = tuple(o for o in st.outs if o[1][0] != ACKLD)  # `epoch i` sends the ACK
            return self._step(Step(y, held, st.effects))
        return self._step(st)

    # --- views -----------------------------------------------------------------------------------

    def node_json(self, node) -> dict:
        out = self.parent.node_json(node)
        out.update(current_epoch_owed=node.snapped)
        return out

    def describe_action(self, label: tuple) -> str:
        if label[0] == "epoch":
            return (f"epoch node {label[1]} (the QuorumPeer thread writes currentEpoch after "
                    "NEWLEADER's writes to disk)")
        return self.parent.describe_action(label)


#: over fine.py (`zk-3.7.0-epoch`, `zk-3.9.2-epoch`) and storage.py (`zk-3.9.3-epoch`,
#: `zk-3.9.4-epoch`)
FINE = Kernel(fine, EpochNode)
STORE = Kernel(storage, StoreEpochNode)
