"""`zabmc export`: every counterexample of the db-19 regression corpus becomes a partition script that
reproduces its property violation in the seeded simulator, verified by the exporter and again here
through `zabmc simulate`; the search is deterministic, honest when its budget runs out, and strict
about its input.

The corpus is built here from fixed `zabmc check` configurations (one per property that `--all`
finds in them), so it follows the explorer and the kernel.
"""

from __future__ import annotations

import json
import pathlib
import shlex

import pytest

from zabmc.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main
from zabmc.cli.export import EXIT_NOT_REPRODUCED
from zabmc.export import read_trace
from zabmc.export.facts import DELIVERED, PENDING
from zabmc.export.plans import Steer, plans_for
from zabmc.export.search import Budget, NotFound, Verified, search, simulate_once, verify
from zabmc.sim import SimConfig
from zabmc.sim.script import load, loads, parse

CORPUS_DIR = pathlib.Path(__file__).parent / "corpus" / "db19"

# finding id -> what `zabmc export` makes of it (deterministic): simulator parameters, the cut
# directives after shrinking, the tick of the reproduced violation, and the extra command flags
EXPECTED = {
    "bag-reordered-propose": (
        "local-primary-order", {"seed": 0, "nodes": 2, "rounds": 30, "proposals": 2},
        ["at 11 cut 1 0", "at 20 heal 1 0"], 23, []),
    "fifo-follower-timeout-gap": (
        "local-primary-order", {"seed": 10, "nodes": 2, "rounds": 650, "proposals": 5},
        ["at 250 cut 1 0", "at 430 heal 1 0"], 438, []),
    "bag-two-established-leaders": (
        "leadership", {"seed": 9, "nodes": 3, "rounds": 500, "proposals": 3},
        ["at 3 cut 2 1"], 214, ["--invariant", "leadership"]),
    "fifo-duplicate-zxid": (
        "sane-history", {"seed": 80, "nodes": 3, "rounds": 30, "proposals": 5},
        [], 10, []),
    # the findings that need a crash: the script crashes and restarts the trace's nodes
    "fifo-crash-follower-gap": (
        "local-primary-order", {"seed": 0, "nodes": 2, "rounds": 90, "proposals": 2},
        ["at 31 crash 0", "at 31 restart 0"], 65, []),
    "bag-crash-resync-reorders": (
        "prefix", {"seed": 19, "nodes": 2, "rounds": 30, "proposals": 5},
        ["at 14 crash 1", "at 14 restart 1"], 24, ["--invariant", "prefix"]),
    "fifo-crash-two-leaders": (
        "leadership", {"seed": 16, "nodes": 3, "rounds": 60, "proposals": 1},
        ["at 4 crash 1", "at 4 restart 1", "at 5 cut 2 1"], 10, ["--invariant", "leadership"]),
}
FAST = {"bag-reordered-propose", "fifo-follower-timeout-gap", "fifo-crash-follower-gap"}  # the others take > 5 s

# Findings the simulator cannot show (WHY_NOT in benchmarks/findings_repro.py says why): the exporter must say
# so, exit 3 and write nothing.
UNREPRODUCIBLE = {"bag-stale-newleader-retracts": "prefix"}

try:
    from zabmc.report.findings import FINDINGS

    FINDING_IDS = [f.id for f in FINDINGS]
    FINDING_PROPS = {f.id: f.prop for f in FINDINGS}
except ImportError:  # the findings module is the explorer's; the pinned ids stand in for it
    FINDING_IDS = list(EXPECTED)
    FINDING_PROPS = {k: v[0] for k, v in EXPECTED.items()}

_built: dict = {}


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    code = exc.value.code
    return (0 if code is None else code), out, err


def corpus_trace(fid: str, tmp_path_factory) -> str:
    """The regression corpus trace of finding `fid`; rebuilt by the finding's own search when this
    checkout does not hold the file."""
    path = CORPUS_DIR / f"{fid}.trace.json"
    if path.exists():
        return str(path)
    if fid not in _built:
        from zabmc.report.findings import FINDINGS, run_finding

        f = next(f for f in FINDINGS if f.id == fid)
        _, _, _, trace, _, _ = run_finding(f)
        out = tmp_path_factory.mktemp("corpus") / f"{fid}.trace.json"
        trace.save(str(out))
        _built[fid] = str(out)
    return _built[fid]


def params(ids):
    return [i if i in FAST else pytest.param(i, marks=pytest.mark.slow) for i in ids]


def test_the_pinned_exports_are_findings_of_the_corpus():
    for fid, (prop, *_) in EXPECTED.items():
        assert FINDING_PROPS[fid] == prop
    for fid, prop in UNREPRODUCIBLE.items():
        if fid in FINDING_PROPS:
            assert FINDING_PROPS[fid] == prop


# --- the corpus reproduces -------------------------------------------------------------------------


@pytest.mark.parametrize("fid", params(FINDING_IDS))
def test_corpus_counterexample_exports_to_a_script_that_reproduces_it(fid, tmp_path_factory,
                                                                     capsys, tmp_path):
    prop = FINDING_PROPS[fid]
    path = corpus_trace(fid, tmp_path_factory)
    out_path = str(tmp_path / f"{fid}.zps")
    code, out, err = run(capsys, "export", path, "-o", out_path)
    if fid in UNREPRODUCIBLE:
        assert (code, out) == (EXIT_NOT_REPRODUCED, "")
        assert err.startswith("not reproduced: none of 4000 simulator runs (seeds 0..")
        assert f"showed {prop} as its first violation; nothing written" in err
        assert not pathlib.Path(out_path).exists()
        return
    assert (code, err) == (EXIT_OK, "")
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"verified: the simulator reproduces {prop} at tick ")
    tick = int(lines[0].split(" at tick ")[1].split()[0])
    assert lines[2] == f"wrote {out_path}"
    command = shlex.split(lines[1])
    script = load(out_path)
    header = {k: script.header[k] for k in ("seed", "nodes", "rounds", "proposals")}
    flags = command[command.index("--check") + 1:]
    want = ["zabmc", "simulate"] + [x for k, v in header.items() for x in (f"--{k}", str(v))] + [
        "--partition-script", out_path, "--check"] + flags
    assert command == want
    if fid in EXPECTED:  # the exact, deterministic result
        assert (prop, header, [d.text() for d in script.directives], tick, flags) == EXPECTED[fid]
    text = open(out_path).read()
    assert f"# verified: the simulator reproduces {prop} at tick {tick} with this script:" in text
    # the command line, run as a user would: the same property, at the promised tick
    code, digest, err = run(capsys, *command[1:])
    assert code == EXIT_VIOLATION
    assert err.startswith(f"violation: {prop} at tick {tick}: ")
    # the script alone (its header gives the parameters) runs the same
    assert run(capsys, "simulate", "--partition-script", out_path, "--check", *flags) == (
        code, digest, err)
    # the JSON form: the same events and parameters, and its own command runs the same
    json_path = str(tmp_path / f"{fid}.json")
    code, _, _ = run(capsys, "export", path, "--format", "json", "-o", json_path)
    assert code == EXIT_OK
    doc = json.load(open(json_path))
    crashes = [d.text() for d in script.directives if d.action in ("crash", "restart")]
    assert doc["format"] == "zabmc-partition-events"
    assert doc["version"] == (2 if crashes else 1)  # version 1 holds link events only
    assert doc["verified"] is True
    assert doc["simulator"] == header
    assert doc["events"] == script.to_json()["events"]
    if not crashes:
        assert doc["events"] == script.link_events()
    assert (doc["expected_violation"]["property"], doc["expected_violation"]["tick"]) == (prop, tick)
    assert doc["source"]["trace"] == path and doc["source"]["property"] == prop
    json_cmd = shlex.split(doc["command"])
    assert json_cmd == [json_path if a == out_path else a for a in want]
    assert run(capsys, *json_cmd[1:]) == (EXIT_VIOLATION, digest, err)


@pytest.mark.parametrize("fid", params(["bag-reordered-propose", "fifo-follower-timeout-gap",
                                         "bag-two-established-leaders"]))
def test_export_is_deterministic(fid, tmp_path_factory, capsys):
    path = corpus_trace(fid, tmp_path_factory)
    outs = []
    for fmt in ("partition-script", "partition-script", "json", "json"):
        code, out, err = run(capsys, "export", path, "--format", fmt)
        assert code == EXIT_OK
        assert err.startswith("verified: ")
        outs.append(out)
    assert outs[0] == outs[1] and outs[2] == outs[3]


LPO = "bag-reordered-propose"


# --- the search --------------------------------------------------------------------------------------


def test_local_primary_order_is_reproduced_by_dropping_the_first_propose(tmp_path_factory, capsys):
    path = corpus_trace(LPO, tmp_path_factory)
    facts = read_trace(path)
    # the trace leaves Propose(1.1) in flight and delivers Propose(1.2)
    lost = [(k, f) for k, f in facts.fates.items() if k[2][0] == 6]  # PROPOSE
    assert sorted((k[0], k[1], k[2][1][0], f) for k, f in lost) == [
        (1, 0, (1, 1), [(PENDING, None)]), (1, 0, (1, 2), [(DELIVERED, 9)])]
    result = search(facts, Budget())
    assert isinstance(result, Verified)
    # every cut the script keeps is on the leader -> follower link, the one Propose(1.1) travels
    assert result.script.directives
    assert {d.args for d in result.script.directives} == {(1, 0)}
    assert result.violation.property == "local-primary-order"
    # without its cuts the same configuration does not show the violation
    bare = parse("".join(f"{k} {v}\n" for k, v in result.script.header.items()))
    tick, v = verify(facts, bare)
    assert v is None or v.property != "local-primary-order"


def test_steering_cuts_exactly_what_the_trace_never_delivers(tmp_path_factory, capsys):
    facts = read_trace(corpus_trace(LPO, tmp_path_factory))
    r = Steer(facts, (0, 1)).run(None)
    tick, v = simulate_once(facts, SimConfig(0, 2, 30, 2), r, stop_early=False)
    assert (v.property, tick) == ("local-primary-order", 23)
    # node 0's start-up LookForLeader and Vote to node 1 stay in flight in the trace: cut at tick 0;
    # Propose(1.1), proposed at tick 12, is never delivered in the trace: 1->0 cut at tick 12.
    # Every other (tick, link) that carried a message stayed open.
    assert sorted(k for k, cut in r.decisions.items() if cut) == [(0, 0, 1), (12, 1, 0)]
    assert len(r.decisions) == 24


def test_progress_callback_counts_runs(tmp_path_factory, capsys):
    facts = read_trace(corpus_trace(LPO, tmp_path_factory))
    seen = []
    result = search(facts, Budget(max_runs=3), lambda k, cfg, plan: seen.append(k))
    assert isinstance(result, NotFound)
    assert seen == [1, 2, 3] and result.runs == 3 and result.last_seed == 0


def test_plans_are_derived_from_the_trace(tmp_path_factory, capsys):
    facts = read_trace(corpus_trace(LPO, tmp_path_factory))
    names = [p.name for p in plans_for(facts, 1000)]
    assert names[:4] == ["steer", "steer[1,0]", "none", "steer-strict"]
    assert "cut(1->0@1+400)" in names and "cut(0->1@1+400)" in names


# --- honest failure ----------------------------------------------------------------------------------


def test_nothing_reproduced_within_the_budget_exits_3_and_writes_nothing(tmp_path_factory, capsys,
                                                                         tmp_path):
    path = corpus_trace(LPO, tmp_path_factory)
    out_path = tmp_path / "x.zps"
    code, out, err = run(capsys, "export", path, "-o", str(out_path), "--max-runs", "3")
    assert code == EXIT_NOT_REPRODUCED == 3
    assert out == ""
    assert err == ("not reproduced: none of 3 simulator runs (seeds 0..0, at most 1000 ticks) "
                   "showed local-primary-order as its first violation; nothing written\n")
    assert not out_path.exists()
    # an earlier script (another kind of file is refused before the search: tests/test_files.py)
    out_path.write_text("# zabmc partition script, keep me\n")
    code, _, _ = run(capsys, "export", path, "-o", str(out_path), "--max-runs", "3")
    assert code == 3 and out_path.read_text() == "# zabmc partition script, keep me\n"
    # to stdout: nothing on stdout either
    code, out, _ = run(capsys, "export", path, "--max-runs", "3", "--format", "json")
    assert (code, out) == (3, "")


def test_too_few_seeds_is_reported_the_same_way(tmp_path_factory, capsys):
    path = corpus_trace(LPO, tmp_path_factory)
    code, out, err = run(capsys, "export", path, "--seeds", "1", "--max-rounds", "12")
    assert (code, out) == (3, "")
    facts = read_trace(path)
    runs = len(plans_for(facts, 12))  # seed 0, every plan once, all runs 12 ticks long
    assert err.startswith(f"not reproduced: none of {runs} simulator runs (seeds 0..0, at most 12 "
                          "ticks) showed local-primary-order as its first violation; nothing "
                          "written")


# --- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, fragment", [
    (["--max-runs", "0"], "--max-runs must be at least 1, got 0"),
    (["--seeds", "0"], "--seeds must be at least 1, got 0"),
    (["--max-rounds", "11"], "--max-rounds must be at least 12, got 11"),
    (["--format", "xml"], "Invalid value for '--format'"),
])
def test_bad_flags(capsys, tmp_path_factory, args, fragment):
    path = corpus_trace(LPO, tmp_path_factory)
    code, out, err = run(capsys, "export", path, *args)
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("zabmc: error: ") and fragment in err and err.count("\n") == 1


def test_bad_trace_files(capsys, tmp_path, tmp_path_factory):
    missing = tmp_path / "missing.json"
    code, out, err = run(capsys, "export", str(missing))
    assert (code, out, err) == (EXIT_USAGE, "",
                                f"zabmc: error: trace file {missing} does not exist\n")
    garbage = tmp_path / "g.json"
    garbage.write_text("not json")
    code, _, err = run(capsys, "export", str(garbage))
    assert code == EXIT_USAGE and err.startswith(f"zabmc: error: trace file {garbage} is not valid")
    other = tmp_path / "o.json"
    other.write_text('{"format": "something"}')
    code, _, err = run(capsys, "export", str(other))
    assert code == EXIT_USAGE and "is not a zabmc trace" in err
    # a trace that records no violation
    data = json.load(open(corpus_trace(LPO, tmp_path_factory)))
    data["violation"] = None
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(data))
    code, _, err = run(capsys, "export", str(clean))
    assert (code, err) == (EXIT_USAGE, f"zabmc: error: {clean} records no property violation: "
                           "there is nothing to reproduce\n")
    # a trace whose recorded violation is not what replay finds
    data = json.load(open(corpus_trace(LPO, tmp_path_factory)))
    data["violation"]["step"] = 3
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(data))
    code, _, err = run(capsys, "export", str(wrong))
    assert (code, err) == (EXIT_USAGE, f"zabmc: error: {wrong} does not replay to its recorded "
                           "violation (local-primary-order at step 3)\n")


def test_unwritable_output(capsys, tmp_path, tmp_path_factory):
    path = corpus_trace(LPO, tmp_path_factory)
    target = tmp_path / "no" / "such" / "dir.zps"
    code, out, err = run(capsys, "export", path, "-o", str(target))
    assert (code, out) == (EXIT_USAGE, "")
    # refused before the search, which would otherwise run for nothing
    assert err == (f"zabmc: error: -o {target}: the directory {target.parent} does not "
                   "exist\n")


def test_script_on_stdout_status_on_stderr(capsys, tmp_path_factory):
    path = corpus_trace(LPO, tmp_path_factory)
    code, out, err = run(capsys, "export", path)
    assert code == EXIT_OK
    script = loads(out, "stdout")
    assert script.header["nodes"] == 2 and script.directives
    # no progress bar when stderr is not a terminal: just the two status lines
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("verified: ")
    assert lines[1].strip().endswith("--partition-script FILE --check")


# --- the findings report ----------------------------------------------------------------------------

REPO = pathlib.Path(__file__).resolve().parent.parent


def _repro_rows():
    import sys

    sys.path.insert(0, str(REPO))  # benchmarks/ writes the report, outside the product
    from benchmarks.findings_report import SECTION

    text = (REPO / "reports" / "db19-findings.md").read_text()
    assert SECTION + "\n" in text, "run: python benchmarks/findings_repro.py"
    section = text.split(SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| ["):
            fid = line.split("](#", 1)[1].split(")", 1)[0]
            rows[fid] = line
    return rows


def test_the_report_has_a_reproducing_command_for_every_finding():
    assert sorted(_repro_rows()) == sorted(FINDING_IDS)


@pytest.mark.parametrize("fid", FINDING_IDS)
def test_the_reports_command_lines_reproduce_their_findings(fid, capsys, monkeypatch):
    row = _repro_rows()[fid]
    cells = [c.strip() for c in row.strip("|").split("|")]
    prop, violation, command = cells[1], cells[4], cells[5].strip("`")
    assert prop == FINDING_PROPS[fid]
    if fid in UNREPRODUCIBLE:
        assert violation.startswith("not reproduced: `zabmc export` found no run within its budget")
        assert command == "none" and not (REPO / "reports" / "data" / "repro" / f"{fid}.zps").exists()
        return
    tick = int(violation.split(" at tick ")[1].split()[0])
    argv = shlex.split(command)
    assert argv[:2] == ["zabmc", "simulate"] and f"reports/data/repro/{fid}.zps" in argv
    monkeypatch.chdir(REPO)  # the report's paths are relative to the repository root
    code, _, err = run(capsys, *argv[1:])
    assert code == EXIT_VIOLATION
    assert err.startswith(f"violation: {prop} at tick {tick}: ")


# --- traces with crashes and restarts ---------------------------------------------------------------

import subprocess  # noqa: E402
import sys  # noqa: E402

from zabmc.explore import Env, ExploreConfig, bfs  # noqa: E402
from zabmc.core.events import Crash, Deliver, Restart  # noqa: E402
from zabmc.explore.trace import Trace, rebuild  # noqa: E402
from zabmc.export.facts import LOST, analyse  # noqa: E402
from zabmc.export.search import run_plan  # noqa: E402
from zabmc.invariants import DEFAULT_PROPERTIES, Checker  # noqa: E402
from zabmc.core.model import get_model  # noqa: E402
from zabmc.sim.script import from_link_decisions  # noqa: E402

# `zabmc check --nodes 2 --max-crashes 1 --depth 30`: follower 0 crashes while Propose(1.1) is in
# flight to it, restarts, rejoins leader 1 through its Vote reply (no NewLeader) and accepts
# Propose(1.2) over the gap (reports/db19-findings.md, fifo-crash-follower-gap)
CRASH_CONFIG = dict(nodes=2, network="fifo", proposals=2, max_crashes=1, depth=30)
# what `zabmc export` makes of it: the crash and the restart at the tick after the simulator's
# proposal of zab-0, and no cut at all
CRASH_EXPECTED = (
    "local-primary-order", {"seed": 0, "nodes": 2, "rounds": 90, "proposals": 2},
    ["at 31 crash 0", "at 31 restart 0"], 65,
    "8cdf77adba915ad3e6c5c460c8220dbe436724f957cf4600cdddb1a37eb4d02c")


@pytest.fixture(scope="module")
def crash_trace(tmp_path_factory):
    env = Env(get_model("db19"), ExploreConfig(**CRASH_CONFIG), Checker(DEFAULT_PROPERTIES))
    o = bfs(env)
    found = o.violations[0]
    trace = rebuild(env, found.path, found.violation.property)
    path = tmp_path_factory.mktemp("crash") / "crash.trace.json"
    trace.save(str(path))
    return str(path)


def test_crash_trace_facts_follow_the_explorer(crash_trace):
    facts = read_trace(crash_trace)
    assert (facts.property, facts.step) == ("local-primary-order", 25)
    assert facts.crashes == [(14, 0)] and facts.restarts == [(15, 0)]
    assert [(e.step, e.action, e.node, e.anchor, e.count, e.anchor_step)
            for e in facts.node_events] == [
        (14, "crash", 0, ("propose", 0), 1, 13), (15, "restart", 0, ("crash", 0), 1, 14)]
    # Propose(1.1), sent at step 13, is in flight to node 0 when it crashes: lost with it (E7)
    lost = sorted((k[0], k[1], k[2][0], f) for k, fs in facts.fates.items() for f in fs
                  if f[0] == LOST)
    assert [(s, d, f) for s, d, _, f in lost] == [(1, 0, (LOST, 14)), (1, 0, (LOST, 14))]
    assert any(k[2][0] == 6 and k[2][1][0] == (1, 1) for k, fs in facts.fates.items()
               if fs == [(LOST, 14)])


def test_sends_to_a_down_node_never_enter_the_trace_network():
    """E8: what a step sends to a down node is lost at send, so it has no fate at all; everything
    in flight to or from a node when it crashes is lost at the crash (E7)."""
    model = get_model("db19")
    env = Env(model, ExploreConfig(nodes=3, max_crashes=1), Checker(DEFAULT_PROPERTIES))
    s, _ = env.initial()
    states, events = [s], []

    def take(pred):
        nonlocal s
        ev, s2, _ = next(x for x in env.successors(s) if pred(x[0]))
        events.append(ev)
        states.append(s2)
        s = s2
        return ev

    take(lambda e: e == Crash(2))
    # node 0 hears of candidate 1 and switches its vote: a Vote to node 1 and one to node 2 (down)
    take(lambda e: isinstance(e, Deliver) and (e.src, e.dst) == (1, 0) and e.msg[0] == 0)
    take(lambda e: e == Restart(2))
    facts = analyse(Trace(env, events, states, None, None))
    assert facts.crashes == [(1, 2)] and facts.restarts == [(3, 2)]
    # the 8 start-up messages to and from node 2 were lost at its crash (step 1); its restart
    # (step 3) sends the same LookForLeader and Vote to nodes 0 and 1 again, still in flight
    touching = {k: fs for k, fs in facts.fates.items() if 2 in k[:2]}
    assert len(touching) == 8
    assert {k: fs for k, fs in touching.items() if k[1] == 2} == {
        k: [(LOST, 1)] for k in touching if k[1] == 2}
    assert {k: fs for k, fs in touching.items() if k[0] == 2} == {
        k: [(LOST, 1), (PENDING, None)] for k in touching if k[0] == 2}
    # step 2's Vote went to node 1 only: the copy for node 2 never entered the network
    votes = {k[:2]: fs for k, fs in facts.fates.items()
             if k[2][0] == 1 and k[0] == 0 and k[2][4] == 1}  # Vote(voter 0, ..., leader 1)
    assert votes == {(0, 1): [(PENDING, None)]}


def test_node_events_are_merged_into_the_script_after_the_ticks_link_directives():
    decisions = {(5, 0, 1): True, (9, 0, 1): False, (9, 1, 0): True}
    header = {"seed": 1, "nodes": 2, "rounds": 20, "proposals": 0}
    plain = from_link_decisions(decisions, header)
    assert [d.text() for d in plain.directives] == [
        "at 5 cut 0 1", "at 9 heal 0 1", "at 9 cut 1 0"]
    mixed = from_link_decisions(decisions, header,
                                [(5, "crash", 1), (5, "restart", 1), (12, "crash", 0)])
    assert [d.text() for d in mixed.directives] == [
        "at 5 cut 0 1", "at 5 crash 1", "at 5 restart 1", "at 9 heal 0 1", "at 9 cut 1 0",
        "at 12 crash 0"]
    assert mixed.timeline(2).node_events == {5: (("crash", 1), ("restart", 1)),
                                             12: (("crash", 0),)}


def test_every_run_of_a_crash_trace_places_its_crash_and_restart(crash_trace):
    facts = read_trace(crash_trace)
    plans = plans_for(facts, 1000)
    # the restart follows the crash at once in the trace: each plan comes with gaps 0, 1 and 3
    assert [p.name for p in plans[:4]] == ["steer/gap0", "steer/gap1", "steer/gap3",
                                           "steer[1,0]/gap0"]
    none = next(p for p in plans if p.name == "none/gap0")
    run, placed, tick, v = run_plan(facts, SimConfig(0, 2, 90, 2), none)
    # the simulator's leader proposes zab-0 at tick 30; node 0 crashes and restarts at tick 31
    assert placed == [(31, "crash", 0), (31, "restart", 0)]
    assert run.life.complete and (v.property, tick) == ("local-primary-order", 65)
    gap3 = next(p for p in plans if p.name == "none/gap3")
    _, placed, _, _ = run_plan(facts, SimConfig(0, 2, 90, 2), gap3)
    assert placed == [(31, "crash", 0), (34, "restart", 0)]


def test_crash_trace_exports_to_a_script_that_crashes_and_reproduces_it(crash_trace, capsys,
                                                                        tmp_path):
    prop, header, directives, tick, digest = CRASH_EXPECTED
    out_path = str(tmp_path / "crash.zps")
    code, out, err = run(capsys, "export", crash_trace, "-o", out_path)
    assert (code, err) == (EXIT_OK, "")
    assert out.splitlines()[0].startswith(f"verified: the simulator reproduces {prop} at tick "
                                          f"{tick} (trace step 25)")
    script = load(out_path)
    assert ({k: script.header[k] for k in header}, [d.text() for d in script.directives]) == (
        header, directives)
    text = open(out_path).read()
    assert ("# at 31 crash 0: the trace's step 14 (crash node 0), placed after the run's "
            "counterpart of step 13 (propose zab-0 at node 1)") in text
    # the script, run by a real `zabmc simulate` process: the property at the pinned tick and digest
    argv = [sys.executable, "-c", "from zabmc.cli import main; main()", "simulate",
            "--partition-script", out_path, "--check"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == EXIT_VIOLATION
    assert r.stdout == digest
    assert r.stderr.startswith(f"violation: {prop} at tick {tick}: node 0 delivered 1.2:zab-1")
    # and its trace shows the crash taking Propose(1.1) and the restart
    r = subprocess.run(argv[:-1] + ["--trace"], capture_output=True, text=True, timeout=120)
    assert "31 lost      1->0 Propose(txn=1.1:zab-0) (node 0 crashed)" in r.stdout
    assert "31 restart   node 0" in r.stdout
    # the JSON form is version 2, with the same events, and runs the same
    json_path = str(tmp_path / "crash.json")
    code, _, _ = run(capsys, "export", crash_trace, "--format", "json", "-o", json_path)
    assert code == EXIT_OK
    doc = json.load(open(json_path))
    assert doc["version"] == 2 and doc["simulator"] == header
    assert doc["events"] == [{"tick": 31, "action": "crash", "node": 0},
                             {"tick": 31, "action": "restart", "node": 0}]
    assert (doc["expected_violation"]["property"], doc["expected_violation"]["tick"]) == (prop, tick)
    from_text = run(capsys, "simulate", "--partition-script", out_path, "--check")
    assert from_text[:2] == (EXIT_VIOLATION, digest)
    assert run(capsys, "simulate", "--partition-script", json_path, "--check") == from_text


def test_a_crash_trace_not_reproduced_within_the_budget_writes_nothing(crash_trace, capsys,
                                                                       tmp_path):
    out_path = tmp_path / "x.zps"
    code, out, err = run(capsys, "export", crash_trace, "-o", str(out_path), "--max-runs", "3")
    assert (code, out) == (EXIT_NOT_REPRODUCED, "")
    assert err.startswith("not reproduced: none of 3 simulator runs (seeds 0..0")
    assert not out_path.exists()
