"""ZOOKEEPER-4685 at the grain of the follower's threads (models/zk/README.md, F1-F8): the
searches for `leader-unexpected-ack` on `zk-3.7.0-threads` (as released) and `zk-3.9.2-threads` (PR #2111's fix),
into a section of reports/zookeeper.md that benchmarks/zk_report.py keeps.

    python benchmarks/zk_4685.py --write     # about a minute on a 2-core machine

Every cell is one `zabmc check ... --json` child process, breadth-first (a finding is a shortest
run), its CPU time the child's own.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import check_cell, commit, search_table, write_zk_section  # noqa: E402

HEADING = "## ZOOKEEPER-4685: the follower's threads"
MODELS = ("zk-3.7.0-threads", "zk-3.9.2-threads")
PROPERTY = "--invariant leader-unexpected-ack"
#: (what the bounds are for, flags)
SEARCHES = [
    ("no fault: every DIFF is epoch 1's, empty", "--nodes 3 --proposals 1 --depth 100"),
    ("three nodes, one timeout (the shortest run)",
     "--nodes 3 --proposals 1 --max-timeouts 1 --depth 30"),
    ("two nodes, every state", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 100"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="Rewrite the section of the report.")
    a = ap.parse_args()
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/zk_4685.py` (commit `{commit()}`, "
        f"{datetime.date.today()}): `zabmc check --model MODEL FLAGS {PROPERTY}`, breadth-first, "
        "on a 2-core machine shared with other jobs. `zk-3.7.0-threads` lets the follower's SyncThread "
        "write and acknowledge a synchronised transaction before its QuorumPeer thread writes the "
        "NEWLEADER ack, and its leader takes the first ACK it reads as the NEWLEADER ack; "
        "`zk-3.9.2-threads` writes the transactions before that ack and acknowledges them after "
        "UPTODATE's (PR #2111). The coarser variants (`zk`, `zk-fixed`, ...) take NEWLEADER as "
        "one step and cannot reach it.", "",
    ]
    table = search_table(MODELS, SEARCHES, lambda m, flags, k: check_cell(m, f"{flags} {PROPERTY}"),
                         "**found** at depth {depth}")
    lines += [table[0].replace("| search |", "| bounds |", 1), *table[1:]]
    lines += ["", "The shortest run (18 events; tests/test_zk_fine.py pins it): epoch 1 "
              "established by nodes 0 and 1, a proposal 1.1, the leader's timeout, then epoch 2 "
              "with nodes 1 and 2: node 2's DIFF carries 1.1, its SyncThread writes it and its "
              "ACK 1.1 reaches the leader before the NEWLEADER ack, which "
              "`Leader.waitForNewLeaderAck` then never counts. With node 0 still on its old "
              "connection the leader has no quorum without node 2, and gives up after initLimit "
              "(ZooKeeper's \"Waiting for a quorum of followers\").", ""]
    write_zk_section(HEADING, "\n".join(lines), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
