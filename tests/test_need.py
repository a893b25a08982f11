"""`conftest.need`, through which every skip of the suite goes: under CI=true a missing tool fails
the run, saying what is missing and why; elsewhere the test is skipped with that reason. Shown on
a tiny generated test file run by pytest in a subprocess, once with CI=true and once without."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent

TINY = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(TESTS)!r})
    from conftest import need, need_module

    def test_needs_a_missing_tool():
        need("frobnicator", "no frobnicator on PATH (apt-get install frobnicator)")

    def test_needs_a_missing_module():
        need_module("no_such_module_zabmc", "pip install no-such-module")

    def test_needs_a_present_module():
        assert need_module("json", "it ships with Python").dumps([1]) == "[1]"
""")


def _pytest(tmp_path, ci):
    (tmp_path / "test_tiny.py").write_text(TINY)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent), env.get("PYTHONPATH", "")])
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_tiny.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_under_ci_a_missing_tool_fails_the_run_with_its_reason(tmp_path):
    r = _pytest(tmp_path, "true")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 failed, 1 passed" in r.stdout
    assert ("CI=true runs every test, but frobnicator is missing: no frobnicator on PATH "
            "(apt-get install frobnicator)") in r.stdout
    assert "CI=true runs every test, but no_such_module_zabmc is missing: No module named " \
           "'no_such_module_zabmc' (pip install no-such-module)" in r.stdout
    assert "skipped" not in r.stdout


def test_outside_ci_a_missing_tool_skips_with_its_reason(tmp_path):
    for ci in (None, "false"):
        r = _pytest(tmp_path, ci)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 passed, 2 skipped" in r.stdout
        skipped = sorted(line.split(": ", 1)[1] for line in r.stdout.splitlines()
                         if line.startswith("SKIPPED [1] "))
        assert skipped == [
            "frobnicator is missing: no frobnicator on PATH (apt-get install frobnicator)",
            "no_such_module_zabmc is missing: No module named 'no_such_module_zabmc' "
            "(pip install no-such-module)"], r.stdout


def test_under_xdist_a_cpu_bound_test_yields_the_cores_to_the_jvms():
    """tests/conftest.py: a worker that runs a test outside the JVM group runs it at a lower
    priority (nice + 10); without xdist nothing changes. The JVM group's side:
    tests/test_real_ensemble.py, test_the_ensembles_run_at_the_suites_own_priority."""
    from conftest import BASE_NICE, LOWERED_NICE, NICE_BESIDE_JVMS

    now = os.getpriority(os.PRIO_PROCESS, 0)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        assert now == LOWERED_NICE == min(19, BASE_NICE + NICE_BESIDE_JVMS)
    else:
        assert now == BASE_NICE


def test_make_test_runs_two_workers_more_than_there_are_cores():
    """`-n auto` (make test) gives one worker per core, plus one for the JVM group and one for
    the others' waits."""
    import conftest

    assert conftest.pytest_xdist_auto_num_workers(None) == len(os.sched_getaffinity(0)) + 2
