"""The abstraction matrix of reports/zookeeper.md: each finding against each single-grain
abstraction model of the zk family (one grain of a release's code alone, named by what it
abstracts: `zk`, `zk-pre3911`, `zk-3.7.0-threads`, ...), found (how deep, after how many states,
in how many CPU seconds) or clean within the stated bounds. These are not the releases: the
releases, one model each with every grain, are benchmarks/release_matrix.py's section "One model
per release", which has no "n/a at this grain" cell.

    python benchmarks/abstraction_matrix.py --jobs 2 --write          # every cell (about an hour
                                                                      # of CPU on a 2-core machine)
    python benchmarks/abstraction_matrix.py --only zk-3.9.4-store --write   # one model's cells again
    python benchmarks/abstraction_matrix.py --table --write   # the section from the file, no run

Every cell is one `zabmc check ... --json` child process (its CPU time is the child's own). The
results are kept in reports/data/abstraction-matrix.json with the commit each cell ran at, so
`--only` reruns some cells and keeps the others; the section is written from that file. A row runs
on the abstractions that can express it (a coarser grain cannot, and its cell says so). It
rewrites only its own section ("## The abstractions, one grain each"); benchmarks/zk_report.py
keeps it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import (Cells, cell_options, check_json, result_cell, run_cells,  # noqa: E402
                               slim, write_zk_section)

HEADING = "## The abstractions, one grain each"
RESULTS = os.path.join(ROOT, "reports", "data", "abstraction-matrix.json")
#: (the abstraction model, the release and grain it abstracts, what it ships at NEWLEADER). Each
#: lifts into a release model (models.zk.releases.ABSTRACTIONS): `zk` into 3.7.0's, whose ZAB
#: code is 3.8.0's (models.zk.releases.RELEASES)
ABSTRACTIONS = [
    ("zk-pre3911", "3.6.2 at the coarse grain",
     "before ZOOKEEPER-3911's fix (PR #1445): the proposals logged at UPTODATE"),
    ("zk-3.7.0-threads", "3.7.0's threads",
     "3911's fix: currentEpoch, the proposals queued for the SyncThread, then the ACK "
     "(threads' grain)"),
    ("zk", "3.7.0 / 3.8.0 at the coarse grain",
     "as 3.7.0, at the coarse grain `zabmc real` schedules (Debian's package)"),
    ("zk-3.7.0-shutdown", "3.7.0's threads and shutdown",
     "as 3.7.0, with a follower's shutdown leaving its SyncThread's queue unwritten and its data "
     "tree, which the next votes read, kept (ZOOKEEPER-4712; shutdown grain, H1-H9)"),
    ("zk-3.9.2-threads", "3.8.5 / 3.9.2's threads",
     "ZOOKEEPER-4785's fix (PR #2111): written, then currentEpoch, then the ACK (threads' grain)"),
    ("zk-3.9.2-shutdown", "3.8.5 / 3.9.2's threads and shutdown",
     "as 3.9.2, with 3.7.0's shutdown, which 3.8.5, 3.8.6 and 3.9.2 keep (4712's fix, PR #2154, "
     "is in 3.9.3 only; shutdown grain, H1-H9)"),
    ("zk-3.9.3-store", "3.9.3's committed log",
     "PR #2152 (#2188): the committed written (applied outside the committed log), the "
     "outstanding kept for UPTODATE (storage grain)"),
    ("zk-3.9.4-store", "3.9.4's committed log",
     "as 3.9.3, the synchronised transactions added to the committed log (ZOOKEEPER-4925's fix, "
     "PR #2254; storage grain)"),
]
FINE = ("zk-3.7.0-threads", "zk-3.9.2-threads", "zk-3.7.0-shutdown", "zk-3.9.2-shutdown")  # the threads' grain
SHUTDOWN = ("zk-3.7.0-shutdown", "zk-3.9.2-shutdown")  # memory apart from disk (shutdown.py)
STORAGE = ("zk-3.9.3-store", "zk-3.9.4-store")  # the models with a committed log (models/zk/storage.py)
#: an abstraction -> the variant a row runs instead: currentEpoch a step after NEWLEADER's
#: writes to disk (models/zk/epoch.py), which the abstraction writes in one step
VIA_EPOCH = {f"zk-{v}-{g}": f"zk-{v}-epoch" for v, g in (("3.7.0", "threads"), ("3.9.2", "threads"),
                                                        ("3.9.3", "store"), ("3.9.4", "store"))}
EPOCH = tuple(VIA_EPOCH)
#: row -> the variants its cells run on, by abstraction (others: the abstraction itself)
VIA = {"ZOOKEEPER-2354": VIA_EPOCH}
TWO = "--nodes 2 --proposals 1 --max-timeouts 1 --max-crashes 1 --depth 100"
THREE = "--nodes 3 --proposals 1 --max-timeouts 1 --depth 30"
DATA_LOSS = "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30 --strategy dfs"
#: row -> (what it is, flags, the models it runs on (None: every abstraction), why the others not)
ROWS = {
    "ZOOKEEPER-3911": ("`ack-before-logging`: NEWLEADER acknowledged with a synchronised "
                       "committed transaction neither written nor queued",
                       f"{TWO} --invariant ack-before-logging", None, ""),
    "ZOOKEEPER-4646": ("`ack-before-disk`: NEWLEADER acknowledged with one not on disk",
                       f"{TWO} --invariant ack-before-disk", None, ""),
    "ZOOKEEPER-4643": ("`epoch-before-disk`: currentEpoch written with one not on disk",
                       f"{TWO} --invariant epoch-before-disk", None, ""),
    "ZOOKEEPER-4685": ("`leader-unexpected-ack`: a proposal's ACK taken for the NEWLEADER ack",
                       f"{THREE} --invariant leader-unexpected-ack", FINE,
                       "n/a: NEWLEADER and its ACK are one step at this grain"),
    "ZOOKEEPER-4394": ("`sync-exception`: a COMMIT after NEWLEADER with nothing pending",
                       "--nodes 3 --proposals 1 --depth 100 --invariant sync-exception", None, ""),
    "ZOOKEEPER-4925": ("`committed-log-hole`: a committed transaction applied but missing from "
                       "the in-memory committed log", "--nodes 2 --proposals 2 --max-timeouts 1 "
                       "--depth 100 --invariant committed-log-hole", STORAGE,
                       "n/a: no committed log at this grain"),
    "ZOOKEEPER-4925, the loss": ("`sync-loses-committed`: a leader's DIFF leaves a follower "
                                 "without a transaction the leader applied",
                                 "--nodes 3 --proposals 2 --max-timeouts 2 --depth 35 "
                                 "--invariant sync-loses-committed", STORAGE,
                                 "n/a: no committed log at this grain"),
    "ZOOKEEPER-4712": ("`ack-from-memory`: NEWLEADER acknowledged with a committed transaction "
                       "the data tree holds and the disk lacks", f"{THREE} --invariant "
                       "ack-from-memory", SHUTDOWN, "n/a: the shutdown writes the queue and "
                       "reloads memory (D8, 3.9.3's behaviour)"),
    "data loss": ("the default safety properties (the consequence of 3911, 4646 and 4643; the "
                  "windows above say which)", DATA_LOSS, None, ""),
    "ZOOKEEPER-2354": ("`load-exception`: a restarted server's disk of a later epoch than its "
                       "currentEpoch (`QuorumPeer.loadDataBase` refuses it), on each release's "
                       "`-epoch` variant (models/zk/README.md, K1-K4)",
                       "--nodes 3 --proposals 1 --max-crashes 1 --depth 40 "
                       "--invariant load-exception", EPOCH,
                       "n/a: NEWLEADER writes the disk and currentEpoch in one step at this grain"),
    "leader-gives-up": ("`leader-gives-up`: Leader.waitForEpochAck's \"Follower is ahead\" "
                        "(designed: the ensemble elects again)",
                        "--nodes 3 --proposals 0 --max-timeouts 1 --depth 30 "
                        "--invariant leader-gives-up", None, ""),
}


def cell(model: str, flags: str) -> dict:
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags.split(), "--json",
            "-q", "--trace-out", os.devnull]
    return slim(check_json(args, cwd=ROOT), flags)


#: cells started and not finished, and why (a search the machine could not afford that day)
UNFINISHED: dict[str, str] = {}


def show(d: dict | None, key: str = "") -> str:
    if d is None:
        return UNFINISHED.get(key, "not run")
    return result_cell(d, "**found** at depth {depth}", 1)


def wanted(only: list[str]) -> list[tuple[str, str]]:
    """The (model, row) cells to run: every abstraction's, or those of the models in `only`."""
    out = []
    for model, _, _ in ABSTRACTIONS:
        if only and model not in only:
            continue
        out += [(model, row) for row, (_, _, on, _) in ROWS.items() if on is None or model in on]
    return out


#: what the columns are, after the section's first paragraph
NOT_RELEASES = (
    "These columns are abstractions, not releases: each model takes one grain of a release's "
    "code alone (its follower's threads, its shutdown, its committed log) or none (the coarse "
    "grain), and is named by what it abstracts (`zabmc models` lists them); a run of one is a "
    "run of its release model once the steps of the grains it lacks are taken as soon as they "
    "are enabled (models.zk.releases.ABSTRACTIONS; tests/test_zk_releases.py lifts every corpus "
    "counterexample so). They stay where they serve, speed and teaching: with one grain alone a "
    "search has fewer interleavings, and a counterexample shows that grain's part in a bug. A "
    "cell \"n/a ... at this grain\" says what that abstraction cannot express, not what a "
    "release does: the releases, one model each with every grain at once, are the section "
    "\"One model per release\" below (benchmarks/release_matrix.py), which has no such cell "
    "(there `zk-3.8.0` finds ZOOKEEPER-4685 and ZOOKEEPER-4712's window, which are n/a on `zk` "
    "here).")
#: what the rows and columns show, after the tables
READING = (
    "The three windows are the states ZOOKEEPER-3911, 4646 and 4643 name as their "
    "cause (models/zk/README.md, D18); the data-loss row is what they lead to, and "
    "cannot tell them apart: `zk`'s shortest loss (breadth-first, 27 events) is 4643's, "
    "its depth-first one 4646's (\"Beside Remix\" below reads both step by step). "
    "ZOOKEEPER-4925's window is a hole in a node's in-memory committed log (3.9.3 "
    "applies the transactions of a synchronisation outside it); the loss follows when "
    "that node leads and sends a DIFF from the log with the hole, which needs a third "
    "node, a third epoch and 33 events: the shortest, breadth-first, which on `zk-3.9.4-store` "
    "exhausts the same space to 35 without it (models/zk/README.md, S10). "
    "Its loss row checks `sync-loses-committed` alone: the default properties need a "
    "third proposal to see it. "
    "The columns `zk-3.7.0-shutdown` and `zk-3.9.2-shutdown` are the `-threads` abstractions "
    "with the shutdown grain too (models/zk/README.md, H1-H9): before 3.9.3 (PR #2154, "
    "ZOOKEEPER-4712) a "
    "follower's shutdown leaves its SyncThread's queue unwritten and keeps its data "
    "tree, which its next votes and ACKEPOCH read. ZOOKEEPER-4712's row checks its "
    "window; on `zk-3.9.2-shutdown` the data-loss row breaks through it alone, 4646's and "
    "4643's windows being closed there: the leaked SyncThread writes an uncommitted "
    "transaction of an abandoned epoch after the next epoch's, and a restart applies "
    "it (the section \"ZOOKEEPER-4712\" below reads the run). ZOOKEEPER-2354's row "
    "runs on each abstraction's `-epoch` variant, where currentEpoch is written a step "
    "after what NEWLEADER writes to disk: 3.9.2's DIFF writes its proposals first (PR "
    "#2111), 3.9.3's and 3.9.4's the committed ones and a snapshot (PR #2152); 3.7.0's "
    "window needs a TRUNC beyond these bounds (the section \"ZOOKEEPER-2354\" below). "
    "It has no fix in any release.")


def section(cells: Cells) -> str:
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/abstraction_matrix.py` ({datetime.date.today()}; cells "
        f"run at {cells.commits()}, "
        "each kept with its commit in reports/data/abstraction-matrix.json; commits that change "
        "no transition of the models, as the tests' pinned counts show, leave a cell standing): "
        "each single-grain abstraction model of the zk family against each finding, each cell "
        "one search with the flags of its row, CPU seconds of that search alone on a 2-core "
        "machine shared with other jobs. A finding is the first the search met; \"none\" holds "
        "within the bounds named and nowhere else.", "", NOT_RELEASES, "",
        "| finding | " + " | ".join(f"`{m}` ({what})" for m, what, _ in ABSTRACTIONS) + " |",
        "|---|" + "---|" * len(ABSTRACTIONS),
    ]
    for row, (_, _, on, why) in ROWS.items():
        row_cells = [show(cells.get(f"{m}|{row}"), f"{m}|{row}") if on is None or m in on else why
                     for m, _, _ in ABSTRACTIONS]
        lines.append(f"| {row} | " + " | ".join(row_cells) + " |")
    lines += ["", "| finding | what is checked | flags |", "|---|---|---|"]
    lines += [f"| {row} | {what} | `{flags}` |" for row, (what, flags, _, _) in ROWS.items()]
    lines += ["", "| abstraction | what it abstracts | what it ships at NEWLEADER |", "|---|---|---|"]
    lines += [f"| `{m}` | {what} | {ships} |" for m, what, ships in ABSTRACTIONS]
    lines += ["", READING, ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cell_options(ap, [m for m, _, _ in ABSTRACTIONS])
    ap.add_argument("--rows", action="append", default=[], metavar="ROW", choices=list(ROWS),
                    help="Run only this row's cells (again); repeatable.")
    a = ap.parse_args()
    cells = Cells(RESULTS, a.write)
    if not a.table:
        todo = [(m, r) for m, r in wanted(a.only) if not a.rows or r in a.rows]
        run_cells(cells, todo, lambda m, r: cell(VIA.get(r, {}).get(m, m), ROWS[r][1]), a.jobs,
                  show)
    write_zk_section(HEADING, section(cells), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
