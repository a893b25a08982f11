#!/usr/bin/env python3
"""Seed sweeps: runs per second on local[1], local[2] and the two-worker standalone cluster, next to
the simulator alone in one process, and what `zabmc sweep --report` costs (issue #21, point 4).

    python benchmarks/sweep_bench.py                       # writes reports/spark.md's section
    python benchmarks/sweep_bench.py --seeds 300 --no-write   # a quick look

Every sweep is `zabmc sweep --nodes 3 --rounds 2000 --proposals 20 --seeds 0..N` (docs/spark.md's
example), one process per run as users run it; its runs per second are the seeds over the Spark
job's own seconds (`spark.run_seconds` in `--json`: writing the table, without session start-up).
The baseline is the same simulator runs in one Python process, one after the other, which is what
the sweep's tasks do on each core. The sweeps must write tables with the same summary, or the
benchmark fails; their rows must be the baseline's digests and violations.

The report half writes a table of `--report-rows` rows in the sweep's schema (the sweep's own rows
repeated with new seeds) and times `zabmc sweep --report` on it with each reader.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # support.spark_standalone, the tests' launcher

from benchmarks.common import (commit, cpu_model, exit_on_sigterm, logical_cpus,  # noqa: E402
                               memory_gb, update_section)

SECTION = "## Seed sweeps"
REPORT = ROOT / "reports" / "spark.md"
NODES, ROUNDS, PROPOSALS = 3, 2000, 20


def table_dir(tmp: str, name: str) -> str:
    return os.path.join(tmp, name.replace("[", "").replace("]", ""))


def priority() -> int:
    """This process's scheduling nice: its autogroup's where the kernel groups by session (there a
    process's own nice ranks it only within its group), else its own."""
    try:
        with open("/proc/self/autogroup") as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return os.nice(0)


def load() -> float:
    return os.getloadavg()[0]


def baseline(seeds: int) -> tuple:
    """The simulator alone: (runs/s of wall, CPU s per run, {seed: (digest, violation, tick)})."""
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.core.model import get_model
    from zabmc.sim import SimConfig, Simulator

    model, checker = get_model("db19"), Checker(DEFAULT_PROPERTIES)
    rows = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for seed in range(seeds):
        r = Simulator(model, SimConfig(seed, NODES, ROUNDS, PROPOSALS, frozenset()),
                      checker=checker).run()
        v = r.violation
        rows[seed] = (r.digest, v.property if v else None, r.violation_tick if v else None)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return seeds / wall, cpu / seeds, rows


def sweep(master: str, seeds: int, out: str, env: dict) -> dict:
    argv = [sys.executable, "-m", "zabmc", "sweep", "--nodes", str(NODES), "--rounds",
            str(ROUNDS), "--proposals", str(PROPOSALS), "--seeds", f"0..{seeds}", "--out", out,
            "--master", master, "--json", "-q"]
    before = load()
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 10):
        raise SystemExit(f"zabmc sweep --master {master} failed ({p.returncode}): "
                         f"{p.stderr.strip()[-2000:]}")
    d = json.loads(p.stdout)
    d["wall"], d["load"] = wall, (before + load()) / 2
    return d


def table_rows(path: str) -> dict:
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["seed", "digest", "violation", "tick"]).to_pylist()
    return {r["seed"]: (r["digest"], r["violation"], r["tick"]) for r in t}


def grow(src: str, dst: str, rows: int) -> None:
    """A table of `rows` rows: `src`'s rows again and again, with fresh seeds."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = pq.read_table(src)
    n = base.num_rows
    os.makedirs(dst)
    done, part = 0, 0
    while done < rows:
        k = min(n, rows - done)
        t = base.slice(0, k)
        t = t.set_column(t.schema.get_field_index("seed"), "seed",
                         pc.add(t["seed"], pa.scalar(done, pa.int64())))
        pq.write_table(t, os.path.join(dst, f"part-{part:05d}.parquet"))
        done, part = done + k, part + 1


def report_time(path: str, engine: str, env: dict) -> tuple:
    argv = [sys.executable, "-m", "zabmc", "sweep", "--report", path, "--report-engine", engine,
            "--json"]
    if engine == "spark":
        argv += ["--master", "local[2]"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 10):
        raise SystemExit(f"zabmc sweep --report ({engine}) failed: {p.stderr.strip()[-2000:]}")
    return wall, json.loads(p.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3000)
    ap.add_argument("--baseline-seeds", type=int, default=200)
    ap.add_argument("--report-rows", type=int, default=1_000_000)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    exit_on_sigterm()
    from support.spark_standalone import standalone_cluster

    env = dict(os.environ)
    print(f"baseline: {a.baseline_seeds} simulator runs in one process", flush=True)
    base_rate, base_cpu, base_rows = baseline(a.baseline_seeds)
    print(f"  {base_rate:.1f} runs/s", flush=True)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="zabmc-sweep-bench-") as tmp:
        for name, master in (("local[1]", "local[1]"), ("local[2]", "local[2]")):
            print(f"sweep on {name}", flush=True)
            runs[name] = sweep(master, a.seeds, table_dir(tmp, name), env)
            print(f"  {runs[name]['spark']['runs_per_second']:.1f} runs/s", flush=True)
        with standalone_cluster(workers=2, cores=1, memory="1g") as url:
            print(f"sweep on the cluster {url}", flush=True)
            runs["cluster"] = sweep(url, a.seeds, os.path.join(tmp, "cluster"), env)
            print(f"  {runs['cluster']['spark']['runs_per_second']:.1f} runs/s", flush=True)
        want = runs["local[1]"]
        for name, d in runs.items():
            if (d["runs"], d["violations"]) != (want["runs"], want["violations"]):
                raise SystemExit(f"{name}'s summary differs from local[1]'s")
            got = table_rows(table_dir(tmp, name))
            if any(got[s] != base_rows[s] for s in base_rows):
                raise SystemExit(f"{name}'s rows differ from the simulator's")
        print(f"report: a table of {a.report_rows:,} rows", flush=True)
        big = os.path.join(tmp, "big")
        grow(table_dir(tmp, "local[1]"), big, a.report_rows)
        reports = {eng: report_time(big, eng, env) for eng in ("arrow", "spark")}
        if reports["arrow"][1]["violations"] != reports["spark"][1]["violations"]:
            raise SystemExit("the two readers disagree")
        small = {eng: report_time(table_dir(tmp, "local[1]"), eng, env)[0]
                 for eng in ("arrow", "spark")}
    text = render(a, base_rate, base_cpu, runs, reports, small)
    print(text)
    if not a.no_write:
        REPORT.write_text(update_section(REPORT.read_text(), SECTION, text, ""))
        print(f"wrote the '{SECTION}' section of {REPORT}")
    return 0


def render(a, base_rate, base_cpu, runs, reports, small) -> str:
    one = runs["local[1]"]["spark"]["runs_per_second"]
    d = runs["local[1]"]
    viols = "; ".join(f"{v['property']}: {v['runs']:,} runs, first seed {v['first_seed']}"
                      for v in d["violations"]) or "none"
    lines = [SECTION, "",
             f"Produced by `python benchmarks/sweep_bench.py --seeds {a.seeds}` at commit "
             f"`{commit()}`, {cpu_model()}, {logical_cpus()} logical CPUs, {memory_gb()} GB. "
             f"Workload: `zabmc sweep --nodes {NODES} --rounds {ROUNDS} --proposals {PROPOSALS} "
             f"--seeds 0..{a.seeds}` (db-19, every default property), one process per sweep; "
             f"{d['runs']:,} runs, {d['violating_runs']:,} of them violating ({viols}). Every sweep's "
             "table has the same summary, and its rows are the simulator's own digests, "
             "violations and ticks (checked on the baseline's seeds).", "",
             "Runs per second are the seeds over the Spark job's own seconds (`spark.run_seconds`: "
             "the runs and writing the table, not the session's start-up, which the wall column "
             "includes). The baseline runs the same simulator in one Python process, one run after "
             f"the other ({a.baseline_seeds} seeds), which is what each sweep task does on its core. "
             "Load: the one-minute load average around the run (this machine has two cores; other "
             "jobs ran beside some runs)." + (f" The benchmark and every process it started ran at "
                                              f"nice {priority()}, ahead of those jobs."
                                              if priority() < 0 else ""), "",
             "| run | cores | runs/s | x baseline | x local[1] | wall s (with start-up) | load |",
             "|---|---:|---:|---:|---:|---:|---:|",
             f"| simulator alone, one process | 1 | {base_rate:.1f} | 1.00 | - | - | - |"]
    for name, cores in (("local[1]", 1), ("local[2]", 2), ("cluster", 2)):
        r = runs[name]
        rate = r["spark"]["runs_per_second"]
        label = "two-worker standalone cluster (1 core each)" if name == "cluster" else name
        lines.append(f"| {label} | {cores} | {rate:.1f} | {rate / base_rate:.2f} | "
                     f"{rate / one:.2f} | {r['wall']:.1f} | {r['load']:.1f} |")
    aw, ad = reports["arrow"]
    sw, _ = reports["spark"]
    lines += ["", f"The simulator alone takes {1000 * base_cpu:.0f} CPU ms a run. A sweep of 100,000 "
              f"seeds at the cluster's rate takes {100_000 / runs['cluster']['spark']['runs_per_second'] / 60:.0f} "
              "minutes; at local[1]'s, "
              f"{100_000 / one / 60:.0f}.", "",
              f"`zabmc sweep --report` on a table of {ad['runs']:,} rows ({len(ad['configurations'])} "
              f"configuration, {ad['violating_runs']:,} violating rows; the sweep's rows repeated "
              f"with new seeds), one process each, wall seconds with start-up: the arrow reader "
              f"{aw:.1f} s, the Spark reader on local[2] {sw:.1f} s; on the "
              f"{d['runs']:,}-row table of one sweep, {small['arrow']:.1f} s and {small['spark']:.1f}"
              " s. Both give the same summary.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
