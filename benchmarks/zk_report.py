"""Search the `zk` variants for ZooKeeper's known data-loss bugs and write reports/zookeeper.md.

    python benchmarks/zk_report.py [--fixed-time-limit SECONDS]   # about 2 min + the limit

Each variant runs the same bounds with the same DFS (3 nodes, FIFO links, 2 proposals, 1
timeout, 1 crash, depth 30). The counterexamples are the regression traces of
tests/corpus/zk (tests/test_zk_model.py replays them and finds them again).
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUNDS = dict(nodes=3, network="fifo", proposals=2, max_timeouts=1, max_crashes=1, depth=30)
FLAGS = "--nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30 --strategy dfs"


def run(model: str, time_limit: float | None):
    sys.path.insert(0, ROOT)
    from zabmc.explore.dfs import dfs
    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.trace import rebuild, shorten
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.model import get_model

    env = Env(get_model(model), ExploreConfig(**BOUNDS), Checker(DEFAULT_PROPERTIES))
    t0 = time.process_time()
    out = dfs(env, time_limit=time_limit) if time_limit else dfs(env)
    cpu = time.process_time() - t0
    trace = None
    if out.violations:
        found = out.violations[0]
        trace = rebuild(env, shorten(env, found.path, found.violation.property))
    return env, out, cpu, trace


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixed-time-limit", type=float, default=600.0)
    args = ap.parse_args()
    rows, traces = [], []
    for model, bug in (("zk-pre3911", "ZOOKEEPER-3911"), ("zk", "ZOOKEEPER-4646"),
                       ("zk-fixed", None)):
        env, out, cpu, trace = run(model, None if bug else args.fixed_time_limit)
        if trace is not None:
            v = trace.violation
            result = f"**{v.property}** at step {trace.violation_step}: {v.message}"
            buf = [f"{k:>3} {e.describe(env.model)}" for k, e in enumerate(trace.events, 1)]
            traces.append((model, bug, "\n".join(buf)))
        else:
            result = f"no violation ({out.stop_reason}: every path of up to {out.depth_reached} events)"
        rows.append(f"| `{model}` | {bug or 'the fix'} | {result} | {out.distinct:,} | "
                    f"{out.generated:,} | {cpu:.1f} |")
        print(model, result, out.distinct, f"{cpu:.1f}s", file=sys.stderr)
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    lines = [
        "# ZooKeeper's ZAB 1.0: known bugs found, and the fix holding",
        "",
        f"Produced by `python benchmarks/zk_report.py` (commit `{commit}`, "
        f"{datetime.date.today()}); the model and its decisions are in "
        "[models/zk/README.md](../models/zk/README.md).",
        "",
        f"Bounds, the same for every variant: `zabmc check --model MODEL {FLAGS}` "
        "(3 nodes, FIFO links, 2 client proposals, one timeout, one crash, paths of up to 30 "
        "events). DFS, because a breadth-first search of these bounds does not reach depth 29 in "
        "CI-sized time (about 117,000 distinct states at depth 16, growing by half again per "
        "level); the counterexamples are therefore not proven shortest. CPU seconds on a 2-core "
        "machine shared with other jobs.",
        "",
        "| model | bug | result | distinct states | states generated | CPU s |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "Remix (Ouyang et al., EuroSys 2024) reports finding ZOOKEEPER-3911 with TLC on its "
        "multi-grained specification in 42 s after 286,286 states; it publishes no figure for "
        "ZOOKEEPER-4646 that we could match. The grains differ (our election is one action, D1), "
        "so the counts are not comparable state for state.",
        "",
        "## What the counterexample says",
        "",
        "Both bugs end the same way, in the same 29 events. Node 1 leads epoch 1 and proposes 1.1, "
        "which never reaches node 0 (node 0 times out first). Node 1 leads again, in epoch 2; node "
        "0 synchronises by DIFF, gets 1.1 as PROPOSAL and COMMIT, writes currentEpoch 2 and "
        "acknowledges NEWLEADER before 1.1 is on its disk. That acknowledgement gives node 1 its "
        "quorum: it is established and delivers 1.1. Node 0 crashes and restarts without 1.1 but "
        "with currentEpoch 2, so its vote beats node 2's: it leads epoch 3 with node 2, neither "
        "holding 1.1, and proposes 3.1 (`primary-integrity`; `agreement` and `prefix` follow as "
        "soon as 3.1 commits or node 1 is synchronised).",
        "",
        "- In `zk-pre3911` node 0 has not even queued 1.1 for writing when it acknowledges: it "
        "waits for UPTODATE (ZOOKEEPER-3911).",
        "- In `zk` it has queued 1.1 for the SyncThread; the crash comes before the write "
        "(ZOOKEEPER-4646). A write between the acknowledgement and the crash saves it, which "
        "`zk-pre3911` cannot do (tests/test_zk_model.py checks both).",
        "- In `zk-fixed` the same run of events breaks nothing: 1.1 is on node 0's disk when it "
        "acknowledges, node 0 leads epoch 3 holding 1.1, and proposes 3.1 after it.",
        "",
        "The seeded simulator (`zabmc simulate`) runs db-19's tick design and cannot run `zk`; the "
        "traces replay with `zabmc replay tests/corpus/zk/<bug>.trace.json`.",
        "",
    ]
    for model, bug, text in traces:
        lines += [f"## {bug}: `{model}`", "", "```", text, "```", ""]
    path = os.path.join(ROOT, "reports", "zookeeper.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {os.path.relpath(path, ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
