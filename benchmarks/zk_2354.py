"""ZOOKEEPER-2354 at the epoch grain (models/zk/README.md, K1-K4): a follower killed between what
NEWLEADER writes to disk and its currentEpoch write, which the start-up's `loadDataBase` then
refuses, on the `-epoch` variants of 3.7.0, 3.9.2, 3.9.3 and 3.9.4, into a section of reports/zookeeper.md that
benchmarks/zk_report.py keeps.

    python benchmarks/zk_2354.py --write     # about 2 minutes on a 2-core machine

Every cell is one `zabmc check ... --json` child process, breadth-first (a finding is a shortest
run), its CPU time the child's own.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import check_cell, commit, search_table, write_zk_section  # noqa: E402

HEADING = "## ZOOKEEPER-2354: currentEpoch after NEWLEADER's writes"
MODELS = ("zk-3.7.0-epoch", "zk-3.9.2-epoch", "zk-3.9.3-epoch", "zk-3.9.4-epoch")
#: (what the search is for, flags)
SEARCHES = [
    ("a joining follower, one write, one crash",
     "--nodes 3 --proposals 1 --max-crashes 1 --depth 40 --invariant load-exception"),
    ("two nodes, two writes, a timeout and a crash",
     "--nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 60 "
     "--invariant load-exception"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="Rewrite the section of the report.")
    a = ap.parse_args()
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/zk_2354.py` (commit `{commit()}`, "
        f"{datetime.date.today()}): `zabmc check --model MODEL FLAGS`, breadth-first, on a 2-core "
        "machine shared with other jobs. A follower's NEWLEADER writes to disk (3.7.0 and 3.8.0: "
        "a TRUNC's or SNAP's snapshot; 3.8.5 and 3.9.2: also the synchronised proposals, PR "
        "#2111; 3.9.3 and 3.9.4: the snapshot and the committed ones, PR #2152), then the "
        "currentEpoch file; a crash between leaves a disk of the new epoch "
        "beside the old currentEpoch, and `QuorumPeer.loadDataBase` refuses to start the server "
        "(ZOOKEEPER-2354; PRs #1109 and #1110 were never merged). The `-epoch` variants model the "
        "window and the check (`load-exception`); the others write both in one step.", "",
    ]
    tmp = tempfile.mkdtemp(prefix="zk2354-")
    try:
        lines += search_table(MODELS, SEARCHES,
                              lambda m, flags, k: check_cell(m, flags,
                                                             os.path.join(tmp, f"{m}-{k}.json")),
                              "**{property}** at depth {depth}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines += ["", *STORY, ""]
    write_zk_section(HEADING, "\n".join(lines), a.write)
    return 0


STORY = [
    "On 3.9.2 the window opens for any follower that a leader synchronises by a DIFF carrying a "
    "transaction of the leader's epoch: breadth-first search meets it at 15 events, the fewest "
    "(tests/test_zk_epoch.py counts them by hand): node 2 leads epoch 1 with node 0, proposes "
    "1.1, and synchronises node 1, which writes 1.1 at NEWLEADER and crashes before "
    "currentEpoch 1; restarted, it has 1.1 on disk and currentEpoch 0. PR #2111, the fix of "
    "ZOOKEEPER-4643 and 4785, wrote the proposals before currentEpoch and so made this window "
    "for every such DIFF. 3.9.3 and 3.9.4 (PR #2152) write only the committed transactions "
    "before currentEpoch: the proposal must be committed first (four events more), and 3.9's "
    "leader then sends the joining follower a snapshot (models/zk/README.md, S7), which "
    "NEWLEADER also writes before currentEpoch: 19 events. ZOOKEEPER-2354 is unfixed in "
    "3.9.4.",
    "",
    "On 3.7.0 (and 3.8.0) a DIFF writes nothing before currentEpoch; the window needs a TRUNC "
    "that applies a committed transaction of the new epoch, that is a follower with a "
    "transaction the leader lacks, joining after the leader committed one of its own: beyond "
    "these bounds. tests/corpus/zk/zookeeper-2354-trunc.trace.json (54 events, built step by "
    "step) is one, and `zabmc real` realises it on Debian's 3.8.0: the restarted server exits "
    "with \"The current epoch, 1, is older than the last zxid, 8589934593\" (\"On ZooKeeper "
    "3.8.0\"). There the leader sends a snapshot instead of the model's TRUNC (it sends no TRUNC "
    "across an epoch boundary), which a follower also writes before currentEpoch; a real "
    "leader sends a late follower at zxid 0 a snapshot too, so on real 3.8.0 servers the "
    "window is wider than the model's.",
]


if __name__ == "__main__":
    sys.exit(main())
