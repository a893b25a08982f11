#!/usr/bin/env python3
"""Ten million states on the two-worker standalone cluster, the in-process engine beside it
(issue #21, point 3).

    python benchmarks/cluster_bench.py                 # depth 28, writes reports/spark.md's section
    python benchmarks/cluster_bench.py --depth 24 --no-write   # a quick look

Both engines run `zabmc check --nodes 3 --depth D --all` (db-19, FIFO, 2 proposals, every default
property) as users run them, one process per job:

- the cluster: a standalone master and two workers of one core each (`tests/support/spark_standalone.py`,
  127.0.0.1), `--engine spark --master spark://... --partitions P`, executors of
  `spark.executor.memory` 1 GiB, Spark's event log on (for the shuffle and spill figures: the sum
  of every finished task's metrics);
- the in-process engine with its defaults (levels over 256 MiB go to disk).

While a job runs, a sampler reads every process's peak resident set (`VmHWM` in
/proc/PID/status) twice a second and keeps the last value each PID showed; processes are grouped
by role (the driver's Python and JVM, the executors' JVMs, the Python workers under them, the
cluster's master and worker daemons). The two runs must report the same distinct count, per-depth
counts and violations, or the benchmark fails.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # support.spark_standalone, the tests' launcher

from benchmarks.common import (commit, cpu_model, exit_on_sigterm, logical_cpus,  # noqa: E402
                               memory_gb, update_section)
from zabmc.spark.worker.expansion import SENT_LIMIT  # noqa: E402

SECTION = "## Ten million states on the cluster"
REPORT = ROOT / "reports" / "spark.md"
EXECUTOR_MEMORY = "1g"
WORKER_MEMORY = "2g"


def args_for(depth: int) -> list:
    return ["--nodes", "3", "--depth", str(depth), "--all"]


# --- processes and their peak memory ------------------------------------------------------------


def _read(path: str, mode: str = "r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def _role(pid: int, cmd: bytes, parents: dict, driver: int) -> str | None:
    if b"CoarseGrainedExecutorBackend" in cmd:
        return "executor JVM"
    if b"deploy.master.Master" in cmd:
        return "cluster master JVM"
    if b"deploy.worker.Worker" in cmd:
        return "cluster worker JVM"
    # walk up: under an executor JVM is a Python worker; under the driver, the driver's JVM
    p, seen = parents.get(pid), 0
    while p and seen < 20:
        pcmd = _read(f"/proc/{p}/cmdline", "rb") or b""
        if b"CoarseGrainedExecutorBackend" in pcmd:
            return "Python worker"
        if p == driver:
            return "driver JVM" if cmd.startswith(b"java") or b"/java" in cmd.split(b"\0")[0] \
                else "driver child"
        p, seen = parents.get(p), seen + 1
    return None


class PeakSampler(threading.Thread):
    """Every `period` s: VmHWM of the driver and of every Spark process on the machine."""

    def __init__(self, driver: int, period: float = 0.5):
        super().__init__(daemon=True)
        self.driver, self.period = driver, period
        self.peaks: dict = {}  # pid -> (role, VmHWM bytes)
        self.cpu: dict = {}  # pid -> CPU seconds when last seen
        self.hz = os.sysconf("SC_CLK_TCK")
        self.stop = threading.Event()

    def sample(self) -> None:
        parents, ticks = {}, {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                st = _read(f"/proc/{name}/stat")
                if st:
                    f = st.rsplit(")", 1)[1].split()
                    parents[int(name)] = int(f[1])
                    ticks[int(name)] = int(f[11]) + int(f[12])
        for pid in parents:
            if pid == self.driver:
                role = "driver Python"
            else:
                cmd = _read(f"/proc/{pid}/cmdline", "rb") or b""
                role = _role(pid, cmd, parents, self.driver)
            if role is None:
                continue
            status = _read(f"/proc/{pid}/status") or ""
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    kb = int(line.split()[1])
                    old = self.peaks.get(pid, (role, 0))[1]
                    self.peaks[pid] = (role, max(old, kb * 1024))
                    self.cpu[pid] = ticks[pid] / self.hz

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.period)

    def by_role(self) -> dict:
        out: dict = {}
        for pid, (role, peak) in self.peaks.items():
            n, top, cpu = out.get(role, (0, 0, 0.0))
            out[role] = (n + 1, max(top, peak), cpu + self.cpu.get(pid, 0.0))
        return out


def run_job(argv: list, env: dict) -> tuple:
    """Run one `zabmc check` process; (JSON summary, wall s, CPU s of the process and its
    children, peaks by role, the driver's own peak RSS)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "zabmc", "check", *argv, "--json", "-q",
                             "--trace-out", os.path.join(tempfile.gettempdir(), "cb.trace.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    out_chunks = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    reader.join()
    err = proc.stderr.read().decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    proc.returncode = rc
    if rc not in (0, 10):
        raise SystemExit(f"zabmc check {' '.join(argv)} failed ({rc}): {err.strip()[-2000:]}")
    roles = sampler.by_role()
    roles["driver Python"] = (1, max(roles.get("driver Python", (1, 0, 0))[1],
                                     ru.ru_maxrss * 1024), ru.ru_utime + ru.ru_stime)
    return json.loads(out_chunks[0]), wall, ru.ru_utime + ru.ru_stime, roles


# --- Spark's event log --------------------------------------------------------------------------


def event_metrics(log_dir: str) -> dict:
    """Sums over every finished task of the application in `log_dir`."""
    tot = dict(tasks=0, failed=0, shuffle_written=0, shuffle_read=0, memory_spilled=0,
               disk_spilled=0, peak_execution_memory=0, stages=0)
    # Spark 4 writes a directory per application (rolling event logs) of `events_*` files
    files = sorted(f for f in glob.glob(os.path.join(log_dir, "**", "*"), recursive=True)
                   if os.path.isfile(f) and not os.path.basename(f).startswith("appstatus"))
    for path in files:
        with open(path) as f:
            for line in f:
                ev = json.loads(line)
                kind = ev.get("Event")
                if kind == "SparkListenerStageCompleted":
                    tot["stages"] += 1
                if kind != "SparkListenerTaskEnd":
                    continue
                tot["tasks"] += 1
                if ev.get("Task End Reason", {}).get("Reason") != "Success":
                    tot["failed"] += 1
                m = ev.get("Task Metrics") or {}
                w = m.get("Shuffle Write Metrics") or {}
                r = m.get("Shuffle Read Metrics") or {}
                tot["shuffle_written"] += w.get("Shuffle Bytes Written", 0)
                tot["shuffle_read"] += r.get("Remote Bytes Read", 0) + r.get("Local Bytes Read", 0)
                tot["memory_spilled"] += m.get("Memory Bytes Spilled", 0)
                tot["disk_spilled"] += m.get("Disk Bytes Spilled", 0)
                tot["peak_execution_memory"] = max(tot["peak_execution_memory"],
                                                   m.get("Peak Execution Memory", 0))
    tot["files"] = len(files)
    return tot


# --- the runs -----------------------------------------------------------------------------------


def essentials(d: dict) -> tuple:
    return (d["distinct_states"], d["per_depth"], d["stop_reason"],
            sorted((v["property"], v["depth"]) for v in d.get("violations", [])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=28)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--min-states", type=int, default=10_000_000)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    exit_on_sigterm()
    from support.spark_standalone import standalone_cluster

    args = args_for(a.depth)
    env = dict(os.environ)
    rows = {}
    with standalone_cluster(workers=2, cores=1, memory=WORKER_MEMORY) as url, \
            tempfile.TemporaryDirectory(prefix="zabmc-eventlog-") as logs:
        conf = (f"spark.executor.memory={EXECUTOR_MEMORY};spark.eventLog.enabled=true;"
                f"spark.eventLog.dir=file://{logs};spark.eventLog.compress=false")
        spark_env = dict(env, ZABMC_SPARK_CONF=conf)
        print(f"cluster {url}: zabmc check {' '.join(args)} --engine spark", flush=True)
        d, wall, cpu, roles = run_job([*args, "--engine", "spark", "--master", url,
                                       "--partitions", str(a.partitions)], spark_env)
        rows["spark"] = dict(summary=d, wall=wall, cpu=cpu, roles=roles,
                             events=event_metrics(logs))
        print(f"  {d['distinct_states']:,} states, {wall:.1f} s wall", flush=True)
    print(f"in-process: zabmc check {' '.join(args)}", flush=True)
    d, wall, cpu, roles = run_job(args, env)
    rows["in-process"] = dict(summary=d, wall=wall, cpu=cpu, roles=roles)
    print(f"  {d['distinct_states']:,} states, {wall:.1f} s wall", flush=True)
    a_, b_ = essentials(rows["spark"]["summary"]), essentials(rows["in-process"]["summary"])
    if a_ != b_:
        raise SystemExit(f"the engines disagree:\n spark {a_}\n in-process {b_}")
    if a_[0] < a.min_states:
        raise SystemExit(f"only {a_[0]:,} states; raise --depth")
    text = render(rows, a)
    print(text)
    if not a.no_write:
        REPORT.write_text(update_section(REPORT.read_text(), SECTION, text, ""))
        print(f"wrote the '{SECTION}' section of {REPORT}")
    return 0


def mib(x: float) -> str:
    return f"{x / 2**20:,.0f}"


def render(rows: dict, a) -> str:
    sp, ip = rows["spark"], rows["in-process"]
    d = ip["summary"]
    n = d["distinct_states"]
    ev = sp["events"]
    sx = sp["summary"]["spark"]
    spark_cpu = sp["cpu"] + sum(c for role, (_, _, c) in sp["roles"].items()
                                if role in ("executor JVM", "Python worker"))
    daemons_cpu = sum(c for role, (_, _, c) in sp["roles"].items() if role.startswith("cluster"))
    viols = ", ".join(f"{v['property']} at depth {v['depth']}" for v in d.get("violations", []))
    lines = [SECTION, "",
             f"Produced by `python benchmarks/cluster_bench.py --depth {a.depth} --partitions "
             f"{a.partitions}` at commit `{commit()}`, {cpu_model()}, {logical_cpus()} logical "
             f"CPUs, {memory_gb()} GB, PySpark {sx.get('spark_version')}. Workload: `zabmc check "
             f"{' '.join(args_for(a.depth))}` (db-19, FIFO, 2 proposals, every default property): "
             f"**{n:,} distinct states**, {d['states']:,} states generated, {len(d['per_depth']) - 1} "
             f"levels; the largest level {max(d['per_depth']):,} states; violations: {viols}. "
             "Both engines report the same distinct count, per-depth counts and violations (the "
             "benchmark fails otherwise).", "",
             f"The cluster: a standalone master and two workers of one core and {WORKER_MEMORY} "
             f"each on this machine, executors of {EXECUTOR_MEMORY} (`spark.executor.memory`), "
             f"`--partitions {a.partitions}`, no lineage cut (a cluster's default). The in-process "
             "engine with its defaults (levels over 256 MiB of states go to compressed files on "
             "disk). One process per job, run one after the other.", "",
             "| engine | wall s | CPU s | distinct states / wall s | CPU µs / state |",
             "|---|---:|---:|---:|---:|",
             f"| in-process | {ip['wall']:.1f} | {ip['cpu']:.1f} | {n / ip['wall']:,.0f} | "
             f"{1e6 * ip['cpu'] / n:.0f} |",
             f"| Spark, two-worker cluster | {sp['wall']:.1f} | {spark_cpu:.1f} | "
             f"{n / sp['wall']:,.0f} | {1e6 * spark_cpu / n:.0f} |", "",
             "CPU seconds: the `zabmc check` process and its children (for Spark, the driver's "
             "Python and JVM) plus, for Spark, every executor JVM and Python worker the sampler "
             "saw, at its last sample (the cluster's master and worker daemons are left out: "
             f"{daemons_cpu:.1f} s).", "",
             "Peak resident memory per process (VmHWM, sampled twice a second; for each role the "
             "largest process of that role):", "",
             "| engine | process | processes | peak RSS MiB (largest) |", "|---|---|---:|---:|"]
    for eng, r in (("in-process", ip), ("Spark", sp)):
        for role, (k, peak, _) in sorted(r["roles"].items()):
            if eng == "in-process" and role != "driver Python":
                continue
            name = "zabmc check" if eng == "in-process" else role
            lines.append(f"| {eng} | {name} | {k} | {mib(peak)} |")
    seen_bytes = 16 * n
    big_level = max(d["per_depth"])
    lines += ["",
              "The Python workers are the largest processes: a task expands its share of a level "
              "holding that share's states as (order key, encoded state) pairs, about a kilobyte "
              f"each uncompressed, and a set of up to {SENT_LIMIT:,} fingerprints it has already "
              f"sent; at the largest level that share is about {big_level // a.partitions:,} "
              f"states ({big_level:,} over {a.partitions} partitions). More `--partitions` make "
              "each task's share, and so its worker's peak, smaller.", "",
              f"The visited set is {mib(seen_bytes)} MiB of 16-byte fingerprints in all; on the "
              f"cluster each of the {a.partitions} partitions holds its fingerprint range's share "
              f"(about {mib(seen_bytes / a.partitions)} MiB), so no process holds it whole. The "
              "in-process engine holds it whole, with its parent table (22 bytes a state).", "",
              f"Shuffle and spill (Spark's event log, summed over {ev['tasks']:,} tasks in "
              f"{ev['stages']} stages, {ev['failed']} failed): shuffle written "
              f"{mib(ev['shuffle_written'])} MiB, shuffle read {mib(ev['shuffle_read'])} MiB, "
              f"spilled {mib(ev['memory_spilled'])} MiB in memory and {mib(ev['disk_spilled'])} "
              f"MiB on disk; the largest task's peak execution memory "
              f"{mib(ev['peak_execution_memory'])} MiB. The shuffle carries each level's candidate "
              "batches (zstd) and each partition's visited set, which a task sends to itself.", ""]
    lv = sx["levels"]
    if lv:
        big = max(lv, key=lambda x: x["new"])
        lines += [f"Level times on the cluster: the largest level ({big['new']:,} new states) "
                  f"took {big['seconds']:.1f} s; all {len(lv)} levels {sx['level_seconds_total']:.1f}"
                  f" s; session start-up {sx['startup_seconds']:.1f} s.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
