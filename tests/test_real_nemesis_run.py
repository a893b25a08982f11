"""`zabmc real --nemesis` on real ZooKeeper servers (#63 item 6): one kill-leader-sync schedule
(seed 1: hold every follower's QuorumPeer thread before its next NEWLEADER ACK, SIGKILL the
leader, SIGKILL the new leader while it synchronises, release) binds its letters to the servers
that led, holds a follower at NEWLEADER, and ends with every server synchronised.

Marked `real` (Java, Debian's zookeeper package, kazoo, Byteman's jar: make install-test); they
skip saying why without them, except under CI=true, where a missing tool fails them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SERIAL_JVMS, need_real_tools

pytestmark = [pytest.mark.real, SERIAL_JVMS]


@pytest.fixture(scope="module", autouse=True)
def real_tools():
    need_real_tools()


def test_kill_leader_sync_kills_the_new_leader_while_a_follower_is_held(tmp_path):
    r = subprocess.run([sys.executable, "-m", "zabmc", "real", "--nemesis", "kill-leader-sync",
                        "--random", "1", "--seed", "1", "--out", str(tmp_path), "--keep",
                        "--json", "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 10), r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["command"] == (f"zabmc real --nemesis kill-leader-sync --random 1 --seed 1 "
                              f"--out {tmp_path}")
    run = out["runs"][0]
    work = Path(run["workdir"])
    try:
        bound = run["servers_bound"]
        # three servers at zxid 0 elect the greatest id (Fast Leader Election's order,
        # 3.8.0 FastLeaderElection.totalOrderPredicate); the new leader is another server
        assert bound["L"] == 3 and (bound["F1"], bound["F2"]) == (1, 2)
        assert bound["M"] in (1, 2)
        follower = 3 - bound["M"]  # the one that followed M: held before NEWLEADER's ACK
        log = (work / f"server-{follower}" / "server.log").read_text(errors="replace")
        assert "zabmc-hook: held newleader-ack" in log
        assert not any("after entry" in n for n in run["notes"]), run["notes"]  # synced at end
        if r.returncode == 10:  # a finding: the saved schedule is the one that ran
            saved = json.loads(Path(run["schedule"]).read_text())
            assert saved["source"]["bound"] == bound
    finally:
        shutil.rmtree(work, ignore_errors=True)
