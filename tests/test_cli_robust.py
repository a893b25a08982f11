"""Bad input and misuse across the commands (#37): every float option refuses nan and inf, a
reader that goes away ends any command quietly with that command's own code, a hostile trace is a
one-line error, a missing optional dependency is an install hint; one line on stderr and exit 2."""

from __future__ import annotations

import math

import pytest

from zabmc.errors import UsageError
from zabmc.spec import CheckSpec


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zabmc: error: "), err
    return lines[0]


@pytest.mark.parametrize("flag", ["--time-limit", "--checkpoint-every"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "-1"])
def test_float_options_refuse_what_is_not_a_finite_number_in_range(cli, flag, value):
    rc, out, err = cli(["check", "--nodes", "2", "-q", f"{flag}={value}"])
    assert rc == 2 and out == ""
    assert flag in _one_line(err)


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_the_conformance_timeout_refuses_nan_and_inf(cli, value):
    rc, out, err = cli(["real", "--random", "1", "--conform-timeout", value])
    assert rc == 2 and "--conform-timeout" in _one_line(err)


@pytest.mark.parametrize("field", ["time_limit", "checkpoint_every"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0])
def test_a_spec_refuses_a_float_that_is_not_finite(field, value):
    with pytest.raises(UsageError, match="finite"):
        CheckSpec(nodes=2, **{field: value}).validate()
    if field == "time_limit":
        with pytest.raises(UsageError, match="finite"):
            CheckSpec(nodes=2, liveness=True, time_limit=value).validate()


# --- a reader that goes away ----------------------------------------------------------------------
ZK_TRACE = "tests/corpus/zk/zookeeper-3911.trace.json"
DB19_TRACE = "tests/corpus/db19/fifo-crash-two-leaders.trace.json"


def _closed_reader(args, cwd):
    """`zabmc ARGS` with a stdout whose reader has already gone (`| head -0`, deterministic: every
    write meets the closed pipe): (exit code, stderr)."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        p = subprocess.run([sys.executable, "-c", "from zabmc.cli import main; main()", *args],
                           stdout=w, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=300,
                           env=dict(os.environ, PYTHONPATH=root))
    finally:
        os.close(w)
    return p.returncode, p.stderr


@pytest.mark.parametrize("args", [
    ["replay", ZK_TRACE], ["replay", DB19_TRACE], ["mutate"], ["invariants"], ["models"],
    ["--help"], ["check", "--help"], ["simulate", "--rounds", "60"],
    ["export", DB19_TRACE, "--format", "json", "-q"],
], ids=lambda a: " ".join(a[:2]))
def test_a_command_whose_reader_went_away_exits_0_quietly(args, tmp_path):
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = [os.path.join(root, a) if a.startswith("tests/") else a for a in args]
    rc, err = _closed_reader(args, tmp_path)
    assert (rc, err) == (0, "")


@pytest.mark.parametrize("args,code", [(["--nodes", "2", "--max-crashes", "1"], 10),
                                       (["--nodes", "2", "--max-crashes", "1", "--json"], 10),
                                       (["--nodes", "2", "--depth", "6"], 0)])
def test_check_whose_reader_went_away_runs_on_to_its_verdicts_code(args, code, tmp_path):
    rc, err = _closed_reader(["check", *args, "--trace-out", str(tmp_path / "t.json")], tmp_path)
    assert rc == code
    assert "Traceback" not in err and "error" not in err


# --- hostile JSON in the user's files ---------------------------------------------------------------
def _hostile(tmp_path, kind):
    import json

    data = json.loads(open(_repo(DB19_TRACE)).read())
    text = json.dumps(data)
    junk = "9" * 5000 if kind == "long-number" else "[" * 100_000 + "]" * 100_000
    p = tmp_path / f"{kind}.json"
    p.write_text(text.replace('"events": [', f'"junk": {junk}, "events": [', 1))
    return str(p)


def _repo(path):
    import os

    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), path)


@pytest.mark.parametrize("kind,why", [("long-number", "a number has more than 4300 digits"),
                                      ("deep", "it nests arrays or objects too deeply")])
@pytest.mark.parametrize("command", [["replay"], ["show", "-o", "OUT"], ["export", "-q"],
                                     ["simulate", "--partition-script"]])
def test_a_number_too_long_or_nesting_too_deep_is_a_one_line_error(cli, tmp_path, kind, why,
                                                                   command):
    path = _hostile(tmp_path, kind)
    args = [str(tmp_path / "o.html") if a == "OUT" else a for a in command]
    rc, out, err = cli([*args, path])
    assert rc == 2
    line = _one_line(err)
    assert line.endswith(f"{path} is not usable JSON: {why}"), line


# --- a missing optional dependency ----------------------------------------------------------------
def test_sweep_report_without_pyarrow_is_the_install_hint(tmp_path):
    import os
    import subprocess
    import sys

    table = tmp_path / "table"
    table.mkdir()
    block = ("import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.dataset'] = None; "
             "from zabmc.cli import main; main()")
    r = subprocess.run([sys.executable, "-c", block, "sweep", "--report", str(table)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       env=dict(os.environ, PYTHONPATH=_repo("")))
    assert r.returncode == 2 and r.stdout == ""
    assert _one_line(r.stderr) == ("zabmc: error: the sweep report needs pyarrow, which is "
                                   "missing: pip install 'zabmc[spark]'")


# --- the simulator and the zk models ---------------------------------------------------------------
ZK_MODELS = ["zk", "zk-pre3911", "zk-fixed", "zk-fle", "zk-fixed-fle"]


@pytest.mark.parametrize("model", ZK_MODELS)
def test_simulate_refuses_a_model_with_actions_of_its_own(cli, model):
    rc, out, err = cli(["simulate", "--model", model, "--rounds", "50"])
    assert rc == 2 and out == ""
    assert _one_line(err) == (f"zabmc: error: the seeded simulator cannot run model {model}: it "
                              "has actions of its own (such as its log writes) that the simulator "
                              "does not schedule; explore it with `zabmc check`")


def test_a_partition_script_whose_header_names_zk_is_refused_the_same_way(cli, tmp_path):
    p = tmp_path / "zk.zps"
    p.write_text("model zk\nnodes 3\nrounds 50\nat 10 cut 0 1\n")
    rc, out, err = cli(["simulate", "--partition-script", str(p), "--check"])
    assert rc == 2 and "cannot run model zk:" in _one_line(err)


def test_sweep_refuses_a_zk_model_before_spark_starts(cli):
    rc, out, err = cli(["sweep", "--model", "zk", "--seeds", "0..2"])
    assert rc == 2 and "cannot run model zk:" in _one_line(err)


@pytest.mark.parametrize("name", sorted(
    n for n in __import__("os").listdir(_repo("tests/corpus/zk")) if n.endswith(".trace.json")))
@pytest.mark.parametrize("fmt", ["partition-script", "json"])
def test_export_of_every_zk_trace_says_what_is_not_supported(cli, tmp_path, name, fmt):
    path = _repo(f"tests/corpus/zk/{name}")
    out_file = tmp_path / "out"
    rc, out, err = cli(["export", path, "--format", fmt, "-q", "-o", str(out_file)])
    assert rc == 2 and out == "" and not out_file.exists()
    assert "which the seeded simulator cannot run" in _one_line(err)
    assert "--format zookeeper" in err
    rc, out, err = cli(["export", path, "--format", "zookeeper", "-o", str(out_file)])
    assert rc == 0 and out_file.exists()
