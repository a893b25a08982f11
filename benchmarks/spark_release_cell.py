"""The largest breadth-first cell of the release matrix on a Spark standalone cluster, beside the
in-process engine (issue #64, item 4: the choice of engine measured, and a release-matrix cell
run on the cluster with the in-process engine's result).

The cell: the release matrix's largest breadth-first cell by CPU seconds, as reports/data/
release-matrix.json records it (benchmarks/release_matrix.py; reports/zookeeper.md "One model per
release"), with its own flags: a row from a goal scenario first reaches the scenario's state by
its own search, on the driver, then searches from there on the engine. It runs twice, one after
the other, each as a user runs it (a child process):

- in-process, the default engine;
- `--engine spark --master spark://... --partitions 4` on a standalone cluster of two one-core
  workers with 1 GiB each on 127.0.0.1 (tests/support/spark_standalone.py, the tests' launcher,
  docs/spark.md).

The two must report the same distinct states, states, per-depth counts, stop reason and violations
(property and depth), or the script fails. CPU seconds: the child's own (`check_json`: the process
and the children it reaped; pyspark's driver JVM is not among them, so the driver's JVM is not
counted), and for the cluster also its executors', their JVMs and the Python workers under them
(user+system, reaped children included, read from /proc twice a second while the job runs; the
last reading of each executor counts). Wall seconds from start to exit, the
cluster's start not included.

    python benchmarks/spark_release_cell.py [--write]      # about 30 wall minutes here
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # support.spark_standalone, the tests' launcher

from benchmarks.common import (REPORT, TITLE, check_json, commit, counts,  # noqa: E402
                               cpu_model, logical_cpus, write_section)

HEADING = "## The largest release-matrix cell on the Spark standalone cluster (issue #64)"
MATRIX = ROOT / "reports" / "data" / "release-matrix.json"


def largest_cell() -> str:
    """`--model M FLAGS` of the release matrix's breadth-first cell that took the most CPU."""
    import json

    cells = json.loads(MATRIX.read_text())
    key, d = max(((k, d) for k, d in cells.items() if "--strategy" not in d["flags"]),
                 key=lambda kd: kd[1]["cpu_seconds"])
    return f"--model {key.split('|')[0]} {d['flags']}"


CELL = largest_cell()
PARTITIONS = 4


def _ticks(pid: int) -> tuple[int, int]:
    """(parent pid, user+system ticks of `pid` and of its reaped children)."""
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return int(st[1]), sum(int(x) for x in st[11:15])


class ExecutorCpu(threading.Thread):
    """Samples the CPU of every executor JVM and its live descendants twice a second; `total()`
    is the sum of each executor tree's last reading."""

    def __init__(self):
        super().__init__(daemon=True)
        self.last: dict = {}
        self.done = threading.Event()

    def sample(self) -> None:
        from support.spark_standalone import executor_pids

        procs = {}
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    procs[int(p)] = _ticks(int(p))
                except (OSError, ValueError, IndexError):
                    continue
        children: dict = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        for root in executor_pids():
            todo, total = [root], 0
            while todo:
                pid = todo.pop()
                total += procs.get(pid, (0, 0))[1]
                todo.extend(children.get(pid, ()))
            self.last[root] = max(total, self.last.get(root, 0))

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.sample()

    def total(self) -> float:
        return sum(self.last.values()) / os.sysconf("SC_CLK_TCK")


def run(flags: list[str]) -> dict:
    return check_json([sys.executable, "-m", "zabmc", "check", *CELL.split(), *flags, "--json",
                       "-q", "--trace-out", os.devnull], cwd=ROOT,
                      env=dict(os.environ, PYTHONPATH=str(ROOT)))


def on_cluster() -> dict:
    from support.spark_standalone import standalone_cluster

    # the executors' Python (started by the workers, which inherit this environment, in their
    # own work directories) must import this tree's zabmc and models, not an installed copy
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    with standalone_cluster(workers=2, cores=1, memory="1g") as url:
        sampler = ExecutorCpu()
        sampler.start()
        d = run(["--engine", "spark", "--master", url, "--partitions", str(PARTITIONS)])
        sampler.sample()
        sampler.done.set()
        sampler.join()
    d["executor_cpu_seconds"] = sampler.total()
    return d


def section(local: dict, cluster: dict) -> str:
    v = local["violations"][0] if local["violations"] else None
    found = f"`{v['property']}` at depth {v['depth']}" if v else "no violation"
    ex = cluster["executor_cpu_seconds"]
    return "\n".join([
        HEADING, "",
        f"Produced by `python benchmarks/spark_release_cell.py --write` on "
        f"{datetime.date.today()}, commit `{commit()}`, {cpu_model()}, {logical_cpus()} logical "
        "CPUs, shared with other jobs. The release matrix's largest breadth-first cell (by its "
        "CPU seconds in reports/data/release-matrix.json; a goal scenario's own search to its "
        "start runs on the driver, in both runs), "
        f"`zabmc check {CELL}` (reports/zookeeper.md, \"One model per release\"), run in-process "
        f"and with `--engine spark --partitions {PARTITIONS}` on a standalone cluster of two "
        "one-core workers of 1 GiB on 127.0.0.1 (tests/support/spark_standalone.py, "
        "docs/spark.md), one after the other. **The same result**: "
        f"{local['distinct_states']:,} distinct states, {local['states']:,} states, the same "
        f"per-depth counts and stop reason ({local['stop_reason']}), {found} (the script fails "
        "otherwise).", "",
        "| engine | wall s | CPU s, the zabmc process | CPU s, executors | peak RSS MiB, the "
        "zabmc process |",
        "|---|---:|---:|---:|---:|",
        f"| in-process | {local['wall_seconds']:.1f} | {local['cpu_seconds']:.1f} | - | "
        f"{local['max_rss_mib']:,.0f} |",
        f"| Spark standalone, 2 workers | {cluster['wall_seconds']:.1f} | "
        f"{cluster['cpu_seconds']:.1f} | {ex:.1f} | {cluster['max_rss_mib']:,.0f} |", "",
        "The zabmc process's CPU is its own and its reaped children's (for Spark, the driver's "
        "Python; its JVM, which the process does not reap, is not counted), as is its peak RSS; "
        "the executors' CPU is read from /proc twice a second while the job runs "
        f"(their JVMs and Python workers). {verdict(local, cluster)}", ""])


def verdict(local: dict, cluster: dict) -> str:
    """Which engine this cell wants, from the two runs' wall and CPU seconds."""
    wall = cluster["wall_seconds"] / local["wall_seconds"]
    cpu = (cluster["cpu_seconds"] + cluster["executor_cpu_seconds"]) / local["cpu_seconds"]
    if wall > 1:
        return (f"The cluster took {wall:.2f}x the in-process engine's wall time and at least "
                f"{cpu:.2f}x its CPU: on a space of this size the in-process engine is the one to use (the "
                "release matrix runs it); the cluster is for spaces one machine's memory does not "
                "hold (reports/spark.md).")
    return (f"The cluster took {wall:.2f}x the in-process engine's wall time and at least "
            f"{cpu:.2f}x its CPU (the driver's JVM not counted).")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="put the section in reports/benchmarks.md")
    a = ap.parse_args(argv)
    local = run([])
    print(f"in-process: {local['distinct_states']:,} states, {local['wall_seconds']:.1f} wall s",
          file=sys.stderr, flush=True)
    cluster = on_cluster()
    print(f"cluster: {cluster['distinct_states']:,} states, {cluster['wall_seconds']:.1f} wall s",
          file=sys.stderr, flush=True)
    if counts(local) != counts(cluster):
        raise SystemExit(f"the engines differ: in-process {counts(local)[:2]} {counts(local)[3:]}, "
                         f"cluster {counts(cluster)[:2]} {counts(cluster)[3:]}")
    write_section(REPORT if a.write else None, HEADING, section(local, cluster), TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
