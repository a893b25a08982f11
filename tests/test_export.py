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
}
FAST = {"bag-reordered-propose", "fifo-follower-timeout-gap"}  # the others take > 5 s

# Findings the simulator cannot show (zabmc.export.findings.WHY_NOT says why): the exporter must say
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
    assert doc["format"] == "zabmc-partition-events" and doc["version"] == 1
    assert doc["verified"] is True
    assert doc["simulator"] == header
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
    out_path.write_text("keep me\n")
    code, _, _ = run(capsys, "export", path, "-o", str(out_path), "--max-runs", "3")
    assert code == 3 and out_path.read_text() == "keep me\n"
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
    assert err.startswith(f"zabmc: error: cannot write {target}: ")


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
    from zabmc.export.findings import SECTION

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
        assert command == "none" and not (REPO / "reports" / "repro" / f"{fid}.zps").exists()
        return
    tick = int(violation.split(" at tick ")[1].split()[0])
    argv = shlex.split(command)
    assert argv[:2] == ["zabmc", "simulate"] and f"reports/repro/{fid}.zps" in argv
    monkeypatch.chdir(REPO)  # the report's paths are relative to the repository root
    code, _, err = run(capsys, *argv[1:])
    assert code == EXIT_VIOLATION
    assert err.startswith(f"violation: {prop} at tick {tick}: ")
