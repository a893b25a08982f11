"""Issue #65: hostile input to every command (tests/support/adversary.py builds the cases: files
of every kind as inputs and outputs, forged traces and schedules, bad flags, and every property
named on every model that cannot break it). None may end in a traceback or an internal error,
replace a device, FIFO or link, answer bad input with more than one line, or say OK for a
property that cannot fire."""

from __future__ import annotations

import os

import pytest

from conftest import need
from support import adversary

CASES = adversary.cases()


@pytest.fixture(scope="module", autouse=True)
def _fork_server():
    """The cases' fork server (tests/support/adversary.py) ends with this module, by its pid."""
    yield
    adversary.stop_server()


def test_the_adversary_is_at_least_as_wide_as_the_issues():
    """The issue's adversary tried 415 inputs; these are more, and reach every kind it names."""
    names = [c.name for c in CASES]
    assert len(names) >= 415 and len(set(names)) == len(names)
    for kind in ("fifo", "zero-device", "dangling-link", "huge-sparse", "out-full-device",
                 "out-null-device", "forged-step-negative", "forged-digest", "schedule-entry-empty",
                 "property/db19/sync-exception", "property/zk/leader-unexpected-ack"):
        assert any(kind in n for n in names), kind


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case):
    if os.geteuid() != 0:
        need("root", "the cases make device nodes with mknod (the project's machines run as root)")
    why = adversary.run_case(case)
    assert why is None, why
