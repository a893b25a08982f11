"""The "Reproducing in the simulator" section of reports/db19-findings.md.

For every finding of the db-19 regression corpus (`zabmc.report.findings.FINDINGS`, traces in
`tests/corpus/db19/`) this runs the exporter with its default budget, writes the verified partition
script to `reports/repro/<id>.zps`, re-runs the printed `zabmc simulate` command line in a real
process to check that it reports the property at the promised tick, and renders the table. Run it
with `python benchmarks/findings_repro.py` (it replaces the section, or appends it).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

from zabmc.core import files
from zabmc.export import script_comments, simulate_command
from zabmc.export.facts import read_trace
from zabmc.export.search import Budget, NotFound, search

from .findings import FINDINGS, SECTION, run_finding, save_trace, update_report  # noqa: F401  (update_report: re-exported)

# Why a finding cannot be reproduced in the simulator, when the exporter's search does not find it
# (our analysis of the trace; shown only for findings that are not reproduced).
WHY_NOT = {
    "bag-stale-newleader-retracts": (
        "the trace needs the NewLeader sent at the late AckEpoch's re-discovery (C24) to reach "
        "node 0 after Propose, Ack and Commit of the next proposal. That proposal is made a tick "
        "after the re-discovery at the earliest, so Commit reaches node 0 at least 4 ticks after "
        "the NewLeader was sent. The simulator delivers every message within 3 ticks (C8), and link "
        "cuts can only drop a message, never hold it back (nothing re-sends a NewLeader). The "
        "explorer's `bag` network bounds no delay."
    ),
}


@dataclass
class Row:
    fid: str
    title: str
    prop: str
    script_path: str | None  # repository-relative; None when not reproduced
    header: dict | None
    directives: list
    tick: int | None
    command: str | None
    note: str


def _trace_path(root: str, fid: str) -> str:
    path = os.path.join(root, "tests", "corpus", "db19", f"{fid}.trace.json")
    if os.path.exists(path):
        return path
    f = next(f for f in FINDINGS if f.id == fid)
    _, _, _, trace, _, _ = run_finding(f)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_trace(trace, path)
    return path


def reproduce_all(root: str, budget: Budget | None = None, log=print) -> list[Row]:
    budget = budget or Budget()
    rows = []
    os.makedirs(os.path.join(root, "reports", "repro"), exist_ok=True)
    for f in FINDINGS:
        trace_path = _trace_path(root, f.id)
        rel_trace = os.path.relpath(trace_path, root)
        facts = read_trace(trace_path)
        facts.path = rel_trace
        result = search(facts, budget)
        if isinstance(result, NotFound):
            log(f"{f.id}: not reproduced within {result.runs} runs")
            note = (f"not reproduced: `zabmc export` found no run within its budget "
                    f"({result.runs} simulator runs, seeds 0..{result.last_seed}) and wrote no "
                    "script")
            if f.id in WHY_NOT:
                note += f"; {WHY_NOT[f.id]}"
            stale = os.path.join(root, "reports", "repro", f"{f.id}.zps")
            if os.path.exists(stale):
                os.unlink(stale)  # never leave an unverified script behind
            rows.append(Row(f.id, f.title, f.prop, None, None, [], None, None, note))
            continue
        rel = f"reports/repro/{f.id}.zps"
        command = simulate_command(result.invariants, result.script.header, rel)
        text = result.script.to_text(script_comments(facts, result, command))
        files.write(os.path.join(root, rel), text, "partition script")
        got = _run_command(root, command)
        want = (result.violation.property, result.tick)
        if got != want:
            raise RuntimeError(f"{f.id}: `{command}` reported {got}, the exporter verified {want}")
        log(f"{f.id}: {want[0]} at tick {want[1]} ({command})")
        how = (f"plan {result.plan}" if result.script.directives else "no cut needed")
        rows.append(Row(f.id, f.title, f.prop, rel, dict(result.script.header),
                        [d.text() for d in result.script.directives], result.tick, command,
                        f"search run {result.run_index}, {how}"))
    return rows


def _run_command(root: str, command: str):
    argv = shlex.split(command)
    exe = [sys.executable, "-c", "from zabmc.cli import main; main()"]
    r = subprocess.run(exe + argv[1:], cwd=root, capture_output=True, text=True, timeout=600)
    m = re.search(r"^violation: (\S+) at tick (\d+):", r.stderr, re.M)
    if r.returncode != 10 or m is None:
        return None
    return m.group(1), int(m.group(2))


def render(rows: list[Row]) -> str:
    lines = [
        SECTION,
        "",
        "Produced by `python benchmarks/findings_repro.py`. It runs `zabmc export` (with its default "
        "budget) on each regression trace in `tests/corpus/db19/` and writes the verified partition "
        "script to `reports/repro/`. It then runs each command line below in a fresh process and "
        "checks that `zabmc simulate --check` reports the finding's property at the tick shown. "
        "Run the commands from the repository root. The script format and the exporter's search "
        "are described in [docs/partition-scripts.md](../docs/partition-scripts.md); for a "
        "finding with crashes, every search run crashes and restarts the trace's nodes in the "
        "trace's order, and the script keeps those directives "
        "([traces with crashes](../docs/partition-scripts.md#traces-with-crashes-and-restarts)).",
        "",
        "| finding | property | simulator | script directives (cuts, crashes, restarts) | violation "
        "| command line |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        link = f"[{r.title}](#{r.fid})"
        if r.command is None:
            lines.append(f"| {link} | {r.prop} | - | - | {r.note} | none |")
            continue
        h = r.header
        sim = f"seed {h['seed']}, {h['nodes']} nodes, {h['rounds']} rounds, {h['proposals']} proposals"
        cuts = "; ".join(f"`{d}`" for d in r.directives) or "none: the seed's own delays suffice"
        lines.append(f"| {link} | {r.prop} | {sim} | {cuts} | {r.prop} at tick {r.tick} "
                     f"({r.note}) | `{r.command}` |")
    missing = [r for r in rows if r.command is None]
    lines.append("")
    if missing:
        names = ", ".join(f"[{r.fid}](#{r.fid})" for r in missing)
        lines.append(f"{len(rows) - len(missing)} of {len(rows)} findings reproduce in the seeded "
                     f"simulator. Not reproduced within the exporter's default budget, so no script "
                     f"is recorded: {names}.")
    else:
        lines.append("Every finding reproduces in the seeded simulator.")
    return "\n".join(lines) + "\n"

