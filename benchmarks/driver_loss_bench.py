#!/usr/bin/env python3
"""What the Spark engine's level snapshots cost, and what losing the driver costs with them
(issue #21, point 2).

    python benchmarks/driver_loss_bench.py              # 2 rounds, writes reports/spark.md's section
    python benchmarks/driver_loss_bench.py --no-write   # print only

`zabmc check --engine spark --master local[2]` on db-19 (3 nodes, FIFO, no invariants, depth 21),
as users run it, one process per job, each round:

1. `--checkpoint DIR --checkpoint-every 1e9`: Spark's reliable lineage cuts into DIR (levels 10
   and 20), no level snapshot (none falls due): the baseline;
2. `--checkpoint DIR --checkpoint-every 0`: the same and a level snapshot at every level; its JSON
   gives each snapshot's bytes, its tasks' write seconds and the manifest's seconds;
3. run 2 killed with SIGKILL (the driver process; its JVM follows) right after the snapshot of
   level `KILL_AFTER` is sealed, then `--resume DIR`: the lost work is the wall time from the
   snapshot to the kill plus the resumed run's start-up.

Once, at the end: the in-process engine writes its own checkpoint of level `KILL_AFTER`
(`--checkpoint-every 0`, killed after that level's), and a Spark run resumes from it: the driver
reads that checkpoint whole and ships it (`setup_seconds`). Every run must report the in-process
distinct and per-depth counts, or the benchmark fails.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import commit, update_section  # noqa: E402

ARGS = ["--nodes", "3", "--depth", "21", "--no-invariants"]
SPARK = ["--engine", "spark", "--master", "local[2]"]
KILL_AFTER = 19
SECTION = "## Losing the driver"
DESIGN = " ".join("""
How a snapshot is taken. It holds what an in-process checkpoint holds (levels 0..d visited,
level d not expanded, the counters and violations of levels 0..d), cut where the Spark engine
has that boundary: inside stage d, between each task's merge and its expansion. Each task
writes its own partition's part, its visited set (sorted) and its share of the frontier (sorted
by order key, with the keys), so no process holds the whole visited set; having the driver
gather everything into the in-process format instead would put 16 bytes a state plus the
frontier in one process, which is what the engine exists to avoid. The keys stand in for the
parent table (a violation's key is its path), so the in-process engine cannot resume a Spark
snapshot, while the Spark engine resumes either format. A part depends only on its level
(sorted, and zstd is deterministic), so a task Spark re-runs rewrites the same bytes; the
driver writes the manifest only after the stage has completed and it sees every part at the
size its task reported, and on resume it reads every part once to check sizes and checksums
before the session starts. Not done: a last snapshot when a Spark run ends or is interrupted
(the in-process engine writes one), and snapshots on a URL such as hdfs:// (plain file I/O;
such a DIR gets the lineage cuts only).
""".split())
REPORT = ROOT / "reports" / "spark.md"


def essentials(d):
    return d["distinct_states"], d["states"], d["per_depth"], d["stop_reason"]


def zabmc(args, cwd) -> tuple[float, dict]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "zabmc", "check", *ARGS, *args, "--json", "-q"],
                       capture_output=True, text=True, cwd=cwd, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"zabmc check {' '.join(args)} failed: {r.stderr.strip()}")
    return time.monotonic() - t0, json.loads(r.stdout)


def killed(args, cwd, level: int) -> float:
    """Run `zabmc check ARGS` (printing its checkpoint lines) and SIGKILL it right after it
    reports the checkpoint of `level`; the seconds from launch to the kill."""
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "zabmc", "check", *ARGS, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd)
    for line in p.stdout:
        if line.startswith(f"checkpoint: level {level},"):
            p.send_signal(signal.SIGKILL)
            break
    p.communicate(timeout=60)
    if p.returncode != -signal.SIGKILL:
        raise SystemExit(f"the run ended before its checkpoint of level {level}")
    return time.monotonic() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="zabmc-driver-loss-") as tmp:
        _, want = zabmc([], tmp)
        rows, snaps = [], None
        for rnd in range(1, a.rounds + 1):
            d = Path(tmp) / f"r{rnd}"
            wall, out = zabmc([*SPARK, "--checkpoint", str(d / "base"), "--checkpoint-every",
                               "1e9"], tmp)
            assert essentials(out) == essentials(want)
            rows.append({"round": rnd, "run": "lineage cuts only", "wall": wall})
            wall, out = zabmc([*SPARK, "--checkpoint", str(d / "every"), "--checkpoint-every",
                               "0"], tmp)
            assert essentials(out) == essentials(want)
            rows.append({"round": rnd, "run": "+ a snapshot every level", "wall": wall})
            snaps = snaps or out["spark"]["level_snapshots"]
            to_kill = killed([*SPARK, "--checkpoint", str(d / "kill"), "--checkpoint-every", "0"],
                             tmp, KILL_AFTER)
            wall, out = zabmc([*SPARK, "--resume", str(d / "kill")], tmp)
            assert essentials(out) == essentials(want)
            rows.append({"round": rnd, "run": f"killed after level {KILL_AFTER}'s snapshot, "
                         "then resumed", "wall": to_kill + wall, "killed_at": to_kill,
                         "resumed": wall})
        d = Path(tmp) / "in-process"
        killed(["--checkpoint", str(d), "--checkpoint-every", "0"], tmp, KILL_AFTER)
        size = sum(f.stat().st_size for f in d.iterdir())
        wall, out = zabmc([*SPARK, "--resume", str(d)], tmp)
        assert essentials(out) == essentials(want)
        from_bfs = {"wall": wall, "setup": out["spark"]["setup_seconds"], "bytes": size,
                    "first_level": out["spark"]["levels"][0]["seconds"]}
    text = render(rows, snaps, from_bfs, want, load)
    print(text)
    if not a.no_write:
        REPORT.write_text(update_section(REPORT.read_text(), SECTION, text, "# Spark"))
    return 0


def render(rows, snaps, from_bfs, want, load) -> str:
    def med(run):
        return statistics.median(r["wall"] for r in rows if r["run"] == run)

    base, every = "lineage cuts only", "+ a snapshot every level"
    kill = next(r["run"] for r in rows if r["run"].startswith("killed"))
    total_bytes = sum(s["bytes"] for s in snaps)
    lines = [SECTION, "",
             f"Produced by `python benchmarks/driver_loss_bench.py` at commit `{commit()}`: "
             "`zabmc check --engine spark --master local[2] " + " ".join(ARGS) + "` on db-19 "
             f"({want['distinct_states']:,} distinct states, {len(want['per_depth']) - 1} "
             "levels) on this 2-core machine, one process per job. `--checkpoint DIR` with "
             "`--checkpoint-every 1e9` writes Spark's lineage cuts only (no snapshot falls due); "
             "with `--checkpoint-every 0` every level's boundary is also written as a snapshot: "
             "each task writes its partition's visited set and its part of the frontier (keys "
             "and zstd-compressed states) and the driver seals them with the manifest. Every run "
             "reports the in-process counts. The machine is shared with other jobs (load "
             f"average {load:.1f} when the benchmark started): wall times differ by seconds from "
             "run to run; the snapshots' own costs are the per-level figures.", "",
             "Per snapshot (from the first round's `--json`, `spark.level_snapshots`): bytes on "
             "disk, the two tasks' seconds to write their parts (inside the level's stage), the "
             "driver's seconds to check the parts and write the manifest.", "",
             "| level | bytes | task write s | manifest s |", "|---:|---:|---|---:|"]
    for s in snaps:
        lines.append(f"| {s['level']} | {s['bytes']:,} | "
                     f"{' / '.join(f'{x:.3f}' for x in s['task_write_seconds'])} | "
                     f"{s['manifest_seconds']:.3f} |")
    lines += ["", f"All {len(snaps)} snapshots: {total_bytes / 1e6:.1f} MB written (only the last "
              "one is kept), "
              f"{sum(max(s['task_write_seconds']) for s in snaps):.2f} s along the slowest task "
              f"of each level and {sum(s['manifest_seconds'] for s in snaps):.2f} s of "
              "manifests.", "",
              "| round | run | wall (s) |", "|---|---|---:|"]
    for r in rows:
        extra = (f" ({r['killed_at']:.1f} to the kill + {r['resumed']:.1f} resumed)"
                 if "killed_at" in r else "")
        lines.append(f"| {r['round']} | {r['run']} | {r['wall']:.1f}{extra} |")
    lines += ["",
              f"Medians: {med(base):.1f} s with lineage cuts only, {med(every):.1f} s with a "
              f"snapshot at every level ({med(every) - med(base):+.1f} s), {med(kill):.1f} s for "
              f"a run whose driver is killed after level {KILL_AFTER}'s snapshot and resumed "
              f"({med(kill) - med(every):+.1f} s against the undisturbed run with snapshots: a "
              "new session's start-up and the work since the snapshot). With the default "
              "`--checkpoint-every 300` a search writes one snapshot every five minutes at most.",
              "",
              f"Resuming a Spark run from the in-process engine's checkpoint of level {KILL_AFTER} "
              f"({from_bfs['bytes'] / 1e6:.1f} MB: the whole visited set, the parent table and the "
              f"uncompressed frontier) took {from_bfs['wall']:.1f} s, of which "
              f"{from_bfs['setup']:.1f} s on the driver rebuilding the frontier's order keys, "
              "splitting the visited set and shipping both (that format is the in-process "
              "engine's: a process reads it whole); a Spark snapshot is read by the tasks, each "
              "its own part.", "",
              DESIGN, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
