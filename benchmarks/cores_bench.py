"""zabmc and TLC on both cores: wall time on one space, side by side (#38, "Both cores").

The question is a user's: with the whole machine (here two cores), which checker exhausts the
space first? TLC runs with `-workers 2`; zabmc runs its engines for more than one core, Spark
`local[2]` (`zabmc check --engine spark --master local[2]`) and its in-process engine on two
processes (`--workers 2`), and, for reference, its in-process engine on one core. Each is a
fresh process, started and timed by `tlc_bench` (`run_tlc`, `run_zabmc`): wall seconds from
start to exit, so the JVM's start-up and Spark's session start-up count, as they do for a user.
Only wall time is compared: CPU
seconds from the process's resource usage would miss the JVM that PySpark starts (it is not
the Python process's reaped child), so they would not cover what they name. Every run must
exhaust the space and report the distinct states TLC reports (the script fails otherwise).

The machine is shared and its speed drifts between runs of minutes, so the runs are in rounds,
the order rotated each round, and the table gives every run; the ratio is taken per round
(TLC's wall time over the zabmc run's of the same round), and the median of the rounds is the
figure to read.

    python benchmarks/cores_bench.py                  # the db-19 reference space, 3 rounds
    python benchmarks/cores_bench.py --rounds 1 --proposals 1 --no-write
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, write_section  # noqa: E402
from benchmarks.tlc_bench import (  # noqa: E402
    CONSTANTS, REFERENCE, Missing, describe, flags, run_tlc, run_zabmc)

HEADING = "## zabmc and TLC on both cores"

#: name -> how to run it (a function of the space)
RUNS = {
    "TLC, -workers 2": lambda space: run_tlc(space, workers=2),
    "zabmc, in-process --workers 2": lambda space: run_zabmc(space, extra=("--workers", "2")),
    "zabmc, Spark local[2]": lambda space: run_zabmc(
        space, extra=("--engine", "spark", "--master", "local[2]")),
    "zabmc, in-process (one core)": lambda space: run_zabmc(space),
}
TLC = "TLC, -workers 2"


def measure(space: dict, rounds: int, log=print) -> list[dict]:
    """Every run of every round, in the order run: {round, name, distinct, wall}."""
    names = list(RUNS)
    rows = []
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            res = RUNS[name](space)
            row = {"round": r + 1, "name": name, "distinct": res["distinct"],
                   "wall": res["wall_seconds"]}
            log(f"round {r + 1}: {name}: {row['distinct']:,} distinct, "
                f"{row['wall']:.1f} wall s")
            rows.append(row)
    counts = {row["distinct"] for row in rows}
    if len(counts) != 1:
        raise AssertionError(f"the runs disagree on the distinct states: {sorted(counts)}")
    return rows


def ratios(rows: list[dict], name: str) -> list[float]:
    """Per round: TLC's wall seconds over `name`'s."""
    out = []
    for r in sorted({row["round"] for row in rows}):
        wall = {row["name"]: row["wall"] for row in rows if row["round"] == r}
        out.append(wall[TLC] / wall[name])
    return out


def section(space: dict, rows: list[dict], argv: str) -> str:
    rounds = max(row["round"] for row in rows)
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/cores_bench.py{argv}` on {datetime.date.today()}, commit "
        f"`{commit()}`, {cpu_model()}, {os.cpu_count()} logical CPUs, shared with other jobs. "
        f"Workload: "
        f"{describe(space)}, every reachable state: **{rows[0]['distinct']:,} distinct states** "
        f"for every run (checked). TLC checks `benchmarks/tla/DB19.tla` with `-workers 2`; zabmc "
        f"runs `check --no-invariants` breadth first in-process with `--workers 2` (two forked "
        f"processes), with `--engine spark --master local[2]`, and in-process on one core for "
        f"reference. Wall seconds from start to exit (the JVM's and "
        f"Spark's start-up included). "
        f"{rounds} round{'s' if rounds > 1 else ''}, the order rotated each round.", "",
        "| round | run | wall s |", "|---:|---|---:|"]
    for row in rows:
        lines.append(f"| {row['round']} | {row['name']} | {row['wall']:.1f} |")
    lines.append("")
    for name in RUNS:
        if name == TLC:
            continue
        rs = ratios(rows, name)
        lines.append(f"- TLC `-workers 2` wall / {name} wall: median "
                     f"**{statistics.median(rs):.2f}x** "
                     f"(per round: {', '.join(f'{x:.2f}x' for x in rs)}).")
    lines += ["", "Above 1.00x the zabmc run finished first. #38's target is zabmc's best "
              "engine on the whole machine ahead of TLC `-workers 2` on the same space, wall "
              "time.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for key, _ in CONSTANTS:
        ap.add_argument(f"--{key.replace('_', '-')}", type=int, default=REFERENCE[key])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write", default=str(REPORT),
                    help="report file [default: reports/benchmarks.md]")
    ap.add_argument("--no-write", action="store_true", help="print the section only")
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    space = {key: getattr(a, key) for key, _ in CONSTANTS}
    try:
        rows = measure(space, a.rounds)
    except Missing as e:
        print(f"cores_bench: {e}", file=sys.stderr)
        return 2
    args = ("" if space == REFERENCE else " " + flags(space)) + (
        f" --rounds {a.rounds}" if a.rounds != 3 else "")
    text = section(space, rows, args)
    write_section(None if a.no_write else a.write, HEADING, text, TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
