#!/usr/bin/env python3
"""What this machine gives two processes at once: the ceiling for `local[2]` against `local[1]`.

    python benchmarks/ceiling_bench.py            # depth 22, 3 rounds -> `## Two-core ceiling`
    python benchmarks/ceiling_bench.py --no-write

The Spark benchmark (`benchmarks/spark_bench.py`) asks `local[2]` for 1.7x the throughput of
`local[1]`. Two processes can only reach 2x if the machine runs each as fast side by side as
alone. This measures how far it does for zabmc's own work: the in-process BFS (db-19, 3 nodes,
FIFO, 2 proposals, every default property, `--all`) once alone and twice side by side, in fresh
processes, in rounds that alternate the order (alone first, then together first, ...). A round's
ceiling is 2 x (alone wall time) / (wall time until both side-by-side runs are done).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, db19_env, logical_cpus  # noqa: E402
from benchmarks.common import update_section as common_update_section  # noqa: E402

SECTION = "## Two-core ceiling"


def child(depth: int) -> dict:
    from zabmc.explore import bfs

    env = db19_env(depth)
    t0, c0 = time.perf_counter(), time.process_time()
    o = bfs(env, stop_at_first=False)
    return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "distinct": o.distinct}


def start(depth: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--child", "--depth", str(depth)],
                            stdout=subprocess.PIPE, cwd=ROOT, text=True)


def finish(p: subprocess.Popen) -> dict:
    out, _ = p.communicate()
    if p.returncode:
        raise SystemExit(f"a child run failed (exit {p.returncode})")
    return json.loads(out)


def one_round(depth: int, alone_first: bool) -> dict:
    r: dict = {}
    for what in (("alone", "together") if alone_first else ("together", "alone")):
        t0 = time.perf_counter()
        procs = [start(depth) for _ in range(1 if what == "alone" else 2)]
        runs = [finish(p) for p in procs]
        r[what] = {"wall": time.perf_counter() - t0, "runs": runs}
    r["ceiling"] = 2 * r["alone"]["runs"][0]["seconds"] / max(
        x["seconds"] for x in r["together"]["runs"])
    r["cpu_ratio"] = statistics.mean(x["cpu"] for x in r["together"]["runs"]) / \
        r["alone"]["runs"][0]["cpu"]
    return r


def render(rounds: list[dict], depth: int) -> str:
    n = rounds[0]["alone"]["runs"][0]["distinct"]
    rows = []
    for i, r in enumerate(rounds, 1):
        a = r["alone"]["runs"][0]
        b, c = r["together"]["runs"]
        rows.append(f"| {i} | {a['seconds']:.1f} | {b['seconds']:.1f} / {c['seconds']:.1f} | "
                    f"{a['cpu']:.1f} | {b['cpu']:.1f} / {c['cpu']:.1f} | "
                    f"{r['cpu_ratio']:.2f} | {r['ceiling']:.2f}x |")
    ceil = [r["ceiling"] for r in rounds]
    return "\n".join([
        SECTION,
        "",
        f"Produced by `python benchmarks/ceiling_bench.py --depth {depth}` on "
        f"{_dt.date.today().isoformat()}, commit `{commit()}`. Machine: {cpu_model()}, "
        f"{logical_cpus()} logical CPUs.",
        "",
        f"What the machine gives two processes at once, for zabmc's own work: the in-process BFS "
        f"(db-19, 3 nodes, FIFO, 2 proposals, every default property, `--all`, depth {depth}: "
        f"{n:,} distinct states) alone, and two copies side by side, in fresh processes; rounds "
        "alternate the order. Ceiling = 2 x (time alone) / (time of the slower side-by-side run): "
        "the most any two-worker engine, Spark `local[2]` included, could get over one worker "
        "here.",
        "",
        "| round | alone s | side by side s | alone CPU s | side by side CPU s "
        "| CPU side by side / alone | ceiling |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"Ceiling: median {statistics.median(ceil):.2f}x (range {min(ceil):.2f}-"
        f"{max(ceil):.2f}x). The `## Spark` section's target, `local[2]` at 1.7x `local[1]`, "
        "is to be read against it.",
        "",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {a.rounds}")
    if a.depth < 1:
        ap.error(f"--depth must be at least 1, got {a.depth}")
    if a.child:
        print(json.dumps(child(a.depth)))
        return 0
    rounds = []
    for k in range(a.rounds):
        print(f"round {k + 1} ...", file=sys.stderr, flush=True)
        rounds.append(one_round(a.depth, alone_first=k % 2 == 0))
        print(f"  ceiling {rounds[-1]['ceiling']:.2f}x", file=sys.stderr, flush=True)
    section = render(rounds, a.depth)
    print(section)
    if not a.no_write:
        old = REPORT.read_text() if REPORT.exists() else ""
        REPORT.write_text(common_update_section(old, SECTION, section, TITLE))
        print(f"wrote the {SECTION!r} section of {REPORT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
