"""Helpers shared by the tests."""

from __future__ import annotations

import importlib
import os
import shutil

import pytest
from hypothesis import settings

from zabmc.cli import main

# No test may fail for taking long: hypothesis's per-example deadline (200 ms by default) is off
# for every @given of the suite, which runs on shared, loaded machines.
settings.register_profile("zabmc", deadline=None)
settings.load_profile("zabmc")

#: `make test` runs the whole suite on every core (pytest-xdist, --dist loadgroup). The modules
#: whose JVMs' timing matters carry this mark, so that one worker runs them one after another
#: while the other workers run the CPU-bound tests: the Spark standalone cluster's (its tests
#: share one cluster) and the real ZooKeeper ensembles' (their conformance waits are timing
#: tolerances, and no two ensembles, nor an ensemble and the cluster, should run at once). The
#: group has the most tests of any unit, so xdist hands it out first.
SERIAL_JVMS = pytest.mark.xdist_group("jvms")

#: Beside it, a worker that starts any other test lowers its own scheduling priority by this
#: much (nice; raising it needs no privilege, and the children it starts inherit it): the
#: CPU-bound searches then take the cores only when the group's servers do not want them, so
#: the ensembles' timing is as if they ran alone, and no core idles while they wait. The group's
#: worker runs the group first (it is the first unit handed out), so it is lowered only after.
NICE_BESIDE_JVMS = 10
BASE_NICE = os.getpriority(os.PRIO_PROCESS, 0)
LOWERED_NICE = min(19, BASE_NICE + NICE_BESIDE_JVMS)  # nice's ceiling is 19


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker per core the suite may use, one more for the JVM group, whose worker
    mostly waits on its servers (it would leave its core idle half the time), and one more for
    the waits of the others (a kill -9 at a chosen moment, a Spark or TLC JVM starting, a
    subprocess's signal): with one more, two cores spent 89% of a clean-clone CI busy. The
    others run at the lower priority above, so the extra workers take no time from the
    servers."""
    return len(os.sched_getaffinity(0)) + 2


def pytest_runtest_setup(item):
    if (os.environ.get("PYTEST_XDIST_WORKER") and item.get_closest_marker("xdist_group") is None
            and os.getpriority(os.PRIO_PROCESS, 0) < LOWERED_NICE):
        os.setpriority(os.PRIO_PROCESS, 0, LOWERED_NICE)


def need_real_tools() -> None:
    """`need` for what a run of `zabmc real` with hooks takes: Java, a ZooKeeper build, kazoo
    and Byteman's jar (make install-test)."""
    from zabmc.core.errors import UsageError
    from zabmc.real.install import find_byteman, find_java, find_zookeeper
    try:
        find_java()
        find_zookeeper()
        import kazoo  # noqa: F401
        if find_byteman() is None:
            raise UsageError("Byteman's jar not found (make install-test)")
    except (UsageError, ImportError) as e:
        need("a real-ZooKeeper tool", str(e))


def need(tool: str, why: str) -> None:
    """The test cannot run: `tool` is missing, for the reason `why`. Under CI=true (what `make
    test` runs in CI) that fails the test, saying so, for a CI run must not pass by skipping;
    anywhere else the test is skipped with the same reason. Every skip of the suite goes through
    here (tests/test_need.py shows both sides)."""
    message = f"{tool} is missing: {why}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true runs every test, but {message}", pytrace=False)
    pytest.skip(message)


def need_module(name: str, install: str):
    """The module `name`, imported, or `need` with how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        need(name, f"{e} ({install})")


def need_java() -> str:
    java = shutil.which("java")
    if java is None:
        need("java", "no `java` on PATH (Spark and TLC need a JVM; Java 17 is what the Spark "
                     "engine uses)")
    return java


def need_pyspark():
    need_java()
    return need_module("pyspark", "pip install -e '.[spark]' (make install-test)")


def need_console_script() -> str:
    script = shutil.which("zabmc")
    if script is None:
        need("the zabmc console script", "`zabmc` is not on PATH (pip install -e ., make install)")
    return script


@pytest.fixture
def cli(capsys):
    """Run `zabmc ARGS...` in process: (exit code, stdout, stderr)."""

    def run(args):
        with pytest.raises(SystemExit) as e:
            main(list(args))
        out, err = capsys.readouterr()
        return e.value.code, out, err

    return run


@pytest.fixture(scope="session")
def spark():
    """One SparkSession on local[2] (2 shuffle partitions) for every Spark test, started by the
    first test that asks for it."""
    need_pyspark()
    from zabmc.spark.session import get_session, stop_session

    session = get_session("local[2]", partitions=2)
    yield session
    stop_session()


def walk_described(spec, steps: list[str]):
    """Drive the explorer's own events of the check `spec` (a validated CheckSpec): at each step
    the one enabled event whose description starts with the given text. Returns the env, the
    states and each step's violation (None where the step broke nothing)."""
    env = spec.env()
    s, _ = env.initial()
    states, found = [s], []
    for text in steps:
        evs = [ev for ev in env.events(s) if ev.describe(env.model).startswith(text)]
        assert len(evs) == 1, (text, [ev.describe(env.model) for ev in env.events(s)])
        _, s, v = env.successor(s, evs[0])
        states.append(s)
        found.append(v)
    return env, states, found
