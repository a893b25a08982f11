"""The db-19 regression corpus (tests/corpus/db19, written by `python benchmarks/findings_report.py`):
every recorded counterexample still replays through the kernel to the same violation at the same
step. tests/test_regression_corpus.py re-runs each finding's search (it must find the same trace
again) and explores the same bounds in the zab model."""

from __future__ import annotations

import pathlib

import pytest

from zabmc.explore.trace import load, replay
from zabmc.report.findings import FINDINGS

CORPUS = pathlib.Path(__file__).parent / "corpus" / "db19"
EXPECTED = {
    # id: (property, step)
    "bag-reordered-propose": ("local-primary-order", 11),
    "fifo-duplicate-zxid": ("sane-history", 20),
    "fifo-follower-timeout-gap": ("local-primary-order", 28),
    "bag-two-established-leaders": ("leadership", 13),
    "bag-stale-newleader-retracts": ("prefix", 13),
    "fifo-crash-follower-gap": ("local-primary-order", 25),
    "bag-crash-resync-reorders": ("prefix", 18),
    "fifo-crash-two-leaders": ("leadership", 38),
}


def test_corpus_holds_every_finding():
    assert sorted(p.name for p in CORPUS.glob("*.trace.json")) == sorted(
        f"{f.id}.trace.json" for f in FINDINGS)
    assert set(EXPECTED) == {f.id for f in FINDINGS}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_trace_replays_to_its_violation(name):
    data = load(str(CORPUS / f"{name}.trace.json"))
    result = replay(data)
    assert result.confirmed
    prop, step = EXPECTED[name]
    assert (result.trace.violation.property, result.trace.violation_step) == (prop, step)
    assert result.trace.final_sha256 == data.final_sha256
