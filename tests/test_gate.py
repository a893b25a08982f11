"""`zabmc gate` (issue #35 point 2): the CI gate's runs are data (`zabmc.gate`), run by `zabmc gate`
and `make gate`, scored by `zabmc mutate`, and quoted by docs/gate.md through `zabmc gate --list`."""

from __future__ import annotations

import pathlib
import re

import pytest

from zabmc.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _gate(args, capfd):
    with pytest.raises(SystemExit) as e:
        main(["gate", *args])
    out, err = capfd.readouterr()
    return e.value.code, out, err


def test_docs_gate_md_quotes_zabmc_gate_list(capfd):
    """Every `$ zabmc gate --list ...` line in docs/gate.md is followed by exactly that command's
    output, so the page's copy of the gate cannot drift from the gate."""
    text = (ROOT / "docs" / "gate.md").read_text()
    quoted = 0
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines = block.splitlines()
        starts = [k for k, line in enumerate(lines) if line.startswith("$ zabmc gate --list")]
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            args = lines[start].split()[3:]
            code, out, _ = _gate(["--list", *args], capfd)
            assert code == 0
            assert lines[start + 1:end] == out.splitlines(), lines[start]
            quoted += 1
    assert quoted == 3


def test_gate_list_is_every_run_in_order(capfd):
    from zabmc.gate import RUNS, ZAB, ZAB_OMEGA, ZK_FIXED, command

    code, out, _ = _gate(["--list"], capfd)
    assert code == 0 and out.splitlines() == [command(r) for r in RUNS]
    assert RUNS == ZAB + ZAB_OMEGA + ZK_FIXED and len(RUNS) == 19
    assert all(line.startswith("zabmc check --model ") and line.endswith(" -q")
               for line in out.splitlines())
    code, out, _ = _gate(["--list", "--model", "zab-omega"], capfd)
    assert out.splitlines() == [command(r) for r in ZAB_OMEGA]


def test_gate_model_without_runs_is_one_line_usage_error(capfd):
    code, out, err = _gate(["--list", "--model", "db19"], capfd)
    assert code == 2 and out == ""
    assert err == ("zabmc: error: the gate has no run of model db19 (it has runs of zab, "
                   "zab-omega, zk-fixed)\n")


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_gate_runs_each_check_and_stops_at_the_first_failure(capfd, monkeypatch, tmp_path, jobs):
    """Each run prints its command and its summary; the first that fails ends the gate with its
    exit code (here 10, a violation: db-19's reordered Propose), and later runs do not run (with
    --jobs 2 the third has started and is stopped; nothing of it is printed)."""
    import zabmc.gate

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(zabmc.gate, "RUNS", (
        "--model zab --network fifo --nodes 2 --proposals 1 --depth 100",
        "--model db19 --network bag --nodes 2 --depth 12",
        "--model zab --network fifo --nodes 3 --proposals 2 --depth 100",
    ))
    code, out, err = _gate(jobs, capfd)
    assert code == 10
    lines = out.splitlines()
    assert lines[0] == "zabmc check --model zab --network fifo --nodes 2 --proposals 1 --depth 100 -q"
    assert any(line.startswith("OK: no property violated") for line in lines)
    assert "zabmc check --model db19 --network bag --nodes 2 --depth 12 -q" in lines
    assert any(line.startswith("VIOLATION: ") for line in lines)
    assert "--nodes 3" not in out
    assert err.splitlines()[-1] == ("zabmc: gate run 2 of 3 failed with exit code 10: zabmc check "
                                    "--model db19 --network bag --nodes 2 --depth 12 -q")
    # the model's runs only, to the end: a third run that takes a CPU second, not the ten that
    # the one above (stopped) would
    monkeypatch.setattr(zabmc.gate, "RUNS", zabmc.gate.RUNS[:2] + (
        "--model zab --network fifo --nodes 3 --proposals 1 --depth 100",))
    code, out2, _ = _gate(["--model", "zab", *jobs], capfd)
    assert code == 0 and out2.splitlines()[-1] == "gate passed: 2 runs"
    # in the gate's order, each run's command before its own report
    assert [line for line in out2.splitlines() if line.startswith("zabmc check")] == [
        "zabmc check --model zab --network fifo --nodes 2 --proposals 1 --depth 100 -q",
        "zabmc check --model zab --network fifo --nodes 3 --proposals 1 --depth 100 -q"]
    assert out2.count("OK: no property violated") == 2
    assert out2.index("OK: no property violated") < out2.index("--nodes 3")
