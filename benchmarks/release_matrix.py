"""The release matrix of reports/zookeeper.md: each ZooKeeper release the zk models name, against
each finding, found (how deep, after how many states, in how many CPU seconds) or clean within
the stated bounds.

    python benchmarks/release_matrix.py --jobs 2     # about 20 minutes on a 2-core machine

Every cell is one `zabmc check ... --json` child process (its CPU time is the child's own):
- data loss (ZOOKEEPER-3911, 4646, 4643: the default safety properties), the bounds of the known
  bugs' searches above (3 nodes, 2 proposals, a timeout, a crash, depth 30), depth-first; and,
  for the releases where it is found, breadth-first to the first violation (shortest);
- `sync-exception` (ZOOKEEPER-4394), breadth-first over every state of 3 nodes and 1 proposal;
- `leader-gives-up` (D9, Leader.waitForEpochAck), breadth-first, 3 nodes, a timeout, depth 30.
It rewrites only its own section ("## Releases"); benchmarks/zk_report.py keeps it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import check_json, commit, result_cell, write_zk_section  # noqa: E402

HEADING = "## Releases"
#: (release, what it ships, the variant it is)
RELEASES = [
    ("3.6.2", "before ZOOKEEPER-3911's fix (PR #1445)", "zk-pre3911"),
    ("3.7.0 / 3.8.0", "3911's fix: NEWLEADER queues the proposals, then acknowledges", "zk"),
    ("3.8.5 / 3.9.2", "ZOOKEEPER-4785's fix (PRs #2132, #2133): written, then currentEpoch, "
                      "then the ACK", "zk-fixed"),
    ("3.9.3", "PR #2152 (#2188): the committed written, the outstanding kept for UPTODATE",
     "zk-3.9.3"),
]
DATA_LOSS = "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30"
#: column -> (the issue it matches, flags, whether it runs only where depth-first found it)
COLUMNS = {
    "data loss": ("ZOOKEEPER-3911 / 4646 / 4643", DATA_LOSS + " --strategy dfs", False),
    "data loss, shortest": ("the same, breadth-first", DATA_LOSS, True),
    "sync-exception": ("ZOOKEEPER-4394", "--nodes 3 --proposals 1 --depth 100 "
                       "--invariant sync-exception", False),
    "leader-gives-up": ("Leader.waitForEpochAck (designed: the ensemble elects again)",
                        "--nodes 3 --proposals 0 --max-timeouts 1 --depth 30 "
                        "--invariant leader-gives-up", False),
}


def cell(model: str, flags: str) -> dict:
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags.split(), "--json",
            "-q", "--trace-out", os.devnull]
    return check_json(args, cwd=ROOT)


def show(d: dict) -> str:
    return result_cell(d, "**{property}** at depth {depth}", 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="Searches run at once.")
    ap.add_argument("--write", action="store_true", help="Rewrite the section of the report.")
    a = ap.parse_args()
    plain = [(r, c) for r in RELEASES for c, (_, _, later) in COLUMNS.items() if not later]
    with ThreadPoolExecutor(a.jobs) as pool:
        got = dict(zip(plain, pool.map(lambda rc: cell(rc[0][2], COLUMNS[rc[1]][1]), plain)))
        later = [(r, c) for r in RELEASES for c, (_, _, after) in COLUMNS.items()
                 if after and got[(r, "data loss")]["violations"]]
        got.update(zip(later, pool.map(lambda rc: cell(rc[0][2], COLUMNS[rc[1]][1]), later)))
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/release_matrix.py` (commit `{commit()}`, "
        f"{datetime.date.today()}): each release the zk models name (`zabmc models` lists the "
        "names), each cell one search with the flags of its column, CPU seconds of that search "
        "on a 2-core machine shared with other jobs. A finding is the first the search met; "
        "\"none\" holds within the bounds named and nowhere else.", "",
        "| release | what it ships at NEWLEADER | model | " + " | ".join(COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(COLUMNS),
    ]
    for r in RELEASES:
        row = [show(got[(r, c)]) if (r, c) in got else "-" for c in COLUMNS]
        lines.append(f"| {r[0]} | {r[1]} | `{r[2]}` | " + " | ".join(row) + " |")
    lines += ["", "| column | matches | flags |", "|---|---|---|"]
    lines += [f"| {c} | {issue} | `{flags}` |" for c, (issue, flags, _) in COLUMNS.items()]
    lines += ["", "The data-loss columns check the default safety properties. The shortest run "
              "of `zk` is ZOOKEEPER-4643's (a follower crashes with currentEpoch on disk and the "
              "transactions not, before its NEWLEADER ack leaves, and truncates a committed "
              "transaction as the next leader: `sane-history`), the depth-first one "
              "ZOOKEEPER-4646's (the ack counted, then the crash: `primary-integrity`); "
              "\"Beside Remix\" below reads both step by step.", ""]
    lines += ["Not in the matrix yet: ZOOKEEPER-4685 (a follower's proposal ACK overtaking its "
              "NEWLEADER ACK) needs the threads' grain of `zk-3.7.0` and `zk-3.9.2` (its own "
              "section below; the rows here are the coarse variants); ZOOKEEPER-4925 (3.9.3's "
              "hole in `committedLog`) needs the committed log, and 3.9.4 needs 4925's fix on top "
              "of it.", ""]
    write_zk_section(HEADING, "\n".join(lines), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
