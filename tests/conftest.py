"""Helpers shared by the tests."""

from __future__ import annotations

import pytest

from zabmc.cli import main


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
    pytest.importorskip("pyspark")
    from zabmc.spark.session import get_session, stop_session

    session = get_session("local[2]", partitions=2)
    yield session
    stop_session()
