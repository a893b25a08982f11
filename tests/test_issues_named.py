"""A counterexample says what it is (issue #62, item 7): each zk corpus trace, replayed, names the
known ZooKeeper issues whose windows its run passes through (models/zk/issues.py, the model
contract's `known_issues`), in the order they open; models that follow no implementation name
nothing, and `zabmc check` writes, prints and summarises what the zk models name."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from zabmc.core.model import KnownIssue, get_model
from zabmc.explore.trace import load, name_issues, replay

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "zk"
I3911, I4643, I4646 = "ZOOKEEPER-3911", "ZOOKEEPER-4643", "ZOOKEEPER-4646"

# Hand-checked from the window definitions (models/zk/windows.py, storage.py, shutdown.py) and
# the failures (handlers.py, fine.py, storage.py, epoch.py), each trace's events read at the step:
# (issue, the step its window opens), in the order they open; at one step in models/zk/issues.py's
# order (the start-up, then a follower's NEWLEADER: currentEpoch written before its ACK).
#
# At the coarse grain (zk, zk-fle, zk-pre3911) one NEWLEADER step writes currentEpoch, hands the
# DIFF's committed transactions to the SyncThread (or, before 3911's fix, keeps them unlogged) and
# acknowledges: epoch-before-disk (4643) and ack-before-disk (4646) open together there, and on
# zk-pre3911 ack-before-logging (3911) with them, since a transaction not handed to the log is
# not on disk either. The coarse model cannot tell 4643's window from 4646's; the data-loss traces
# pass through both, whichever the file is named after.
EXPECTED = {
    # K4: node 2 restarts (step 54) with a disk of epoch 2 and currentEpoch 1: loadDataBase
    # throws. Its TRUNC synchronisation wrote the snapshot before currentEpoch (the epoch grain),
    # with nothing committed left in memory: no D18 window opens.
    "zookeeper-2354-trunc": [("ZOOKEEPER-2354", 54)],
    # step 17: node 0 handles NEWLEADER of epoch 2 with 1.1 (committed by the DIFF) still in
    # packetsNotCommitted: not handed to its log (3911), so not on disk when currentEpoch is
    # written (4643) and the ACK sent (4646)
    "zookeeper-3911-window": [(I3911, 17), (I4643, 17), (I4646, 17)],
    # the same at step 18, before the crash and election that lose 1.1 (primary-integrity, 29)
    "zookeeper-3911": [(I3911, 18), (I4643, 18), (I4646, 18)],
    # the COMMIT at step 38 finds packetsNotCommitted empty after NEWLEADER: the NPE (4394); the
    # DIFF that joined node 1 committed nothing, so no window opens
    "zookeeper-4394-join": [("ZOOKEEPER-4394", 38)],
    "zookeeper-4394": [("ZOOKEEPER-4394", 18)],
    # step 39: node 0's NEWLEADER of epoch 2 with 1.2 (committed by the DIFF) queued for the
    # SyncThread: currentEpoch written and ACK sent with it not on disk; node 0 crashes before
    # the write and, with the new epoch, wins and truncates 1.2 (sane-history, 48)
    "zookeeper-4643-acked": [(I4643, 39), (I4646, 39)],
    "zookeeper-4643-window": [(I4643, 17), (I4646, 17)],  # node 0's NEWLEADER, 1.1 queued
    "zookeeper-4643": [(I4643, 19), (I4646, 19)],  # node 2's NEWLEADER, 1.1 queued
    # the same events on zk-fixed: the proposals are written before currentEpoch and the ACK,
    # so no window opens; the run loses nothing and breaks nothing. It names no issue, and says
    # so without calling it a bug.
    "zookeeper-4646-acked-fixed": [],
    "zookeeper-4646-acked": [(I4643, 39), (I4646, 39)],  # the run of 4643-acked, a step later
    "zookeeper-4646-fle": [(I4643, 28), (I4646, 28)],  # node 0's NEWLEADER at FLE's grain
    "zookeeper-4646-window": [(I4643, 17), (I4646, 17)],
    "zookeeper-4646": [(I4643, 18), (I4646, 18)],
    # the threads' grain (zk-3.7.0): NEWLEADER (step 41) writes currentEpoch with 1.2 queued:
    # 4643's window; the SyncThread writes 1.2 (42) before the NEWLEADER ACK, so 4646's never
    # opens; the leader reads 1.2's ACK where it waits for NEWLEADER's (43): 4685
    "zookeeper-4685-diff": [(I4643, 41), ("ZOOKEEPER-4685", 43)],
    "zookeeper-4685": [(I4643, 16), ("ZOOKEEPER-4685", 18)],  # the same, steps 16-18
    # the SyncThread a shutdown left running writes 1.1 after node 0's data tree moved on to 2.1
    # (flush, step 26 / 24): stale-log-write; ack-from-memory never holds (the leaked queue is
    # written before node 0 acknowledges a NEWLEADER with it missing)
    "zookeeper-4712-served": [("ZOOKEEPER-4712", 26)],
    "zookeeper-4712": [("ZOOKEEPER-4712", 24)],
    # NEWLEADER on 3.9.3 applies the DIFF's 1.2 outside the committed log (S10's window): the
    # hole opens there, before the leader's DIFF that skips it (sync-loses-committed, 35 / 41)
    "zookeeper-4925-dfs": [("ZOOKEEPER-4925", 29)],
    "zookeeper-4925": [("ZOOKEEPER-4925", 34)],
    # the release model zk-3.9.3 (tests/corpus/zk/build_4925_release.py): node 1's NEWLEADER of
    # epoch 2 (38) applies the DIFF's committed 1.2 outside its committed log; zk-3.9.4, with the
    # fix (PR #2254), adds it there: no window
    "zookeeper-4925-zk-3.9.3": [("ZOOKEEPER-4925", 38)],
    "zookeeper-4925-zk-3.9.4-fixed": [],
    # node 2 acknowledges NEWLEADER (48) while its data tree holds 2.1, applied in memory only by
    # an interrupted TRUNC and not on disk: ack-from-memory, whose message says 5094 (not a
    # leaked SyncThread's queue, 4712)
    "zookeeper-5094": [("ZOOKEEPER-5094", 48)],
    # zookeeper-4646-acked lifted into zk-3.8.0 (build_380_snap.py): the same NEWLEADER, now at
    # step 41 (the layers' owed steps come before it), and its ACK a step of its own (42)
    "zookeeper-4646-acked-zk-3.8.0": [(I4643, 41), (I4646, 42)],
    # zk-3.8.0 with its storage grain (tests/corpus/zk/build_380_snap.py): node 0's NEWLEADER of
    # epoch 2 (24) queues the DIFF's committed 1.2 for its SyncThread (4643's window; its ACK is
    # owed, so 4646's does not open), which writes and acknowledges it first (26): 4685
    "zookeeper-4685-zk-3.8.0": [(I4643, 24), ("ZOOKEEPER-4685", 26)],
    # node 1's NEWLEADER writes the SNAP's snapshot (1.1) and owes currentEpoch; the crash comes
    # between, and the restart (22) finds 1.1 beside currentEpoch 0. A SNAP's transactions are
    # on disk before the epoch: no D18 window
    "zookeeper-2354-zk-3.8.0": [("ZOOKEEPER-2354", 22)],
    # node 1's SNAP (at 1.0) carries the outstanding 1.1 as a PROPOSAL; NEWLEADER empties
    # packetsNotCommitted, and 1.1's COMMIT (22) finds it empty: the NPE. 1.1 was not committed
    # when synchronised: no window
    "zookeeper-4394-zk-3.8.0": [("ZOOKEEPER-4394", 22)],
    # the search's own run (zabmc check --model zk-3.8.0 ... --invariant load-exception): node 1
    # joins the leader of epoch 1 after its commit of 1.1 (its ACKEPOCH in flight until then),
    # gets a SNAP at 1.1, and crashes owing currentEpoch; the restart (21) throws
    "zookeeper-2354-zk-3.8.0-search": [("ZOOKEEPER-2354", 21)],
    # the search's own run (--invariant sync-exception): node 1's ACKEPOCH in flight while the
    # leader proposes 1.1; its SNAP at 1.0 carries 1.1, NEWLEADER empties packetsNotCommitted,
    # and 1.1's COMMIT (20) finds it empty
    "zookeeper-4394-zk-3.8.0-search": [("ZOOKEEPER-4394", 20)],
    # the search's own run (--invariant leader-unexpected-ack): node 0 writes 1.1 after its
    # leader's timeout and queues 1.2, which the shutdown leaves to the old SyncThread; in
    # epoch 2 the DIFF's 1.2 is queued at NEWLEADER (23: 4643's window) and acknowledged first
    # (25): 4685
    "zookeeper-4685-zk-3.8.0-search": [(I4643, 23), ("ZOOKEEPER-4685", 25)],
    # the search's own 4646 window (--invariant ack-before-disk): node 0 writes 1.1 after its
    # leader's timeout and crashes with 1.2 in flight; in epoch 2 the DIFF's 1.2 is queued at
    # NEWLEADER (22) and NEWLEADER acknowledged with it (23); the search stops there
    "zookeeper-4646-zk-3.8.0-search": [(I4643, 22), (I4646, 23)],
    # the search's own 4646 loss (three nodes: the window search, then the loss search from
    # it): its first 23 events are 4685's search run's, 1.2 queued at NEWLEADER (23) and
    # NEWLEADER acknowledged with it (24); node 0 crashes after its leader has its quorum (26),
    # loses 1.2 and, with currentEpoch 2, leads node 2 without it (primary-integrity, 37)
    "zookeeper-4646-zk-3.8.0-loss": [(I4643, 23), (I4646, 24)],
    # the search's own 4643 loss, from the initial state: from the goal epoch1-cut-off (26: 1.2
    # committed by nodes 2 and 1, node 0 cut off), node 1 leads epoch 2 and node 0 writes
    # currentEpoch 2 at NEWLEADER with the DIFF's 1.2 queued (34), then crashes before its ACK
    # (35): no 4646 window; it leads epoch 3 without 1.2. Epoch 1's SNAP NEWLEADER of node 0
    # (20) opens no window: its synchronisation committed nothing beyond the snapshot
    "zookeeper-4643-zk-3.8.0-loss": [(I4643, 34)],
    # the search's own 4712 run (--strategy dfs, stale-log-write) and its continuation: node 0's
    # leaked SyncThread writes 1.1 after 2.1 (30); reloaded, node 0 follows node 2 by an empty
    # DIFF with 1.1 that node 2 never had (primary-integrity, 46). No D18 window opens
    "zookeeper-4712-zk-3.8.0-loss": [("ZOOKEEPER-4712", 30)],
    # the release model zk-3.8.0 truncates as FileTxnLog.truncate does: node 1's TRUNC to 0.0
    # (22) keeps 1.1, which no JIRA issue describes; the divergence follows at 31
    "truncate-keeps-zk-3.8.0": [
        ("TRUNC-KEEPS-UNCOMMITTED", 22)],
    # the same, with node 2's synchronisation delivered first (its NEWLEADER ACK owed): the TRUNC
    # at 24, the divergence at 33
    "truncate-keeps-zk-3.8.0-held": [("TRUNC-KEEPS-UNCOMMITTED", 24)],
    # zookeeper-5094 through zk-3.8.0 (build_380_snap.py): node 0's SNAP writes its snapshot at
    # NEWLEADER (24) before currentEpoch (25), no D18 window; node 2's TRUNC (38) and the COMMIT
    # it applies in memory (39) are interrupted before NEWLEADER, and its next NEWLEADER ACK (51)
    # is sent with 2.1 in its data tree and not on disk: ack-from-memory, 5094's kind. The COMMIT
    # applied 2.1 with processTxn(hdr, txn), outside the committed log that TRUNC reloaded (1.1;
    # models/zk/README.md S15), and the timeout (40) keeps that database: 4925's hole, on 3.8.0
    "zookeeper-5094-zk-3.8.0": [("ZOOKEEPER-4925", 40), ("ZOOKEEPER-5094", 51)],
    # the search's own 5094 loss (from the goal scenario deposed-leader, then primary-integrity):
    # node 1, the deposed leader, truncated to 1.1 by epoch 2's leader (35), applies 2.1's COMMIT
    # before NEWLEADER (38) outside its committed log; its connection lost (40), 4925's hole; it
    # acknowledges epoch 3's NEWLEADER with 2.1 in memory only (47), crashes and, leader of
    # epoch 4, tells node 2 to TRUNC to 1.1, which keeps 2.1 (55)
    "zookeeper-5094-zk-3.8.0-loss": [("ZOOKEEPER-4925", 40), ("ZOOKEEPER-5094", 47),
                                     ("TRUNC-KEEPS-UNCOMMITTED", 55)],
    # read by hand off the trace: node 2, truncated to 1.1 with 2.1's COMMIT before NEWLEADER
    # (S15), applies 2.1 outside its committed log at NEWLEADER, step 42
    "zookeeper-4925-zk-3.8.0-trunc": [("ZOOKEEPER-4925", 42)],
    # the search's own 4925 loss (from the built run's step 32): node 2, truncated to 1.1 with
    # 2.1 forwarded and committed before its NEWLEADER, applies 2.1 outside its committed log at
    # NEWLEADER (53); its TRUNC of node 0 to 1.1 (65) cuts a log that holds 1.1 as a record, so
    # no TRUNC-KEEPS window opens, and node 0 leads without 2.1 (primary-integrity, 80)
    "zookeeper-4925-zk-3.8.0-loss": [("ZOOKEEPER-4925", 53)],
    # the same loss from the initial state, its first stage a search for the goal scenario
    # deposed-leader-synced (30 events where the file above has 32 built ones, then the same 48):
    # read by hand off the trace, its steps are the file above's less two: NEWLEADER at 51, the
    # TRUNC of node 0 at 63 (no TRUNC-KEEPS window), primary-integrity at 78
    "zookeeper-4925-zk-3.8.0-loss-search": [("ZOOKEEPER-4925", 51)],
}


def _named(name: str):
    return replay(load(str(CORPUS / f"{name}.trace.json"))).trace


def test_the_table_covers_the_corpus():
    assert sorted(p.name[:-len(".trace.json")] for p in CORPUS.glob("*.trace.json")) == \
        sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_corpus_trace_names_its_issues(name):
    t = _named(name)
    got = [(x.issue, x.step) for x in t.known_issues]
    assert got == EXPECTED[name]
    # the issue the file is named after is among them (the fixed model's run names none)
    jira = re.match(r"zookeeper-(\d+)", name)
    issue = "ZOOKEEPER-" + jira.group(1) if jira else "TRUNC-KEEPS-UNCOMMITTED"
    assert (issue in [i for i, _ in got]) == (not name.endswith("-fixed"))
    for x in t.known_issues:
        assert isinstance(x, KnownIssue) and "\n" not in x.why
        assert x.issue in x.why  # the property's own message names it: one line of why
        # a window opens before (or at) the violation it leads to
        assert t.violation is None or x.step <= t.violation_step


def test_the_issues_are_the_ones_the_properties_name():
    """models/zk/issues.py's table against the sources of models/zk/properties.py: every issue a
    property marks is named in its source, and every property whose source names a JIRA issue
    marks one (leader-gives-up, a designed behaviour, D9, names none)."""
    from models.zk.issues import ISSUES
    from models.zk.properties import PROPERTIES

    src = {p.name: p.source for p in PROPERTIES}
    assert set(ISSUES) <= set(src)
    for prop, issues in ISSUES.items():
        assert all(x in src[prop] for x in issues), prop
    assert {p for p, s in src.items() if "ZOOKEEPER-" in s or "TRUNC-KEEPS" in s} == set(ISSUES)


def test_issues_are_named_whatever_the_trace_checked():
    """zookeeper-4646-window checks ack-before-disk alone; its run names 4643's window too, since
    every property of the model's own is checked along the replayed run."""
    raw = json.loads((CORPUS / "zookeeper-4646-window.trace.json").read_text())
    assert raw["invariants"] == ["ack-before-disk"] and "known_issues" not in raw
    assert [x.issue for x in _named("zookeeper-4646-window").known_issues] == [I4643, I4646]


def test_models_that_follow_no_implementation_name_nothing():
    """db19 (a db-19 counterexample) and zab (a liveness lasso) have no `known_issues`: None,
    nothing written, nothing said; a zk lasso names what it passes through (here nothing)."""
    from zabmc.report.words import issue_lines, issue_names

    assert getattr(get_model("db19"), "known_issues", None) is None
    assert getattr(get_model("zab"), "known_issues", None) is None
    for path in (ROOT / "tests" / "corpus" / "db19" / "fifo-crash-two-leaders.trace.json",
                 ROOT / "reports" / "data" / "liveness" /
                 "zab-nodes-3-proposals-1-max-drops-1-depth-80.json"):
        t = replay(load(str(path))).trace
        assert t.known_issues is None and "known_issues" not in t.to_json()
        assert issue_lines(t) == [] and issue_names(t) is None
    lasso = replay(load(str(ROOT / "reports" / "data" / "liveness" /
                            "zk-nodes-2-proposals-1-max-timeouts-1-depth-60.json"))).trace
    assert lasso.known_issues == () and "possibly a new bug" in issue_names(lasso)


def test_a_run_through_no_window_is_said_to_be_unmatched():
    from zabmc.report.words import issue_lines, issue_names

    fixed = _named("zookeeper-4646-acked-fixed")  # no violation: no bug claimed
    assert issue_names(fixed) == "no known issue matches"
    assert issue_lines(fixed) == ["no known issue matches: the run passes through the window of "
                                  "none of the issues this model knows"]
    t = _named("zookeeper-4646")
    t.known_issues = ()  # as if the run had passed through no window
    assert issue_names(t) == "no known issue matches: possibly a new bug"
    assert issue_lines(t)[0].endswith(", so this may be a new bug")


def test_the_trace_file_field_is_written_read_and_optional(tmp_path):
    """`name_issues` then `save`: the optional field `known_issues`; the one reader gives it back
    and checks it; a file without it (every corpus trace) reads as before; a bad one is refused
    in one line."""
    from zabmc.core.errors import UsageError
    from zabmc.core.trace import read

    t = name_issues(_named("zookeeper-4643"))
    path = tmp_path / "t.json"
    t.save(str(path))
    data = json.loads(path.read_text())
    assert data["known_issues"][0] == {"issue": I4643, "step": 19, "why": t.known_issues[0].why}
    assert read(str(path)).known_issues == t.known_issues
    assert read(str(CORPUS / "zookeeper-4643.trace.json")).known_issues is None
    for bad, why in (({"issue": 1, "step": 0, "why": ""}, "'issue' must be str"),
                     ({"issue": "X", "step": 999, "why": ""}, "outside the 27 events")):
        data["known_issues"] = [bad]
        path.write_text(json.dumps(data))
        with pytest.raises(UsageError, match=why):
            read(str(path))


def test_check_writes_prints_and_summarises_the_issues(tmp_path, cli, monkeypatch):
    """`zabmc check` on a zk model: the trace file's `known_issues`, the counterexample's lines,
    the summary's line and the JSON's; on db19 none of them."""
    monkeypatch.chdir(tmp_path)
    args = ["check", "--model", "zk", "--network", "fifo", "--nodes", "3", "--proposals", "1",
            "--depth", "30", "--invariant", "sync-exception", "--trace-out", "t.json"]
    code, out, _ = cli(args)
    assert code == 10
    assert ("    known issue ZOOKEEPER-4394: the run enters its window at step 18 (sync-exception: "
            "node 1 got COMMIT 1.1 after NEWLEADER") in out
    assert "sync-exception: known issue(s) ZOOKEEPER-4394 (from step 18)\n" in out
    data = json.loads((tmp_path / "t.json").read_text())
    assert [(x["issue"], x["step"]) for x in data["known_issues"]] == [("ZOOKEEPER-4394", 18)]
    code, out, _ = cli(args + ["--json", "-q", "--force"])
    v, = json.loads(out)["violations"]
    assert [(x["issue"], x["step"]) for x in v["known_issues"]] == [("ZOOKEEPER-4394", 18)]
    code, out, _ = cli(["check", "--nodes", "2", "--network", "bag", "--max-timeouts", "1",
                        "--proposals", "2", "--depth", "11", "--invariant", "agreement",
                        "--trace-out", "d.json"])
    assert code == 10 and "known issue" not in out and "new bug" not in out
    assert "known_issues" not in json.loads((tmp_path / "d.json").read_text())
    code, out, _ = cli(["check", "--nodes", "2", "--network", "bag", "--max-timeouts", "1",
                        "--proposals", "2", "--depth", "11", "--invariant", "agreement",
                        "--json", "-q", "--trace-out", "d.json"])
    assert "known_issues" not in json.loads(out)["violations"][0]


def test_replay_names_the_issues_of_an_old_trace(cli):
    code, out, _ = cli(["replay", str(CORPUS / "zookeeper-4643-acked.trace.json")])
    assert code == 10
    assert "=> a lost write: node 1 delivered 1.2 as committed, and its log no longer holds it" \
        in out
    lines = [line.strip() for line in out.splitlines() if "known issue" in line]
    assert [line.split(":")[0] for line in lines] == [f"known issue {I4643}",
                                                       f"known issue {I4646}"]
