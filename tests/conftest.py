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
