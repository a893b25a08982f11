"""zabmc beside Remix (Ouyang et al., "Multi-Grained Specifications for Distributed System Model
Checking and Verification", EuroSys 2025, doi:10.1145/3689031.3696069): for each ZooKeeper bug
Remix found with TLC on its mixed-grained specification, the zabmc search that finds it, into a
section of reports/zookeeper.md that benchmarks/zk_report.py keeps.

    python benchmarks/remix_compare.py --jobs 2 --write     # about 16 CPU minutes

Every cell is one `zabmc check ... --json` child process; its CPU time is the child's own
(benchmarks/common.py, `check_json`). Breadth-first gives the shortest run, depth-first the first
one it meets; the last column is breadth-first search for Remix's own invariant of the data-loss
bugs, `leader-log-completeness` (`leaderLogCompleteness`). Remix's figures are theirs (TLC's time to the violation and its distinct states, on
their machine); the grains differ, so the state counts are not comparable state for state.
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

HEADING = "## Beside Remix"
DATA_LOSS = "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30"
#: (issue, Remix's seconds, Remix's states, model, flags, searches: a strategy, or "llc",
#: breadth-first for `leader-log-completeness`)
ROWS = [
    ("ZOOKEEPER-3911", 42, 286_286, "zk-pre3911", DATA_LOSS, ("bfs", "dfs", "llc")),
    ("ZOOKEEPER-4394", 9, 14_264, "zk",
     "--nodes 3 --proposals 1 --depth 100 --invariant sync-exception", ("bfs",)),
    # the shortest data-loss run of zk is 4643's (the NEWLEADER ack lost at the crash); the
    # depth-first one is 4646's (the ack counted, then the crash)
    ("ZOOKEEPER-4643", 17, 208_018, "zk", DATA_LOSS, ("bfs", "llc")),
    ("ZOOKEEPER-4646", 109, 2_880_498, "zk", DATA_LOSS, ("dfs", "llc")),
    # the fixed release: Remix's invariant holds on it (Remix has no row of it)
    ("ZOOKEEPER-4646 and 4643 fixed (3.8.5, 3.9.2)", None, None, "zk-fixed",
     DATA_LOSS.replace("--depth 30", "--depth 24"), ("llc",)),
    ("ZOOKEEPER-4685", 10, 67_418, "zk-3.7.0-threads",
     "--nodes 3 --proposals 1 --max-timeouts 1 --depth 30 --invariant leader-unexpected-ack",
     ("bfs",)),
]
NAMES = {"bfs": "breadth-first (shortest)", "dfs": "depth-first (first met)",
         "llc": "breadth-first for Remix's invariant, `leader-log-completeness`"}


def cell(model: str, flags: str, search: str) -> dict:
    extra = ["--strategy", "bfs", "--invariant", "leader-log-completeness"] if search == "llc" \
        else ["--strategy", search]
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags.split(), *extra,
            "--json", "-q", "--trace-out", os.devnull]
    return check_json(args, cwd=ROOT)


def show(d: dict) -> str:
    return result_cell(d, "`{property}` at {depth} events", 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="Searches run at once.")
    ap.add_argument("--write", action="store_true", help="Rewrite the section of the report.")
    a = ap.parse_args()
    # one search per (model, flags, search): 4643's and 4646's rows share zk's
    jobs = list(dict.fromkeys((r[3], r[4], s) for r in ROWS for s in r[5]))
    with ThreadPoolExecutor(a.jobs) as pool:
        got = dict(zip(jobs, pool.map(lambda j: cell(*j), jobs)))
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/remix_compare.py` (commit `{commit()}`, "
        f"{datetime.date.today()}). Remix (Ouyang et al., EuroSys 2025) checked ZooKeeper with "
        "TLC on specifications that are fine-grained where a bug lives and coarse elsewhere; its "
        "figures are its own (TLC's time to the violation and distinct states, on its machine). "
        "zabmc's are one `zabmc check --model MODEL FLAGS --strategy S` each, CPU seconds of that "
        "process on a 2-core machine shared with other jobs. The grains differ (zabmc's election "
        "is one action, D1; Remix models FLE's messages), so the counts are not comparable state "
        "for state; what is comparable is that each bug is found, and in what time.", "",
        "| issue | Remix: time, states | model | flags | zabmc: " + " | zabmc: ".join(
            NAMES.values()) + " |",
        "|---|---|---|---|" + "---|" * len(NAMES),
    ]
    for r in ROWS:
        issue, secs, states, model, flags = r[:5]
        cells = [show(got[(model, flags, s)]) if s in r[5] else "-" for s in NAMES]
        remix = f"{secs} s, {states:,}" if secs is not None else "-"
        lines.append(f"| {issue} | {remix} | `{model}` | `{flags}` | "
                     + " | ".join(cells) + " |")
    lines += ["", *NOTES, ""]
    write_zk_section(HEADING, "\n".join(lines), a.write)
    return 0


NOTES = [
    "What each row's run is, read step by step against the JIRA issue (`zabmc replay` prints "
    "them; the 4643 and 4646 runs are tests/corpus/zk/zookeeper-4643.trace.json and "
    "zookeeper-4646.trace.json):",
    "",
    "- **ZOOKEEPER-4643** (`zk`, breadth-first, 27 events): node 1 leads epoch 1 and commits 1.1 "
    "with node 0; node 0 times out and leads epoch 2 with node 2, whose DIFF carries 1.1; node 2 "
    "writes currentEpoch 2 at NEWLEADER, hands 1.1 to its SyncThread and crashes before the "
    "write, its NEWLEADER ack lost with its connection. Restarted with currentEpoch 2 and no 1.1, "
    "its vote beats node 1's (currentEpoch 1): it leads epoch 3 and TRUNCates node 1, which had "
    "committed 1.1 (`sane-history`: node 1's last committed zxid is beyond its log; `prefix` at "
    "the same step). This is 4643's window: currentEpoch on disk, the transactions not, no ack "
    "sent. `zk-fixed` (3.8.5, 3.9.2) writes the transactions before currentEpoch and is clean "
    "within the same bounds (the abstraction matrix).",
    "- **ZOOKEEPER-4646** (`zk`, depth-first, 29 events): the same shape, but the follower's "
    "NEWLEADER ack reaches the leader before the crash and completes its quorum: the leader is "
    "established and delivers 1.1, which the restarted follower, leading epoch 3, then never "
    "proposes (`primary-integrity`). Breadth-first search meets 4643's shorter run first.",
    "- **ZOOKEEPER-3911** (`zk-pre3911`): before PR #1445 a follower keeps the DIFF's "
    "transactions in memory until UPTODATE, its currentEpoch already written at NEWLEADER. The "
    "breadth-first run (27 events) needs no follower crash: the first 19 events are 4643's, then "
    "the leader of epoch 2 (node 0) crashes, node 2 drops its connection with 1.1 never written "
    "and, holding currentEpoch 2, leads epoch 3 and truncates node 1's committed 1.1. The "
    "depth-first run (29 events) is 4646's shape: the ack counted, then the follower's crash.",
    "- **ZOOKEEPER-4394** (`zk`, 18 events, no fault): a COMMIT that follows NEWLEADER finds "
    "`packetsNotCommitted` emptied and `Learner.syncWithLeader` throws a NullPointerException.",
    "- **ZOOKEEPER-4685** (`zk-3.7.0-threads`, the threads' grain, 18 events): the follower's SyncThread "
    "acknowledges a synchronised transaction before its NEWLEADER ack, the leader takes it for "
    "that ack, and without that follower it has no quorum (its own section above).",
    "- **`leader-log-completeness`** (the last column, Remix's invariant: a node that becomes "
    "leader holds every transaction any node has delivered, checked at the step that makes it "
    "leader). On `zk` the shortest run is 20 events and it is 4646's: node 1 leads epoch 1 with "
    "node 0, proposes 1.1 after node 0 has timed out, and leads epoch 2 with node 2, whose DIFF "
    "carries 1.1; node 2 acknowledges NEWLEADER with 1.1 still queued for its SyncThread, the ack "
    "completes node 1's quorum and node 1 delivers 1.1; node 2 crashes, restarts without 1.1 and "
    "with currentEpoch 2, and its vote beats node 0's (currentEpoch 1): it is elected without "
    "1.1. On `zk-pre3911` the shortest is also 20 events and it is 3911's: the same until the "
    "ack, then the leader (node 1) crashes and node 2, which had kept the DIFF's 1.1 in memory "
    "only (logged at UPTODATE before PR #1445), loses it when it drops the connection, and is "
    "elected without it. 4643's run is not the shortest violation of this invariant in `zk`: it "
    "needs 1.1 committed in epoch 1 before the follower's crash, as the first 23 events of "
    "zookeeper-4643.trace.json do (step 23 elects node 2 without 1.1); the breadth-first search "
    "meets 4646's 20-event run first, so the 4643 row's last cell is that search, not a search "
    "for 4643's run. Remix found 4643 and 4646 with two specifications of their own (MSPEC_2, "
    "MSPEC_3). At MSPEC_2's grain (NEWLEADER as currentEpoch, then the write and the ack), where "
    "4643's run is the shortest, breadth-first search proves it at 24 events "
    "(`benchmarks/remix_grain.py`, reports/benchmarks.md). On `zk-fixed` (PR #2111: the transactions written, then currentEpoch, then the "
    "ack) the invariant holds to the depth given.",
    "",
    "Which invariant Remix's figures are for (its artifact, Disalg-ICS-NJU/zookeeper-tla-spec: "
    "low-level-spec/mixed-spec/deep-bugs.md and verification-statistics.md): ZOOKEEPER-4643 and "
    "4646 violate `leaderLogCompleteness` (a leader holds every committed entry of older "
    "epochs), and so does 3911's row: 42 s and 286,286 states, 14 steps deep, are that "
    "invariant's figures; its `monotonicRead` took 13 min 13 s and 8,677,945 states, 18 steps "
    "deep (TLC on mixed_v1: 3 servers, 2 transactions, 4 crashes, 4 partitions). 4685 violates "
    "`ackConsistent`. `leaderLogCompleteness` fails as soon as a leader lacks a committed "
    "transaction: the cause, before that leader truncates a follower or proposes. zabmc's first "
    "two columns check the loss that follows (`sane-history` at the truncation, "
    "`primary-integrity` at the leader's proposal), some events later; the last column checks "
    "Remix's invariant at the same point, so it is the one to set beside Remix's figures, the "
    "grains apart (zabmc's election is one action; Remix's specifications also bound history "
    "length, crashes and partitions differently).",
    "",
    "Remix confirmed its findings on ZooKeeper's code. `zabmc real` runs zabmc's on real servers "
    "of Debian's 3.8.0 (\"On ZooKeeper 3.8.0\"): ZOOKEEPER-4646 loses a write the client saw "
    "acknowledged (`zookeeper-4646-acked`), ZOOKEEPER-4685 makes the leader discard a "
    "proposal's ACK and give up (`zookeeper-4685-diff`) and ZOOKEEPER-4394 makes a follower's "
    "synchronisation throw (`zookeeper-4394-join`), each from a run built so that the real "
    "leader sends the DIFF the model does; ZOOKEEPER-3911 is fixed in 3.8.0. The breadth-first "
    "runs above synchronise a follower at zxid 0, which a real leader sends a snapshot, and are "
    "not realised. ZOOKEEPER-4643 is real too, on the 4646 run without its NEWLEADER ACK "
    "(`zookeeper-4643-acked`): every Remix row but 3911's, which 3.8.0 has fixed.",
]

if __name__ == "__main__":
    sys.exit(main())
