"""benchmarks/remix_grain.py builds zk at the grain of Remix's MSPEC_2 to measure the search for
ZOOKEEPER-4643 there. Its figures mean something only if the variant's NEWLEADER is MSPEC_2's
two actions and its shortest run is 4643's."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import remix_grain  # noqa: E402
from models.zk import MODEL as ZK  # noqa: E402
from models.zk.state import DIFF, F_SYNC, FOLLOWING, NEWLEADER, SYNC, Node  # noqa: E402
from zabmc.core.model import crashed  # noqa: E402

TXN = ((1, 1), b"zab-0")


def _synced(node_type):
    """Node 2 following node 1 in epoch 2, after a DIFF with 1.1 committed (currentEpoch 0)."""
    n = node_type(2, role=FOLLOWING, phase=F_SYNC, leader=1, accepted_epoch=2, conn=1)
    model = remix_grain.MODEL if node_type is remix_grain.Mspec2Node else ZK
    return model, model.deliver(n, 1, (SYNC, 1, DIFF, (0, 0), (TXN,), 1), 3).node


def test_newleader_is_currentepoch_then_the_write_and_the_ack():
    m, f = _synced(remix_grain.Mspec2Node)
    first = m.deliver(f, 1, (NEWLEADER, 1, 2), 3)
    # MSPEC_2's FollowerProcessNEWLEADER: currentEpoch only; nothing written, nothing sent
    assert (first.node.current_epoch, first.node.history, first.outs) == (2, (), ())
    nodes = (remix_grain.Mspec2Node(0), remix_grain.Mspec2Node(1), first.node)
    assert ("newleader", 2) in m.actions(nodes, 0, 3)
    # a crash between the two: the new epoch on disk without the transaction (4643's window)
    down = crashed(m, first.node, 3)
    assert (down.current_epoch, down.history) == (2, ())
    # FollowerProcessNEWLEADERAfterCurrentEpochUpdated: written, then the ACK
    [(i, second)] = m.act(nodes, ("newleader", 2), 3)
    assert (i, second.node.history, second.node.owes) == (2, (TXN,), 0)
    assert [(dst, msg[0], msg[2]) for dst, msg in second.outs] == [(1, first_ack_kind(), 2)]
    assert not m.actions(nodes[:2] + (second.node,), 0, 3).count(("newleader", 2))


def first_ack_kind():
    """The kind zk's NEWLEADER sends at once (its ACK), read from zk itself."""
    _, f = _synced(Node)
    st = ZK.deliver(f, 1, (NEWLEADER, 1, 2), 3)
    [(dst, msg)] = st.outs
    return msg[0]


def test_zk_acknowledges_at_once_with_the_transaction_only_queued():
    """The contrast: `zk` (3.8.0) sends the ACK in NEWLEADER's step with 1.1 handed to the
    SyncThread, not on disk: ZOOKEEPER-4646's window, which the variant does not have."""
    _, f = _synced(Node)
    st = ZK.deliver(f, 1, (NEWLEADER, 1, 2), 3)
    assert (st.node.current_epoch, st.node.history, st.node.mem) == (2, (), (TXN,))
    assert len(st.outs) == 1


def test_a_timeout_first_completes_the_second_step():
    """The QuorumPeer thread times out on no read before it has finished NEWLEADER."""
    m, f = _synced(remix_grain.Mspec2Node)
    first = m.deliver(f, 1, (NEWLEADER, 1, 2), 3).node
    st = m.timeout(first, 3)
    assert st.node.history == (TXN,) and st.outs[0][1][0] == first_ack_kind()


# The grain's shortest run is 4643's: tests/test_from.py's
# test_the_mspec2_grain_scenario_finds_zookeeper_4643 searches this model from Remix's start
# (remix-epoch1, 29,122 states, about 2 CPU s) and reads 4643's shape from the run. The search
# from the empty cluster that reports/benchmarks.md gives (24 events, 944,312 states, about 50
# CPU s) was tested here too until 2026-11-30, when CI reached 24 min 45 s of its 25: it is
# rerun by `python benchmarks/remix_grain.py`, whose table names whose run it is (`shape`).
