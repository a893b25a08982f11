"""Every finding `zabmc real` runs, on every release it can start (#63): the section "Releases, on
real servers" of reports/zookeeper.md, one row per finding, one column per release, each cell what
three real servers did with the finding's trace (or schedule) and whether the release's model
(reports/data/release-matrix.json, through models.zk.releases.SAME) says the same.

Each cell is one run, in a fresh process, of

    flock /tmp/zabmc-real.lock python -m zabmc real [--release V] TRACE --json -q

(no --release: Debian's zookeeper 3.8.0), appended as one JSON line to
reports/data/real-matrix.jsonl: the exact command, the commit, the date, the exit code, how many
steps (or entries) the servers realised, why they stopped, the violated properties and the wall
seconds. A cell already in that file for this commit, or for one whose zabmc/ and models/ are
the same, is not run again (unless --again), so an interrupted run resumes; the table shows the
latest run of each cell.

    python benchmarks/real_matrix.py --write              # every cell not yet run at this commit
    python benchmarks/real_matrix.py --only 3.9.5 --only zookeeper-4646-acked
    python benchmarks/real_matrix.py --table [--write]    # the section from the file, no run

Needs what `zabmc real` needs (make install-test); releases from Maven Central are fetched once
into ~/.cache/zabmc/releases. About 30 s a cell on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from contextlib import nullcontext

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import REAL_LOCK, commit, real_lock, write_zk_section  # noqa: E402

HEADING = "## Releases, on real servers"
DATA = os.path.join(ROOT, "reports", "data", "real-matrix.jsonl")
LOCK = REAL_LOCK
CORPUS = "tests/corpus/zk"
DEBIAN = "debian-3.8.0"
#: the columns: Debian's package, then releases from Maven Central (3.8.0-3.8.2 from Maven are
#: optional: `--only` them)
RELEASES = (DEBIAN, "3.8.3", "3.8.4", "3.8.5", "3.8.6", "3.9.0", "3.9.1", "3.9.2", "3.9.3",
            "3.9.4", "3.9.5")
OPTIONAL = ("3.8.0", "3.8.1", "3.8.2")
#: the rows: finding -> (its file under tests/corpus/zk, the row of release-matrix.json whose
#: verdict the model side shows, or a tuple of rows: the first that finds the bug, else the
#: first's verdict; what the row is). A control is not a finding: the model it was searched on
#: (zk-fixed, 3.8.5's rules) finds nothing there
FINDINGS = {
    "zookeeper-4646-acked": ("zookeeper-4646-acked.trace.json", "ZOOKEEPER-4646", "finding"),
    "zookeeper-4643-acked": ("zookeeper-4643-acked.trace.json", "ZOOKEEPER-4643", "finding"),
    "zookeeper-4685-diff": ("zookeeper-4685-diff.trace.json", "ZOOKEEPER-4685", "finding"),
    "zookeeper-4712-served": ("zookeeper-4712-served.trace.json", "ZOOKEEPER-4712", "finding"),
    "zookeeper-4394-join": ("zookeeper-4394-join.trace.json", "ZOOKEEPER-4394", "finding"),
    "zookeeper-2354-trunc": ("zookeeper-2354-trunc.trace.json", "ZOOKEEPER-2354", "finding"),
    "truncate-keeps-uncommitted": ("truncate-keeps-uncommitted.schedule.json",
                                   "TRUNC-KEEPS-UNCOMMITTED", "finding"),
    "truncate-keeps-zk-3.8.0-held": ("truncate-keeps-zk-3.8.0-held.trace.json",
                                     "TRUNC-KEEPS-UNCOMMITTED", "finding"),
    "zookeeper-5094-zk-3.8.0": ("zookeeper-5094-zk-3.8.0.trace.json",
                                ("ZOOKEEPER-4712/5094 window",
                                 "ZOOKEEPER-5094 from a deposed leader"),
                                "finding"),
    "zookeeper-4646-acked-fixed": ("zookeeper-4646-acked-fixed.trace.json", "ZOOKEEPER-4646",
                                   "control"),
    "zookeeper-3911": ("zookeeper-3911.trace.json", "ZOOKEEPER-3911", "finding"),
    "zookeeper-4925-zk-3.9.3": ("zookeeper-4925-zk-3.9.3.trace.json", "ZOOKEEPER-4925",
                                "finding"),
}


def argv_of(finding: str, release: str) -> list[str]:
    """The command of one cell (run from the repository's root)."""
    argv = ["flock", LOCK, "python", "-m", "zabmc", "real"]
    if release != DEBIAN:
        argv += ["--release", release]
    return argv + [f"{CORPUS}/{FINDINGS[finding][0]}", "--json", "-q"]


def held(lock: str = LOCK):
    """The lock `flock LOCK` takes (flock(2) on the file), held by this process for a batch of
    cells, as a campaign of `zabmc real --random` holds it for all its schedules."""
    return real_lock(lock)


def one_run(finding: str, release: str, at: str, batch: int = 0) -> dict:
    """Run one cell; its JSON line. With `batch`, the caller holds the lock (`held`), and the cell
    is run without `flock`."""
    argv = argv_of(finding, release)[2:] if batch else argv_of(finding, release)
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    run = [a if a != "python" else sys.executable for a in argv]
    p = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    rec = {"finding": finding, "release": release, "command": " ".join(argv), "commit": at,
           "date": started, "exit": p.returncode,
           "elapsed_seconds": round(time.monotonic() - t0, 1)}  # with the wait for the lock
    if batch:
        rec["lock"] = (f"{LOCK} held by benchmarks/real_matrix.py --batch {batch} across the "
                       "batch's cells")
    try:
        out = json.loads(p.stdout)
    except ValueError:
        rec["error"] = (p.stderr.strip().splitlines() or ["no output"])[-1][:500]
        return rec
    rec["zookeeper"] = out.get("zookeeper")
    rec["realised"] = out.get("realised")
    rec["realised_to_step"] = out.get("realised_to_step")
    rec["model_steps"] = out.get("model_steps")
    rec["entries"] = out.get("entries")
    rec["entries_done"] = out.get("entries_done")
    rec["stop"] = (out.get("not_realised") or {}).get("text")
    rec["violations"] = list(dict.fromkeys(v["property"] for v in out.get("violations", ())))
    rec["messages"] = [v["message"] for v in out.get("violations", ())][:3]
    rec["verdict"] = ("violation" if rec["violations"] else
                      "no violation" if rec["realised"] else "not realised")
    rec["notes"] = list(out.get("notes", ()))
    rec["writes"] = [{k: w.get(k) for k in ("path", "server", "outcome", "zxid", "error")}
                     for w in out.get("writes", ())]
    rec["log_evidence"] = list(out.get("log_evidence", ()))[:40]  # what explains a stop
    rec["wall_seconds"] = out.get("wall_seconds")
    return rec


def load(path: str = DATA) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def same_code(commits, at: str) -> set:
    """The commits of `commits` whose zabmc/ and models/ (all a run's code) are those of `at`
    (`git diff --quiet`); a dirty `at` has none but itself."""
    if at.endswith("-dirty") or at == "unknown":
        return {at}
    same = {at}
    for c in set(commits) - same:
        p = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", c, at, "--", "zabmc", "models"],
                           capture_output=True)
        if p.returncode == 0:
            same.add(c)
    return same


def todo(records: list, findings, releases, at: str, again: bool, same=None) -> list[tuple]:
    """The cells to run: those without a run at `at` or at a commit of the same code (`same`)."""
    same = same_code({r.get("commit") for r in records}, at) if same is None else same
    done = {(r["finding"], r["release"]) for r in records if r.get("commit") in same}
    cells = [(f, r) for f in findings for r in releases if again or (f, r) not in done]
    return sorted(cells, key=lambda c: priority(*c))


#: the order cells are run in, so that a run cut short has the most telling cells: the findings
#: before the control and ZOOKEEPER-3911 (which stops at the same SNAP on Debian's 3.8.0), and
#: within them the releases with a model of their own first, then those with a model through
#: SAME, then those with none
PHASES = ((DEBIAN, "3.8.5", "3.9.2", "3.9.3", "3.9.5"), ("3.8.6", "3.9.4"),
          ("3.8.3", "3.8.4", "3.9.0", "3.9.1"), OPTIONAL)
LAST = ("zookeeper-4646-acked-fixed", "zookeeper-3911")


def priority(finding: str, release: str) -> tuple:
    phase = next((k for k, p in enumerate(PHASES) if release in p), len(PHASES))
    order = list(RELEASES + OPTIONAL)
    return (finding in LAST, phase, list(FINDINGS).index(finding), order.index(release))


# --- the table: the latest run of each cell beside the release's model ---------------------------

MODELS_DATA = os.path.join(ROOT, "reports", "data", "release-matrix.json")


def model_of(release: str) -> tuple[str | None, str]:
    """The release model that stands for `release` (models.zk.releases, read now: RELEASES, then
    SAME), or None and why none does."""
    from models.zk import releases

    version = "3.8.0" if release == DEBIAN else release
    if any(r.version == version for r in releases.RELEASES):
        return f"zk-{version}", ""
    if version in releases.SAME:
        return f"zk-{releases.SAME[version][0]}", ""
    return None, releases.NOT_MODELLED.get(version, "no model")


def model_verdict(model: str | None, row: str | tuple, cells: dict) -> tuple[str, str]:
    """(kind, text) of the release model's verdict on the row's bug: kind "found", "none" (a clean
    search, or absent by construction), "cannot" (a grain the model lacks, or a start that is not
    a state of it), "not modelled" or "not run". Of a tuple of rows: the first that finds it,
    else the first row's."""
    if model is None:
        return "not modelled", "not modelled"
    if isinstance(row, tuple):
        got = [model_verdict(model, r, cells) for r in row]
        return next((v for v in got if v[0] == "found"), got[0])
    from benchmarks.release_matrix import ROWS, SCENARIOS, STARTS, breakable, why_not

    if ROWS[row][0] not in breakable(model):
        why = why_not(model, row)
        return ("none" if why.startswith("absent") else "cannot"), why
    d = cells.get(f"{model}|{row}")
    if d is None:
        return "not run", "not run"
    if "refused" in d:
        return "cannot", f"n/a: the start is not a state of this model ({d['refused']})"
    if d["violations"]:
        depth = d["violations"][0]["depth"]
        if row in SCENARIOS:
            return "found", (f"finds it (depth {depth} from `{SCENARIOS[row]}`, reached in "
                             f"{d['start']['events']} events)")
        if row not in STARTS:
            return "found", f"finds it (depth {depth})"
        trace, k = STARTS[row]
        name = os.path.basename(trace).removesuffix(".trace.json")
        return "found", f"finds it (depth {depth} from step {k} of `{name}`)"
    scope = {"exhausted": "exhausted", "time-limit": "to the time limit"}.get(
        d["stop_reason"], f"to depth {d['config']['depth']}")
    if row in STARTS:
        scope += f" from step {STARTS[row][1]}"
    elif row in SCENARIOS:
        scope += f" from `{SCENARIOS[row]}`"
    return "none", f"none ({scope})"


def servers(rec: dict) -> tuple[str, str]:
    """(kind, text) of what the servers did in one run: kind "reproduced", "clean", "stopped" or
    "not run"."""
    if rec["exit"] == 10:
        return "reproduced", f"**reproduced** (exit 10: {', '.join(rec['violations'])})"
    if rec["exit"] == 0:
        return "clean", "realised, no violation (exit 0)"
    if rec["exit"] == 3:
        why = (rec.get("stop") or "not realised").removeprefix("not realised ")
        return "stopped", f"not realised (exit 3) {why}"
    return "not run", f"not run (exit {rec['exit']}: {rec.get('error', '')})"


#: servers' kind x model's kind -> does the model say what the servers did? A trace that stops as
#: not realised agrees with a model that finds nothing (the window is closed on this release)
AGREE = {("reproduced", "found"): "agrees", ("clean", "none"): "agrees",
         ("stopped", "none"): "agrees", ("reproduced", "none"): "disagrees",
         ("clean", "found"): "disagrees", ("stopped", "found"): "disagrees",
         ("reproduced", "cannot"): "model cannot tell", ("clean", "cannot"): "model cannot tell",
         ("stopped", "cannot"): "model cannot tell"}


def judged(rec: dict, cells: dict) -> tuple[str, str]:
    """(agreement, the cell's text) of one run."""
    _, row, role = FINDINGS[rec["finding"]]
    skind, stext = servers(rec)
    model, why = model_of(rec["release"])
    mkind, mtext = model_verdict(model, row, cells)
    if role == "control":  # a trace of the fixed rules: no release's model is asked about it
        agree = "control" if skind != "reproduced" else "disagrees"
        return agree, f"{stext}; control (`zk-fixed`'s events), no model verdict"
    agree = AGREE.get((skind, mkind), "-")
    if mkind == "not modelled":
        return agree, f"{stext}; not modelled"
    return agree, f"{stext}; model: {mtext}; **{agree}**"


def latest(records: list) -> dict:
    """(finding, release) -> the latest run of that cell (by date)."""
    out: dict = {}
    for r in sorted(records, key=lambda r: r["date"]):
        if r.get("finding") in FINDINGS:
            out[(r["finding"], r["release"])] = r
    return out


#: corpus traces of known bugs that `zabmc real` refuses (exit 2: "model ... has no real
#: counterpart": their models have no `real_translation`, zabmc.core.model), with their model
REFUSED = {"zookeeper-4925.trace.json": "zk-3.9.3-store",
           "zookeeper-4925-dfs.trace.json": "zk-3.9.3-store",
           "zookeeper-5094.trace.json": "zk-3.9.2-shutdown",
           "zookeeper-4712.trace.json": "zk-3.9.2-shutdown"}

#: what the table shows, by hand from its cells (2026-11-29) and apache/zookeeper's tags
SAYS = [
    "**ZOOKEEPER-4646 and ZOOKEEPER-4643** reproduce on every release before 3.8.5 and 3.9.2 "
    "(Debian's 3.8.0, 3.8.3, 3.8.4, 3.9.0, 3.9.1) and stop as not realised from them on, "
    "where the trace expects server 1's currentEpoch written before its proposal is on disk: "
    "ZOOKEEPER-4785's fix (PR #2111, as #2132 in 3.8.5 and #2133 in 3.9.2) appends and commits "
    "NEWLEADER's proposals before `setCurrentEpoch` (release-3.8.5 Learner.java 767-779).",
    "**ZOOKEEPER-4685** reproduces on the same releases. From 3.8.5 and 3.9.2 the trace is "
    "realised without an unexpected ACK: the QuorumPeer thread, not the SyncThread, now writes "
    "NEWLEADER's proposals, and sends their ACKs after NEWLEADER's (\"reply ACK of PROPOSAL after "
    "ACK of NEWLEADER\", release-3.8.5 Learner.java 803-808), so no proposal's ACK can come "
    "first; `zk-3.8.5` and `zk-3.9.2` find none to depth 30 either. So the same PR closed "
    "4685's window on branch-3.8 too, not only PR #2152 in 3.9.3.",
    "**ZOOKEEPER-4712 reproduces on every 3.8 release, 3.8.6 included, and on 3.9.0 to 3.9.2**; "
    "from 3.9.3 the trace stops (PR #2154 stops a learner's SyncRequestProcessor at shutdown, "
    "`ZooKeeperServer.shutdownComponents`; release-3.8.6 `Learner.shutdown` still calls "
    "`zk.shutdown(boolean)`, Learner.java 900): the newest 3.8 serves a write no quorum "
    "accepted.",
    "**ZOOKEEPER-2354 reproduces on every release, 3.9.5 included**: a server killed between "
    "NEWLEADER's snapshot and `setCurrentEpoch` refuses to start. Every release model that can "
    "break `load-exception` finds it; its fixes (PRs #1109, #1110) were never merged.",
    "**The TRUNC finding reproduces on every release, 3.8.0 to 3.9.5**, by both the schedule "
    "written by hand and the model search's own trace; every release model finds it.",
    "**ZOOKEEPER-4394** reproduces on the releases before 3.8.5 and 3.9.2 and is fixed in 3.9.3; "
    "on 3.8.5 and 3.9.2 the `zk` trace holds the wrong thread, and the release's own run "
    "throws (below).",
    "**ZOOKEEPER-5094 reproduces on every release, 3.8.0 to 3.9.5** (unfixed; PR #2459 "
    "proposed), by `zookeeper-5094-zk-3.8.0`, its run through `zk-3.8.0` with the TRUNC a real "
    "leader sends (the old leader's 0x100000002 beyond maxCommittedLog 0x100000001); the "
    "`learner-sync` and `sync-read` hooks queue 0x200000001's COMMIT before NEWLEADER and break "
    "the truncated follower's read after it. `Learner.shutdown` keeps the database "
    "(`zk.shutdown(syncMode == SNAP)`), so server 3's next ACKEPOCH names 0x200000001 from "
    "memory (\"Sending DIFF zxid=0x200000001 for peer sid: 3\"); it writes 0x200000002 after the "
    "gap, and restarted it serves /zab-3 without /zab-2. The search's own loss through the same "
    "window, `zookeeper-5094-zk-3.8.0-loss` (59 events from the initial state, by way of the goal "
    "`deposed-leader`), is realised on Debian's 3.8.0 too, exit 10 in four runs of four on "
    "2026-11-30 (no cell of this table: the release model's finding above). Every release model "
    "agrees, by a search of its own: on `zk-3.8.0` to `zk-3.9.2` the window search from the "
    "initial state "
    "finds `ack-from-memory`; from 3.9.3 on, where that search is clean to depth 34 (a bound, "
    "not a verdict), a search from the initial state in two stages finds 5094's window alone "
    "(`ack-from-applied-memory`): each model's own breadth-first search reaches the state "
    "after this trace's first 18 events (epoch 1's leader deposed with 0x100000002 on its disk "
    "alone, every server looking: before any step of the bug; the goal scenario "
    "`deposed-leader`), and the search from there finds the window 29 events later (row "
    "\"ZOOKEEPER-5094 from a deposed leader\" of \"One model per release\": `python "
    "benchmarks/release_matrix.py --rows \"ZOOKEEPER-5094 from a deposed leader\" --write`, "
    "each cell `zabmc check --model zk-3.9.3 --scenario deposed-leader --nodes 3 --proposals 1 "
    "--max-timeouts 1 --depth 32 --invariant ack-from-applied-memory`). In that run a server is "
    "truncated by epoch 2's leader, applies the COMMIT of 0x200000001 in memory before "
    "NEWLEADER, loses its leader and acknowledges epoch 3's NEWLEADER with 0x200000001 on no "
    "disk of its own. The same row finds it on `zk-3.7.0` and `zk-3.8.0` too (29 events on, "
    "where `ack-from-memory` meets 4712's window first: their shutdown leaks the SyncThread) "
    "and on `zk-3.8.5` and `zk-3.9.2` (27 events on, from the goal reached in 17). "
    "From step 28 of the trace (epoch 2 established, server 2 leading server 1, server 3 "
    "looking), `--nodes 3 --proposals 1 --max-timeouts 1 --depth 32 --invariant "
    "ack-from-memory` finds 5094's window at depth 19 on `zk-3.8.0` (30,463 states), `zk-3.9.3` "
    "(18,872) and `zk-3.9.4` (18,809) alike (one run each, with S15 of models/zk/README.md: "
    "`zabmc check --model M --from tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json:28` and "
    "those flags). "
    "Those models keep a TRUNC's memory at the shutdown (models/zk/README.md R3), as the "
    "releases do: 3.9.3's fix of ZOOKEEPER-4712 (PR #2154) stops the SyncThread only; "
    "`Learner.shutdown` still calls `zk.shutdown(self.getSyncMode().equals(SNAP))` "
    "(release-3.9.3 Learner.java 910, release-3.9.4 and 3.9.5 924), and "
    "`ZooKeeperServer.shutdown(boolean)` (release-3.9.3 to 3.9.5 ZooKeeperServer.java 922-949) "
    "does nothing for a server that is not running, which a follower before NEWLEADER is not, "
    "but clear the database of a full shutdown: a TRUNC's (false) keeps the COMMIT it applied in "
    "memory (`writeToTxnLog` false, release-3.9.3 Learner.java 620).",
    "**ZOOKEEPER-3911** (fixed in 3.6.3, PR #1445) is not realised on any release: at step 19, "
    "where the `zk-pre3911` follower acknowledges NEWLEADER with 1.1 neither written nor queued, "
    "the servers already have 1.1 on disk (3.8.0 to 3.8.4, 3.9.0, 3.9.1, 3.9.3 to 3.9.5), or, on "
    "3.8.5, 3.8.6 and 3.9.2, still have currentEpoch 1 (their QuorumPeer thread writes "
    "NEWLEADER's proposals before currentEpoch, PR #2111). No release model from 3.7.0 on finds "
    "it.",
    "The control, `zookeeper-4646-acked`'s events on `zk-fixed`, is realised without a "
    "violation on every release.",
    "**ZOOKEEPER-4925 reproduces on 3.9.3 alone** (`zk-3.9.3`'s run, all 58 steps realised): "
    "server 2, synchronised in epoch 2 by a DIFF that commits 0x100000002, applies it at "
    "NEWLEADER with `processTxn(hdr, rec)`, outside its committed log (release-3.9.3 "
    "Learner.java 783-784); leading epoch 3 with that database it logs \"Synchronizing with "
    "Learner sid: 1 maxCommittedLog=0x100000001 minCommittedLog=0x100000001 "
    "lastProcessedZxid=0x100000002 peerLastZxid=0x100000001\" and sends an empty DIFF, and "
    "server 1 commits 0x300000001 without /zab-1. On 3.8.5, 3.8.6, 3.9.2, 3.9.4 and 3.9.5 the "
    "run stops at step 53, where server 1 has 0x100000002 after epoch 3's DIFF: 3.8.5 and 3.9.2 "
    "commit the DIFF's transactions as Requests after UPTODATE (`fzk.commit`, release-3.9.2 "
    "Learner.java 815), into the committed log, and 3.9.4 applies them as Requests at NEWLEADER "
    "(`fzk.processTxn(request)`, release-3.9.4 Learner.java 799; PR #2254). On "
    "Debian's 3.8.0, 3.8.3, 3.8.4, 3.9.0 and 3.9.1 it stops at step 38, epoch 2's NEWLEADER: "
    "there `setCurrentEpoch` comes before the DIFF's transactions are handed to the SyncThread "
    "(release-3.8.0-1 Learner.java 752, then `logRequest`), so the `set-epoch` hold stops the "
    "thread before 0x100000002 is written, where 3.9.3 has written it.",
]

#: explanations of the cells where the servers and the model disagree: (finding, releases, text).
#: The section shows each whose cells disagree, and lists a disagreement no note covers
NOTES: list = [
    ("zookeeper-2354-trunc", (DEBIAN,),
     "the servers reproduce ZOOKEEPER-2354 (the restarted server 3 exits: \"The current epoch, "
     "1, is older than the last zxid, 8589934593\", `QuorumPeer.loadDataBase`), while "
     "`zk-3.8.0`'s search in \"One model per release\" is clean only to depth 40 (its row's "
     "flags, `--depth 40`): a bound, not a verdict. This trace is 54 events of "
     "`zk-3.7.0-epoch`, and tests/test_zk_releases.py "
     "(`test_every_corpus_counterexample_is_a_run_of_its_release_model`) lifts it into "
     "`zk-3.7.0`, which breaks `load-exception` at its step 54; `zk-3.8.0`'s rules are "
     "3.7.0's (models/zk/model.py `Rel380Rules` adds only the tag; models/zk/releases.py: "
     "release-3.8.0-1's `Learner.syncWithLeader` and `Learner.shutdown` read as 3.7.0's). In "
     "3.7.0's and 3.8.0's code the window opens only under a TRUNC or a SNAP (models/zk/README.md "
     "K1: `zk.takeSnapshot(syncSnapshot)` then `self.setCurrentEpoch(newEpoch)` in "
     "`Learner.syncWithLeader`, release-3.8.0-1 Learner.java 749-752), so the shortest run is "
     "longer than 40 events; the model has it."),
    ("zookeeper-4394-join", ("3.8.5", "3.8.6", "3.9.2"),
     "the servers realise every step and nothing throws, while `zk-3.8.5` and `zk-3.9.2` find "
     "ZOOKEEPER-4394. The trace is of `zk` (3.7.0's rules: NEWLEADER's proposals handed to the "
     "SyncThread), and `zabmc real` keeps the joining server 2's proposal 0x100000002 in its "
     "SyncThread with the `sync-commit` hook, a Byteman rule at the entry of "
     "`ZKDatabase.commit` (zabmc/real/hooks.py). From 3.8.5 and 3.9.2 (ZOOKEEPER-4785, PR #2111 "
     "as #2132 and #2133) the QuorumPeer thread appends NEWLEADER's proposals and calls "
     "`ZKDatabase.commit` itself (release-3.8.5 Learner.java 767-772, release-3.9.2 763-768), "
     "so the hook held server 2's QuorumPeer thread at NEWLEADER (its log, from a rerun with "
     "--keep: \"Creating new log file: log.100000002\", then \"zabmc-hook: held "
     "sync-commit\"), before `packetsNotCommitted.clear()`, currentEpoch and the ACK; held to "
     "the run's end, it never read the leader's COMMIT. Roles, epoch files and disks still "
     "matched the model's at every step, so conformance did not see the run go otherwise. The "
     "bug is unchanged there: the COMMIT branch of `Learner.syncWithLeader` still reads "
     "`packetsNotCommitted.peekFirst()`'s `hdr` (release-3.8.5 Learner.java 656-657, "
     "release-3.9.2 652-653) after NEWLEADER emptied the queue (3.8.5 line 775). Run with the "
     "release's own grains it throws: the same 38 events lifted into `zk-3.8.5` and `zk-3.9.2` "
     "(`python benchmarks/real_matrix.py --lift zk-3.8.5 "
     "tests/corpus/zk/zookeeper-4394-join.trace.json OUT`: 39 events, the owed NEWLEADER of "
     "the leader's forwarding grain added; `sync-exception` at step 39; "
     "[data/real-matrix/](data/real-matrix/)) hold server 1's SyncThread with `sync-append` "
     "instead and server 2's QuorumPeer thread before its NEWLEADER ACK. As exported they stop "
     "with that thread held (realised, no violation, on 3.8.5 and 3.9.2): the model reads the "
     "COMMIT while the ACK is owed, and ZooKeeper writes the ACK before it "
     "reads the next packet (release-3.8.5 Learner.java 783). With a last entry added by hand that lets the thread go "
     "(`*-released.schedule.json`), server 2 throws on 3.8.5 (\"Exception when following the "
     "leader\", `java.lang.NullPointerException: Cannot read field \"hdr\" because \"pif\" "
     "is null` at `Learner.syncWithLeader(Learner.java:657)`; exit 10, "
     "[data/real-matrix/runs.jsonl](data/real-matrix/runs.jsonl)) and on 3.9.2 (the same, at "
     "`Learner.java:653`). So ZOOKEEPER-4394 is "
     "real in 3.8.5 and 3.9.2, as their models say (3.8.6's ZAB code is 3.8.5's, "
     "models.zk.releases.SAME; the lifted run was not run there); the cells disagree because the "
     "`zk` trace's hold point holds another thread there. 3.9.3 (PR #2152) keeps the outstanding proposals "
     "in `packetsNotLogged` at NEWLEADER (release-3.9.3 Learner.java 760-784, its comment "
     "naming ZOOKEEPER-4394), and there the same trace agrees."),
]


def column(release: str) -> str:
    """A column's heading: the release, and the model that stands for it."""
    model, _ = model_of(release)
    name = "Debian 3.8.0" if release == DEBIAN else release
    return f"{name} (`{model}`)" if model else f"{name} (no model)"


def trace_model(finding: str) -> str:
    """The model a finding's trace was found on; a schedule's: written by hand."""
    with open(os.path.join(ROOT, CORPUS, FINDINGS[finding][0])) as f:
        model = json.load(f).get("model")
    return f"`{model}`" if model else "written by hand"


def section(records: list, cells: dict | None = None) -> str:
    if cells is None:
        with open(MODELS_DATA) as f:
            cells = json.load(f)
    last = latest(records)
    rels = [r for r in RELEASES + OPTIONAL if any(k[1] == r for k in last)]
    finds = [f for f in FINDINGS if any(k[0] == f for k in last)]
    commits = sorted({last[k]["commit"] for k in last})
    dates = sorted({last[k]["date"][:10] for k in last})
    lines = [
        HEADING, "",
        "Produced by `python benchmarks/real_matrix.py` (then `--table --write`): each cell one "
        "run, in a fresh process, of `flock /tmp/zabmc-real.lock python -m zabmc real "
        "[--release V] tests/corpus/zk/TRACE --json -q` on three servers on 127.0.0.1 (\"Debian "
        "3.8.0\": Debian's package, no --release), at commit"
        f"{'s' if len(commits) > 1 else ''} {', '.join(f'`{c}`' for c in commits) or '-'} on "
        f"{', '.join(dates) or '-'}; every run, with its exact command, is a line of "
        "[data/real-matrix.jsonl](data/real-matrix.jsonl) (the latest run of each cell is shown). "
        "Beside what the servers did, the verdict of the release's model on the row's bug from "
        "the section above (reports/data/release-matrix.json; a release whose ZAB code is a "
        "modelled one's, models.zk.releases.SAME, takes that model's): **agrees** when both "
        "find the bug, or when the model finds none and the servers do not reproduce it "
        "(realised clean, or stopped where the trace's window no longer exists); **disagrees** "
        "otherwise, each such cell explained below the table. A trace is one run of one "
        "model's rules (its model is named in the row): on another release it can stop as not "
        "realised while that release's model still finds the bug by another run.",
        "",
        "Not in the table: "
        + ", ".join(f"`{t}` (`{m}`)" for t, m in REFUSED.items())
        + ": `zabmc real` refuses them (`python -m zabmc real tests/corpus/zk/T --json -q` exits "
        "2 before starting a server: \"model ... has no real counterpart\"; no schedule is "
        "written for a model without a `real_translation`, zabmc.core.model), so neither "
        "ZOOKEEPER-5094 nor ZOOKEEPER-4925 has a row of these: 5094's is "
        "`zookeeper-5094-zk-3.8.0`, its run through the release model `zk-3.8.0` "
        "(tests/corpus/zk/build_380_snap.py: `zookeeper-5094`'s TRUNC across epochs is a "
        "snapshot on a real leader), and 4925's is the release model `zk-3.9.3`'s run of it "
        "(`zookeeper-4925-zk-3.9.3`, tests/corpus/zk/build_4925_release.py: the store trace's "
        "story in steps real servers can be driven through); nor the breadth-first traces of the "
        "bugs that have a "
        "row, which stop on Debian's 3.8.0 where the model's leader sends a DIFF and the real "
        "one a snapshot (\"On ZooKeeper 3.8.0\"). The `-acked`, `-diff`, `-served`, `-join`, "
        "`-trunc` and `-zk-3.8.0` traces were built to be realised on 3.8.0; `zookeeper-3911` (`zk-pre3911`) "
        "stands for ZOOKEEPER-3911, fixed before 3.8.0.",
        "",
        "| finding (trace) | its model | bug | " + " | ".join(column(r) for r in rels) + " |",
        "|---|---|---|" + "---|" * len(rels),
    ]
    dis = []
    for f in finds:
        rows = FINDINGS[f][1] if isinstance(FINDINGS[f][1], tuple) else (FINDINGS[f][1],)
        row = " or ".join(rows) + (" (control)" if FINDINGS[f][2] == "control" else "")
        out = []
        for r in rels:
            rec = last.get((f, r))
            if rec is None:
                out.append("not run")
                continue
            agree, text = judged(rec, cells)
            out.append(text)
            if agree == "disagrees":
                dis.append((f, r))
        lines.append(f"| `{FINDINGS[f][0]}` | {trace_model(f)} | {row} | " + " | ".join(out)
                     + " |")
    lines += ["", "What the rows say (each claim rests on the cells above and the source named):",
              ""] + [f"- {x}" for x in SAYS]
    lines += ["", f"Disagreements: {len(dis)} of {sum(1 for k in last)} cells."]
    covered = set()
    for f, releases_, text in NOTES:
        mine = [(ff, r) for ff, r in dis if ff == f and r in releases_]
        if mine:
            covered |= set(mine)
            lines += ["", f"- `{f}` on {', '.join('Debian 3.8.0' if r == DEBIAN else r for _, r in mine)}: "
                      + text]
    rest = [c for c in dis if c not in covered]
    if rest:
        lines += ["", "Not yet explained: " + ", ".join(
            f"`{f}` on {'Debian 3.8.0' if r == DEBIAN else r}" for f, r in rest) + "."]
    return "\n".join(lines) + "\n"


def lift(model: str, src: str, dst: str) -> str:
    """Write the run of `src`, a trace of an abstraction (models.zk.releases.ABSTRACTIONS),
    lifted into the release model `model` as tests/test_zk_releases.py's `lift` does (each owed
    step of a layer the abstraction lacks taken as soon as it is enabled), as a trace of `model`
    that `zabmc replay` confirms and `zabmc real` translates with that model's grains; the
    violated property or None."""
    from models.zk import releases
    from zabmc.core import events as E
    from zabmc.core.errors import UsageError
    from zabmc.core.trace import read
    from zabmc.explore.trace import env_of

    tf = read(src)
    if tf.model not in releases.ABSTRACTIONS:
        raise UsageError(f"{src}: {tf.model} is not an abstraction of a release model")
    owed = set(releases.LAYER_ACTIONS) - set(releases.ABSTRACTIONS[tf.model].own)
    env = env_of(model, dict(tf.config, depth=10 * len(tf.events) + 50), tf.invariants)
    s, v = env.initial()
    out: list = []
    for want in [*tf.events, None]:
        while v is None:  # the owed steps, as soon as enabled
            step = next(((ev, nxt, w) for ev, nxt, w in env.successors(s) if ev.kind == "action"
                         and ev.to_json(env.model)["action"][0] in owed), None)
            if step is None:
                break
            out.append(step[0].to_json(env.model))
            s, v = step[1], step[2]
        if v is not None or want is None:
            break
        item = E.from_json(env, s, want)
        if item is None:
            raise UsageError(f"{src}: step {len(out) + 1} ({E.brief(want)}) is not enabled "
                             f"in {model}")
        ev, s, v = item
        out.append(ev.to_json(env.model))
    with open(src) as f:
        doc = json.load(f)
    for key in ("states", "final_sha256", "violation"):
        doc.pop(key, None)
    doc.update(model=model, events=out)
    if v is not None:
        doc["violation"] = {"property": v.property, "message": v.message,
                            "nodes": list(v.nodes), "txns": [], "step": len(out)}
    with open(dst, "w") as f:
        json.dump(doc, f, indent=1)
    return v.property if v is not None else None


def record(rec: dict, path: str) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(f"{rec['date']} {rec['finding']} on {rec['release']}: exit {rec['exit']} "
          f"{rec.get('verdict', '')} "
          f"{rec.get('violations') or rec.get('stop') or rec.get('error') or ''} "
          f"({rec.get('wall_seconds')} s)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], metavar="RELEASE|FINDING",
                    help="only these releases (debian-3.8.0, 3.8.0 ... 3.9.5) and/or findings "
                         "(repeatable)")
    ap.add_argument("--again", action="store_true",
                    help="run cells already in the data file for this commit (or one of the "
                         "same zabmc/ and models/) again")
    ap.add_argument("--table", action="store_true",
                    help="build the section from the data file and run nothing")
    ap.add_argument("--write", action="store_true", help="write the section into "
                    "reports/zookeeper.md after the runs (else print it)")
    ap.add_argument("--batch", type=int, default=0, metavar="N",
                    help="hold the lock across N cells at a time (each still a fresh process), "
                         "as a `zabmc real --random` campaign holds it across its schedules, "
                         "instead of each run waiting for it")
    ap.add_argument("--data", default=DATA, help="the JSON-lines file [default: %(default)s]")
    ap.add_argument("--lift", nargs=3, metavar=("MODEL", "TRACE", "OUT"),
                    help="write TRACE (of an abstraction) lifted into the release model MODEL "
                         "to OUT, and exit (no server is started)")
    a = ap.parse_args()
    if a.lift:
        from zabmc.core.errors import UsageError

        try:
            got = lift(*a.lift)
        except UsageError as e:
            print(f"real_matrix.py: error: {e}", file=sys.stderr)
            return 2
        print(f"wrote {a.lift[2]}: {got or 'no violation'}")
        return 0
    known = set(RELEASES) | set(OPTIONAL)
    bad = [x for x in a.only if x not in known and x not in FINDINGS]
    if bad:
        ap.error(f"--only {bad[0]}: neither a release ({', '.join(RELEASES + OPTIONAL)}) nor a "
                 f"finding ({', '.join(FINDINGS)})")
    if not a.table:
        rels = [r for r in RELEASES + OPTIONAL if r in a.only] or list(RELEASES)
        finds = [f for f in FINDINGS if f in a.only] or list(FINDINGS)
        at = commit()
        cells = todo(load(a.data), finds, rels, at, a.again)
        step = a.batch or 1
        for k in range(0, len(cells), step):
            with held() if a.batch else nullcontext():
                for f, r in cells[k:k + step]:
                    record(one_run(f, r, at, a.batch), a.data)
    write_zk_section(HEADING, section(load(a.data)), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
