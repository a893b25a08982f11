"""The reduced search on one process and on two (#38: "the zab depth-40 run above exhausted or
finished in under 5 minutes").

One workload, issue #19's: `zabmc check --model zab --network fifo --nodes 3 --proposals 2
--max-timeouts 1 --depth 40 --reduction por`, every default property, run as a user runs it: a
fresh process: `--workers 1` (the one-process reduced search, levels to disk as its memory policy
decides), `--workers 1 --memory-limit none` (one process, every level in memory) and `--workers 2`
(two forked processes, levels in memory). All must report the same distinct states, states,
per-depth counts and verdict (the script fails otherwise). Wall seconds
from start to exit; CPU seconds of the process and every process it forked and reaped (user +
system, from its resource usage); the peak resident memory of its largest process.

The machine is shared, so the runs are in rounds, the order alternated each round; the ratio is
taken per round (one process's wall time over two workers') and the table gives every run.

    python benchmarks/reduced_workers_bench.py               # one round, written to the report
    python benchmarks/reduced_workers_bench.py --rounds 2 --depth 30 --no-write
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, write_section  # noqa: E402
from benchmarks.tlc_bench import run_usage  # noqa: E402

HEADING = "## The reduced search on both cores"
FLAGS = ["--model", "zab", "--network", "fifo", "--nodes", "3", "--proposals", "2",
         "--max-timeouts", "1", "--reduction", "por"]


#: (name, flags) of each run
RUNS = [("one process", ["--workers", "1"]),
        ("one process, levels in memory", ["--workers", "1", "--memory-limit", "none"]),
        ("--workers 2", ["--workers", "2"])]


def run(name: str, flags: list, depth: int) -> dict:
    """One `zabmc check` of the workload with `flags`: its figures."""
    cmd = [sys.executable, "-m", "zabmc", "check", *FLAGS, "--depth", str(depth), *flags,
           "--json", "-q"]
    with tempfile.TemporaryDirectory(prefix="zabmc-rwb-") as d:
        out = Path(d) / "out.json"
        rc, ru, wall = run_usage(cmd, ROOT, out)
        text = out.read_text()
    if rc not in (0, 10):
        raise RuntimeError(f"zabmc check {' '.join(flags)} exited {rc}:\n{text[-2000:]}")
    doc = json.loads(text[text.index("{"):])
    return {"name": name, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime,
            "rss_mib": ru.ru_maxrss / 1024,
            "distinct": doc["distinct_states"], "states": doc["states"],
            "per_depth": doc.get("per_depth"), "stop_reason": doc["stop_reason"],
            "violations": sorted(v["property"] for v in doc["violations"]),
            "left": doc.get("frontier_left"), "depth": doc["depth_reached"],
            "reduction": doc.get("reduction")}


def measure(depth: int, rounds: int, log=print) -> list[dict]:
    rows = []
    for r in range(rounds):
        for name, flags in (RUNS[::-1] if r % 2 == 0 else RUNS):
            row = run(name, flags, depth)
            row["round"] = r + 1
            log(f"round {r + 1}: {name}: {row['distinct']:,} distinct, "
                f"{row['wall']:.1f} wall s, {row['cpu']:.1f} CPU s")
            rows.append(row)
    same = {json.dumps([row[k] for k in ("distinct", "states", "per_depth", "stop_reason",
                                         "violations", "left", "reduction")]) for row in rows}
    if len(same) != 1:
        raise AssertionError("the runs disagree: "
                             + "; ".join(sorted(same)))
    return rows


def section(depth: int, rows: list[dict], argv: str) -> str:
    r0 = rows[0]
    rounds = max(row["round"] for row in rows)
    verdict = ", ".join(r0["violations"]) or "no violation"
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/reduced_workers_bench.py{argv}` on "
        f"{datetime.date.today()}, commit `{commit()}`, {cpu_model()}, {os.cpu_count()} logical "
        f"CPUs, shared with other jobs. Workload: `zabmc check {' '.join(FLAGS)} --depth {depth}` "
        f"(issue #19's depth-40 space), every default property: one process as a user runs it "
        f"(`--workers 1`, levels to disk past the default level budget), one process with every "
        f"level in memory (`--memory-limit none`), and `--workers 2` (two forked processes, "
        f"levels in memory, zabmc/explore/parallel.py). All report **{r0['distinct']:,} distinct states** and "
        f"{r0['states']:,} states, the same per-depth counts, {r0['left']:,} states left at "
        f"the bound (stopped: {r0['stop_reason']}, depth {r0['depth']}), the same counts of "
        f"states expanded in part and in full, and {verdict} (checked). Wall seconds from start "
        f"to exit; CPU seconds of the process and of every process it forked (user + system); "
        f"peak RSS of its largest process. {rounds} round{'s' if rounds > 1 else ''}, the order "
        f"alternated each round.", "",
        "| round | run | wall s | CPU s | peak RSS MiB (largest process) |",
        "|---:|---|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['round']} | {row['name']} | {row['wall']:.1f} | {row['cpu']:.1f} | "
                     f"{row['rss_mib']:,.0f} |")
    lines.append("")
    for one, _ in RUNS[:2]:
        per = []
        for r in range(1, rounds + 1):
            w = {row["name"]: row for row in rows if row["round"] == r}
            per.append(w[one]["wall"] / w[RUNS[2][0]]["wall"])
        lines.append(f"- wall time of {one} over `--workers 2`: median "
                     f"**{statistics.median(per):.2f}x** (per round: "
                     f"{', '.join(f'{x:.2f}x' for x in per)}).")
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--write", default=str(REPORT),
                    help="report file [default: reports/benchmarks.md]")
    ap.add_argument("--no-write", action="store_true", help="print the section only")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.depth < 1:
        ap.error("--rounds and --depth must be at least 1")
    rows = measure(a.depth, a.rounds)
    argv_text = (f" --depth {a.depth}" if a.depth != 40 else "") + (
        f" --rounds {a.rounds}" if a.rounds != 1 else "")
    text = section(a.depth, rows, argv_text)
    write_section(None if a.no_write else a.write, HEADING, text, TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
