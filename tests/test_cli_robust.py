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
