"""The wider searches of reports/zookeeper.md: every single-grain abstraction of
benchmarks/abstraction_matrix.py (and its variants), with more faults than the known bugs
need, every property (the failure properties and the bugs' windows too), and every finding
listed with its trace and what it is.

    python benchmarks/zk_wide.py --jobs 2 --write              # every cell (about an hour of CPU)
    python benchmarks/zk_wide.py --only zk-3.9.4-store --write       # one model's cells again
    python benchmarks/zk_wide.py --table --write          # the section from the file, no run

Two searches per model: breadth-first to every path of 19 events (three nodes, two proposals,
a timeout, two crashes, a drop: the explorer's partition), and 100,000 seeded random walks of up
to 50 events with two of each fault. Each is one `zabmc check ... --all --json` child (its CPU
time is the child's own), kept in reports/data/zk-wide.json with its commit (benchmarks/common.Cells),
its traces in reports/data/zk-wide/. It rewrites only its section ("## Wider searches");
benchmarks/zk_report.py keeps it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import (Cells, cell_options, check_json, run_cells, slim,  # noqa: E402
                               write_zk_section)
from benchmarks.abstraction_matrix import ABSTRACTIONS, VIA_EPOCH  # noqa: E402

#: the label this section's columns give each abstraction of benchmarks/abstraction_matrix.py
#: (the release it abstracts, as that section headed them before issue #62's release models)
LABELS = {"zk-pre3911": "3.6.2", "zk-3.7.0-threads": "3.7.0", "zk": "3.8.0",
          "zk-3.7.0-shutdown": "3.7.0 with its shutdown", "zk-3.9.2-threads": "3.8.5 / 3.9.2",
          "zk-3.9.2-shutdown": "3.8.5 / 3.9.2 with its shutdown", "zk-3.9.3-store": "3.9.3",
          "zk-3.9.4-store": "3.9.4"}
#: the abstractions (the shutdown grain's columns too), the variant with an established leader's
#: broadcasts before NEWLEADER, and each release's epoch grain (currentEpoch a step after what
#: NEWLEADER writes, and the start-up's epoch check: models/zk/README.md K1-K4)
WIDE = [(LABELS[m], ships, m) for m, _, ships in ABSTRACTIONS] + [
    ("3.7.0 with F9-F11", "zk-3.7.0-threads with broadcasts between SYNC and NEWLEADER",
     "zk-3.7.0-fwd")] + [
    (f"{LABELS[model]} with K1-K4",
     f"{model} with currentEpoch written a step after NEWLEADER's writes", epoch)
    for model, epoch in VIA_EPOCH.items()]
HEADING = "## Wider searches"
RESULTS = os.path.join(ROOT, "reports", "data", "zk-wide.json")
TRACES = os.path.join("reports", "data", "zk-wide")
SEARCHES = {
    "bfs": "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 2 --max-drops 1 --depth 19",
    "random": "--nodes 3 --proposals 2 --max-timeouts 2 --max-crashes 2 --max-drops 2 --depth 50 "
              "--strategy random --seed 7 --walks 100000",
}
#: every always-property but `single-prospective-leader`, which the election may legitimately
#: break (docs/semantics.md)
PROPERTIES = ("integrity", "total-order", "agreement", "prefix", "local-primary-order",
              "global-primary-order", "primary-integrity", "leadership", "sane-history",
              "sync-exception", "leader-gives-up", "leader-unexpected-ack",
              "ack-before-logging", "ack-before-disk", "epoch-before-disk",
              "sync-loses-committed", "committed-log-hole", "ack-from-memory", "stale-log-write",
              "load-exception")
#: what a finding is, by property: the JIRA issue it matches, or why it is no bug
KNOWN = {
    "ack-before-logging": "ZOOKEEPER-3911's window (D18)",
    "ack-before-disk": "ZOOKEEPER-4646's window (D18)",
    "epoch-before-disk": "ZOOKEEPER-4643's window (D18)",
    "sync-exception": "ZOOKEEPER-4394",
    "committed-log-hole": "ZOOKEEPER-4925's window (models/zk/README.md S1-S10)",
    "sync-loses-committed": "ZOOKEEPER-4925: a DIFF from a committed log with a hole",
    "leader-unexpected-ack": "ZOOKEEPER-4685",
    "ack-from-memory": "ZOOKEEPER-4712's window (models/zk/README.md H1-H9)",
    "stale-log-write": "ZOOKEEPER-4712's write of a queue its shutdown left (H2, H8)",
    "load-exception": "ZOOKEEPER-2354 (models/zk/README.md K1-K4)",
    "leader-gives-up": "Leader.waitForEpochAck's \"Follower is ahead\": designed, the ensemble "
                       "elects again (D9)",
}


def flags_of(search: str) -> str:
    return SEARCHES[search] + " --all " + " ".join(f"--invariant {p}" for p in PROPERTIES)


def cell(model: str, search: str) -> dict:
    os.makedirs(os.path.join(ROOT, TRACES), exist_ok=True)
    out = os.path.join(TRACES, f"{model}-{search}")
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags_of(search).split(),
            "--json", "-q", "--trace-out", out]
    return slim(check_json(args, cwd=ROOT), SEARCHES[search] + " --all")


#: the bugs' windows, each a node check (models/zk/windows.py, storage.py), in the order a
#: synchronisation meets them
WINDOWS = (("ack-before-logging", "models.zk.windows:ack_before_logging"),
           ("epoch-before-disk", "models.zk.windows:epoch_before_disk"),
           ("ack-before-disk", "models.zk.windows:ack_before_disk"),
           ("committed-log-hole", "models.zk.storage:committed_log_hole"),
           ("ack-from-memory", "models.zk.shutdown:ack_from_memory"),
           ("stale-log-write", "models.zk.shutdown:stale_log_write"))
#: (4925's other property, `sync-loses-committed`, is a leader's failure and needs a hole first)


def windows_on(trace: str) -> list[tuple[str, int]]:
    """The bugs' windows the trace's run passes through before its violation: (property, the
    first step at which a node is in it), by replaying the trace through the model."""
    import importlib

    from zabmc.explore.trace import load, replay

    rr = replay(load(os.path.join(ROOT, trace)))
    out = []
    for name, where in WINDOWS:
        mod, fn = where.split(":")
        check = getattr(importlib.import_module(mod), fn)
        k = next((k for k, st in enumerate(rr.trace.states)
                  if any(check(nd) for nd in st.nodes)), None)
        if k is not None:
            out.append((name, k))
    return out


def what(prop: str, trace: str | None = None) -> str:
    """What a finding is: the JIRA issue its property names, or, for a default property (a data
    loss), the windows its run passed through first, which say which bug lost the data."""
    if prop in KNOWN:
        return KNOWN[prop]
    seen = windows_on(trace) if trace else []
    if seen:
        return "after " + ", ".join(f"{KNOWN[w]} at step {k}" for w, k in seen)
    return "not matched to a JIRA issue: its run passes through none of the bugs' windows"


def section(cells: Cells) -> str:
    rows, found = [], []
    for release, _, model in WIDE:
        for search in SEARCHES:
            d = cells.get(f"{model}|{search}")
            if d is None:
                rows.append(f"| {release} | `{model}` | {search} | not run | | | |")
                continue
            names = ", ".join(f"`{v['property']}` ({v['depth']})" for v in d["violations"])
            rows.append(f"| {release} | `{model}` | {search} | {d['stop_reason']} | "
                        f"{d['distinct_states']:,} | {names or 'none'} | "
                        f"{d['cpu_seconds']:.0f} |")
            found += [(model, search, v) for v in d["violations"]]
    whats = [what(v["property"], v["trace"]) for _, _, v in found]
    lost = sum(v["property"] not in KNOWN for _, _, v in found)
    losses = (f"{lost} findings are data losses." if lost else
              "None is a data loss: the shortest data-loss runs need 26 events or more (the "
              "abstraction matrix below), beyond the breadth-first depth, and the random walks, "
              "which go deeper, did not meet one.")
    unmatched = sum(w.startswith("not matched") for w in whats)
    verdict = (f"**{unmatched} of {len(found)} findings match no JIRA issue and no designed "
               "behaviour: read their traces.**" if unmatched else
               f"Each of the {len(found)} findings is a known JIRA issue, its window, or a "
               "designed behaviour; none is new.")
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/zk_wide.py` ({datetime.date.today()}; cells run at "
        f"{cells.commits()}, kept in reports/data/zk-wide.json). Every single-grain abstraction "
        "(\"The abstractions, one grain each\" below; the column \"abstraction of\" names what "
        "it abstracts, not a release model: those are in \"One model per release\") with more "
        "faults than the known bugs need, every property but `single-prospective-leader` "
        "(`--all`: each violated property once, at the first path the search met; "
        "breadth-first: the shortest). "
        "A default property's finding (a data loss) is attributed to the bugs' windows its run "
        "passed through, by replaying it. `load-exception` joined the properties with the epoch "
        "variants; the cells of the other models ran before it, and cannot break it (only the "
        "epoch grain's start-up, models/zk/epoch.py, raises it). " + losses, "",
        "| search | flags |", "|---|---|",
        *[f"| {s} | `{f} --all` and every property by `--invariant` |"
          for s, f in SEARCHES.items()],
        "",
        "| abstraction of | model | search | stopped | distinct states | "
        "properties violated (depth) | "
        "CPU s |",
        "|---|---|---|---|---|---|---|",
        *rows, "",
        "| model | search | property | depth | what it is | trace |",
        "|---|---|---|---|---|---|",
        *[f"| `{m}` | {s} | `{v['property']}` | {v['depth']} | {w} | "
          f"[{os.path.basename(v['trace'])}](data/zk-wide/{os.path.basename(v['trace'])}) |"
          for (m, s, v), w in zip(found, whats)],
        "",
        verdict,
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    models = [m for _, _, m in WIDE]
    cell_options(ap, models)
    ap.add_argument("--search", action="append", default=[], choices=sorted(SEARCHES),
                    help="Run only this search's cells (again); repeatable.")
    a = ap.parse_args()
    todo = [(m, s) for m in models if not a.only or m in a.only for s in SEARCHES
            if not a.search or s in a.search]
    cells = Cells(RESULTS, a.write)
    if not a.table:
        run_cells(cells, todo, cell, a.jobs, lambda d: (
            f"{d['stop_reason']}, {[v['property'] for v in d['violations']]}, "
            f"{d['cpu_seconds']:.0f} CPU s"))
    write_zk_section(HEADING, section(cells), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
