"""What partial-order reduction buys, and a check that it changes no verdict (issue #19).

Writes three sections:
- reports/benchmarks.md, "Finding each db-19 bug": the CPU seconds each finding of
  reports/db19-findings.md takes with its own search, with and without the reduction.
- reports/benchmarks.md, "Partial-order reduction": `zabmc check` without and with
  `--reduction por` on each space below, each a fresh process, alternating which runs first.
  It records distinct states, transitions, depth, CPU seconds of the whole process and peak RSS.
  The script fails unless both runs of a space report the same verdict and violated properties.
- reports/verification.md, "Partial-order reduction: every mutant": every generated mutant of
  models/zab/handlers.py and models/db19/handlers.py (`zabmc mutate --model M`), and the
  unmutated models, explored with and without the reduction on three small spaces each. Each comparison is between exhausted spaces,
  with every default property checked and `--all`. A mutant whose violated properties differ is
  listed, and the script then exits 1.

    python benchmarks/reduction_report.py --write            # every section (about 30 minutes)
    python benchmarks/reduction_report.py --only findings --write
    python benchmarks/reduction_report.py --only spaces --write
    python benchmarks/reduction_report.py --only mutants --write
    python benchmarks/reduction_report.py --only speed --against REF [--depth 30] --write

`--only speed` (issue #38) writes "Partial-order reduction: speed": `zabmc check` on issue #19's
three-node space (`SPEED_SPACE`) to a depth bound, without and with the reduction, from this
tree and from commit REF (extracted with `git archive`) in the same run: fresh processes,
alternating which tree goes first, CPU seconds of each child process. Both trees must report the
same distinct states, transitions and per-depth counts, or the script stops.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (REPORT, ROOT, TITLE, check_json, commit, cpu_model,  # noqa: E402
                               ref_tree, update_section)

VERIFICATION = ROOT / "reports" / "verification.md"
V_TITLE = "# Verification statistics: the zab model"

#: (model, zabmc check flags) of each space; every one is exhausted (the depth bound is never
#: reached) so that the two verdicts are comparable
SPACES = [
    ("zab", "--nodes 3 --proposals 2"),
    ("zab-omega", "--nodes 3 --proposals 2"),
    ("zab", "--nodes 2 --proposals 2 --max-timeouts 3 --max-drops 2 --max-heartbeats 2"),
    ("zab", "--nodes 3 --proposals 1 --max-timeouts 1"),
    ("zab-omega", "--nodes 3 --proposals 1 --max-timeouts 1"),
    ("zab", "--nodes 3 --proposals 3"),
    ("zab", "--nodes 3 --proposals 1 --max-drops 1"),
    ("zab", "--nodes 3 --proposals 1 --max-crashes 1"),
    ("zab", "--nodes 2 --proposals 2 --max-timeouts 1 --max-drops 1 --max-heartbeats 1 "
            "--max-crashes 2"),
    ("db19", "--nodes 2 --proposals 3 --max-timeouts 2 --max-drops 2 --max-heartbeats 2"),
]

#: per model, the small spaces every mutant of its handlers is compared on (db-19's three-node
#: spaces are too large for a mutant a minute)
MUTANT_SPACES = {
    "zab": [dict(nodes=2, proposals=2, max_timeouts=1, max_drops=1, max_heartbeats=1),
            dict(nodes=3, proposals=1),
            dict(nodes=2, proposals=2, max_timeouts=1, max_crashes=1)],
    "db19": [dict(nodes=2, proposals=2, max_timeouts=1, max_drops=1, max_heartbeats=1),
             dict(nodes=2, proposals=2, max_timeouts=1, max_crashes=1),
             dict(nodes=2, proposals=2, max_timeouts=2)],
}
#: zk's mutants (`--only zk-mutants`), on spaces small enough for 316 mutants, with every
#: property of the `always` kind (zk's failures, sync-exception and the others, are not defaults)
ZK_MUTANT_SPACES = [dict(nodes=3, proposals=1),
                    dict(nodes=2, proposals=2, max_timeouts=1)]
#: the zk searches of `--only zk` (issue #38): each stops at its first violation, the findings of
#: reports/zookeeper.md (ZOOKEEPER-3911 in zk-pre3911, ZOOKEEPER-4643 in zk)
ZK_SPACES = [("zk-pre3911", "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1"),
             ("zk", "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1")]
MUTANT_TIME_LIMIT = 60.0
ZK_MUTANT_TIME_LIMIT = 15.0  # zk's: 316 mutants on a shared two-core machine  # seconds a mutant's search may take before it counts as not compared


def check(model: str, flags: str, por: bool) -> dict:
    """One `zabmc check` in a fresh process: its JSON summary, CPU seconds and peak RSS."""
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, "--network", "fifo",
            *flags.split(), "--depth", "1000", "--all", "--json", "-q",
            "--trace-out", "/dev/null"]
    if por:
        args += ["--reduction", "por"]
    d = check_json(args, cwd=ROOT, what=" ".join(args[2:]))
    d["cpu"] = d["cpu_seconds"]
    return d


def verdict(d: dict) -> tuple:
    return d["stop_reason"], tuple(sorted({v["property"] for v in d["violations"]}))


def spaces(log) -> list[dict]:
    rows = []
    for k, (model, flags) in enumerate(SPACES):
        order = (False, True) if k % 2 == 0 else (True, False)
        got = {}
        for por in order:
            log(f"{model} {flags} {'--reduction por' if por else ''}")
            got[por] = check(model, flags, por)
        a, b = got[False], got[True]
        if a["stop_reason"] != "exhausted" or verdict(a) != verdict(b):
            raise SystemExit(f"{model} {flags}: verdicts differ or the space was not exhausted: "
                             f"{verdict(a)} without, {verdict(b)} with the reduction")
        rows.append({"model": model, "flags": flags, "none": a, "por": b})
    return rows


def render_spaces(rows: list[dict], seconds: float) -> str:
    now = datetime.date.today().isoformat()
    out = [
        "## Partial-order reduction", "",
        f"Produced by `python benchmarks/reduction_report.py --only spaces --write` on {now}, "
        f"commit `{commit()}`, {cpu_model()}; do not edit by hand. Each space is run with "
        "`zabmc check --network fifo --depth 1000 --all` and every default property. It is run "
        "twice, in fresh processes: once without and once with `--reduction por` "
        "(docs/reduction.md), alternating which goes first. CPU seconds are those of the whole "
        "process. Every space is exhausted, and both runs report the same verdict and violated "
        "properties; the script fails otherwise. The machine was shared with other jobs, so read "
        "the ratios, not the seconds.", "",
        "| model | bounds | distinct (none / por) | states ratio | transitions (none / por) | "
        "depth (none / por) | CPU s (none / por) | CPU ratio | peak RSS MiB (none / por) | "
        "verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        a, b = r["none"], r["por"]
        v = verdict(a)[1]
        red = b.get("reduction", {})
        part = red.get("states_reduced", 0)
        out.append(
            f"| `{r['model']}` | `{r['flags']}` | {a['distinct_states']:,} / {b['distinct_states']:,}"
            f" | {a['distinct_states'] / b['distinct_states']:.2f}x | {a['states']:,} / "
            f"{b['states']:,} | {a['depth_reached']} / {b['depth_reached']} | {a['cpu']:.1f} / "
            f"{b['cpu']:.1f} | {a['cpu'] / max(b['cpu'], 1e-9):.2f}x | "
            f"{a['memory']['peak_rss_bytes'] / 2**20:,.0f} / "
            f"{b['memory']['peak_rss_bytes'] / 2**20:,.0f} | "
            f"{', '.join(v) if v else 'no violation'}; {part:,} states expanded in part |")
    out += ["", f"The whole comparison took {seconds / 60:.1f} minutes.", "",
            "Where it reduces little, and why (docs/reduction.md): a state with crashes left in "
            "the budget is expanded fully, and while proposals are left, commits are not "
            "reordered and the node a proposal is enabled at acts in full expansions only. With "
            "two nodes, the set of nodes can leave one out only when the other's link into it "
            "is non-empty, and most such states go back to their own level, so the proviso "
            "expands them fully after all. There the reduction costs more CPU a state (choosing "
            "the set, the proviso's bookkeeping) than the states it saves: a CPU ratio below 1. "
            "It pays on three nodes, where independent deliveries to different followers "
            "abound.", ""]
    return "\n".join(out)


#: issue #19's depth-40 target space (reports/benchmarks.md, "Reach"), run to a smaller depth
SPEED_SPACE = ("zab", "--nodes 3 --proposals 2 --max-timeouts 1")


def tree_check(tree: Path, model: str, flags: str, depth: int, reduction: str) -> dict:
    """`zabmc check` of one space run from `tree` in a fresh process; its summary and CPU s."""
    args = [sys.executable, "-c", "from zabmc.cli import main; main()", "check", "--model", model,
            "--network", "fifo", *flags.split(), "--depth", str(depth), "--reduction", reduction,
            "--json", "-q", "--trace-out", os.devnull]
    return check_json(args, cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                      what=f"zabmc check --reduction {reduction} in {tree}")


def speed(log, ref: str, depth: int, reductions=("none", "por")) -> dict:
    """This tree's and commit `ref`'s `zabmc check SPEED_SPACE --depth DEPTH`, once each per
    reduction, alternating the order; the counts of the two trees must agree."""
    model, flags = SPEED_SPACE
    rows = []
    with ref_tree(ref) as tmp:
        trees = [(ref, tmp), ("this tree", ROOT)]
        for k, reduction in enumerate(reductions):
            got = {}
            for name, tree in (trees if k % 2 == 0 else trees[::-1]):
                log(f"{name}: --reduction {reduction} --depth {depth}")
                got[name] = d = tree_check(tree, model, flags, depth, reduction)
                log(f"  {d['distinct_states']:,} distinct, {d['states']:,} transitions, "
                    f"CPU {d['cpu_seconds']:.1f} s")
            a, b = got[ref], got["this tree"]
            for key in ("distinct_states", "states", "per_depth", "stop_reason"):
                if a[key] != b[key]:
                    raise SystemExit(f"--reduction {reduction}: {key} differs: {a[key]} at "
                                     f"{ref}, {b[key]} in this tree")
            rows.append({"reduction": reduction, "base": a, "new": b})
        log(f"this tree: --reduction por+sleep --depth {depth}")
        d = tree_check(ROOT, model, flags, depth, "por+sleep")
        por = next(r["new"] for r in rows if r["reduction"] == "por")
        asleep = d["reduction"]["transitions_asleep"]
        if (d["distinct_states"], d["per_depth"], d["states"] + asleep) != \
                (por["distinct_states"], por["per_depth"], por["states"]):
            raise SystemExit("--reduction por+sleep: not the states of --reduction por, or "
                             "transitions built + asleep differ from its transitions")
        sleep = {"reduction": "por+sleep", "new": d, "asleep": asleep}
    return {"ref": ref, "depth": depth, "rows": rows, "sleep": sleep}


def render_speed(res: dict, seconds: float) -> str:
    now = datetime.date.today().isoformat()
    model, flags = SPEED_SPACE
    ref, depth = res["ref"], res["depth"]
    out = [
        "## Partial-order reduction: speed", "",
        f"Produced by `python benchmarks/reduction_report.py --only speed --against {ref} "
        f"--depth {depth} --write` on {now}, commit `{commit()}`, {cpu_model()}, in "
        f"{seconds / 60:.1f} minutes; do not edit by hand. `zabmc check --model {model} "
        f"--network fifo {flags} --depth {depth}` (issue #19's depth-40 space, to depth "
        f"{depth}: not exhausted), run from commit `{ref}` and from this tree, each in a fresh "
        "process, alternating which tree goes first. Both trees report the same distinct states, "
        "transitions and per-depth counts; the script fails otherwise. CPU seconds are those of "
        "the whole process, one run each; the machine was shared, so read the ratios.", "",
        (f"| reduction | distinct | transitions | CPU s (`{ref}` / this tree) | speed-up | "
         f"peak RSS MiB (`{ref}` / this tree) |"),
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in res["rows"]:
        a, b = r["base"], r["new"]
        out.append(f"| `{r['reduction']}` | {b['distinct_states']:,} | {b['states']:,} | "
                   f"{a['cpu_seconds']:.1f} / {b['cpu_seconds']:.1f} | "
                   f"{a['cpu_seconds'] / max(b['cpu_seconds'], 1e-9):.2f}x | "
                   f"{a['memory']['peak_rss_bytes'] / 2**20:,.0f} / "
                   f"{b['memory']['peak_rss_bytes'] / 2**20:,.0f} |")
    sl = res["sleep"]
    d = sl["new"]
    por = next(r["new"] for r in res["rows"] if r["reduction"] == "por")
    out += ["", f"`--reduction por+sleep` (sleep sets; this tree only, `{ref}` has none): "
            f"{d['distinct_states']:,} distinct states, the states of `--reduction por` level by "
            f"level (checked), {d['states']:,} transitions built and {sl['asleep']:,} asleep "
            f"({sl['asleep'] / por['states']:.0%} of `por`'s {por['states']:,}); "
            f"CPU {d['cpu_seconds']:.1f} s against `por`'s {por['cpu_seconds']:.1f} s in this tree "
            f"({por['cpu_seconds'] / max(d['cpu_seconds'], 1e-9):.2f}x), peak RSS "
            f"{d['memory']['peak_rss_bytes'] / 2**20:,.0f} MiB.", ""]
    return "\n".join(out)


def findings(log) -> list[dict]:
    """Each db-19 finding's own search (reports/db19-findings.md), CPU seconds until it has its
    counterexample; the breadth-first ones on FIFO links again with the reduction."""
    from zabmc.report.findings import FINDINGS, finding_spec

    rows = []
    for f in FINDINGS:
        row = {"id": f.id, "strategy": f.strategy, "network": f.config["network"]}
        for por in (False, True):
            if por and (f.strategy != "bfs" or f.config["network"] != "fifo"):
                continue
            log(f"{f.id} {'por' if por else ''}")
            spec = finding_spec(f).replace(reduction="por" if por else "none")
            prepared = spec.validate().prepare()
            t = time.process_time()
            o = prepared.run()
            cpu = time.process_time() - t
            found = next((x for x in o.violations if x.violation.property == f.prop), None)
            if found is None:
                raise SystemExit(f"{f.id}: {f.prop} not found{' with --reduction por' * por}")
            row["por" if por else "none"] = {"cpu": cpu, "depth": found.depth,
                                             "distinct": o.distinct}
        rows.append(row)
    return rows


def render_findings(rows: list[dict]) -> str:
    now = datetime.date.today().isoformat()
    out = ["## Finding each db-19 bug", "",
           f"Produced by `python benchmarks/reduction_report.py --only findings --write` on {now}, "
           f"commit `{commit()}`, {cpu_model()}; do not edit by hand. Each finding of "
           "reports/db19-findings.md is looked for with its own search: breadth first, or the "
           "seeded random walks it was found with. The CPU seconds are those of the search, in "
           "one process, until it has the finding's property. The breadth-first searches on FIFO "
           "links run again with `--reduction por`, which may return a longer counterexample "
           "(docs/reduction.md). Issue #19's target is at most 5 CPU seconds for each finding.", "",
           "| finding | search | network | CPU s | depth | distinct states | with `--reduction por`: "
           "CPU s, depth, distinct |",
           "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        a, b = r["none"], r.get("por")
        por = f"{b['cpu']:.2f}, {b['depth']}, {b['distinct']:,}" if b else "n/a"
        out.append(f"| {r['id']} | {r['strategy']} | {r['network']} | {a['cpu']:.2f} | "
                   f"{a['depth']} | {a['distinct']:,} | {por} |")
    worst = max(r["none"]["cpu"] for r in rows)
    out += ["", f"The slowest takes {worst:.2f} CPU seconds.", ""]
    return "\n".join(out)


def zk_spaces(log, depth: int) -> list[dict]:
    """`ZK_SPACES` to `depth`, stopping at the first violation, without and with the reduction
    (fresh processes, alternating which goes first)."""
    rows = []
    for k, (model, flags) in enumerate(ZK_SPACES):
        got = {}
        for red in (("none", "por") if k % 2 == 0 else ("por", "none")):
            log(f"{model} {flags} --depth {depth} --reduction {red}")
            got[red] = d = tree_check(ROOT, model, flags, depth, red)
            log(f"  {d['distinct_states']:,} distinct, CPU {d['cpu_seconds']:.1f} s, "
                f"{d['stop_reason']}")
        rows.append({"model": model, "flags": flags, "none": got["none"], "por": got["por"]})
    return rows


def _first(d: dict) -> str:
    if not d["violations"]:
        return f"none ({d['stop_reason']})"
    v = d["violations"][0]
    return f"{v['property']} at depth {v['depth']}"


def render_zk(rows: list[dict], depth: int, seconds: float) -> str:
    now = datetime.date.today().isoformat()
    out = [
        "## Partial-order reduction: zk", "",
        f"Produced by `python benchmarks/reduction_report.py --only zk --depth {depth} --write` "
        f"on {now}, commit `{commit()}`, {cpu_model()}, in {seconds / 60:.1f} minutes; do not "
        f"edit by hand. `zabmc check --network fifo ... --depth {depth}`, stopping at the first "
        "violation, without and with `--reduction por` (docs/reduction.md, \"Models with actions "
        "of their own\"), each in a fresh process, alternating which goes first. CPU seconds are "
        "those of the whole process, one run each; the machine was shared, so read the ratios.",
        "",
        "| model | bounds | distinct (none / por) | transitions (none / por) | CPU s (none / por) "
        "| CPU ratio | peak RSS MiB (none / por) | first violation (none / por) | states expanded "
        "in part |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        a, b = r["none"], r["por"]
        out.append(
            f"| `{r['model']}` | `{r['flags']}` | {a['distinct_states']:,} / "
            f"{b['distinct_states']:,} | {a['states']:,} / {b['states']:,} | "
            f"{a['cpu_seconds']:.1f} / {b['cpu_seconds']:.1f} | "
            f"{a['cpu_seconds'] / max(b['cpu_seconds'], 1e-9):.2f}x | "
            f"{a['memory']['peak_rss_bytes'] / 2**20:,.0f} / "
            f"{b['memory']['peak_rss_bytes'] / 2**20:,.0f} | {_first(a)} / {_first(b)} | "
            f"{b['reduction'].get('states_reduced', 0):,} |")
    out += ["", "While a crash is left, a zk state is expanded fully. With a timeout left, every "
            "node may leave its role, and the `lost` and `join` actions that could follow read a "
            "leader and its followers together, so no set of nodes is smaller than the cluster; "
            "the state is expanded in part only where a delivery that its follower's leaving "
            "undoes makes a set of its own (docs/reduction.md, \"A delivery that leaving "
            "undoes\").", ""]
    return "\n".join(out)


def mutants(log, name: str, spaces=None, invariants=None, limit=MUTANT_TIME_LIMIT) -> dict:
    from zabmc.explore.env import ExploreConfig
    from zabmc.mutate import build
    from zabmc.mutate import mutants as all_mutants
    from zabmc.spec import CheckSpec

    def run(model, bounds, por):
        extra = {"invariants": invariants} if invariants else {}
        spec = CheckSpec.from_config(model, ExploreConfig(network="fifo", depth=10_000, **bounds),
                                     find_all=True, time_limit=limit,
                                     reduction="por" if por else "none", memory_limit="none",
                                     **extra)
        prepared = spec.validate().prepare()
        try:
            o = prepared.run()
        except Exception as e:  # noqa: BLE001  (a mutant may break the kernel)
            return {"verdict": ["error", type(e).__name__], "distinct": 0}
        return {"verdict": [str(o.stop_reason),
                            sorted({f.violation.property for f in o.violations})],
                "distinct": o.distinct}

    ms = all_mutants(name)
    res = {"model": name, "compared": 0, "violating": 0, "errors": 0, "not_exhausted": 0,
           "differ": [], "distinct": [0, 0], "mutants": len(ms)}
    for k, m in enumerate([None] + ms):
        model = build(name, m)
        for bounds in spaces or MUTANT_SPACES[name]:
            a, b = run(model, bounds, False), run(model, bounds, True)
            if a["verdict"][0] == "error" or b["verdict"][0] == "error":
                res["errors"] += 1
                if a["verdict"] != b["verdict"]:
                    res["differ"].append([m.name if m else "original", bounds, a, b])
                continue
            if "exhausted" not in (a["verdict"][0], b["verdict"][0]) or \
                    a["verdict"][0] != b["verdict"][0]:
                res["not_exhausted"] += 1
                continue
            res["compared"] += 1
            res["distinct"][0] += a["distinct"]
            res["distinct"][1] += b["distinct"]
            res["violating"] += bool(a["verdict"][1])
            if a["verdict"] != b["verdict"]:
                res["differ"].append([m.name if m else "original", bounds, a, b])
        if k % 10 == 0:
            log(f"{name} mutant {k}/{len(ms)}: {res['compared']} compared, "
                f"{len(res['differ'])} differ")
    return res


def _spaces_text(spaces: list[dict]) -> str:
    return "; ".join("(" + ", ".join(f"{k.replace('max_', '')} {v}" for k, v in b.items()) + ")"
                     for b in spaces)


def render_mutants(results: list[dict], seconds: float, zk: bool = False) -> str:
    now = datetime.date.today().isoformat()
    only = "zk-mutants" if zk else "mutants"
    out = [
        "## Partial-order reduction: every mutant" + (" of zk" if zk else ""), "",
        f"Produced by `python benchmarks/reduction_report.py --only {only} --write` on {now}, "
        f"commit `{commit()}`, in {seconds / 60:.1f} minutes; do not edit by hand. Each model "
        "below, unmutated and with each of its generated mutants (`zabmc mutate --model M`), is "
        "explored breadth first on FIFO links, without and with `--reduction por` "
        "(docs/reduction.md). Each run checks every "
        + ("property of the `always` kind (zk's failures too)" if zk else "default property")
        + " and does not stop at the "
        "first violation. A pair is compared when both runs exhaust their space (depth bound "
        f"10,000). A mutant's search that takes over {ZK_MUTANT_TIME_LIMIT if zk else MUTANT_TIME_LIMIT:.0f} s is not compared, "
        "and neither is a pair where only one run exhausts its space (a reduced space can be "
        "deeper than the full one)."
        + ("" if zk else " `db19` is buggy by design, so most of its spaces violate "
           "properties, and both runs must name the same ones."), "",
        "| model | mutants | spaces | pairs compared | of which the space violates a property | "
        "same verdict and violated properties | differ | not compared (time limit, or one run not exhausted) | the "
        "kernel raised (both) | distinct states, all compared pairs (none / por) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        out.append(
            f"| `{res['model']}` | {res['mutants']} | "
            f"{_spaces_text(ZK_MUTANT_SPACES if zk else MUTANT_SPACES[res['model']])} "
            f"| {res['compared']:,} | {res['violating']:,} | "
            f"{res['compared'] - len(res['differ']):,} | **{len(res['differ'])}** | "
            f"{res['not_exhausted']:,} | {res['errors']:,} | {res['distinct'][0]:,} / "
            f"{res['distinct'][1]:,} |")
    out.append("")
    for res in results:
        for name, bounds, a, b in res["differ"]:
            out.append(f"- DIFFERS: {res['model']} {name} {bounds}: {a['verdict']} without, "
                       f"{b['verdict']} with")
    if any(res["differ"] for res in results):
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["spaces", "mutants", "findings", "speed", "zk",
                                       "zk-mutants"])
    ap.add_argument("--against", default="main", metavar="REF",
                    help="with --only speed: the commit to compare this tree with (default main)")
    ap.add_argument("--depth", type=int, default=30,
                    help="with --only speed or zk: the depth bound (default 30)")
    ap.add_argument("--write", action="store_true", help="write the sections into the reports")
    args = ap.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    differ = False
    if args.only in (None, "findings"):
        section = render_findings(findings(log))
        print(section)
        if args.write:
            REPORT.write_text(update_section(REPORT.read_text(), "## Finding each db-19 bug",
                                             section, TITLE))
    if args.only in (None, "spaces"):
        t = time.time()
        section = render_spaces(spaces(log), time.time() - t)
        print(section)
        if args.write:
            REPORT.write_text(update_section(REPORT.read_text(), "## Partial-order reduction",
                                             section, TITLE))
    if args.only == "speed":
        t = time.time()
        section = render_speed(speed(log, args.against, args.depth), time.time() - t)
        print(section)
        if args.write:
            REPORT.write_text(update_section(REPORT.read_text(),
                                             "## Partial-order reduction: speed", section, TITLE))
    if args.only == "zk":
        t = time.time()
        section = render_zk(zk_spaces(log, args.depth), args.depth, time.time() - t)
        print(section)
        if args.write:
            REPORT.write_text(update_section(REPORT.read_text(),
                                             "## Partial-order reduction: zk", section, TITLE))
    if args.only == "zk-mutants":
        from zabmc.core.model import get_model
        from zabmc.core.properties import can_break
        from zabmc.explore.por import UNKEPT
        from zabmc.invariants import PROPERTIES

        t = time.time()
        # zk's failures are the zk models' own: registered when a model loads, and of those only
        # the ones `zk` can break may be named (a check that cannot fail is refused)
        ok = can_break(get_model("zk"))
        every = tuple(name for name in PROPERTIES if name not in UNKEPT and name in ok)
        res = mutants(log, "zk", ZK_MUTANT_SPACES, every, ZK_MUTANT_TIME_LIMIT)
        section = render_mutants([res], time.time() - t, zk=True)
        print(section)
        differ = bool(res["differ"])
        if args.write:
            VERIFICATION.write_text(update_section(
                VERIFICATION.read_text(), "## Partial-order reduction: every mutant of zk",
                section, V_TITLE))
    if args.only in (None, "mutants"):
        t = time.time()
        results = [mutants(log, name) for name in MUTANT_SPACES]
        section = render_mutants(results, time.time() - t)
        print(section)
        differ = any(res["differ"] for res in results)
        if args.write:
            VERIFICATION.write_text(update_section(
                VERIFICATION.read_text(), "## Partial-order reduction: every mutant", section,
                V_TITLE))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
