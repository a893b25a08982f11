#!/usr/bin/env python3
"""Exhaustive verification runs of the zab model; writes reports/verification.md.

Each run is a breadth-first search of every reachable state of a bounded configuration (FIFO links,
every default property, no depth bound that could cut it short), in the manner of apache/zookeeper's
zookeeper-specifications/protocol-spec/verification-statistics.md: bounds, distinct states,
diameter, time and engine. A run that stops for any reason other than exhausting its space, or that
finds a violation, is reported as such and makes the script exit 1.

With `--mutations` it also runs the seeded mutations of tests/test_zab_mutations.py and reports the
shortest counterexample the same search finds for each. With `--corpus` it also runs the db-19
regression corpus (tests/corpus/db19): each finding's own search in `db19`, which must find the
recorded counterexample again, and the same bounds in `zab` on FIFO links, which must show no
violation (the runs tests/test_regression_corpus.py pins).

    python benchmarks/verify_zab.py --mutations --corpus  # what reports/verification.md holds (~40 min)
    python benchmarks/verify_zab.py                       # the runs only (about 30 minutes)
    python benchmarks/verify_zab.py --tier quick          # the runs pinned in tests/test_zab_model.py
    python benchmarks/verify_zab.py --corpus-only         # the corpus section alone (~2 min), merged
                                                          # into the existing report

The report is produced by this script; do not edit it by hand.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import commit, cpu_model, logical_cpus, memory_gb, update_section  # noqa: E402
from zabmc.explore.env import ExploreConfig  # noqa: E402
from zabmc.invariants import DEFAULT_PROPERTIES  # noqa: E402
from zabmc.spec import CheckSpec  # noqa: E402

ENGINE = "bfs, in-process"
NO_DEPTH_BOUND = 10_000  # far beyond any diameter: the search ends by exhausting the space


def bounds_text(nodes, proposals, timeouts, drops, heartbeats, depth=0, crashes=0) -> str:
    """The bounds of a run; `crashes N` only for a run with a crash budget (none: no crash)."""
    return (f"{nodes} nodes; proposals {proposals}, timeouts {timeouts}, drops {drops}, "
            f"heartbeats {heartbeats}" + (f", crashes {crashes}" if crashes else "")
            + (f"; depth {depth}" if depth else ""))


# Labels of the repository's references, linked from the report (which lives in reports/):
# C1-C27 and E1-E11 are anchors of docs/semantics.md, D1-D21 are points of models/zab/README.md.
_LABEL = re.compile(r"\b([CED])([1-9][0-9]?)\b")


def link_labels(text: str) -> str:
    """`text` with each C/E/D label made a link to where it is defined."""
    def one(m: re.Match) -> str:
        kind, num = m.groups()
        if kind == "D":
            section = ("crash-and-recovery" if int(num) >= 19
                       else "deviations-from-the-paper-and-additions-to-it")
            return f"[D{num}](../models/zab/README.md#{section})"
        return f"[{kind}{num}](../docs/semantics.md#{kind.lower()}{num})"

    return _LABEL.sub(one, text)


class Run(NamedTuple):
    model: str
    nodes: int
    proposals: int
    timeouts: int = 0
    drops: int = 0
    heartbeats: int = 0
    crashes: int = 0  # the crash budget (E7-E10); restarts have none
    depth: int = 0  # 0: no depth bound (exhaustive); else every path of up to this many events
    tier: str = "standard"  # quick: also pinned in tests/test_zab_model.py
    gate: bool = False  # one of the runs of `make gate`
    reduction: str = "none"  # "por": partial-order reduction (docs/reduction.md)

    def config(self) -> ExploreConfig:
        return ExploreConfig(nodes=self.nodes, network="fifo", max_drops=self.drops,
                             max_timeouts=self.timeouts, max_heartbeats=self.heartbeats,
                             proposals=self.proposals, depth=self.depth or NO_DEPTH_BOUND,
                             max_crashes=self.crashes)

    @property
    def bounds(self) -> str:
        return bounds_text(self.nodes, self.proposals, self.timeouts, self.drops, self.heartbeats,
                           self.depth, self.crashes)

    def covers(self, model: str, cfg: ExploreConfig, depth: int) -> bool:
        """Whether a counterexample of `depth` events found with `cfg` lies within this run's
        bounds (budgets only enable more paths, so the same path is one of this run's). A reduced
        run covers it only when it exhausts its space (docs/reduction.md)."""
        if self.reduction != "none" and self.depth:
            return False
        return (model == self.model and cfg.nodes == self.nodes and cfg.proposals <= self.proposals
                and cfg.max_timeouts <= self.timeouts and cfg.max_drops <= self.drops
                and cfg.max_heartbeats <= self.heartbeats and cfg.max_crashes <= self.crashes
                and (not self.depth or depth <= self.depth))


RUNS = [
    Run("zab", 2, 2, tier="quick"),
    Run("zab", 2, 2, 1, 1, 1, tier="quick"),
    Run("zab-omega", 2, 2, 1, 1, 1, tier="quick"),
    Run("zab", 2, 2, 2, 1, 1, tier="quick"),
    Run("zab", 3, 0, tier="quick"),
    Run("zab", 3, 1, tier="quick"),
    Run("zab-omega", 3, 1, tier="quick"),
    Run("zab", 3, 2, tier="quick", gate=True),
    Run("zab", 2, 2, 3, 2, 2, tier="quick", gate=True),
    Run("zab-omega", 3, 2, tier="quick"),
    Run("zab", 3, 2, 1, depth=23, gate=True),
    # crashes (E7-E10): exhaustive on two nodes, depth-bounded on three
    Run("zab", 2, 2, crashes=1, tier="quick"),
    Run("zab", 2, 2, crashes=2, tier="quick"),
    Run("zab", 2, 2, crashes=3, tier="quick"),
    Run("zab", 2, 2, 1, 1, 1, crashes=1, tier="quick"),
    Run("zab-omega", 2, 2, 1, 1, 1, crashes=1, tier="quick"),
    Run("zab", 2, 2, 1, 1, 1, crashes=2, tier="quick", gate=True),
    Run("zab", 3, 0, crashes=1, tier="quick"),
    Run("zab", 3, 2, crashes=1, depth=24, gate=True),
    Run("zab", 2, 2, 2, 1, 1, crashes=1),
    Run("zab", 2, 2, 2, 1, 1, crashes=2),
    Run("zab", 2, 3, 2, 1, 1, crashes=1),
    Run("zab", 2, 2, 3, 2, 2, crashes=1),
    Run("zab", 3, 1, crashes=1),
    Run("zab-omega", 3, 1, crashes=1),
    Run("zab", 3, 1, crashes=2, depth=22),
    Run("zab", 3, 0, crashes=2, depth=26),
    Run("zab", 3, 1, 1, crashes=1, depth=20),
    Run("zab", 3, 1, 0, 1, 1, crashes=1, depth=22),
    Run("zab", 2, 3, 2, 1, 1),
    Run("zab-omega", 2, 3, 2, 1, 1),
    Run("zab", 3, 0, 1),
    Run("zab", 3, 3),
    Run("zab-omega", 3, 3),
    Run("zab", 3, 1, 0, 1, 0),
    Run("zab", 3, 1, 0, 0, 1),
    Run("zab", 3, 2, 0, 1, 1),
    # exhausted under partial-order reduction: the gate's runs 9 and 10
    Run("zab", 3, 1, 1, reduction="por", gate=True),
    Run("zab-omega", 3, 1, 1, reduction="por", gate=True),
]
GATE = [r for r in RUNS if r.gate]

CORPUS_DIR = ROOT / "tests" / "corpus" / "db19"
# Findings whose bounds cost the zab model far more than a CI test may take, and the depth bound used
# instead: every path of up to that many events (longer than the db-19 counterexample). With 3
# nodes, no proposal and 2 timeouts, depth 15 takes about 1.5 minutes here, depth 16 2.5 minutes,
# and every further level about 1.5 times the one before. With 3 nodes, 2 proposals and one crash
# (fifo-crash-two-leaders, a 38-event counterexample), depth 24 (gate run 6, 0.7M states) takes
# about 40 s, and depth 26 about 75 (1.2M states).
CORPUS_DEPTH_CAP = {"bag-two-established-leaders": 15, "fifo-crash-two-leaders": 24}
CORPUS_SECTION = "## Regression corpus: the db-19 findings in zab"
#: sections of reports/verification.md that other scripts write (benchmarks/mutation_report.py,
#: its zk-fixed campaign, benchmarks/reduction_report.py): a run of this one keeps them as they are
KEPT_SECTIONS = ("## Mutation score", "## Mutation score: zk-fixed",
                 "## Partial-order reduction: every mutant")
LIVENESS_NOTE = ("Liveness (reports/liveness.md, `python benchmarks/liveness_report.py`): `zab` is live within the bounds checked there (three nodes; no faults, one drop, one crash), and the ZOOKEEPER-1419-style vote order (`zab-1419`) is not: `zabmc check --liveness` finds its election going round forever. With one drop and one proposal, a follower that lost NEWLEADER hears heartbeats and is never synchronised (silent loss is outside the paper's reliable channels).")


class CorpusRun(NamedTuple):
    finding: str  # tests/corpus/db19/<finding>.trace.json
    network: str  # the db-19 finding's network; zab assumes FIFO links and is run on fifo
    nodes: int
    proposals: int
    timeouts: int
    drops: int
    heartbeats: int
    depth: int  # the finding's depth bound
    zab_depth: int  # the zab run's depth bound: the finding's, unless CORPUS_DEPTH_CAP lowers it
    prop: str  # the property the db-19 counterexample violates
    step: int  # at this step
    crashes: int = 0  # the finding's crash budget, which the zab run keeps (E7-E10)

    @property
    def capped(self) -> bool:
        return self.zab_depth < self.depth

    def config(self, depth: int | None = None) -> ExploreConfig:
        return ExploreConfig(nodes=self.nodes, network="fifo", max_drops=self.drops,
                             max_timeouts=self.timeouts, max_heartbeats=self.heartbeats,
                             proposals=self.proposals, depth=depth or self.zab_depth,
                             max_crashes=self.crashes)


def corpus_runs(corpus: Path = CORPUS_DIR) -> list[CorpusRun]:
    """One zab run per corpus file, with the finding's bounds (FIFO links; the depth capped where
    CORPUS_DEPTH_CAP says)."""
    runs = []
    for path in sorted(corpus.glob("*.trace.json")):
        data = json.loads(path.read_text())
        c, finding = data["config"], path.name.removesuffix(".trace.json")
        runs.append(CorpusRun(
            finding, c["network"], c["nodes"], c["proposals"], c["max_timeouts"], c["max_drops"],
            c["max_heartbeats"], c["depth"], min(c["depth"], CORPUS_DEPTH_CAP.get(finding, c["depth"])),
            data["violation"]["property"], data["violation"]["step"], c.get("max_crashes", 0)))
    return runs


def gate_command(run: Run) -> str:
    cmd = (f"zabmc check --model {run.model} --network fifo --nodes {run.nodes} "
           f"--proposals {run.proposals}")
    for flag, v in (("--max-timeouts", run.timeouts), ("--max-drops", run.drops),
                    ("--max-heartbeats", run.heartbeats), ("--max-crashes", run.crashes)):
        if v:
            cmd += f" {flag} {v}"
    if run.reduction != "none":
        return cmd + f" --depth {run.depth or 200} --reduction {run.reduction} --require-complete -q"
    return cmd + f" --depth {run.depth or 100} -q"


def explore(run: Run):
    return CheckSpec.from_config(run.model, run.config(), find_all=True, reduction=run.reduction,
                                 memory_limit="none").run()


def hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def machine() -> str:
    mem = memory_gb()
    mem = f", {mem} GB memory" if mem is not None else ""
    return (f"{cpu_model()}, {logical_cpus()} cores{mem}; CPython {platform.python_version()}, "
            "one process")


def run_all(runs: list[Run], log) -> list[dict]:
    """Each run's space explored in full and again with `--reduction por` (its `por_*` figures);
    exhausted spaces must give the same verdict both ways."""
    rows = []
    for run in runs:
        log(f"{run.model} ({run.bounds}) ...")
        out = explore(run._replace(reduction="none"))
        row = dict(run._asdict(), stop_reason=out.stop_reason, distinct=out.distinct,
                   generated=out.generated, diameter=out.depth_reached, seconds=out.elapsed,
                   violations=[f.violation.property for f in out.violations])
        log(f"  {out.stop_reason}: {out.distinct:,} distinct states, diameter "
            f"{out.depth_reached}, {hms(out.elapsed)}")
        red = explore(run._replace(reduction="por"))
        row.update(por_stop_reason=red.stop_reason, por_distinct=red.distinct,
                   por_diameter=red.depth_reached, por_seconds=red.elapsed,
                   por_violations=[f.violation.property for f in red.violations])
        log(f"  --reduction por: {red.stop_reason}: {red.distinct:,} distinct states, "
            f"{hms(red.elapsed)}")
        if out.stop_reason == "exhausted" and (
                red.stop_reason != "exhausted"
                or sorted(row["violations"]) != sorted(row["por_violations"])):
            raise SystemExit(f"{run.model} ({run.bounds}): the reduction changed the verdict: "
                             f"{row['violations']} in full, {row['por_violations']} reduced")
        rows.append(row)
    return rows


def run_mutations(log) -> list[dict]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_zab_mutations import MUTATIONS  # noqa: E402

    from models.zab import OmegaRules, ZabModel

    rows = []
    for name, m in MUTATIONS.items():
        log(f"mutation {name} ...")
        model = ZabModel(m.rules())
        t0 = time.perf_counter()
        out = CheckSpec.from_config(model, m.config, memory_limit="none").run()
        first = out.violations[0] if out.violations else None
        base = "zab-omega" if issubclass(m.rules, OmegaRules) else "zab"
        depth = first.depth if first else None
        rows.append(dict(
            mutation=name, base=base,
            gate=bool(first) and any(g.covers(base, m.config, depth) for g in GATE),
            doc=" ".join((m.rules.__doc__ or "").split()), nodes=m.config.nodes,
            proposals=m.config.proposals, timeouts=m.config.max_timeouts,
            drops=m.config.max_drops, crashes=m.config.max_crashes,
            property=first.violation.property if first else None,
            message=first.violation.message if first else None,
            depth=depth, distinct=out.distinct,
            seconds=time.perf_counter() - t0))
        log(f"  {rows[-1]['property']} at depth {rows[-1]['depth']}, {out.distinct:,} states, "
            f"{hms(rows[-1]['seconds'])}")
    return rows


def run_corpus(log) -> list[dict]:
    from zabmc.report.findings import FINDINGS, run_finding

    findings = {f.id: f for f in FINDINGS}
    rows = []
    for run in corpus_runs():
        log(f"corpus {run.finding}: db19 search ...")
        recorded = json.loads((CORPUS_DIR / f"{run.finding}.trace.json").read_text())["events"]
        try:
            env, _, _, trace, _, db19_seconds = run_finding(findings[run.finding])
            again = [e.to_json(env.model) for e in trace.events] == recorded
        except (KeyError, RuntimeError):
            again, db19_seconds = False, 0.0
        log(f"  found again: {again}; zab, depth {run.zab_depth} ...")
        out = CheckSpec.from_config("zab", run.config(), find_all=True,
                                    memory_limit="none").run()
        row = dict(run._asdict(), db19_found=again, db19_seconds=db19_seconds,
                   stop_reason=out.stop_reason, distinct=out.distinct, generated=out.generated,
                   depth_reached=out.depth_reached, seconds=out.elapsed,
                   violations=[f.violation.property for f in out.violations], unbounded=None)
        log(f"  {out.stop_reason}: {out.distinct:,} distinct states, depth {out.depth_reached}, "
            f"{hms(out.elapsed)}")
        if out.stop_reason == "depth-bound" and not run.capped:
            # Did the finding's bound cut anything off? The same budgets with no depth bound.
            unb = CheckSpec.from_config("zab", run.config(NO_DEPTH_BOUND), find_all=True,
                                        memory_limit="none", time_limit=120).run()
            row["unbounded"] = dict(stop_reason=unb.stop_reason, distinct=unb.distinct,
                                    diameter=unb.depth_reached, violations=len(unb.violations))
            log(f"  without the depth bound: {unb.stop_reason}, {unb.distinct:,} distinct states")
        rows.append(row)
    return rows


def render_corpus(rows: list[dict]) -> list[str]:
    lines = [
        CORPUS_SECTION,
        "",
        f"Commit `{commit()}`, {datetime.date.today().isoformat()}; "
        "`python benchmarks/verify_zab.py --corpus-only` re-runs this section alone.",
        "",
        "Every db-19 counterexample of `tests/corpus/db19` (reports/db19-findings.md) is a regression",
        "test (`tests/test_regression_corpus.py`): the finding's own search in `db19` must find the",
        "recorded counterexample again, event for event, and `zab` explored with the same budgets",
        "(nodes, proposals, timeouts, drops, heartbeats, crashes) and depth bound, checking every",
        "default property, must show no violation. `zab` assumes FIFO links (the paper's TCP) and refuses",
        "`--network bag`, so the findings made on `bag` links are explored on FIFO links in `zab`:",
        "the reordering they rely on is outside the model's assumption, and what they check there is",
        "that the same budgets on the links ZAB assumes break nothing.",
        "",
        "| Finding | db19: network, bounds | db19: property, step | Found again in db19 | "
        "zab: bounds (fifo) | Depth reached | Distinct states | Transitions | Time (hh:mm:ss) | "
        "Result |",
        "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        run = CorpusRun(**{k: r.get(k, 0) for k in CorpusRun._fields})
        budgets = bounds_text(run.nodes, run.proposals, run.timeouts, run.drops, run.heartbeats,
                              crashes=run.crashes)
        if r["violations"]:
            result = "violation: " + ", ".join(r["violations"])
        elif r["stop_reason"] == "exhausted":
            result = "every property holds; state space exhausted"
        elif r["stop_reason"] == "depth-bound":
            result = f"every property holds to depth {run.zab_depth}"
        else:
            result = f"incomplete ({r['stop_reason']})"
        if run.capped:
            result += (f"; **depth capped at {run.zab_depth}** (the finding's bound is "
                       f"{run.depth}; its db-19 counterexample has {run.step} events)")
        u = r.get("unbounded")
        if u and u["stop_reason"] == "exhausted" and not u["violations"]:
            cut = ("the bound cut nothing off" if u["distinct"] == r["distinct"]
                   else "a deeper space, clean too")
            result += (f"; without the depth bound: exhausted, {u['distinct']:,} states, diameter "
                       f"{u['diameter']} ({cut})")
        elif u:
            result += f"; without the depth bound: {u['stop_reason']}"
        lines.append(
            f"| {run.finding} | {run.network}, ({budgets}; depth {run.depth}) | `{run.prop}`, "
            f"step {run.step} | {'yes' if r['db19_found'] else '**no**'} | "
            f"({budgets}; depth {run.zab_depth}) | {r['depth_reached']} | {r['distinct']:,} | "
            f"{r['generated']:,} | {hms(r['seconds'])} | {result} |")
    lines += [
        "",
        "Depth reached is the deepest BFS level; a run that stops at its depth bound has not",
        "expanded the states at the bound. A capped run explores every path up to its own bound,",
        "not the finding's: it is a bounded check, not the finding's whole configuration. With 3",
        "nodes, no proposal and 2 timeouts, depth 15 takes about 1.5 minutes here, depth 16 about",
        "2.5, and every further level about 1.5 times the one before, so depth 60 is out of reach of",
        "CI; the run is marked `slow` in the tests (CI runs it).",
        "",
    ]
    return lines


def merge_corpus(text: str, section: list[str]) -> str:
    """The report `text` with its corpus section replaced by (or extended with) `section`, and its
    "Produced by" line naming `--corpus`."""
    start = text.find(CORPUS_SECTION + "\n")
    if start >= 0:
        nxt = text.find("\n## ", start + len(CORPUS_SECTION))
        text = text[:start] + (text[nxt + 1:] if nxt >= 0 else "")
    text = text.rstrip("\n") + "\n\n" + "\n".join(section)

    def flags(m: re.Match) -> str:
        f = m.group(1)
        return m.group(0) if "--corpus" in f.split() else f"{m.group(0)[:-1]} --corpus`"

    return re.sub(r"Produced by `python benchmarks/verify_zab\.py([^`]*)`", flags, text, count=1)


def render(rows: list[dict], mutations: list[dict] | None, corpus: list[dict] | None = None) -> str:
    lines = [
        "# Verification statistics: the zab model",
        "",
        "Produced by `python benchmarks/verify_zab.py"
        + (" --mutations" if mutations is not None else "")
        + (" --corpus" if corpus is not None else "") + "`; do not edit by hand.",
        f"Commit `{commit()}`, {datetime.date.today().isoformat()}.",
        "",
        LIVENESS_NOTE,
        "",
        "## Experiment configuration",
        "",
        "Every run is a breadth-first search (zabmc's level-synchronous BFS, in-process) of every",
        "state reachable within the bounds, on FIFO links (the model's network assumption), checking",
        "every default property after every step: " + ", ".join(f"`{p}`" for p in DEFAULT_PROPERTIES)
        + ". Unless a depth is given, no depth bound applies: the search ends when no new state is",
        "left.",
        "",
        "A state is the whole cluster: every node's fields, the messages in flight on every link in",
        "order, the remaining budgets and the ghost state the properties read",
        "([E1](../docs/semantics.md#e1), [E6](../docs/semantics.md#e6)). Bounds are the explorer's",
        "budgets ([E4](../docs/semantics.md#e4)): client proposals, election timeouts (any node, a",
        "leader included, may time out), message drops and heartbeats, and crashes. A crash",
        "([E7](../docs/semantics.md#e7)-[E10](../docs/semantics.md#e10)) keeps only the node's",
        "durable fields (for `zab` the paper's persistent variables f.a, f.p and h_f, and the",
        "delivery point: [D19](../models/zab/README.md#crash-and-recovery)) and loses every message",
        "in flight to or from it; the node is down, receives nothing, and may restart at any step",
        "(restarts have no budget), looking for a leader. A run whose bounds name no crashes has",
        "none. `zab` elects with db-19's zxid-ordered votes; `zab-omega` with votes ordered by node",
        "id only, so that the elected node may lack committed transactions and Phase 1 must recover",
        "them ([models/zab/README.md](../models/zab/README.md)).",
        "",
        f"Machine: {machine()}.",
        "",
        "## Verification statistics of model checking",
        "",
        "| Mode | Model | Bounds | Diameter | Distinct states | Transitions | "
        "Time (hh:mm:ss) | Engine | Result | `--reduction por`: distinct states | "
        "states ratio | time (hh:mm:ss) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        run = Run(**{k: r[k] for k in Run._fields})
        if r["violations"]:
            result = "violation: " + ", ".join(r["violations"])
        elif r["stop_reason"] == "exhausted":
            result = "every property holds"
        elif r["stop_reason"] == "depth-bound" and run.depth:
            result = f"every property holds to depth {run.depth}"
        else:
            result = f"incomplete ({r['stop_reason']})"
        if run.gate:
            result += "; **gate**" + (" (reduced)" if run.reduction == "por" else "")
        mode = "BFS" if not run.depth else "BFS, depth-bounded"
        por = "n/a | n/a | n/a"
        if "por_distinct" in r:
            por = (f"{r['por_distinct']:,} | {r['distinct'] / max(r['por_distinct'], 1):.2f}x | "
                   f"{hms(r['por_seconds'])}")
        lines.append(
            f"| {mode} | `{r['model']}` | ({run.bounds}) | {r['diameter']} | {r['distinct']:,} | "
            f"{r['generated']:,} | {hms(r['seconds'])} | {ENGINE} | {result} | {por} |")
    lines += [
        "",
        "Diameter is the length, in events, of the longest shortest path from the initial state:",
        "the depth of the last BFS level. Transitions counts every successor computed, duplicates",
        "included. A depth-bounded run explores every path of up to that many events and expands",
        "no state at the bound. The last three columns are the same search with `--reduction por`",
        "(partial-order reduction, [docs/reduction.md](../docs/reduction.md)): on an exhausted",
        "space it has the same verdict (the script fails otherwise), and on a depth-bounded one it",
        "covers the reduced space to that depth only. Runs of the quick tier are also pinned,",
        "state counts included, in `tests/test_zab_model.py` (reduced: `tests/test_reduction.py`);",
        "the runs marked **gate** are `make gate`, **(reduced)** with `--reduction por`:",
        "",
        "```",
        *[gate_command(g) for g in GATE],
        "```",
        "",
        "The runs with crashes let nodes crash and restart: a crash keeps the paper's persistent",
        "variables and the delivery point, a restart starts a new iteration in Looking, and peers",
        "are never told of a crash, so a leader keeps counting what a crashed follower acknowledged",
        "and keeps forwarding to it after its restart",
        "([D19-D21](../models/zab/README.md#crash-and-recovery) say why each is safe, and what",
        "ZooKeeper does instead). With three nodes they are exhaustive only with one crash and at",
        "most one proposal: with two crashes, or a crash and a timeout, the space grows past ten",
        "million states (3 nodes, no proposal, 2 crashes: 10.2 million distinct states by depth 39",
        "after 15 minutes, not exhausted), so those runs are depth-bounded.",
    ]
    if mutations is not None:
        lines += [
            "",
            "## Seeded mutations: the gate can fail",
            "",
            "Each mutation (`tests/test_zab_mutations.py`) changes one decision of the protocol by",
            "one line. The same search, stopping at the first violation, finds the shortest",
            "counterexample within the given bounds and names the property it breaks first. The last",
            "column says whether that counterexample lies within the bounds of a gate run (then",
            "`make gate` fails on the mutant too). The mutations with a crash budget change what a",
            "crash keeps or what a restart does",
            "([D19, D20](../models/zab/README.md#crash-and-recovery)); without crashes they are the",
            "protocol itself. A node that loses f.a (`current_epoch`) at a crash is a bug too, but",
            "its shortest counterexample (about 33 events with 3 nodes, a proposal, a timeout and a",
            "crash) is beyond any search here; the tests replay one.",
            "",
            "| Mutation | Model | Bounds | Property | Depth | Distinct states | Time (hh:mm:ss) | "
            "Within the gate |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | --- |",
        ]
        for m in mutations:
            bounds = bounds_text(m["nodes"], m["proposals"], m["timeouts"], m["drops"], 0,
                                 crashes=m.get("crashes", 0))
            lines.append(
                f"| {m['mutation']}: {link_labels(m['doc'])} | `{m['base']}` | ({bounds}) | "
                f"`{m['property']}` | "
                f"{m['depth']} | {m['distinct']:,} | {hms(m['seconds'])} | "
                f"{'yes' if m['gate'] else 'no'} |")
    lines.append("")
    if corpus is not None:
        lines += render_corpus(corpus)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tier", choices=("quick", "standard"), default="standard",
                    help="quick: only the runs pinned in the tests; standard: all (default)")
    ap.add_argument("--mutations", action="store_true", help="also run the seeded mutations")
    ap.add_argument("--corpus", action="store_true",
                    help="also run the db-19 regression corpus in db19 and zab")
    ap.add_argument("--corpus-only", action="store_true",
                    help="run only the regression corpus and merge its section into --out")
    ap.add_argument("--out", default=str(ROOT / "reports" / "verification.md"))
    ap.add_argument("--json", dest="json_out", default=None, help="also write the raw figures")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.corpus_only:
        rows, mutations = [], None
        corpus = run_corpus(log)
        out = Path(args.out)
        out.write_text(merge_corpus(out.read_text(), render_corpus(corpus)))
    else:
        runs = [r for r in RUNS if args.tier == "standard" or r.tier == "quick"]
        rows = run_all(runs, log)
        mutations = run_mutations(log) if args.mutations else None
        corpus = run_corpus(log) if args.corpus else None
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        text = render(rows, mutations, corpus)
        old = Path(args.out).read_text() if Path(args.out).exists() else ""
        for heading in KEPT_SECTIONS:  # other scripts write these; keep them as they were
            kept = re.search(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", old, re.M | re.S)
            if kept:
                text = update_section(text, heading, kept.group(0).rstrip("\n") + "\n", "")
        Path(args.out).write_text(text)
    log(f"wrote {args.out}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"runs": rows, "mutations": mutations, "corpus": corpus}, indent=2))
    bad = [r for r in rows if r["violations"] or r["stop_reason"] != (
        "depth-bound" if r["depth"] else "exhausted")]
    missed = [m for m in mutations or () if m["property"] is None]
    corpus_bad = [c for c in corpus or () if c["violations"] or not c["db19_found"]
                  or c["stop_reason"] not in ("exhausted", "depth-bound")]
    return 1 if bad or missed or corpus_bad else 0


if __name__ == "__main__":
    sys.exit(main())
