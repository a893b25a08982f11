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
import re
import time
from dataclasses import dataclass, field

from rich.console import Console

from zabmc.core import files
from zabmc.explore.trace import rebuild, shorten
from zabmc.invariants import DEFAULT_PROPERTIES
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


# The catalogue: one `Finding` a bug, written out as data (a duplicate-code scan sees its rows as
# alike; they are rows of one table, deliberately, each with its own bounds and prose).
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
        summary="Node 1 leads epoch 1 with node 0. Node 2 joins late: its AckEpoch reaches node 1 "
                "after discovery has ended and ends it again (C24), which sends node 0 a second "
                "NewLeader(1, []). Node 0 gets Propose(1.1) and Commit(1.1) before that copy. The "
                "NewLeader is accepted (its epoch equals node 0's accepted epoch) and replaces "
                "node 0's history [1.1] by []: a delivered transaction disappears, and "
                "last_committed 1.1 now lies beyond the last zxid.",
    ),
    Finding(
        "bag-two-established-leaders", "Two nodes establish themselves as leader of epoch 1",
        "leadership",
        dict(nodes=3, network="bag", proposals=0, max_timeouts=2, depth=60),
        strategy="random", seed=11, walks=200_000, invariants=("leadership",),
        why="Both prospective leaders compute new_epoch = max(accepted, current) + 1 = 1. NewEpoch "
            "with `e == accepted_epoch` is acknowledged again (\"idempotent\", as the design calls "
            "it: [Discovery](../docs/semantics.md#the-four-phases)), and "
            "NewLeader is accepted for `e >= accepted_epoch`, so one follower forms a quorum with "
            "each of two leaders of the same epoch. The paper's follower acknowledges only an "
            "epoch strictly greater than any it accepted.",
        summary="Two election timeouts let node 0 vote first for node 2 and then for node 1, so "
                "both become Leading with epoch 1. Node 0 answers both NewEpoch(1) messages and "
                "both NewLeader(1) messages; each leader gets a quorum {self, 0} and syncs.",
    ),
    # --- findings that need a crash (E7-E11: `zabmc check --max-crashes`) ---
    Finding(
        "fifo-crash-follower-gap", "A follower's crash loses a Propose, and it rejoins unsynced",
        "local-primary-order",
        dict(nodes=2, network="fifo", proposals=2, max_crashes=1, depth=30),
        why="E7: a crash loses every message in flight to the node, Propose(1.1) included, and the "
            "restarted node keeps only its durable (empty) history. E9 and C13: it comes back "
            "Looking and sends its vote; the leader, which is not Looking, answers with a Vote "
            "naming itself, and that re-elects the node at once (C14), without Discovery or "
            "Synchronization, so no NewLeader brings it 1.1. C25: it then appends Propose(1.2) above "
            "its last zxid 0.0, with no gap check. This is fifo-follower-timeout-gap with a crash "
            "in place of the election timeout: on FIFO links, without timeouts, drops or crashes, "
            "the same bounds show no violation at all (73 states, exhausted).",
        summary="Node 1 leads epoch 1 with follower 0 and proposes 1.1. Node 0 crashes while "
                "Propose(1.1) is in flight to it, and restarts at once. Its LookForLeader reaches "
                "node 1, whose Vote reply names node 1: node 0 follows it again, and no NewLeader "
                "is sent. Node 1 proposes 1.2; node 0 appends it to its empty history and acks it, "
                "and node 1 commits 1.2 on that quorum: node 0 delivers 1.2 without 1.1 (local "
                "primary order), and its log and the leader's disagree (agreement, total order).",
    ),
    Finding(
        "bag-crash-resync-reorders",
        "After a leader's restart, synchronisation slips a missed transaction under a delivered one",
        "prefix", dict(nodes=2, network="bag", proposals=2, max_crashes=1, depth=30),
        invariants=("prefix",),
        why="C19: an accepted NewLeader replaces the follower's history and leaves last_committed "
            "alone, whatever the follower has delivered. Once C25 has let a follower deliver past "
            "a gap, the next synchronisation fills the gap underneath the delivered transaction, "
            "and the delivered sequence changes order. A db-19 leader never steps down by itself, "
            "so without a crash no new epoch starts within these bounds: the same bounds without "
            "crashes show only the reordered Propose (bag-reordered-propose, local-primary-order "
            "at step 11), never prefix. The leader's crash and restart (E7, E9) start epoch 2. On "
            "FIFO links the gap needs a crash of its own: `zabmc check --nodes 2 --network fifo "
            "--max-crashes 2 --depth 60 --invariant prefix` finds the same prefix violation at "
            "depth 35, follower 0's crash (fifo-crash-follower-gap) followed by leader 1's.",
        summary="As in bag-reordered-propose, node 0 receives Propose(1.2) before Propose(1.1), and "
                "delivers 1.2 (steps 1 to 11; local-primary-order already fails there, and this "
                "search checks prefix alone). Leader 1 then crashes and restarts: it keeps its "
                "history [1.1 1.2] (durable), is elected again with node 0's vote and starts epoch "
                "2. Its NewLeader(2, [1.1 1.2]) replaces node 0's history [1.2]; last_committed "
                "stays 1.2, so node 0's delivered sequence becomes [1.1 1.2] while its delivery log "
                "is [1.2]: 1.1 now comes before a transaction node 0 delivered earlier (prefix).",
    ),
    Finding(
        "fifo-crash-two-leaders",
        "A restarted node is elected by a stale vote and leads epoch 1 a second time", "leadership",
        dict(nodes=3, network="fifo", proposals=2, max_crashes=1, depth=60),
        strategy="random", seed=4, walks=200_000, invariants=("leadership",),
        why="E9: a restarted node starts an election from its durable epochs, which are still 0 "
            "when it crashed before accepting the current leader's NewEpoch. C13: a node that is "
            "already Following answers its LookForLeader with a Vote for its own current "
            "candidate, which need not be its leader (C16: node 0 acknowledges node 2's epoch "
            "while it still follows node 1); that Vote names the restarted node, which, with its "
            "own vote, has a quorum and leads. It computes new_epoch = max(accepted, current) + 1 "
            "= 1, the epoch node 2 already leads, and node 0 acknowledges the same epoch again "
            "and accepts the second NewLeader(1), as in bag-two-established-leaders. That finding "
            "needs bag links and two election timeouts; here FIFO links and one crash suffice. On "
            "FIFO links without crashes, no search of these bounds showed leadership: BFS "
            "explored every path of up to 25 events in 240 s, and random walks of depth 60 "
            "(seed 1) ran for 300 s. This trace is not proven shortest: a BFS of the same bounds "
            "with no proposal and `--invariant leadership` explored every path of up to 27 events "
            "in 900 s without finding one. On bag links the same route takes 15 events (random walks, "
            "seed 1, `--network bag --max-crashes 1`: [searches with crashes]"
            "(#searches-with-crashes)).",
        summary="Node 0 hears node 1's LookForLeader first, votes for node 1 and follows it; node 1 "
                "hears node 2 and follows it, and node 2 leads epoch 1 on the votes of nodes 1 and "
                "2. Node 1 crashes before any NewEpoch reaches it and restarts Looking, its epochs "
                "still 0. Node 0, which still names node 1 as its candidate, answers node 1's "
                "LookForLeader with a Vote for node 1: node 1 leads, with epoch 1 too. Node 0 "
                "acknowledges NewEpoch(1) from both leaders and accepts both NewLeader(1) messages, "
                "so node 2 and node 1 each sync with the quorum {self, 0}.",
    ),
]


# The searches with crash budgets behind the crash findings (issue point 4), with what each showed.
# They take about an hour together, so `main` does not re-run them: these are the recorded results
# (zabmc db19 at the commit that added the crash findings; times on a 2-core machine shared with
# other jobs). Each is `zabmc check --nodes N --network NET --max-crashes C --all` plus the bounds.
CRASH_RUNS = [
    # (nodes, network, crashes, bounds and strategy, what it showed)
    (2, "fifo", 0, "BFS, depth 60: exhausted, 73 states", "no violation"),
    (2, "fifo", 1, "BFS, depth 60: exhausted, 972 states",
     "local-primary-order, agreement, total-order at 25: [fifo-crash-follower-gap](#fifo-crash-follower-gap)"),
    (2, "fifo", 2, "BFS, depth 60: exhausted, 5,685 states",
     "the same at 25; prefix at 35: follower 0's crash makes the gap, leader 1's crash the "
     "resynchronisation of [bag-crash-resync-reorders](#bag-crash-resync-reorders)"),
    (2, "bag", 0, "BFS, depth 60: exhausted, 6,686 states",
     "local-primary-order, agreement, total-order at 11: [bag-reordered-propose](#bag-reordered-propose)"),
    (2, "bag", 1, "BFS, depth 60: exhausted, 10,463 states",
     "the same at 11; prefix at 18: [bag-crash-resync-reorders](#bag-crash-resync-reorders)"),
    (2, "bag", 2, "BFS, depth 60: exhausted, 24,975 states", "the same at 11; prefix at 18"),
    (3, "fifo", 0, "BFS, depth 40, 240 s: every path of up to 25 events, 3,055,453 states",
     "sane-history at 20, local-primary-order at 24: both the reused zxid of "
     "[fifo-duplicate-zxid](#fifo-duplicate-zxid)"),
    (3, "fifo", 1, "BFS, depth 40, 240 s: up to 23 events, 3,668,053 states",
     "sane-history at 16, local-primary-order at 18: the reused zxid again, 4 events shorter "
     "because a crash and restart of node 1 at steps 1 and 2 clear its start-up messages"),
    (3, "fifo", 2, "BFS, depth 40, 240 s: up to 21 events, 3,335,550 states",
     "the same as with one crash"),
    (3, "bag", 0, "BFS, depth 40, 240 s: up to 9 events, 4,074,087 states", "no violation"),
    (3, "bag", 1, "BFS, depth 40, 240 s: up to 8 events, 2,365,213 states", "no violation"),
    (3, "bag", 2, "BFS, depth 40, 240 s: up to 8 events, 2,273,051 states", "no violation"),
    (3, "fifo", 0, "random walks, seed 1, depth 60, 300 s",
     "sane-history at 20, local-primary-order at 24 (reused zxid)"),
    (3, "fifo", 1, "random walks, seed 1, depth 60, 300 s (lengths after shortening)",
     "sane-history at 18, local-primary-order at 20 (reused zxid); agreement, total-order at 30 "
     "(the gap of [fifo-crash-follower-gap](#fifo-crash-follower-gap): the restarted node is "
     "Looking when Propose(1.1) arrives); prefix at 38 (two leaders of epoch 1, and one's "
     "NewLeader erases the other's committed 1.1); leadership at 40: "
     "[fifo-crash-two-leaders](#fifo-crash-two-leaders)"),
    (3, "fifo", 2, "random walks, seed 1, depth 60, 300 s",
     "sane-history 18, local-primary-order 20, agreement and total-order 26, leadership 32: the "
     "same mechanisms"),
    (3, "bag", 0, "random walks, seed 1, depth 60, 300 s",
     "agreement, total-order, sane-history at 11, local-primary-order, prefix at 12: the "
     "findings without crashes"),
    (3, "bag", 1, "random walks, seed 1, depth 60, 300 s",
     "agreement, local-primary-order, total-order at 11, sane-history 12; prefix at 13 (the stale "
     "NewLeader of [bag-stale-newleader-retracts](#bag-stale-newleader-retracts), node 2's crash "
     "and restart standing in for its late start); leadership at 15 (the stale vote of "
     "[fifo-crash-two-leaders](#fifo-crash-two-leaders), on bag links)"),
    (3, "bag", 2, "random walks, seed 1, depth 60, 300 s",
     "the same properties at 13, 14, 17 and 17"),
    (3, "fifo", 1, "BFS, `--proposals 0 --invariant leadership`, depth 40, 900 s: every path of "
     "up to 27 events, 5,416,816 states", "no violation"),
]


def finding_spec(f: Finding, time_limit: float | None = None):
    """The check that finds `f`: its bounds, properties and search, on db19, levels in memory."""
    from zabmc.spec import CheckSpec

    search = ({"strategy": "bfs", "memory_limit": "none"} if f.strategy == "bfs" else
              {"strategy": "random", "seed": f.seed, "walks": f.walks})
    return CheckSpec(model="db19", **f.config, invariants=tuple(f.invariants),
                     no_invariants=not f.invariants, time_limit=time_limit, **search)


def run_finding(f: Finding, time_limit: float | None = None):
    prepared = finding_spec(f, time_limit).validate().prepare()
    env = prepared.env
    t0 = time.perf_counter()
    o = prepared.run()
    found = next((x for x in o.violations if x.violation.property == f.prop), None)
    if found is None:
        raise RuntimeError(f"{f.id}: {f.prop} not found")
    path = found.path
    if f.strategy != "bfs":
        path = shorten(env, path, f.prop)
    trace = rebuild(env, path, f.prop)
    props = [x.violation.property for x in o.violations if x.depth == found.depth]
    return env, o, found, trace, props, time.perf_counter() - t0


_LABEL = re.compile(r"(?<![\w\[#/`-])([CE])([1-9][0-9]?)(?![\w\]`])")


def link_labels(text: str) -> str:
    """`text` with each C/E label (C25, E7) linked to its entry in docs/semantics.md."""
    return _LABEL.sub(lambda m: f"[{m.group(0)}](../docs/semantics.md#{m.group(0).lower()})", text)


def _flags(cfg: dict) -> str:
    out = []
    for k, v in cfg.items():
        out.append(f"--{k.replace('_', '-')} {v}")
    return " ".join(out)


LIVENESS_NOTE = ("Liveness: every finding below is a safety violation. Whether db-19 still elects a leader and delivers once faults stop is checked by `zabmc check --liveness` in [liveness.md](liveness.md): with two nodes it does, under a drop, a timeout and a crash; its endless vote answers (C13) are not a livelock, since real time fires the stranded node's timer.")


#: the heading of the section `zabmc.report.repro` writes (python benchmarks/findings_repro.py)
SECTION = "## Reproducing in the simulator"


def save_trace(trace, path: str) -> None:
    """A trace file (the document `Trace.save` writes) through the one writer."""
    files.write(path, json.dumps(trace.to_json(), indent=1) + "\n", "trace file", kind="trace")


def update_report(path: str, section: str) -> None:
    """Replace the section (up to the next `## ` heading) or append it."""
    text = files.read_text(path, "report") if os.path.exists(path) else "# db-19 findings\n"
    start = text.find(SECTION + "\n")
    if start >= 0:
        nxt = text.find("\n## ", start + len(SECTION))
        end = len(text) if nxt < 0 else nxt + 1
        text = text[:start] + section + ("\n" + text[end:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    files.write(path, text, "report")


def _repro_section(path: str) -> str | None:
    """The "Reproducing in the simulator" section of an existing report, if any."""
    if not os.path.lexists(path):
        return None
    text = files.read_text(path, "report")
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
        "read literally ([docs/semantics.md](../docs/semantics.md#choices-where-the-design-is-open), "
        "which defines the C1–C27 labels cited below); each finding is a consequence of the "
        "design's pseudo-code, not of a reading we chose. The findings with crashes use the "
        "crash and restart events of [E7–E11](../docs/semantics.md#crash-and-recovery) "
        "(`zabmc check --max-crashes`).",
        "",
        LIVENESS_NOTE,
        "",
        "| finding | property (all broken by the same step) | network | bounds | depth | search |",
        "|---|---|---|---|---|---|",
    ]
    sections = []
    for f in FINDINGS:
        env, o, found, trace, props, secs = run_finding(f)
        path = os.path.join(corpus, f"{f.id}.trace.json")
        save_trace(trace, path)
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
            f"**In words.** {link_labels(f.summary)}",
            "",
            f"**Why the design allows it.** {link_labels(f.why)}",
            "",
            "```",
            buf.getvalue().strip("\n"),
            "```",
            "",
        ]
    sections += [
        "## Searches with crashes",
        '<a id="searches-with-crashes"></a>',
        "",
        "The searches behind the three findings with crashes, with what each showed. They take "
        "about an hour together, so `python -m zabmc.report.findings` does not re-run them: "
        "these are recorded results (`CRASH_RUNS` in `zabmc/report/findings.py`). Every command "
        "is `zabmc check --nodes N --network NET --max-crashes C --all` with the default "
        "budgets (2 proposals, no timeout, drop or heartbeat) and the bounds shown; depths are "
        "counterexample lengths (random-walk ones after shortening by replay). A new kind of "
        "violation is one the same bounds without crashes do not show, or one that needs a "
        "crash by a different mechanism.",
        "",
        "| nodes | network | crashes | search | result |",
        "|---|---|---|---|---|",
    ]
    sections += [f"| {n} | {net} | {c} | {how} | {what} |" for n, net, c, how, what in CRASH_RUNS]
    sections.append("")
    text = "\n".join(lines + [""] + sections)
    report = os.path.join(args.root, "reports", "db19-findings.md")
    kept = _repro_section(report)
    files.write(report, text, "report")
    if kept:  # the simulator reproductions (python benchmarks/findings_repro.py) stay
        update_report(report, kept)
    print(json.dumps({f.id: f.prop for f in FINDINGS}, indent=1))


if __name__ == "__main__":
    main()
