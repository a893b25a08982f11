"""Issue #64's targets beside TLC on Remix's own specifications, side by side in one run.

Remix (Ouyang et al., EuroSys 2025) found ZOOKEEPER-4643 with TLC on MSPEC_2 and ZOOKEEPER-4646
on MSPEC_3, specifications of its own (the public repository Disalg-ICS-NJU/zookeeper-tla-spec,
low-level-spec/mixed-spec/mixed_v2/MSPEC_2.tla and mixed_v3/MSPEC_3.tla; nothing of them is in this
repository: `--remix DIR` names a checkout the user provides). Both start where Remix's searches
start (`SetInitState`: epoch 1 established, 1.1 committed, 1.2 in flight), prune the faults that
change nothing (their `recorder.noExecute`) and are checked here as Remix checks them: three
servers, symmetric, histories of two transactions (no client request after the start), no
partition, and the fewest crashes and failures of a non-looking server that reach each bug
(`TLC_BOUNDS`: 3 crashes, 2 such failures; `ISSUE_BOUNDS`, 3 and 3, are the issue's own run, whose
71,555 and 53,830 distinct states TLC reproduces), only `leaderLogCompleteness` as invariant, TLC
2.15 with one worker. This script writes the TLC model (a module that extends the spec and names
the servers, the bounds, the symmetry and that one invariant, and its .cfg) into a temporary
directory.

zabmc runs its fastest honest search for each bug from the same start, the scenario
`remix-epoch1` (models/zk/scenarios, `zabmc models --scenarios`), breadth-first so that the run it
finds is the shortest, with Remix's invariant (`--invariant leader-log-completeness`) and the
fewest faults that reach it (`ZABMC`): for 4643 at MSPEC_2's grain, where its run is the shortest
(`zk-3.8.0-mspec2`, models/zk/mspec2.py, registered by benchmarks/remix_grain.py's child), for 4646
on `zk` (3.8.0). Each run's counterexample is checked to be the bug's (`shape`, `tlc_shape`).

Each search is a child process; its CPU seconds are its own (user+system, the JVM's every thread
included, from `os.wait4`). The runs go in `alternating` order, `--rounds` times; the report takes
the median CPU of each and the ratio zabmc / TLC, against the target of at most 1/3.

    python benchmarks/remix_targets.py --remix DIR [--rounds 2] [--write]   # ~2 CPU min a round
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import (REPORT, TITLE, alternating, check_json, commit,  # noqa: E402
                               cpu_model, logical_cpus, write_section)
from benchmarks.tlc_bench import JVM, Missing, find_jar, find_java, run_usage  # noqa: E402

HEADING = "## Targets of issue #64 (beside TLC on Remix's specifications)"
TARGET = 1 / 3
MIXED = "low-level-spec/mixed-spec"
#: bug -> Remix's module, its path in the checkout, the issue's TLC figure (CPU s, distinct)
SPECS = {
    "ZOOKEEPER-4643": ("MSPEC_2", f"{MIXED}/mixed_v2/MSPEC_2.tla", (53.9, 71_555)),
    "ZOOKEEPER-4646": ("MSPEC_3", f"{MIXED}/mixed_v3/MSPEC_3.tla", (41.5, 53_830)),
}
#: the sha256 of the specification files measured, by bug (filled by `measure`), and those of the
#: files this report was made with: Remix's repository as the public code index holds it at its
#: commit 2b1ded0 (a snapshot fetched on 2026-11-29 lacked low-level-spec/mixed-spec/mixed_v2, v3)
DIGESTS: dict = {}
KNOWN = {"ZOOKEEPER-4643": "3bdd1f2d85e530c33c73c4555e4dc3b4d48bcb3f49ff63778c987cbf245f989b",
         "ZOOKEEPER-4646": "3453aee26b44d19e0d28119fa5af269b65876aafd55ced50358f00649236022f"}
#: Remix's `Parameters`: the smallest that reach each bug (MaxTimeoutFailures counts the crashes
#: of servers that are not looking, MaxCrashes every crash, both as "fewer than"; two failures
#: and three crashes is what both runs need; MaxEpoch is read by no action)
TLC_BOUNDS = dict(MaxTimeoutFailures=2, MaxTransactionNum=2, MaxEpoch=3, MaxCrashes=3,
                  MaxPartitions=0)
#: the bounds of the issue's TLC figures (one failure more)
ISSUE_BOUNDS = dict(TLC_BOUNDS, MaxTimeoutFailures=3)
#: bug -> zabmc's model and search flags (from Remix's start; no proposal after it, as Remix's
#: two transactions; two crashes and no timeout reach each bug soonest; the depth is not reached)
ZABMC = {
    "ZOOKEEPER-4643": ("zk-3.8.0-mspec2", "--scenario remix-epoch1 --proposals 0 --max-timeouts 0 "
                       "--max-crashes 2 --depth 30 --invariant leader-log-completeness"),
    "ZOOKEEPER-4646": ("zk", "--scenario remix-epoch1 --proposals 0 --max-timeouts 0 "
                       "--max-crashes 2 --depth 30 --invariant leader-log-completeness"),
}
CONSTANTS = ("LOOKING", "FOLLOWING", "LEADING", "ELECTION", "DISCOVERY", "SYNCHRONIZATION",
             "BROADCAST", "INITIAL", "RUNNING", "SHUTDOWN", "FOLLOWERINFO", "LEADERINFO",
             "ACKEPOCH", "NEWLEADER", "ACKLD", "UPTODATE", "PROPOSAL", "ACK", "COMMIT", "TRUNC",
             "DIFF", "NullPoint", "ONLINE", "OFFLINE")


def mc_module(spec: str, bounds: dict) -> str:
    """The TLC model of `spec` (written here, not Remix's): three symmetric servers, `bounds` as
    Remix's `Parameters`, and its after-action flag `leaderLogCompleteness` as the invariant."""
    params = ", ".join(f"{k} |-> {int(v)}" for k, v in bounds.items())
    return "\n".join([
        "---- MODULE MC ----", f"EXTENDS {spec}", "CONSTANTS s1, s2, s3",
        "MCServer == {s1, s2, s3}", f"MCParameters == [{params}]",
        "MCSymmetry == Permutations(MCServer)",
        'LeaderLogCompletenessInv == aaInv["leaderLogCompleteness"]', "====", ""])


def mc_cfg() -> str:
    lines = ["\\* generated by benchmarks/remix_targets.py", "CONSTANTS"]
    lines += [f"    {s} = {s}" for s in ("s1", "s2", "s3", *CONSTANTS)]
    lines += ["    Server <- MCServer", "    Parameters <- MCParameters",
              "SPECIFICATION Spec", "SYMMETRY MCSymmetry", "INVARIANT LeaderLogCompletenessInv"]
    return "\n".join(lines + [""])


def run_tlc(remix: Path, bug: str, bounds: dict) -> dict:
    """TLC, one worker, on Remix's spec of `bug` with `bounds`, to the first violation of
    leaderLogCompleteness: distinct states, states generated, the depth (TLC's, the initial state
    and `SetInitState` included), CPU and wall seconds, the run's actions."""
    spec, path, _ = SPECS[bug]
    java, jar = find_java(), find_jar()
    with tempfile.TemporaryDirectory(prefix="zabmc-remix-tlc-") as tmp:
        d = Path(tmp)
        (d / f"{spec}.tla").write_bytes((remix / path).read_bytes())
        (d / "MC.tla").write_text(mc_module(spec, bounds))
        (d / "MC.cfg").write_text(mc_cfg())
        (d / "java-tmp").mkdir()  # TLC's standard modules, one copy a run (tlc_bench.run_tlc)
        cmd = [java, *JVM, f"-Djava.io.tmpdir={d / 'java-tmp'}", "-cp", str(jar), "tlc2.TLC",
               "-workers", "1", "-deadlock", "-metadir", str(d / "states"), "-config", "MC.cfg",
               "MC"]
        rc, ru, wall = run_usage(cmd, d, d / "tlc.out")
        text = (d / "tlc.out").read_text(errors="replace")
    m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", text)
    if "Invariant LeaderLogCompletenessInv is violated" not in text or m is None:
        raise SystemExit(f"TLC on {spec} found no violation (exit {rc}):\n{text[-2000:]}")
    depth = re.search(r"depth of the complete state graph search is (\d+)", text)
    version = re.search(r"TLC2 Version (\S+)", text)
    actions = re.findall(r'pc \|->\s*<<\s*"(\w+)"(?:,\s*(\w+))?', text)
    return {"distinct": int(m.group(2).replace(",", "")),
            "generated": int(m.group(1).replace(",", "")),
            "depth": int(depth.group(1)) if depth else None,
            "events": len(actions) - 2,  # the trace's actions after Init and SetInitState
            "cpu_seconds": ru.ru_utime + ru.ru_stime, "wall_seconds": wall,
            "actions": actions,
            "version": version.group(1) if version else "unknown"}


def tlc_shape(bug: str, actions: list) -> bool:
    """Whether TLC's run is `bug`'s: a follower's currentEpoch written (MSPEC_2's
    FollowerProcessNEWLEADER) and a crash before its AfterCurrentEpochUpdated step, for 4643; a
    follower's NEWLEADER acknowledged (MSPEC_3's AfterCurrentEpochUpdated) and a crash before its
    SyncProcessor logged the proposals, for 4646."""
    open_, close = (("FollowerProcessNEWLEADER", "FollowerProcessNEWLEADERAfterCurrentEpochUpdated")
                    if bug == "ZOOKEEPER-4643" else
                    ("FollowerProcessNEWLEADERAfterCurrentEpochUpdated",
                     "FollowerSyncProcessorLogRequest"))
    pending = set()
    for name, node in actions:
        if name == open_:
            pending.add(node)
        elif name == close:
            pending.discard(node)
        elif name == "NodeCrash" and node in pending:
            return True
    return False


def run_zabmc(bug: str, trace: str) -> dict:
    """zabmc's search for `bug` (`ZABMC`) in a child process (`check_json`); `zk-3.8.0-mspec2` is
    registered by benchmarks/remix_grain.py's child."""
    model, flags = ZABMC[bug]
    head = ([str(ROOT / "benchmarks" / "remix_grain.py"), "--child"]
            if model == "zk-3.8.0-mspec2" else ["-m", "zabmc"])
    args = [sys.executable, *head, "check", "--model", model, *flags.split(), "--json", "-q",
            "--trace-out", trace]
    return check_json(args, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def shape(trace: dict) -> str | None:
    """Which bug zabmc's run is, read from its events: the server elected last (the leader without
    the committed transaction) crashed after a NEWLEADER of the epoch before; 4646's if it had sent
    that NEWLEADER's ACK (in the same step on `zk`, the `newleader` action at MSPEC_2's grain),
    4643's if not."""
    events, states = trace["events"], trace["states"]
    last = events[-1]
    if last["kind"] != "action" or last["action"][0] != "elect":
        return None
    node = last["action"][1]
    crash = max((k for k, e in enumerate(events) if e["kind"] == "crash" and e["node"] == node),
                default=None)
    told = [k for k, e in enumerate(events[:crash] if crash else ()) if e["kind"] == "deliver"
            and e["dst"] == node and e["msg"]["type"] == "NEWLEADER"]
    if not told:
        return None
    k = told[-1]
    acked = any(e["kind"] == "action" and e["action"] == ["newleader", node]
                for e in events[k:crash])
    acked = acked or any(q["src"] == node and any(m["type"] == "ACK-NEWLEADER" for m in q["msgs"])
                         for q in states[k + 1]["network"])
    return "ZOOKEEPER-4646" if acked else "ZOOKEEPER-4643"


def one(name: str, remix: Path, tmp: str) -> dict:
    """One run of the side-by-side: `tlc BUG`, `tlc-issue BUG` or `zabmc BUG`."""
    kind, bug = name.split(" ")
    if kind != "zabmc":
        r = run_tlc(remix, bug, TLC_BOUNDS if kind == "tlc" else ISSUE_BOUNDS)
        if not tlc_shape(bug, r.pop("actions")):
            raise SystemExit(f"TLC's run on {SPECS[bug][0]} is not {bug}'s")
        return r
    trace = os.path.join(tmp, f"{bug}.trace.json")
    d = run_zabmc(bug, trace)
    with open(trace) as f:
        got = shape(json.load(f))
    if not d["violations"] or got != bug:
        raise SystemExit(f"zabmc's run for {bug} is {got}'s")
    v = d["violations"][0]
    return {"distinct": d["distinct_states"], "generated": d["states"],
            "depth": v["depth"], "events": v["depth"], "property": v["property"],
            "cpu_seconds": d["cpu_seconds"], "wall_seconds": d["wall_seconds"]}


def measure(remix: Path, rounds: int, issue_bounds: bool) -> dict:
    kinds = ("tlc", "tlc-issue", "zabmc") if issue_bounds else ("tlc", "zabmc")
    names = [f"{k} {bug}" for bug in SPECS for k in kinds]
    got: dict = {n: [] for n in names}
    for bug, (_, path, _) in SPECS.items():
        DIGESTS[bug] = hashlib.sha256((remix / path).read_bytes()).hexdigest()
    with tempfile.TemporaryDirectory(prefix="zabmc-remix-") as tmp:
        for name in alternating(names, rounds):
            d = one(name, remix, tmp)
            if got[name] and got[name][0]["distinct"] != d["distinct"]:
                raise SystemExit(f"{name}: {d['distinct']:,} distinct states, "
                                 f"{got[name][0]['distinct']:,} before")
            got[name].append(d)
            print(f"{name}: {d['distinct']:,} distinct, depth {d['depth']}, "
                  f"{d['cpu_seconds']:.1f} CPU s, {d['wall_seconds']:.1f} wall s",
                  file=sys.stderr, flush=True)
    return got


def cpu(runs: list) -> float:
    return statistics.median(d["cpu_seconds"] for d in runs)


def rows(got: dict) -> list[str]:
    out = []
    for name, runs in got.items():
        kind, bug = name.split(" ")
        d = runs[0]
        who = {"tlc": f"TLC on {SPECS[bug][0]}, the smallest bounds",
               "tlc-issue": f"TLC on {SPECS[bug][0]}, the issue's bounds",
               "zabmc": f"zabmc `{ZABMC[bug][0]}`"}[kind]
        depth = (f"{d['events']} actions after `SetInitState`" if kind != "zabmc"
                 else f"{d['events']} events after the scenario")
        each = ", ".join(f"{x['cpu_seconds']:.1f}" for x in runs)
        out.append(f"| {bug} | {who} | {d['distinct']:,} | {depth} | **{cpu(runs):.1f}** "
                   f"({each}) |")
    return out


def verdicts(got: dict) -> list[str]:
    lines = []
    for bug, (spec, _, (issue_cpu, issue_distinct)) in SPECS.items():
        z, t = cpu(got[f"zabmc {bug}"]), cpu(got[f"tlc {bug}"])
        ratio = z / t
        met = "**met**" if ratio <= TARGET else "**not met**"
        line = (f"- {bug} (TLC on {spec}, zabmc `{ZABMC[bug][0]}`, Remix's invariant): "
                f"{met}: zabmc {z:.1f} CPU s / TLC {t:.1f} CPU s = **{ratio:.2f}** "
                f"(target at most {TARGET:.2f}) at the smallest bounds TLC needs")
        if f"tlc-issue {bug}" in got:
            ti = cpu(got[f"tlc-issue {bug}"])
            line += (f"; {z / ti:.2f} beside TLC at the issue's bounds ({ti:.1f} CPU s here, "
                     f"{issue_cpu} in the issue)")
        lines.append(line + ".")
    return lines


#: issue #64's third target, the zab depth-40 search
ZAB = ("--model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 40 "
       "--reduction por --workers 2")
#: its latest measurement in reports/benchmarks.md, when this run does not measure it
ZAB_CITED = ("**met with `--reduction por --workers 2`; not met on one process**, cited, not "
             "measured in this run: `zabmc check --model zab --nodes 3 --proposals 2 "
             "--max-timeouts 1 --depth 40` with `--reduction por --workers 2` took **3.7 wall "
             "minutes** (222.4 s, 414.6 CPU s, 7,500,887 distinct states, stopped at the bound) "
             "at `8a79ced` on 2026-11-28, the latest run in this report (\"The reduced search on "
             "both cores\", benchmarks/reduced_workers_bench.py; \"Reach (issue #19)\" has the "
             "earlier runs, 7.1 minutes before zab's progress measure); one process with the "
             "reduction took 555.8 s (9.3 minutes) in the same run, and the command as the issue "
             "writes it, without the reduction, has no run to depth 40 in this report")


def measure_zab() -> str:
    """The zab depth-40 search once, `--reduction por --workers 2`, its wall time the target's."""
    d = check_json([sys.executable, "-m", "zabmc", "check", *ZAB.split(), "--json", "-q",
                    "--trace-out", os.devnull], cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    met = d["wall_seconds"] < 300 and not d["violations"]
    return (f"{'**met**' if met else '**not met**'} with `--reduction por --workers 2`: "
            f"`zabmc check {ZAB}` took **{d['wall_seconds'] / 60:.1f} wall minutes** "
            f"({d['wall_seconds']:.1f} s, {d['cpu_seconds']:.1f} CPU s), "
            f"{d['distinct_states']:,} distinct states, stopped: {d['stop_reason']}, in this run "
            f"(without the reduction the command has no run to depth 40 in this report)")


def specs_named() -> str:
    """The specification files measured, by their sha256, and where those came from if known."""
    files = ", ".join(f"{SPECS[b][1].rsplit('/', 1)[1]} sha256 {d[:16]}..."
                      for b, d in DIGESTS.items())
    if DIGESTS and DIGESTS == KNOWN:
        return (f"{files}: the files the public code index holds at that repository's commit "
                "2b1ded0, which a snapshot of it fetched on 2026-11-29 did not contain")
    return files


def section(got: dict, argv: list[str], zab: str) -> str:
    rounds = len(next(iter(got.values())))
    cmd = "python benchmarks/remix_targets.py " + " ".join(argv)
    tlc = next(d for n, r in got.items() if n.startswith("tlc") for d in r)
    bounds = ", ".join(f"{k} {v}" for k, v in TLC_BOUNDS.items())
    return "\n".join([
        HEADING, "",
        f"Produced by `{cmd}` on {datetime.date.today()}, commit `{commit()}`, {cpu_model()}, "
        f"{logical_cpus()} logical CPUs, shared with other jobs; {rounds} round(s), the runs in "
        "alternating order, each a child process, its CPU seconds its own (user+system; the "
        f"JVM's every thread). TLC {tlc['version']} (`-workers 1 -deadlock`, "
        "`-XX:+UseParallelGC`) checks Remix's MSPEC_2 (4643) and MSPEC_3 (4646) from the "
        "public repository Disalg-ICS-NJU/zookeeper-tla-spec (a checkout given by `--remix`; "
        "nothing of it is in this repository; " + specs_named()
        + "), with three symmetric servers, "
        f"`leaderLogCompleteness` its only invariant and the smallest `Parameters` that reach both bugs ({bounds})"
        + ("; the issue's own bounds (MaxTimeoutFailures 3) are measured beside them, where TLC "
           "reproduces the issue's 71,555 and 53,830 distinct states"
           if any(n.startswith("tlc-issue") for n in got) else "")
        + ". zabmc searches breadth-first with "
        "`--invariant leader-log-completeness` (Remix's) from the scenario `remix-epoch1`, the "
        "state Remix's `SetInitState` starts from (epoch 1 established, 1.1 committed, 1.2 in "
        "flight), so the run is the shortest from there: "
        f"`zabmc check --model {ZABMC['ZOOKEEPER-4643'][0]} {ZABMC['ZOOKEEPER-4643'][1]}` for "
        f"4643 (MSPEC_2's grain, models/zk/mspec2.py, which benchmarks/remix_grain.py "
        f"registers; it is where 4643's run is the shortest) and `zabmc check --model "
        f"{ZABMC['ZOOKEEPER-4646'][0]} {ZABMC['ZOOKEEPER-4646'][1]}` for 4646. Every run's "
        "counterexample is checked to be its bug's (a follower that wrote currentEpoch, and for "
        "4646 acknowledged NEWLEADER, crashes before the proposals are on its disk, and is "
        "elected without them).", "",
        "| bug | checker | distinct states | its run | CPU s, median (each run) |",
        "|---|---|---:|---|---:|", *rows(got), "",
        "The targets (zabmc's CPU at most a third of TLC's on Remix's specifications):", "",
        *verdicts(got),
        f"- the zab depth-40 search in under 5 minutes: {zab}.", "",
        "Where the difference comes from: both start from Remix's state, and that start is most "
        "of zabmc's speed. From the empty cluster (no scenario) zabmc's breadth-first search for "
        "the invariant took 944,312 states and 45.2 CPU s at MSPEC_2's grain (4643, `24ac1d0`, "
        "\"ZOOKEEPER-4643 at Remix's grain\") and 566,045 states and 23.5 CPU s on `zk` (4646, "
        "`4352bff`, \"Speed (issue #38)\"), with one timeout and one crash: more CPU than TLC "
        "takes here, so neither target would be met without the scenario. TLC's states are "
        "fewer for its symmetry over the three servers and Remix's pruning of faults that "
        "change nothing, neither of which zabmc does; its time a state is larger (the JVM's "
        "start included, and each action of Remix's specifications computes all ten of their "
        "after-action invariants, `UpdateAfterAction`, whichever one is checked).", ""])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--remix", required=True, type=Path, metavar="DIR",
                    help="a checkout of Disalg-ICS-NJU/zookeeper-tla-spec")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of every run [default: 2]")
    ap.add_argument("--no-issue-bounds", action="store_true",
                    help="leave out TLC at the issue's bounds (MaxTimeoutFailures 3)")
    ap.add_argument("--measure-zab", action="store_true",
                    help="run the zab depth-40 search once (--reduction por --workers 2; "
                         "about 8 wall minutes, both cores) instead of citing its last run")
    ap.add_argument("--write", action="store_true", help="put the section in reports/benchmarks.md")
    a = ap.parse_args(argv)
    missing = [p for _, p, _ in SPECS.values() if not (a.remix / p).is_file()]
    if missing or a.rounds < 1:
        print(f"remix_targets: {a.remix} has no {missing[0]}" if missing
              else "remix_targets: --rounds must be at least 1", file=sys.stderr)
        return 2
    try:
        find_java(), find_jar()
    except Missing as e:
        print(f"remix_targets: {e}", file=sys.stderr)
        return 2
    got = measure(a.remix.resolve(), a.rounds, not a.no_issue_bounds)
    zab = measure_zab() if a.measure_zab else ZAB_CITED
    shown = [x for x in argv if x != "--write"]
    shown = ["DIR" if x == str(a.remix) else x for x in shown]
    write_section(REPORT if a.write else None, HEADING, section(got, shown, zab), TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
