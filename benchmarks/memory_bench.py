"""Peak memory and throughput of the BFS with its levels in memory and on disk (issue 18).

Each variant is one `zabmc check ARGS --json -q` process (so that its peak RSS is its own):
- in memory: `--memory-limit none`, every level held as Python objects (the behaviour before
  `--memory-limit` existed);
- default: no flag, i.e. levels larger than min(a quarter of half of MemAvailable, 256 MiB) of
  estimated state objects go to zstd-1 segment files and are read back when expanded;
- on disk, zlib: the same with `ZABMC_SPILL_COMPRESS=1` (zlib level 1, the fallback);
- on disk, raw: the same with `ZABMC_SPILL_COMPRESS=0` (no compression).
Times: the run's own elapsed seconds and the CPU seconds of the child (`RUSAGE_CHILDREN`); the
report gives ratios against the in-memory run of the same invocation.

    python benchmarks/memory_bench.py [--args "--nodes 3 --network bag --depth 12"]
        [--variants memory,default,zlib,raw] [--write [reports/benchmarks.md]]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (REPORT, TITLE, check_json, commit, cpu_model, logical_cpus,  # noqa: E402
                    memory_gb, update_section)

HEADING = "## Long runs: memory and levels on disk"
NOTE = ("What to read: throughput is distinct states per CPU second of the whole `zabmc check` process, start to exit, so it counts the in-memory run's teardown of its objects (about 15 s here) as well as the spilled run's encoding, compression and decoding. The summary's own states/s stops before the teardown; by that figure the default run gave 0.82x in a separate side-by-side run of the same space (zlib: 0.79x). The default settings keep the peak RSS under 600 MiB (the target: 800 MB; 2.5 GiB in memory), of which the visited set and parent table are 117 MB (22 bytes a state). zstd level 1 stores a state in about 32 bytes (1,142 encoded; the disk peak holds the level being read and the one being written), zlib level 1 in about 85.")
VARIANTS = {"memory": ("in memory", ["--memory-limit", "none"], {}),
            "default": ("default (levels on disk past 256 MiB, zstd 1)", [], {}),
            "zlib": ("on disk, zlib 1", [], {"ZABMC_SPILL_COMPRESS": "1"}),
            "raw": ("on disk, uncompressed", [], {"ZABMC_SPILL_COMPRESS": "0"})}


def run(args: list[str], extra: list[str], env_extra: dict) -> dict:
    env = dict(os.environ, **env_extra)
    return check_json([sys.executable, "-c", "from zabmc.cli import main; main()", "check",
                       *args, *extra, "--json", "-q", "--trace-out", os.devnull], env=env)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--args", default="--nodes 3 --network bag --depth 12")
    ap.add_argument("--variants", default="memory,default,zlib,raw",
                    help="comma-separated, the first is the baseline: memory, default, raw")
    ap.add_argument("--write", nargs="?", const=str(REPORT), default=None)
    a = ap.parse_args()
    args = shlex.split(a.args)
    rows = []
    for key in a.variants.split(","):
        name, extra, env_extra = VARIANTS[key]
        d = run(args, extra, env_extra)
        m = d["memory"]
        rows.append((name, d))
        print(f"{name}: {d['distinct_states']:,} distinct, {d['elapsed_seconds']:.1f}s, "
              f"cpu {d['cpu_seconds']:.1f}s, peak RSS {m['peak_rss_bytes'] / 2**20:,.0f} MiB, "
              f"disk {m.get('frontier_disk_bytes', 0) / 2**20:,.1f} MiB", flush=True)
    base = rows[0][1]
    assert all(d["per_depth"] == base["per_depth"] for _, d in rows), "variants disagree"
    lines = [HEADING, "",
             f"Produced by `python benchmarks/memory_bench.py --args \"{a.args}\"` on "
             f"{datetime.date.today()}, commit `{commit()}`, {cpu_model()}, {logical_cpus()} "
             f"logical CPUs, {memory_gb()} GB. Workload: `zabmc check {a.args}` "
             f"({base['distinct_states']:,} distinct states, largest level "
             f"{base['memory']['frontier_peak_states']:,} states of "
             f"{base['memory']['frontier_encoded_bytes_per_state']:,.0f} encoded bytes). One "
             "process per variant, run one after the other; the machine was shared, so read the "
             "ratios.", "",
             "| variant | elapsed s | CPU s | distinct/CPU s | throughput vs in memory | peak RSS MiB "
             "| peak RSS bytes/state | RSS vs in memory | levels on disk | disk peak MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, d in rows:
        m = d["memory"]
        rate = d["distinct_states"] / d["cpu_seconds"]
        base_rate = base["distinct_states"] / base["cpu_seconds"]
        lines.append(
            f"| {name} | {d['elapsed_seconds']:.1f} | {d['cpu_seconds']:.1f} | {rate:,.0f} | "
            f"{rate / base_rate:.2f}x | {m['peak_rss_bytes'] / 2**20:,.0f} | "
            f"{m['peak_rss_bytes_per_state']:,.0f} | "
            f"{m['peak_rss_bytes'] / base['memory']['peak_rss_bytes']:.2f}x | "
            f"{m.get('spilled_levels', 0)} | {m.get('frontier_disk_bytes', 0) / 2**20:,.1f} |")
    lines += ["", NOTE]
    section = "\n".join(lines) + "\n"
    print(section)
    if a.write:
        path = Path(a.write)
        text = path.read_text() if path.exists() else ""
        path.write_text(update_section(text, HEADING, section, TITLE))


if __name__ == "__main__":
    main()
