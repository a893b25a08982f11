"""The Spark engine on a real standalone cluster (issue #21): a master and two one-core workers
started from pyspark's own distribution by `tests/support/spark_standalone.py`, on 127.0.0.1, stopped at the
end. Driver and executors are separate JVMs here, as on any cluster; every job runs as its own
process (`zabmc check` or `spark-submit`), as users run it, and must give the in-process engine's
exact numbers, violations and trace, also when an executor is killed with SIGKILL mid-run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import SERIAL_JVMS, need_pyspark

# one worker of a parallel run (make test: pytest-xdist --dist loadgroup) runs this module, so
# its tests share the one standalone cluster the module fixture starts
pytestmark = [pytest.mark.spark, pytest.mark.slow, SERIAL_JVMS]

BAG_BUG = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2"]
# long enough that an executor killed after its first task, or after the first reliable checkpoint
# (level 10), leaves the job levels to rebuild and finish: 287,878 states in 20 levels
LONGER = ["--nodes", "3", "--depth", "20", "--no-invariants"]


@pytest.fixture(scope="module")
def cluster():
    need_pyspark()  # and java: the standalone cluster's JVMs
    from support.spark_standalone import standalone_cluster

    with standalone_cluster(workers=2, cores=1, memory="1g") as url:
        yield url


@pytest.fixture(scope="module")
def longer(tmp_path_factory):
    """The in-process result of LONGER, which the executor-loss tests compare with: (exit code,
    summary), computed once for both."""
    rc, out, _ = zabmc(["check", *LONGER, "--json", "-q"], tmp_path_factory.mktemp("longer"))
    return rc, json.loads(out)


def zabmc(args, tmp_path, **kw):
    r = subprocess.run([sys.executable, "-m", "zabmc", *args], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600, **kw)
    return r.returncode, r.stdout, r.stderr


def essentials(d):
    return (d["distinct_states"], d["states"], d["per_depth"], d["stop_reason"],
            [(v["property"], v["depth"]) for v in d["violations"]])


def trace_events(path):
    return json.loads(open(path).read())["events"]


def test_check_on_the_cluster_equals_in_process(cluster, tmp_path):
    rc, out, err = zabmc(["check", *BAG_BUG, "--json", "-q", "--trace-out", "mem.json"], tmp_path)
    want = json.loads(out)
    rc2, out2, err2 = zabmc(["check", *BAG_BUG, "--engine", "spark", "--master", cluster,
                             "--json", "-q", "--trace-out", "spark.json"], tmp_path)
    got = json.loads(out2)
    assert rc == rc2 == 10, err2
    assert essentials(got) == essentials(want)
    assert got["spark"]["master"] == cluster
    for prop in ("local-primary-order", "agreement", "total-order"):
        assert trace_events(tmp_path / f"spark-{prop}.json") == \
            trace_events(tmp_path / f"mem-{prop}.json")


def test_spark_submit_to_the_cluster_equals_in_process(cluster, tmp_path):
    from support.spark_standalone import spark_home

    import zabmc as package

    entry = os.path.join(os.path.dirname(package.__file__), "__main__.py")  # python -m zabmc's

    rc, out, _ = zabmc(["check", *BAG_BUG, "--json", "-q", "--trace-out", "mem.json"], tmp_path)
    submit = os.path.join(spark_home(), "bin", "spark-submit")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    r = subprocess.run([submit, "--master", cluster, entry, "check", *BAG_BUG,
                        "--engine", "spark", "--json", "-q", "--trace-out", "sub.json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert r.returncode == 10, r.stderr[-2000:]
    # Spark's PythonRunner merges the program's stderr into its stdout: the JSON summary is the
    # document that starts on a line of its own after the counterexample
    summary, _ = json.JSONDecoder().raw_decode(r.stdout[r.stdout.index("\n{\n") + 1:])
    assert essentials(summary) == essentials(json.loads(out))
    assert trace_events(tmp_path / "sub-agreement.json") == \
        trace_events(tmp_path / "mem-agreement.json")


def _executor_that_ran_a_task(proc, before, failsafe=600):
    """The first executor of the job `proc` (not in `before`) whose log (its work directory's
    stderr) shows a finished task. Fails if the job ends first; the wall-time failsafe only
    keeps a hung job from hanging the suite."""
    from support.spark_standalone import executor_pids

    end = time.monotonic() + failsafe
    while True:
        assert proc.poll() is None, "the job ended before an executor of it finished a task"
        for pid in sorted(set(executor_pids()) - before):
            try:
                text = open(f"/proc/{pid}/cwd/stderr", errors="replace").read()
            except OSError:
                continue
            if "Finished task" in text:
                return pid
        if time.monotonic() > end:
            proc.kill()
            proc.wait()
            pytest.fail("no executor of the job finished a task")
        time.sleep(0.1)


def test_an_executor_killed_mid_run_changes_nothing(cluster, longer, tmp_path):
    from support.spark_standalone import executor_pids

    rc, want = longer
    before = set(executor_pids())
    log = open(tmp_path / "driver.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "zabmc", "check", *LONGER, "--engine", "spark",
                             "--master", cluster, "--json", "--verbose"], stdout=subprocess.PIPE,
                            stderr=log, text=True, cwd=tmp_path)
    # once an executor of this job has finished a task (its output is now the job's to lose),
    # kill it
    victim = _executor_that_ran_a_task(proc, before)
    os.kill(victim, signal.SIGKILL)
    out2, _ = proc.communicate(timeout=600)
    log.close()
    got = json.loads(out2)
    assert proc.returncode == rc == 0
    assert essentials(got) == essentials(want)
    assert victim not in executor_pids()
    # the driver saw it go while the job ran (its scheduler logs the loss)
    assert "Lost executor" in (tmp_path / "driver.log").read_text()


def test_an_executor_killed_after_a_reliable_checkpoint_changes_nothing(cluster, longer, tmp_path):
    """With --checkpoint DIR the lineage is cut every 10 levels by a checkpoint written to DIR
    (shared storage on a real cluster), not held by an executor: an executor killed after the cut
    loses nothing the job cannot rebuild. (A `localCheckpoint` cut, the local masters' default,
    failed here: CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND.)"""
    from support.spark_standalone import executor_pids

    rc, want = longer
    ck = tmp_path / "ck"
    ck.mkdir()
    before = set(executor_pids())
    log = open(tmp_path / "driver.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "zabmc", "check", *LONGER, "--engine", "spark",
                             "--master", cluster, "--json", "--checkpoint", str(ck), "--verbose"],
                            stdout=subprocess.PIPE, stderr=log, text=True, cwd=tmp_path)
    # the first cut (level 10) is written once an rdd-* directory holds a part file for each of
    # the job's 2 partitions (one per worker core; Spark renames each into place when whole)
    end = time.monotonic() + 600  # a failsafe for a hung job, not a measure
    while not any(len(list(d.glob("part-*"))) >= 2 for d in ck.glob("*/rdd-*")):
        assert proc.poll() is None, "the job ended before its first checkpoint was whole"
        if time.monotonic() > end:
            proc.kill()
            proc.wait()
            pytest.fail("no checkpoint was written")
        time.sleep(0.1)
    victim = sorted(set(executor_pids()) - before)[0]
    os.kill(victim, signal.SIGKILL)
    out2, _ = proc.communicate(timeout=600)
    log.close()
    got = json.loads(out2)
    assert proc.returncode == rc == 0
    assert essentials(got) == essentials(want)
    assert (got["spark"]["lineage_cut"], got["spark"]["partitions"]) == ("reliable", 2)
    assert "Lost executor" in (tmp_path / "driver.log").read_text()  # lost while the job ran
