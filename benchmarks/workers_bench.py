"""`--workers 2` against commit REF's, side by side, on the zk-fixed target of #38 ("zk-fixed's
bounds of the known bugs ... depth 30 ... in under 5 minutes").

The workload: `zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2
--max-timeouts 1 --max-crashes 1 --depth D --workers 2`, every default property, run as a user
runs it: a fresh process from this tree and from REF (extracted with `git archive`), `--rounds`
times each, alternating which goes first. Both must report the same distinct states, states,
per-depth counts, stop reason and violations (the script fails otherwise). Wall seconds from
start to exit (the figure the target names); CPU seconds of the process and every worker it
forked and reaped (user + system); the peak resident memory of its largest process. The ratio is
taken per round (REF's wall time over this tree's), and the report gives every run.

    python benchmarks/workers_bench.py --against REF [--depth 30] [--rounds 2] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import (REPORT, TITLE, check_cpu, commit, counts,  # noqa: E402
                               cpu_model, side_by_side, write_section)

HEADING = "## Two workers on zk-fixed (issue #38)"
FLAGS = ["--model", "zk-fixed", "--network", "fifo", "--nodes", "3", "--proposals", "2",
         "--max-timeouts", "1", "--max-crashes", "1", "--workers", "2"]


def run(tree: Path, depth: int) -> dict:
    """One `zabmc check` of the workload from `tree`: its figures."""
    d = check_cpu(tree, [*FLAGS, "--depth", str(depth)])
    return {"wall": d["wall_seconds"], "cpu": d["cpu_seconds"], "rss": d["max_rss_mib"],
            "counts": counts(d)}


def measure(ref: str, depth: int, rounds: int) -> dict:
    got = side_by_side(ref, rounds, lambda tree: run(tree, depth),
                       lambda name, d: print(f"{name}: {d['wall']:.1f} s wall, {d['cpu']:.1f} "
                                             f"CPU s, {d['rss']:,.0f} MiB", flush=True))
    first = got[ref][0]["counts"]
    if any(d["counts"] != first for ds in got.values() for d in ds):
        raise SystemExit("the trees' counts differ")
    return got


def render(got: dict, ref: str, depth: int, rounds: int) -> str:
    base, ours = got[ref], got["this tree"]
    ratios = [b["wall"] / o["wall"] for b, o in zip(base, ours)]
    distinct, states = base[0]["counts"][:2]
    out = [
        HEADING, "",
        f"Produced by `python benchmarks/workers_bench.py --against {ref} --depth {depth} "
        f"--rounds {rounds}` on {datetime.date.today().isoformat()}, commit `{commit()}`, "
        f"{cpu_model()}, 2 logical CPUs, nothing else running; do not edit by hand. "
        f"`zabmc check {' '.join(FLAGS)} --depth {depth}` from this tree and from `{ref}`, each "
        "in a fresh process, alternating which goes first; both report "
        f"{distinct:,} distinct states and {states:,} states, with the same per-depth counts "
        "and verdict (checked). Wall seconds from start to exit; CPU seconds of the process and "
        "its workers; the peak resident memory of its largest process.", "",
        "| round | tree | wall s | CPU s | peak RSS MiB |", "|---:|---|---:|---:|---:|"]
    for i, (b, o) in enumerate(zip(base, ours), 1):
        for name, d in ((f"`{ref}`", b), ("this tree", o)):
            out.append(f"| {i} | {name} | {d['wall']:.1f} | {d['cpu']:.1f} | {d['rss']:,.0f} |")
    out += ["", f"Median wall time: `{ref}` {statistics.median(d['wall'] for d in base):.1f} s, "
            f"this tree {statistics.median(d['wall'] for d in ours):.1f} s; median per-round "
            f"speed-up **{statistics.median(ratios):.2f}x** ({min(ratios):.2f}-"
            f"{max(ratios):.2f})."]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, metavar="REF", help="the commit to compare with")
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-write", action="store_true", help=f"print only; leave {REPORT} alone")
    a = ap.parse_args()
    if a.rounds < 1 or a.depth < 1:
        ap.error("--rounds and --depth must be at least 1")
    got = measure(a.against, a.depth, a.rounds)
    write_section(None if a.no_write else REPORT, HEADING,
                  render(got, a.against, a.depth, a.rounds), TITLE)


if __name__ == "__main__":
    main()
