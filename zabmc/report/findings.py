"""The db-19 findings: the searches that find each bug, its regression trace, and its report.

`python -m zabmc.report.findings` re-runs every search below, writes each counterexample to
`tests/corpus/db19/<id>.trace.json` (the regression corpus the tests replay) and regenerates
`reports/db19-findings.md`, keeping its "Reproducing in the simulator" section (written by
`python benchmarks/findings_repro.py`). The explanations are ours; every number and trace comes from the run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from dataclasses import dataclass, field

from rich.console import Console

from zabmc.explore import Env, ExploreConfig, bfs, random_walks
from zabmc.explore.trace import rebuild, shorten
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.model import get_model
from zabmc.report.console import print_trace


@dataclass
class Finding:
    id: str
    title: str
    prop: str  # the property whose trace is kept
    config: dict
    why: str
    summary: str
    strategy: str = "bfs"
    seed: int = 0
    walks: int = 0
    invariants: tuple = DEFAULT_PROPERTIES
    extra: dict = field(default_factory=dict)


FINDINGS = [
    Finding(
        "bag-reordered-propose", "A reordered Propose is committed without its predecessor",
        "local-primary-order", dict(nodes=2, network="bag", proposals=2, depth=40),
        why="C25: Propose has no contiguity check (`txn.zxid > last_zxid()` only), and Commit "
            "advances `last_committed` to any zxid the follower holds. The simulator's 1-3 tick "
            "random delays reorder messages on a link, so the bag network is realistic for db-19.",
        summary="Node 1 is elected and synced with node 0; it proposes 1.1 and 1.2. Propose(1.2) "
                "overtakes Propose(1.1); node 0 appends 1.2 to its empty history, acks it, and the "
                "leader commits 1.2 on that quorum of two. Node 0's delivered sequence is [1.2]: "
                "epoch 1 starts at counter 2 (local primary order), and its log and the leader's "
                "[1.1 1.2] disagree (agreement, total order).",
    ),
    Finding(
        "fifo-duplicate-zxid", "A late AckEpoch makes the leader reuse zxid 1.1",
        "sane-history", dict(nodes=3, network="fifo", proposals=2, depth=40),
        why="C24: AckEpoch carries no epoch and the leader counts every one it gets while Leading, "
            "re-running try_finish_discovery after sync. That resets next_counter to 0 and "
            "re-broadcasts NewLeader, so the next proposal reuses counter 1 of the current epoch.",
        summary="Node 1 leads epoch 1 with node 0 and syncs; node 2 (still Looking) receives "
                "NewEpoch(1) late and acknowledges it after node 1 has proposed 1.1:zab-0. The late "
                "AckEpoch re-runs discovery: next_counter becomes 0, and the next proposal is "
                "1.1:zab-1, a second transaction with the same zxid in the leader's history.",
    ),
    Finding(
        "fifo-follower-timeout-gap", "A follower that timed out misses a Propose, then follows again",
        "local-primary-order",
        dict(nodes=2, network="fifo", proposals=2, max_timeouts=1, depth=60),
        why="C10 lets a follower's election timer fire while its leader lives; C25 makes a "
            "Propose to a Looking node vanish silently; C13 lets the leader's Vote reply (which "
            "names itself) re-elect the follower at once, without Discovery or Synchronization, so "
            "nothing re-sends the missed transaction. FIFO links do not help.",
        summary="After epoch 1 is established, follower 0 times out and becomes Looking. "
                "Propose(1.1) reaches it while Looking and is dropped. The leader's Vote reply makes "
                "node 0 Following again; it accepts Propose(1.2), acks it, and the leader commits "
                "1.2 on that quorum: node 0 delivers 1.2 without 1.1.",
    ),
    Finding(
        "bag-stale-newleader-retracts", "A stale NewLeader erases a committed transaction",
        "prefix", dict(nodes=3, network="bag", proposals=1, depth=30),
        strategy="random", seed=1, walks=200_000, invariants=("prefix", "sane-history"),
        why="C19: NewLeader replaces the follower's whole history and leaves last_committed "
            "alone, and it is accepted for any `e >= accepted_epoch`, so a delayed copy from the "
            "current leader, carrying the history as it was at discovery, is applied again after "
            "the follower has received and committed newer transactions.",
        summary="Node 1 leads epoch 1. Node 2 joins late: it gets Propose(1.1) and Commit(1.1) "
                "before the NewLeader(1, []) that node 1 sent when discovery finished. That "
                "NewLeader is accepted (its epoch equals node 2's accepted epoch) and replaces "
                "node 2's history [1.1] by []: a delivered transaction disappears, and "
                "last_committed 1.1 now lies beyond the last zxid.",
    ),
    Finding(
        "bag-two-established-leaders", "Two nodes establish themselves as leader of epoch 1",
        "leadership",
        dict(nodes=3, network="bag", proposals=0, max_timeouts=2, depth=60),
        strategy="random", seed=11, walks=200_000, invariants=("leadership",),
        why="Both prospective leaders compute new_epoch = max(accepted, current) + 1 = 1. NewEpoch "
            "with `e == accepted_epoch` is acknowledged again (\"idempotent\", seed document), and "
            "NewLeader is accepted for `e >= accepted_epoch`, so one follower forms a quorum with "
            "each of two leaders of the same epoch. The paper's follower acknowledges only an "
            "epoch strictly greater than any it accepted.",
        summary="Two election timeouts let node 0 vote first for node 2 and then for node 1, so "
                "both become Leading with epoch 1. Node 0 answers both NewEpoch(1) messages and "
                "both NewLeader(1) messages; each leader gets a quorum {self, 0} and syncs.",
    ),
]


def run_finding(f: Finding, time_limit: float | None = None):
    model = get_model("db19")
    env = Env(model, ExploreConfig(**f.config), Checker(f.invariants))
    t0 = time.perf_counter()
    if f.strategy == "bfs":
        o = bfs(env, time_limit=time_limit)
    else:
        o = random_walks(env, seed=f.seed, walks=f.walks, time_limit=time_limit)
    found = next((x for x in o.violations if x.violation.property == f.prop), None)
    if found is None:
        raise RuntimeError(f"{f.id}: {f.prop} not found")
    path = found.path
    if f.strategy != "bfs":
        path = shorten(env, path, f.prop)
    trace = rebuild(env, path, f.prop)
    props = [x.violation.property for x in o.violations if x.depth == found.depth]
    return env, o, found, trace, props, time.perf_counter() - t0


def _flags(cfg: dict) -> str:
    out = []
    for k, v in cfg.items():
        out.append(f"--{k.replace('_', '-')} {v}")
    return " ".join(out)


def _repro_section(path: str) -> str | None:
    """The "Reproducing in the simulator" section of an existing report, if any."""
    from zabmc.export.findings import SECTION

    try:
        text = open(path).read()
    except FileNotFoundError:
        return None
    start = text.find(SECTION + "\n")
    if start < 0:
        return None
    nxt = text.find("\n## ", start + len(SECTION))
    return text[start:] if nxt < 0 else text[start : nxt + 1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default=os.getcwd())
    args = ap.parse_args(argv)
    corpus = os.path.join(args.root, "tests", "corpus", "db19")
    os.makedirs(corpus, exist_ok=True)
    lines = [
        "# db-19 findings",
        "",
        "Produced by `python -m zabmc.report.findings`, which re-runs each search, writes its trace "
        "to `tests/corpus/db19/` (the regression corpus) and regenerates this file. The design is "
        "read literally (`shared/spec/CLARIFICATIONS.md`); each finding is a consequence of the "
        "seed document's pseudo-code, not of a reading we chose.",
        "",
        "| finding | property (all broken by the same step) | network | bounds | depth | search |",
        "|---|---|---|---|---|---|",
    ]
    sections = []
    for f in FINDINGS:
        env, o, found, trace, props, secs = run_finding(f)
        path = os.path.join(corpus, f"{f.id}.trace.json")
        trace.save(path)
        depth = len(trace.events)
        if f.strategy == "bfs":
            how = f"BFS, shortest; {o.distinct:,} distinct states, {secs:.1f}s"
        else:
            how = (f"random walks (seed {f.seed}), found at depth {found.depth}, shortened by "
                   f"replay to {depth}; not proven shortest")
        bounds = ", ".join(f"{k}={v}" for k, v in f.config.items() if k not in ("network",))
        lines.append(f"| [{f.title}](#{f.id}) | {', '.join(props) if f.strategy == 'bfs' else f.prop}"
                     f" | {f.config['network']} | {bounds} | {depth} | {how} |")
        buf = io.StringIO()
        print_trace(Console(file=buf, width=110, highlight=False, color_system=None), trace)
        cmd = f"zabmc check {_flags(f.config)}"
        if f.strategy != "bfs":
            cmd += f" --strategy random --seed {f.seed} --walks {f.walks}"
        if f.invariants != DEFAULT_PROPERTIES:
            cmd += "".join(f" --invariant {p}" for p in f.invariants)
        sections += [
            f"## {f.title}",
            f'<a id="{f.id}"></a>',
            "",
            f"- **property**: `{f.prop}`" + (f" (the same step also breaks "
                                              f"{', '.join(p for p in props if p != f.prop)})"
                                              if f.strategy == "bfs" and len(props) > 1 else ""),
            f"- **network** `{f.config['network']}`, **bounds** {bounds}",
            f"- **depth** {depth}; {how}",
            f"- **found by** `{cmd}`",
            f"- **regression trace** `tests/corpus/db19/{f.id}.trace.json` "
            f"(`zabmc replay` it)",
            "",
            f"**In words.** {f.summary}",
            "",
            f"**Why the design allows it.** {f.why}",
            "",
            "```",
            buf.getvalue().strip("\n"),
            "```",
            "",
        ]
    text = "\n".join(lines + [""] + sections)
    report = os.path.join(args.root, "reports", "db19-findings.md")
    kept = _repro_section(report)
    with open(report, "w") as fh:
        fh.write(text)
    if kept:  # the simulator reproductions (python benchmarks/findings_repro.py) stay
        from zabmc.export.findings import update_report

        update_report(report, kept)
    print(json.dumps({f.id: f.prop for f in FINDINGS}, indent=1))


if __name__ == "__main__":
    main()
