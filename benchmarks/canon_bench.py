"""One object a value (issue #38): this tree's `zabmc check` against commit REF's, side by side.

The explorer's memos (the kernel's steps, a node's encoding) are keyed by identity. Commit
635ca4c gives every node and message value one object (`Env._canon`) and memoises the model's
actions; d32ce5b memoises crashes and the checker's steps, which then recur by identity too;
1f4d7a5 gives decoded states (levels on disk, states shipped between workers) the same objects.
This measures what they are worth on the workloads they were for (the zk family) and on those
where values were nearly one object already (db-19, zab).

Each workload runs as `zabmc check ... --json -q` in a fresh process from this tree and from REF
(extracted with `git archive`), `--rounds` times each, alternating which tree goes first. Both
trees must report the same distinct states, transitions, per-depth counts, stop reason and
violations (property and depth); the script fails otherwise. CPU seconds: user + system of the
child; the report gives the median of each tree's runs and the median of the per-round ratios.

    python benchmarks/canon_bench.py --against REF [--rounds 2] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import (REPORT, TITLE, check_cpu, commit, counts,  # noqa: E402
                               cpu_model, side_by_side, update_section)

HEADING = "## One object a value (issue #38)"
DATA_LOSS = "--network fifo --nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1"
#: (what it is, `zabmc check` flags)
WORKLOADS = [
    ("zk-fixed, the data-loss bounds to depth 20",
     f"--model zk-fixed {DATA_LOSS} --depth 20"),
    ("ZOOKEEPER-3911's run for Remix's invariant (reports/zookeeper.md, \"Beside Remix\")",
     f"--model zk-pre3911 {DATA_LOSS} --depth 30 --invariant leader-log-completeness"),
    ("ZOOKEEPER-4646's run for Remix's invariant",
     f"--model zk {DATA_LOSS} --depth 30 --invariant leader-log-completeness"),
    ("zab, a gate run to depth 21",
     "--model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 21"),
    ("db-19, the main job (`make check`)", "--nodes 3 --depth 40"),
]


def measure(ref: str, rounds: int) -> list[dict]:
    rows = []
    for what, flags in WORKLOADS:
        got = side_by_side(ref, rounds, lambda tree: check_cpu(tree, flags.split()),
                           lambda name, d: print(f"{what} | {name}: {d['distinct_states']:,} "
                                                 f"distinct, CPU {d['cpu_seconds']:.1f} s",
                                                 flush=True))
        first = counts(got[ref][0])
        for ds in got.values():
            for d in ds:
                if counts(d) != first:
                    raise SystemExit(f"{what}: the trees' counts differ")
        base = [d["cpu_seconds"] for d in got[ref]]
        ours = [d["cpu_seconds"] for d in got["this tree"]]
        d0 = got[ref][0]
        found = ", ".join(f"`{v['property']}` at {v['depth']}" for v in d0["violations"])
        rows.append({
            "what": what, "flags": flags, "distinct": d0["distinct_states"],
            "states": d0["states"], "found": found or "none",
            "base": statistics.median(base), "ours": statistics.median(ours),
            "ratio": statistics.median(b / o for b, o in zip(base, ours)),
            "spread": (min(b / o for b, o in zip(base, ours)),
                       max(b / o for b, o in zip(base, ours))),
            "rss": (max(d["memory"]["peak_rss_bytes"] for d in got[ref]) / 2**20,
                    max(d["memory"]["peak_rss_bytes"] for d in got["this tree"]) / 2**20)})
    return rows


def render(rows: list[dict], ref: str, rounds: int) -> str:
    out = [
        HEADING, "",
        f"Produced by `python benchmarks/canon_bench.py --against {ref} --rounds {rounds} "
        f"--write` on {datetime.date.today().isoformat()}, commit `{commit()}`, {cpu_model()}, "
        "2 logical CPUs, one search at a time and nothing else running; do not edit by hand. "
        f"Each workload is one `zabmc check FLAGS` run {rounds} times from this tree and from "
        f"`{ref}` (the tree before one object a value), each in a fresh process, alternating "
        "which goes first. "
        "Both trees report the same distinct states, transitions, per-depth counts, stop reason "
        "and violations (checked). CPU seconds of the process (start-up included): the median "
        "of each tree's runs; speed-up: the median of the per-round ratios (their spread in "
        "brackets).", "",
        f"| workload | flags | distinct | transitions | first violation | CPU s (`{ref}` / "
        "this tree) | speed-up | peak RSS MiB (`" + ref + "` / this tree) |",
        "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        lo, hi = r["spread"]
        out.append(f"| {r['what']} | `{r['flags']}` | {r['distinct']:,} | {r['states']:,} | "
                   f"{r['found']} | {r['base']:.1f} / {r['ours']:.1f} | **{r['ratio']:.2f}x** "
                   f"({lo:.2f}-{hi:.2f}) | {r['rss'][0]:,.0f} / {r['rss'][1]:,.0f} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, metavar="REF", help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--write", action="store_true", help=f"rewrite the section of {REPORT}")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    section = render(measure(a.against, a.rounds), a.against, a.rounds)
    print(section)
    if a.write:
        REPORT.write_text(update_section(REPORT.read_text(), HEADING, section, TITLE))


if __name__ == "__main__":
    main()
