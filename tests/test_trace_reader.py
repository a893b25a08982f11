"""One reader of trace files (#61) and `zabmc replay`'s exit codes (#65): `zabmc.core.trace`
reads and checks a `zabmc-trace` file once into a frozen `TraceFile`; a bad file is one line and
exit 2 for every command; a file its replay disagrees with (violation, lasso, final digest) is
`replay`'s exit 1, with a line on stderr saying what disagreed. The translation of a trace to a
real schedule takes its grain from the model (`real_translation`), not from the states' keys."""

from __future__ import annotations

import ast
import dataclasses
import json
import pathlib

import pytest

from test_imports import import_graph
from zabmc.cli import main
from zabmc.core import model as M
from zabmc.core.errors import UsageError
from zabmc.core.trace import TraceFile, read
from zabmc.explore.trace import replay

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
DB19 = CORPUS / "db19" / "fifo-duplicate-zxid.trace.json"
ZK = CORPUS / "zk" / "zookeeper-4646.trace.json"
LASSO = ROOT / "reports" / "data" / "liveness" / "zab-1419-nodes-3-proposals-0-depth-80.json"


def run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return e.value.code, out, err


def _edited(tmp_path, src, edit) -> pathlib.Path:
    d = json.loads(src.read_text())
    edit(d)
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(d))
    return p


def test_a_trace_reads_into_a_frozen_value():
    t = read(str(ZK))
    assert isinstance(t, TraceFile)
    assert (t.version, t.model, t.path) == (2, "zk", str(ZK))
    assert t.violation["property"] == "primary-integrity" and t.violation["step"] == 29
    assert len(t.states) == len(t.events) + 1 and t.lasso is None
    assert t.invariants[0] == "integrity" and len(t.final_sha256) == 64
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.model = "db19"
    lasso = read(str(LASSO))
    assert lasso.violation is None and lasso.lasso["kind"] in ("cycle", "dead-end")
    assert set(lasso.lasso) == {"property", "kind", "faults_stop", "loop_start"}


def _violation(**kw):
    return lambda d: d["violation"].update(kw)


@pytest.mark.parametrize("edit,words", [
    (lambda d: d.update(version=True), "unsupported trace version True"),
    (lambda d: d.update(version=2.0), "unsupported trace version 2.0"),
    (_violation(step=-1), "the violation's step -1 is outside the 20 events"),
    (_violation(step=10 ** 30), f"the violation's step {10 ** 30} is outside the 20 events"),
    (_violation(step=True), "'step' must be int"),
    (_violation(step="3"), "'step' must be int"),
    (lambda d: d["violation"].pop("step"), "missing 'step'"),
    (_violation(property="nope"), "property 'nope' is not a known safety property"),
    (_violation(property=7), "property 7 is not a known safety property"),
    (lambda d: d.update(invariants=["agreement"], states=None),  # (they would differ first)
     "property 'sane-history' is not one of the trace's 'invariants'"),
    (lambda d: d.update(invariants=["nope"]), "unknown property 'nope'"),
    (_violation(nodes=[True]), "'nodes' must be a list of node ids"),
    (_violation(message=5), "'message' must be str"),
    (lambda d: d.update(final_sha256="forged"), "'final_sha256' must be 64 lowercase hex"),
    (lambda d: d.update(final_sha256=5), "'final_sha256' must be 64 lowercase hex"),
    (lambda d: d["states"].pop(), "20 'states' for 20 events"),
    (lambda d: d["states"].__setitem__(3, [1]), "the state after step 3 (deliver"),
    (lambda d: d.update(states={}), "'states' must be list"),
])
def test_bad_files_are_one_line_and_exit_2_for_every_command(tmp_path, capsys, edit, words):
    bad = _edited(tmp_path, DB19, edit)
    with pytest.raises(UsageError, match="."):  # on reading, or (what only replay can tell) on
        replay(read(str(bad)))  # replaying
    for args in (["replay", bad], ["replay", "-q", bad], ["show", bad, "-o", tmp_path / "p.html"],
                 ["export", bad, "-q", "--max-runs", "1"],
                 ["export", "--format", "zookeeper", bad]):
        code, out, err = run(args, capsys)
        assert code == 2, (args, out, err)
        assert err.startswith("zabmc: error: ") and err.count("\n") == 1, err
        if args[0] == "replay":
            assert words in err, err
    assert not (tmp_path / "p.html").exists()


def test_a_lasso_records_no_violation(tmp_path, capsys):
    bad = _edited(tmp_path, LASSO, lambda d: d.update(violation={"property": "agreement",
                                                                  "step": 0}))
    code, _, err = run(["replay", bad], capsys)
    assert code == 2 and "a liveness lasso records no 'violation'" in err


def test_a_forged_final_sha256_is_a_disagreement(tmp_path, capsys):
    want = json.loads(ZK.read_text())["final_sha256"]
    forged = _edited(tmp_path, ZK, lambda d: d.update(final_sha256="0" * 64))
    code, out, err = run(["replay", "-q", forged], capsys)
    assert code == 1
    assert f"NOT confirmed: recorded final_sha256 {'0' * 64}, replay found {want}" in out
    assert f"final sha256 {want}" in out
    assert err.count("\n") == 1 and "disagrees with its replay: recorded final_sha256" in err
    code, _, err = run(["show", forged, "-o", tmp_path / "p.html"], capsys)
    assert code == 2 and "recorded final_sha256" in err and err.count("\n") == 1
    assert not (tmp_path / "p.html").exists()
    forged = _edited(tmp_path, DB19, lambda d: d.update(final_sha256="0" * 64))
    code, _, err = run(["export", forged, "-q", "--max-runs", "1"], capsys)
    assert code == 2 and "does not replay to its recorded final state" in err


def test_a_lasso_with_a_forged_digest_is_not_confirmed(tmp_path, capsys):
    forged = _edited(tmp_path, LASSO, lambda d: d.update(final_sha256="f" * 64))
    code, out, err = run(["replay", "-q", forged], capsys)
    assert code == 1 and "NOT confirmed: recorded final_sha256" in out and err.count("\n") == 1


def test_a_violation_at_another_step_is_a_disagreement_on_stderr_too(tmp_path, capsys):
    moved = _edited(tmp_path, DB19, _violation(step=5))
    code, out, err = run(["replay", "-q", moved], capsys)
    assert code == 1 and "NOT confirmed: recorded violation sane-history at step 5" in out
    assert "disagrees with its replay: recorded violation sane-history at step 5" in err
    assert err.count("\n") == 1
    code, out, err = run(["replay", "-q", DB19], capsys)
    assert code == 10 and err == ""


def test_replay_help_lists_exit_code_2(capsys):
    code, out, _ = run(["replay", "--help"], capsys)
    assert code == 0
    assert "2 bad usage or a bad trace file" in " ".join(out.split())


def test_the_core_reader_imports_only_the_core_and_real_never_the_explorer():
    g = import_graph()
    assert {t for t in g.successors("zabmc.core.trace")} <= {
        "zabmc.core", "zabmc.core.errors", "zabmc.core.files", "zabmc.core.model",
        "zabmc.core.properties"}
    for name in g:
        if name == "zabmc.real" or name.startswith("zabmc.real."):
            bad = [t for t in g.successors(name) if t.startswith("zabmc.explore")]
            assert not bad, (name, bad)


def test_one_place_reads_a_trace_file():
    """read_text and parse_json are called for trace files in zabmc.core.trace only."""
    for path in ("zabmc/explore/trace.py", "zabmc/export/facts.py", "zabmc/real/schedule.py",
                 "zabmc/cli/check.py", "zabmc/cli/export.py", "zabmc/cli/real.py"):
        names = {n.id for n in ast.walk(ast.parse((ROOT / path).read_text()))
                 if isinstance(n, ast.Name)}
        assert not names & {"read_text", "parse_json"}, path


def test_each_model_says_which_real_translation_it_has():
    """The features a real schedule follows come from the model; they are what the recorded
    states of its grain show (what `from_trace` used to infer from them)."""
    from zabmc.real.schedule import REAL_MODELS, real_models

    assert real_models() == REAL_MODELS == (
        "zk", "zk-pre3911", "zk-fixed", "zk-fle", "zk-fixed-fle", "zk-3.7.0-threads",
        "zk-3.7.0-shutdown", "zk-3.7.0-epoch", "zk-3.8.0", "zk-3.8.5", "zk-3.9.2", "zk-3.9.3",
        "zk-3.9.4")
    keys = {M.NEWLEADER_ACK_STEP: "newleader_ack_owed", M.EPOCH_STEP: "current_epoch_owed",
            M.LEAKED_SYNC_THREAD: "leaked_queue"}
    for name in M.MODELS:
        model = M.get_model(name)
        features = M.real_translation(model)
        if features is None:
            continue
        assert features <= set(M.REAL_FEATURES), name
        node = model.node_json(model.fresh(0, 3))
        assert {f for f, key in keys.items() if key in node} == features, name
    assert M.real_translation(M.get_model("zk-3.7.0-shutdown")) == {
        M.NEWLEADER_ACK_STEP, M.LEAKED_SYNC_THREAD}


def test_translation_refuses_what_has_no_real_schedule():
    from zabmc.real.schedule import translation

    for model in ("db19", "zk-3.9.2-threads", "zk-3.9.3-store", "zk-3.6.2", 5):
        with pytest.raises(UsageError, match="has no real counterpart"):
            translation(model, False)
    with pytest.raises(UsageError, match="a liveness lasso has no finite real schedule"):
        translation("zk", True)
    assert translation("zk-3.7.0-epoch", False) == {M.NEWLEADER_ACK_STEP, M.EPOCH_STEP}


@pytest.mark.parametrize("path", ["zabmc/core/trace.py", "zabmc/explore/trace.py",
                                  "zabmc/real/schedule.py", "zabmc/cli/check.py",
                                  "zabmc/cli/real.py"])
def test_no_function_over_80_lines(path):
    tree = ast.parse((ROOT / path).read_text())
    long = [(f.name, f.end_lineno - f.lineno + 1) for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and f.end_lineno - f.lineno + 1 > 80]
    assert not long, long
