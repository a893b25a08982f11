"""benchmarks/remix_grain.py builds zk at the grain of Remix's MSPEC_2 to measure the search for
ZOOKEEPER-4643 there. Its figures mean something only if the variant's NEWLEADER is MSPEC_2's
two actions and its shortest run is 4643's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow
def test_the_shortest_run_at_that_grain_is_4643s(tmp_path):
    """The search the script reports (about 45 CPU s): its shortest violation of Remix's
    invariant is a 4643 run (read from the events: the follower crashes after currentEpoch,
    before its write and ACK). Its length, 24, is zabmc's own figure (a change detector): on `zk`
    the corpus's 4643 run (tests/corpus/zk/zookeeper-4643.trace.json) breaks the invariant at its
    event 23, and MSPEC_2 adds a step between currentEpoch and the write."""
    path = tmp_path / "t.json"
    d = remix_grain.search(remix_grain.NAME, str(path))
    assert d["violations"][0]["property"] == "leader-log-completeness"
    assert d["violations"][0]["depth"] == 24
    trace = json.loads(path.read_text())
    assert remix_grain.shape(trace).startswith("ZOOKEEPER-4643's")
    kinds = [e["kind"] for e in trace["events"]]
    crash = kinds.index("crash")
    assert trace["events"][crash - 1]["msg"]["type"] == "NEWLEADER"
