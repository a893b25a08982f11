"""One model per release against each known bug (issue #62): the section "One model per release"
of reports/zookeeper.md, a column per release model (models/zk/releases.py), a row per bug, each
cell one search of that release's model with the row's flags (breadth-first, but where a row
says --strategy dfs): found (at which depth, after how many states, in how many CPU seconds), or
clean within the bounds, or why that release's model cannot break the row's property yet.

    python benchmarks/release_matrix.py --jobs 2 --write
    python benchmarks/release_matrix.py --only zk-3.8.0 --rows ZOOKEEPER-4685 --write
    python benchmarks/release_matrix.py --rows "ZOOKEEPER-5094 from a deposed leader" --write
    python benchmarks/release_matrix.py --rows "ZOOKEEPER-4925 through a TRUNC" --write
    python benchmarks/release_matrix.py --table --write    # the section from the file, no run

Every cell is one `zabmc check ... --json` child process (its CPU time is the child's own), each
capped by --time-limit (a cell that reaches it says so: clean only as far as it went). Results are
kept in reports/data/release-matrix.json with the commit each cell ran at, so `--only` and
`--rows` rerun some cells and keep the others. It rewrites only its own section. The
single-grain abstractions (`zk`, `zk-3.7.0-threads`, ...) are benchmarks/abstraction_matrix.py's
section, not releases.

A row of STARTS searches from the state after K events of a trace (`zabmc check --from
TRACE:K`, docs/check.md "Searching from a state") instead of the initial state. The trace may be
of another release model: its first K events are replayed under the cell's model, and the cell
says n/a where they are not a run of it (`zabmc check` refuses the start, exit 2). A row of
SCENARIOS searches from a goal scenario instead (`zabmc check --scenario NAME`), a state each
model reaches by its own breadth-first search from the initial state: no cell is n/a.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import (REPORT, TITLE, Cells, cell_options, check_json,  # noqa: E402
                               commit, result_cell, run_cells, slim, write_section,
                               write_zk_section)

HEADING = "## One model per release"
#: its cost, beside issue #64's targets, in reports/benchmarks.md
COST_HEADING = "## The release matrix's cost (issue #64)"
RESULTS = os.path.join(ROOT, "reports", "data", "release-matrix.json")
#: two proposals: a learner at zxid 0 gets a SNAP (LearnerHandler.syncFollower; the release
#: models' storage grain, models/zk/README.md S11-S14), which opens none of these windows and
#: queues nothing for the SyncThread to acknowledge early, so the DIFF that carries a committed
#: transaction needs the learner at an earlier one inside the leader's committed log
TWO = "--nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 100"
THREE = "--nodes 3 --proposals 2 --max-timeouts 1 --depth 30"
#: ZOOKEEPER-4712's runs are longer on a release model than on its shutdown abstraction: the
#: other layers' owed steps (forward's NEWLEADER, epoch's currentEpoch) count as events
DEEP = "--nodes 3 --proposals 1 --max-timeouts 1 --depth 34"
#: row -> (the property, flags, what it is)
ROWS = {
    "ZOOKEEPER-3911": ("ack-before-logging", TWO, "NEWLEADER acknowledged with a synchronised "
                       "committed transaction neither written nor queued"),
    "ZOOKEEPER-4646": ("ack-before-disk", TWO, "NEWLEADER acknowledged with one not on disk"),
    "ZOOKEEPER-4643": ("epoch-before-disk", TWO, "currentEpoch written with one not on disk"),
    "ZOOKEEPER-4685": ("leader-unexpected-ack", THREE, "a proposal's ACK taken for the "
                       "NEWLEADER ack"),
    "ZOOKEEPER-4394": ("sync-exception", "--nodes 3 --proposals 1 --depth 100",
                       "a COMMIT after NEWLEADER with nothing pending"),
    "ZOOKEEPER-4712": ("stale-log-write", "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 "
                       "--depth 30 --strategy dfs", "a log gets a transaction its data tree lacks "
                       "and has moved past (the SyncThread a shutdown left running)"),
    "ZOOKEEPER-4712/5094 window": ("ack-from-memory", DEEP, "NEWLEADER acknowledged with a "
                                   "committed transaction the data tree holds and the disk lacks"),
    "ZOOKEEPER-5094 from a deposed leader": (
        "ack-from-applied-memory", "--nodes 3 --proposals 1 --max-timeouts 1 --depth 32",
        "NEWLEADER acknowledged with a committed transaction applied in memory only, kept by "
        "a shutdown before NEWLEADER (a TRUNC synchronisation's; on 3.6.2, whose cell this is, "
        "an interrupted SNAP's, models/zk/README.md S13), not a leaked SyncThread's queue, "
        "searched from the goal scenario "
        "deposed-leader, which each model reaches by its own breadth-first search from the "
        "initial state (epoch 1's leader deposed with 1.2 on its disk alone; every node "
        "looking; models/zk/scenarios): depth and bounds count from there"),
    "ZOOKEEPER-2354": ("load-exception", "--nodes 3 --proposals 1 --max-crashes 1 --depth 40",
                       "a restarted server's disk of a later epoch than its currentEpoch"),
    "ZOOKEEPER-4925": ("committed-log-hole", "--nodes 2 --proposals 2 --max-timeouts 1 --depth "
                       "100", "a committed transaction applied but missing from the in-memory "
                       "committed log"),
    "ZOOKEEPER-4925 through a TRUNC": (
        "sync-loses-committed", "--nodes 3 --proposals 1 --max-timeouts 1 --depth 35",
        "a leader synchronises a learner without a transaction it has applied, which its "
        "committed log lacks: before 3.9.3 by a TRUNC to the end of that log, below the "
        "learner's committed last zxid (on zk-3.9.3 the shortest is its own DIFF's), searched "
        "from the goal scenario "
        "deposed-leader-synced, which each model reaches by its own breadth-first search from "
        "the initial state (epoch 1's leader deposed with 1.2 on its disk alone after both "
        "followers applied 1.1; every node looking; models/zk/scenarios): depth and bounds count "
        "from there"),
    "TRUNC-KEEPS-UNCOMMITTED": ("truncate-keeps", "--nodes 3 --proposals 1 --max-timeouts 1 "
                                "--depth 30", "a TRUNC to a zxid the follower lacks keeps the "
                                "transaction past it (FileTxnLog.truncate)"),
}


#: rows searched from a state of a trace: row -> (the trace, from the repository's root, and K)
STARTS: dict = {}
#: rows searched from a goal scenario (`zabmc check --scenario NAME`, docs/check.md "Goal
#: scenarios"): row -> its name. Each release model reaches it by its own breadth-first search
#: from the initial state, so every cell is a search from the initial state in two stages.
SCENARIOS = {
    #: ZOOKEEPER-5094's start: the state after the first 18 events of its hand-built run
    #: (tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json, `ack-from-memory` at 51): epoch 1's
    #: leader, having committed 1.1 with one follower, wrote 1.2 on its own disk alone and lost
    #: its quorum; all three look for a leader (the third node empty): before any step of the
    #: bug (the TRUNC, the COMMIT it carries before NEWLEADER, the timeout that interrupts it).
    #: The rest of that run spends one proposal and one timeout. The row's property is 5094's
    #: kind alone, since from here `zk-3.7.0` to `zk-3.9.2` meet 4712's (a leaked queue) first
    "ZOOKEEPER-5094 from a deposed leader": "deposed-leader",
    #: ZOOKEEPER-4925's start before 3.9.3: the state after the first 32 events of its built run
    #: on zk-3.9.3 (tests/corpus/zk/zookeeper-4925-zk-3.9.3.trace.json), each model's own run
    #: to it 30 events on zk-3.8.0: all three in epoch 1 with 1.1 applied, the leader deposed
    #: with 1.2 on its disk alone. From there zk-3.8.0's search finds the hole (a TRUNC whose
    #: COMMIT before NEWLEADER is applied outside the committed log), then the TRUNC that loses
    #: it (tests/corpus/zk/zookeeper-4925-zk-3.8.0-loss-search.trace.json, step 62)
    "ZOOKEEPER-4925 through a TRUNC": "deposed-leader-synced",
}


def release_models() -> list[str]:
    from models.zk import releases

    return [f"zk-{r.version}" for r in releases.RELEASES]


def breakable(model: str) -> set:
    from zabmc.core.model import get_model
    from zabmc.core.properties import can_break

    return set(can_break(get_model(model)))


def why_not(model: str, row: str) -> str:
    """Why `model` cannot break `row`'s property: fixed by construction, or the grains its
    release row lacks."""
    from models.zk import releases
    from models.zk.state import leaks, snap_clears
    from zabmc.core.model import get_model

    r = next(x for x in releases.RELEASES if f"zk-{x.version}" == model)
    rules = get_model(model).rules
    if ROWS[row][0] == "stale-log-write" and not leaks(rules) and snap_clears(rules):
        return ("absent by construction: this release's shutdown stops the SyncThread (PR "
                "#2154) and clears an interrupted SNAP's database, as the model's does (R3)")
    grains = (f"its {' and '.join(r.missing)} grains" if r.missing else
              "the storage grain (R5)")
    return f"not in this model yet: {grains}"


def cell(model: str, row: str, limit: float) -> dict:
    prop, flags, _ = ROWS[row]
    start = None
    if row in STARTS:
        start = {"trace": STARTS[row][0], "events": STARTS[row][1]}
        flags = f"--from {start['trace']}:{start['events']} {flags}"
    elif row in SCENARIOS:
        start = {"scenario": SCENARIOS[row]}
        flags = f"--scenario {SCENARIOS[row]} {flags}"
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags.split(),
            "--invariant", prop, "--json", "-q", "--trace-out", os.devnull,
            "--time-limit", str(limit)]
    d = check_json(args, cwd=ROOT, usage=start is not None)
    if d["exit"] == 2:  # the start refused: the trace's first K events are not a run of model
        why = d["error"].removeprefix("zabmc: error: ")
        return {"refused": why, "flags": flags, "commit": commit()}
    out = slim(d, f"{flags} --invariant {prop}")
    if start and "scenario" in start:  # the events of its own run to the goal, and their search
        start["events"] = d["start"]["events"]
        start["reached"] = d["start"]["trace"]
    return {**out, "start": start} if start else out


def show(d: dict | None) -> str:
    if d is None:
        return "not run"
    if "refused" in d:
        return f"n/a: the start is not a state of this model ({d['refused']})"
    k = d["start"]["events"] if d.get("start") else None
    if k is None:
        out = result_cell(d, "**found** at depth {depth}", 1)
    elif d["violations"]:  # which issue's window the message names: a property can have two
        v = d["violations"][0]
        issue = re.search(r"\((?:.*, )?(ZOOKEEPER-\d+)\)$", v.get("message", ""))
        what = f" {issue.group(1)}'s window" if issue else ""
        out = result_cell(d, f"**found**{what} at depth {{depth}} {_from(d)}, event "
                          f"{k + v['depth']} of its run", 1)
    else:
        out = result_cell(d, "", 1).replace(f"clean to depth {d['config']['depth']}",
                                            f"clean to depth {d['config']['depth']} {_from(d)}")
    if d["stop_reason"] == "time-limit":
        out = out.replace("none: clean to depth", "none to the time limit, under depth")
    return out


def _from(d: dict) -> str:
    """Where a cell's search started: "from step K" (of a trace), or "from NAME (its own search:
    K events, N states)" (a goal scenario, reached by the model's own breadth-first search, whose
    CPU time the cell's includes)."""
    start = d["start"]
    if "scenario" in start:
        n = re.search(r"[\d,]+ states", start.get("reached", ""))
        return (f"from {start['scenario']} (its own search: {start['events']} events"
                + (f", {n.group(0)})" if n else ")"))
    return f"from step {start['events']}"


def start_flags(row: str) -> str:
    """`--from TRACE:K ` for a row of STARTS, `--scenario NAME ` for one of SCENARIOS, else ""."""
    if row in SCENARIOS:
        return f"--scenario {SCENARIOS[row]} "
    return f"--from {STARTS[row][0]}:{STARTS[row][1]} " if row in STARTS else ""


def section(cells: Cells, models: list[str]) -> str:
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/release_matrix.py` ({datetime.date.today()}; cells run "
        f"at {cells.commits()}, each kept with its commit in reports/data/release-matrix.json): "
        "each release's one model (`zabmc models` lists them; models/zk/README.md, R1-R5) "
        "against each known bug, each cell one search of the row's property with the row's flags "
        "(breadth-first, but where they say `--strategy dfs`: its depth is then the shortened "
        "run's), CPU seconds of that search alone on a 2-core machine shared with other jobs. "
        "\"none\" holds within the bounds named and nowhere else; \"not in this model yet\" "
        "names the grain the release's model lacks (issue #62 is open until no cell says so). "
        "A row \"from NAME\" searches from a goal scenario (`zabmc check --scenario NAME`, "
        "docs/check.md \"Goal scenarios\"): each model first reaches the scenario's state by "
        "its own breadth-first search from the initial state (the events and distinct states "
        "the cell names), then searches from there, its depth and budgets counted from there; "
        "the cell's CPU seconds are both stages', its states the second's. A row \"from step "
        "K\" would search from the state after the first K events of a trace (`zabmc check "
        "--from TRACE:K`) and say \"n/a\" on a model of which those events are no run. "
        "Each column is a release's one model, every grain at once, so no cell is \"n/a at "
        "this grain\": the single-grain abstractions (`zk`, `zk-3.7.0-threads`, ...), named by "
        "what they abstract, are the section \"The abstractions, one grain each\" above "
        "(benchmarks/abstraction_matrix.py).",
        "",
        "| bug | " + " | ".join(f"`{m}`" for m in models) + " |",
        "|---|" + "---|" * len(models),
    ]
    for row, (prop, _, _) in ROWS.items():
        cells_ = [show(cells.get(f"{m}|{row}")) if prop in breakable(m) else why_not(m, row)
                  for m in models]
        lines.append(f"| {row} | " + " | ".join(cells_) + " |")
    lines += ["", "| bug | property | what it is | flags |", "|---|---|---|---|"]
    lines += [f"| {row} | `{p}` | {what} | `{start_flags(row)}{flags}` |"
              for row, (p, flags, what) in ROWS.items()]
    return "\n".join(lines) + "\n"


def cost_section(cells: Cells, models: list[str]) -> str:
    """Issue #64's targets for the matrix, read off its cells: each under 30 CPU minutes, the
    whole under 3 CPU hours."""
    run = [(cells.get(f"{m}|{r}")["cpu_seconds"], m, r) for m in models for r, (p, _, _)
           in ROWS.items() if p in breakable(m) and cells.get(f"{m}|{r}") is not None]
    missing = sum(1 for m in models for r, (p, _, _) in ROWS.items()
                  if p in breakable(m) and cells.get(f"{m}|{r}") is None)
    total = sum(c for c, _, _ in run)
    top, tm, tr = max(run)
    met = "**met**" if top < 1800 and not missing else "**not met**"
    whole = "**met**" if total < 3 * 3600 and not missing else "**not met**"
    gap = f"; {missing} cells not run" if missing else ""
    return "\n".join([
        COST_HEADING, "",
        f"Produced by `python benchmarks/release_matrix.py --table --write` on "
        f"{datetime.date.today()}, commit `{commit()}`, from reports/data/release-matrix.json "
        f"(its cells run at {cells.commits()}; reports/zookeeper.md, \"One model per "
        "release\", has them): the CPU seconds of each cell's search, both stages for a row "
        "from a goal scenario, on a 2-core machine shared with other jobs.", "",
        f"- every cell under 30 CPU minutes: {met}: the largest, `{tm}` on \"{tr}\", "
        f"{top:.1f} CPU s ({top / 60:.1f} minutes){gap}.",
        f"- the matrix as a whole under 3 CPU hours: {whole}: {len(run)} cells, {total:,.0f} CPU "
        f"s ({total / 3600:.2f} CPU hours){gap}.", ""])


def main() -> int:
    models = release_models()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cell_options(ap, models)
    ap.add_argument("--rows", action="append", default=[], metavar="ROW", choices=list(ROWS),
                    help="Run only this row's cells (again); repeatable.")
    ap.add_argument("--time-limit", type=float, default=1800.0,
                    help="Seconds each cell may search [default: 1800, 30 minutes].")
    a = ap.parse_args()
    cells = Cells(RESULTS, a.write)
    if not a.table:
        todo = [(m, r) for m in models if not a.only or m in a.only
                for r in ROWS if (not a.rows or r in a.rows) and ROWS[r][0] in breakable(m)]
        run_cells(cells, todo, lambda m, r: cell(m, r, a.time_limit), a.jobs, show)
    write_zk_section(HEADING, section(cells, models), a.write)
    write_section(REPORT if a.write else None, COST_HEADING, cost_section(cells, models), TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
