"""Run `zabmc check --liveness` over db19, the zab models and the zk family and write
reports/liveness.md.

    python benchmarks/liveness_report.py      # about four minutes on a 2-core machine

Each row is one `zabmc check --liveness ... --json` run in its own process, so the figures are the
command's own (states of both phases, fair components, the lasso's shape, CPU seconds, peak RSS).
The lassos are saved under reports/data/liveness/, and reports/pictures gets a chart of each
(benchmarks/pictures.py draws them).
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import check_json  # noqa: E402

OUT = os.path.join(ROOT, "reports", "liveness.md")
LASSOS = os.path.join(ROOT, "reports", "data", "liveness")

RUNS = [
    # (model, flags, what the row shows)
    ("db19", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("db19", "--nodes 2 --proposals 1 --max-drops 1 --depth 60", "one drop"),
    ("db19", "--nodes 2 --proposals 1 --max-crashes 1 --depth 60", "one crash"),
    ("db19", "--nodes 2 --proposals 1 --max-drops 1 --max-timeouts 1 --max-crashes 1 --depth 60",
     "a drop, a timeout and a crash"),
    ("db19", "--nodes 2 --network bag --proposals 1 --max-drops 1 --depth 60",
     "one drop, any delivery order"),
    ("db19", "--nodes 3 --proposals 0 --depth 60", "three nodes, no faults"),
    ("zab", "--nodes 3 --proposals 0 --depth 80", "no faults"),
    ("zab", "--nodes 3 --proposals 1 --depth 80", "no faults, one proposal"),
    ("zab", "--nodes 3 --proposals 0 --max-drops 1 --depth 80", "one drop"),
    ("zab", "--nodes 3 --proposals 0 --max-crashes 1 --depth 80", "one crash"),
    ("zab", "--nodes 3 --proposals 1 --max-drops 1 --depth 80", "one drop, one proposal"),
    ("zab-1419", "--nodes 3 --proposals 0 --depth 80", "the ZOOKEEPER-1419-style vote order"),
    # election timeouts (#36 point 4): two nodes, where every space below is exhausted in seconds;
    # three nodes with a timeout pass the default cap (half a million states each, about 100 CPU
    # seconds and 2 GiB), so the one three-node row is capped
    ("db19", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zab", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60",
     "one timeout (the lasso of #36 before D17)"),
    ("zab", "--nodes 2 --proposals 1 --max-timeouts 2 --depth 60", "two timeouts"),
    ("zab", "--nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 60",
     "a timeout and a crash, two proposals"),
    ("zab-omega", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zab-1419", "--nodes 3 --proposals 0 --max-timeouts 1 --depth 80 --max-states 100000",
     "one timeout (capped)"),
    # the zk family: election as its outcome (zk, zk-fixed, zk-pre3911, zk-3.9.3-coarse) and at FLE's
    # grain (zk-fle, zk-fixed-fle, whose spaces never end: every abandoned round raises the
    # logical clock, so they run to a depth bound)
    ("zk", "--nodes 3 --proposals 1 --depth 60", "no faults"),
    ("zk", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk", "--nodes 2 --proposals 1 --max-crashes 1 --depth 60", "one crash"),
    ("zk-fixed", "--nodes 3 --proposals 1 --depth 60", "no faults"),
    ("zk-fixed", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-fixed", "--nodes 2 --proposals 1 --max-crashes 1 --depth 60", "one crash"),
    ("zk-pre3911", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-pre3911", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.3-coarse", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.3-coarse", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    # the finer grains: the follower's threads (zk-3.7.0-threads, zk-3.9.2-threads) and storage (zk-3.9.3-store,
    # zk-3.9.4-store)
    ("zk-3.7.0-threads", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.7.0-threads", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.2-threads", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.2-threads", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.3-store", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.3-store", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.4-store", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.4-store", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    # one model per release (issue #62, models/zk/releases.py): every grain of its stack at once
    *((f"zk-{v}", flags, what) for v in ("3.6.2", "3.7.0", "3.8.0", "3.8.5", "3.9.2", "3.9.3",
                                         "3.9.4")
      for flags, what in (("--nodes 2 --proposals 1 --depth 60", "no faults"),
                          ("--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
                          ("--nodes 2 --proposals 1 --max-crashes 1 --depth 60", "one crash"))),
    # broadcasts before NEWLEADER (zk-3.7.0-fwd) and a follower's shutdown as 3.7.0-3.9.2 do it
    # (zk-3.7.0-shutdown, zk-3.9.2-shutdown)
    ("zk-3.7.0-fwd", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.7.0-fwd", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.7.0-shutdown", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.7.0-shutdown", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.2-shutdown", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.2-shutdown", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    # currentEpoch a step after NEWLEADER's writes to disk (the -epoch variants, K1-K4)
    ("zk-3.7.0-epoch", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.7.0-epoch", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    ("zk-3.9.2-epoch", "--nodes 2 --proposals 1 --depth 60", "no faults"),
    ("zk-3.9.2-epoch", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 60", "one timeout"),
    # (zk-3.9.3-epoch and zk-3.9.4-epoch, epoch.py over storage.py, have no rows yet; their
    # releases, zk-3.9.3 and zk-3.9.4, have theirs below: R3)
    ("zk-fle", "--nodes 2 --proposals 1 --depth 30", "no faults (depth-bounded)"),
    ("zk-fle", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 30", "one timeout (depth-bounded)"),
    ("zk-fixed-fle", "--nodes 2 --proposals 1 --depth 30", "no faults (depth-bounded)"),
    ("zk-fixed-fle", "--nodes 2 --proposals 1 --max-timeouts 1 --depth 30",
     "one timeout (depth-bounded)"),
]


def run(model: str, flags: str) -> dict:
    name = f"{model}-{flags.replace('--', '').replace(' ', '-')}"
    cmd = [sys.executable, "-m", "zabmc", "check", "--liveness", "--model", model,
           *flags.split(), "--json", "--trace-out",
           os.path.relpath(os.path.join(LASSOS, name + ".json"), ROOT)]  # its origin says this
    d = check_json(cmd, cwd=ROOT, what=" ".join(cmd))
    d["cpu"] = d["cpu_seconds"]
    return d


def main() -> None:
    os.makedirs(LASSOS, exist_ok=True)
    for f in os.listdir(LASSOS):
        os.remove(os.path.join(LASSOS, f))
    rows = []
    for model, flags, what in RUNS:
        d = run(model, flags)
        rows.append((model, flags, what, d))
        print(f"{model} {flags}: {d['verdict']} ({d['stop_reason']}), "
              f"{d['distinct_states']:,} states, {d['cpu']:.1f} CPU s", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    lines = [
        "# Liveness: what `zabmc check --liveness` finds",
        "",
        f"Produced by `python benchmarks/liveness_report.py` on "
        f"{datetime.date.today().isoformat()}, commit `{commit}`. Each row is one "
        "`zabmc check --liveness --model MODEL FLAGS --json` in its own process (FIFO links "
        "unless said). The properties, the timer rules of the fault-free suffix and why they "
        "report real livelocks only are in [docs/liveness.md](../docs/liveness.md). "
        "\"prefix\" counts the states reachable with faults, \"suffix\" their fault-free "
        "continuations; \"fair\" the fair non-goal cycles and dead ends found, per property "
        "(eventually-leader / eventually-commit). Lassos are in [data/liveness/](data/liveness/) and "
        "replay with `zabmc replay`; their pictures are in [pictures/](pictures/README.md).",
        "",
        "| model | flags | what | verdict | prefix | suffix | fair (leader / commit) | "
        "counterexample | CPU s | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model, flags, what, d in rows:
        verdict = {"ok": "live", "ok-within-bounds": f"no livelock found ({d['stop_reason']}, "
                   f"partial)", "violation": "**not live**"}[d["verdict"]]
        fc = d["fair_components"]
        ce = "; ".join(f"{v['property']}: {v['kind']}, {v['steps']} steps, faults stop after "
                       f"{v['faults_stop']}" + (f", loop from {v['loop_start']}"
                                                if v["loop_start"] is not None else "")
                       + f" ([lasso](data/liveness/{os.path.basename(v['trace'])}))"
                       for v in d["violations"]) or "-"
        lines.append(f"| {model} | `{flags}` | {what} | {verdict} | {d['prefix_states']:,} | "
                     f"{d['suffix_states']:,} | {fc['eventually-leader']} / "
                     f"{fc['eventually-commit']} | {ce} | {d['cpu']:.1f} | "
                     f"{d['peak_rss_bytes'] / 2**20:,.0f} MiB |")
    lines += [
        "",
        "## Reading the rows",
        "",
        "- **zab-1419** is `zab` with one line changed: between equal zxids, node ids beat each "
        "other in a circle (1 beats 0, 2 beats 1, 0 beats 2), as ZOOKEEPER-1419's vote "
        "comparison was not transitive. It is as safe as zab, but the election never ends: "
        "every quiet state it reaches has no leader, and the timeouts that fire there lead back "
        "to it.",
        "- **zab is live** without faults, and under one drop or one crash, within the bounds "
        "of its rows. The run with one drop and one proposal is the exception. A NEWLEADER lost "
        "on a link leaves a follower that hears the leader's heartbeats, so it never times out, "
        "and it is never synchronised. zab's links are the paper's reliable FIFO channels, so a "
        "silent loss lies outside its assumptions. ZooKeeper closes the connection instead, "
        "which is what the zk models' drops do.",
        "- **zab under election timeouts.** A follower that times out and re-elects its "
        "established leader used to be stranded: the leader ignored its CEPOCH (it had promised "
        "that epoch already and may not acknowledge it twice), so a proposal it missed while "
        "looking was never delivered to it (two nodes, one proposal, one timeout). The model now "
        "does what ZooKeeper's LearnerHandler does (models/zab/README.md D17): NEWEPOCH of the "
        "current epoch, an ACK-E that does not acknowledge it (epoch -1), then NEWLEADER with the "
        "leader's history; the follower acknowledges the proposals it gets there. The timeout rows "
        "are live. With three nodes and a timeout the product graph passes half a million states; "
        "those rows are capped.",
        "- **The zk family is live without faults** on two and three nodes (two for the variants "
        "that differ from zk only at NEWLEADER). **The release models** (`zk-3.6.2` to "
        "`zk-3.9.4`) **are live with one timeout or one crash too; every abstraction is not, and "
        "its lasso is the model's, not ZooKeeper's.** Node 0 follows and logs the proposal 1.1 "
        "without learning it committed; it leaves its leader (a timeout, or the leader's crash), "
        "the same leader is elected for epoch 2 and counts its whole log as committed, and node 0 "
        "is synchronised with an empty DIFF from 1.1: nothing tells the abstraction's node 0 that "
        "1.1 committed, and with no further proposal it never delivers it (D5: a node delivers "
        "only what it knows committed). ZooKeeper's follower (release-3.6.2 to release-3.9.4; "
        "models/zk/README.md R6 names the lines) has applied 1.1 when it left its role (`ZooKeeperServer.shutdown(false)` calls `ZKDatabase.fastForwardDataBase`, which "
        "replays every logged transaction, `FileTxnSnapLog.fastForwardFromEdits`; a restart loads "
        "the whole log) and serves its data tree from UPTODATE on (`Learner.syncWithLeader`, "
        "`zk.startServing()`), which the leader sends only once a quorum acknowledged NEWLEADER. "
        "The release models do that step (models/zk/README.md R6, models/zk/serve.py: at UPTODATE "
        "a follower takes its log up to where its synchronisation started as committed), so "
        "their timeout and crash rows are live and no lasso of theirs is kept. The abstractions "
        "keep D5 as it was (their counts are pinned, `zk`'s cross-checked by TLC), so their rows "
        "keep the lasso. In the storage grain (`zk-3.9.3-store`, `zk-3.9.4-store`) the data tree "
        "applies 1.1 at the role change (S5), but the property reads what a node has delivered "
        "(`last_committed`), which only R6 moves. "
        "`zk-3.7.0-threads`'s follower owes its NEWLEADER ACK for a step (F1); the QuorumPeer thread "
        "writes it at once, so no timer fires meanwhile (the model's `busy`, docs/liveness.md); "
        "before that rule a timeout there began new epochs forever and the space never ended. "
        "The FLE variants' spaces never end (each abandoned round raises the logical "
        "clock), so their rows are depth-bounded; a cycle that needs a new round cannot close, "
        "so a livelock of that kind would show as a bound rather than a lasso.",
        "- **db19** with two nodes is live under each of the faults above. db-19 lets two "
        "non-looking nodes answer each other's votes forever (C13). The exchange never "
        "quiets the network, but real time fires the stranded node's election timer during "
        "it, so it is not a livelock (docs/liveness.md). With three nodes, the space of the "
        "fault-free election alone passes the one-million-state cap; that row is partial.",
        "",
    ]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
