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
