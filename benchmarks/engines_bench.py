"""Which engine, and how many workers: one search per model family on every engine zabmc has for
one machine, side by side (issue #64, item 4: the choice of engine and workers measured).

Each workload is one `zabmc check` a user runs, run as a user runs it (a fresh child process) on:

- `one process`: the default in-process breadth-first engine;
- `--workers 2`: the same search on two forked processes (zabmc/explore/parallel.py);
- `spark local[2]`: `--engine spark --master local[2]`, Spark in local mode on both cores.

Every run of a workload must report the same distinct states, states, per-depth counts, stop
reason and violations (property and depth), or the script fails. Wall seconds from start to exit
(Spark's session start-up counts, as it does for a user); CPU seconds of the child and of the
processes it forked and reaped (the in-process engines only: the JVM PySpark starts is not the
child's reaped child, so a Spark run's CPU figure would not cover what it names, and none is
given). The machine is shared and its speed drifts, so the runs go in rounds, the order of the
engines rotated each round, and the ratios are taken per round (one process's wall time over the
other engine's, in the same round); the median of the rounds is the figure to read.

    python benchmarks/engines_bench.py --rounds 2 --write     # about 10 minutes on two cores
    python benchmarks/engines_bench.py --rounds 1 --only zab  # one workload, printed only
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

from benchmarks.common import (REPORT, TITLE, check_json, commit, counts,  # noqa: E402
                               cpu_model, logical_cpus, write_section)

HEADING = "## Which engine on one machine (issue #64)"

# name -> (what it is, its flags); each from a table of this report or of reports/zookeeper.md
WORKLOADS = {
    "db19": ("db-19, the two-core ceiling's space",
             "--network fifo --nodes 3 --proposals 2 --depth 22 --all"),
    "zab": ("zab, a gate run to depth 21",
            "--model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 21"),
    "zk-fixed": ("zk-fixed, the data-loss bounds to depth 20",
                 "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 1 "
                 "--max-crashes 1 --depth 20"),
    "zk-3.8.0": ("zk-3.8.0, the release matrix's 4712/5094 window cell",
                 "--model zk-3.8.0 --nodes 3 --proposals 1 --max-timeouts 1 --depth 34 "
                 "--invariant ack-from-memory"),
}
ENGINES = {
    "one process": [],
    "--workers 2": ["--workers", "2"],
    "spark local[2]": ["--engine", "spark", "--master", "local[2]"],
}


def run(flags: str, engine: list[str]) -> dict:
    return check_json([sys.executable, "-m", "zabmc", "check", *flags.split(), *engine,
                       "--json", "-q", "--trace-out", os.devnull], cwd=ROOT,
                      env=dict(os.environ, PYTHONPATH=str(ROOT)))


def rotated(names: list[str], r: int) -> list[str]:
    k = r % len(names)
    return names[k:] + names[:k]


def measure(names: list[str], rounds: int) -> dict:
    """{workload: {engine: [result per round]}}; every engine's counts equal per workload."""
    got: dict = {w: {e: [] for e in ENGINES} for w in names}
    for r in range(rounds):
        for w in names:
            for e in rotated(list(ENGINES), r):
                d = run(WORKLOADS[w][1], ENGINES[e])
                print(f"round {r + 1} {w} {e}: {d['distinct_states']:,} states, "
                      f"{d['wall_seconds']:.1f} s wall", file=sys.stderr)
                got[w][e].append(d)
        for w in names:
            first = counts(got[w]["one process"][0])
            for e, ds in got[w].items():
                if any(counts(d) != first for d in ds):
                    raise SystemExit(f"{w}: {e} reports other counts than one process")
    return got


def ratio(runs: dict, engine: str) -> tuple[float, float, float]:
    """Median, least and greatest of one process's wall time over `engine`'s, per round."""
    rs = [a["wall_seconds"] / b["wall_seconds"]
          for a, b in zip(runs["one process"], runs[engine])]
    return statistics.median(rs), min(rs), max(rs)


def best(runs: dict) -> str:
    return min(ENGINES, key=lambda e: statistics.median(d["wall_seconds"] for d in runs[e]))


def section(got: dict, rounds: int, argv: list[str]) -> str:
    cmd = " ".join(["python benchmarks/engines_bench.py", *argv])
    lines = [
        HEADING, "",
        f"Produced by `{cmd}` on {datetime.date.today()}, commit `{commit()}`, {cpu_model()}, "
        f"{logical_cpus()} logical CPUs, shared with other jobs; do not edit by hand. Each "
        "workload is one `zabmc check FLAGS` run in a fresh process on one process (the "
        "default), on `--workers 2` and on `--engine spark --master local[2]`, "
        f"{rounds} round(s), the order of the engines rotated each round. Every run of a "
        "workload reports the same distinct states, states, per-depth counts, stop reason and "
        "violations (checked). Wall seconds from start to exit, Spark's start-up included; "
        "CPU seconds of the process and the processes it reaped (none for Spark, whose JVM "
        "is not among them).", "",
        "| workload | flags | distinct | engine | wall s (per round) | CPU s (per round) | "
        "one process's wall / this engine's (median, range) |",
        "|---|---|---:|---|---|---|---:|"]
    for w, runs in got.items():
        what, flags = WORKLOADS[w]
        n = runs["one process"][0]["distinct_states"]
        for e, ds in runs.items():
            wall = " / ".join(f"{d['wall_seconds']:.1f}" for d in ds)
            cpu = ("-" if e.startswith("spark") else
                   " / ".join(f"{d['cpu_seconds']:.1f}" for d in ds))
            rel = "1" if e == "one process" else "{:.2f}x ({:.2f}-{:.2f})".format(*ratio(runs, e))
            lines.append(f"| {what} | `{flags}` | {n:,} | {e} | {wall} | {cpu} | {rel} |")
    lines += ["", "Least median wall time, per workload: " + "; ".join(
        f"{WORKLOADS[w][0]}: **{best(runs)}**" for w, runs in got.items()) + ".", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", action="append", choices=list(WORKLOADS),
                    help="one workload (repeatable) [default: all]")
    ap.add_argument("--write", action="store_true", help=f"put the section in {REPORT}")
    args = ap.parse_args(argv)
    got = measure(args.only or list(WORKLOADS), args.rounds)
    text = section(got, args.rounds, argv)
    write_section(REPORT if args.write else None, HEADING, text, TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
