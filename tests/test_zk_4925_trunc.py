"""ZOOKEEPER-4925's loss before 3.9.3, through a TRUNC (models/zk/README.md S15).

PR #2266 (ZOOKEEPER-4925) says only 3.9.3 is affected: its test reaches the committed-log hole by
3.9.3's DIFF path. S15 gives the releases before it a second path to the same hole: a COMMIT an
established leader forwards before NEWLEADER to a follower it synchronises by TRUNC is applied
with `processTxn(TxnHeader, Record)`, outside the committed log (release-3.8.0-1 Learner.java
652-672), and a later `fastForwardDataBase` adds the transactions after it. That node, as leader,
then finds a learner's zxid missing from its committed log and sends TRUNC to the zxid before it
(`LearnerHandler.queueCommittedProposals`), cutting a committed transaction from the learner.

What is pinned where: the property, the start and the release each search runs on are this
file's; that 3.9.4 does not have the hole is its source's (`processTxn(pif.toRequest())`,
release-3.9.4 Learner.java 670-690, S15). The depths and state counts are zabmc's own and only
detect change. `zabmc real` refuses the corpus run (a SyncThread hold across NEWLEADER,
docs/real-zookeeper.md). Real servers lose a committed write by this path in a run written by
hand (tests/corpus/zk/zookeeper-4925-trunc-3.8.0.schedule.json: Debian's 3.8.0, 3.8.6, 3.9.2 and
3.9.3, not 3.9.4); the corpus run's own follower, which has its TRUNC's zxid in a snapshot and not
in its log, keeps the transaction on a real server (FileTxnLog.truncate; the control
zookeeper-4925-trunc-snap-3.8.0.schedule.json), and in the model since models/zk/README.md S16
(the last test here), so its violation is the leader's decision only (reports/zookeeper.md,
"ZOOKEEPER-4925 before 3.9.3").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
START = "tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json:40"
TRACE = ROOT / "tests/corpus/zk/zookeeper-4925-zk-3.8.0-trunc.trace.json"
FLAGS = ["--nodes", "3", "--proposals", "1", "--max-timeouts", "1", "--depth", "25",
         "--invariant", "sync-loses-committed"]


def check(model: str) -> tuple[int, dict]:
    r = subprocess.run([sys.executable, "-m", "zabmc", "check", "--model", model, "--from", START,
                        *FLAGS, "--json", "-q", "--trace-out", "/dev/null"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("model,depth,states", [("zk-3.8.0", 18, 36_211),
                                                ("zk-3.9.3", 20, 34_969)])
def test_a_release_before_394_truncs_a_committed_transaction_from_the_hole(model, depth, states):
    """From step 40 of ZOOKEEPER-5094's run (node 2 truncated to 1.1, 2.1 applied outside its
    committed log, its leader gone), the release's own search finds a leader that synchronises
    a learner by TRUNC past a transaction the leader has applied."""
    code, d = check(model)
    assert code == 10
    v = d["violations"][0]
    assert (v["property"], v["depth"], d["distinct_states"]) == ("sync-loses-committed", depth,
                                                                states)
    assert "by TRUNC without 2.1, which it has applied" in v["message"]


def test_394_puts_the_commit_into_its_committed_log_and_has_no_such_leader():
    code, d = check("zk-3.9.4")
    assert code == 0 and d["violations"] == []
    assert (d["stop_reason"], d["depth_reached"], d["distinct_states"]) == ("depth-bound", 25,
                                                                             65_073)


def test_the_corpus_run_is_the_search_from_epoch_2_and_replays():
    """tests/corpus/zk/zookeeper-4925-zk-3.8.0-trunc.trace.json: the search from step 28
    (epoch 2 established) written as found; its first 28 events are 5094's run's."""
    doc = json.loads(TRACE.read_text())
    assert doc["origin"].startswith("zabmc check --model zk-3.8.0 --from tests/corpus/zk/"
                                    "zookeeper-5094-zk-3.8.0.trace.json:28 ")
    first = json.loads((ROOT / START.split(":")[0]).read_text())["events"][:28]
    assert doc["events"][:28] == first and len(doc["events"]) == 49
    r = subprocess.run([sys.executable, "-m", "zabmc", "replay", "-q", str(TRACE)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 10
    assert "confirmed: sync-loses-committed violated at step 49" in r.stdout


def test_the_corpus_runs_follower_keeps_2_1_at_the_trunc_as_a_real_server_does():
    """The step after the corpus run's last: node 0 reads the leader's TRUNC 1.1. It had 1.1 by
    SNAP (step 23; its NEWLEADER's snapshot at 1.1, step 24: `logbase`) and logged 2.1 after it,
    so `ZKDatabase.truncateLog` cuts its log [2.1] only (FileTxnLog.truncate: the first logged
    transaction at or past 1.1 is 2.1, the file cut after it) and reloads the snapshot: 2.1
    stays, as on real 3.8.0 servers (the control, tests/corpus/zk/
    zookeeper-4925-trunc-snap-3.8.0.schedule.json, exit 0; reports/zookeeper.md). Worked by
    hand from that source; the leader's decision at step 49 (`sync-loses-committed`) is unchanged,
    and the model's window `truncate-keeps` (R4) names the 2.1 kept."""
    from zabmc.explore.trace import load, replay

    r = replay(load(str(TRACE)))
    assert r.confirmed
    state, model = r.trace.states[-1], r.trace.env.model
    node = state.nodes[0]
    assert (node.history, node.disk, node.logbase) == (
        (((1, 1), b"zab-0"), ((2, 1), b"zab-2")),) * 2 + ((1, 1),)
    sync = state.net[2 * 3 + 0][0]  # the channel from node 2 to node 0: the SYNC first
    assert sync[:4] == (3, 2, 2, (1, 1))  # SYNC, connection 2, TRUNC, 1.1
    st = model.deliver(node, 2, sync, 3)
    assert st.node.history == st.node.disk == (((1, 1), b"zab-0"), ((2, 1), b"zab-2"))
    assert [e[1] for e in st.effects] == ["truncate-keeps"]
