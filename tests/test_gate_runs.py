"""The CI invariant gate's runs, each as a test: every run of `zabmc.gate.RUNS` (what `zabmc gate`
and `make gate` run) passes on the shipped models.

`make test`, and so CI, runs the gate this way instead of calling `zabmc gate` after the suite:
pytest-xdist spreads the runs over the cores with the other tests, and no search runs twice (the
exhaustive runs whose state counts were pinned in tests/test_zab_model.py are pinned here
instead). Each run is the same `zabmc check` command line, in process, with `--json` for its
summary; a run fails its test as it fails the gate: any exit code but 0 (10: a violation, 4: a
`--require-complete` run that did not exhaust its space).
"""

from __future__ import annotations

import json

import pytest

from zabmc.cli import main
from zabmc.gate import RUNS, command

#: the gate's exhaustive runs whose spaces tests pin: run number -> (distinct states, diameter).
#: zabmc's own counts, with the properties' ghost state: they detect change only, except run 1,
#: whose space TLC on benchmarks/tla/Zab.tla found the same (129,521 distinct, diameter 36; run by
#: hand, tests/test_tlc.py runs the three-node space with one proposal). The same figures are in
#: reports/verification.md (benchmarks/verify_zab.py).
PINNED = {
    1: (129_521, 36),
    4: (258_783, 52),
    5: (1_102_116, 55),
}


@pytest.mark.slow
@pytest.mark.parametrize("k", range(1, len(RUNS) + 1), ids=lambda k: f"run{k}")
def test_the_gate_run_passes(k, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # where a failing run leaves its counterexample
    run = RUNS[k - 1]
    with pytest.raises(SystemExit) as e:
        main(["check", *run.split(), "--json", "-q"])
    out, err = capsys.readouterr()
    summary = json.loads(out[out.index("{"):])
    assert (e.value.code, summary["verdict"]) == (0, "ok"), f"{command(run)}: {err[-2000:]}"
    if "--require-complete" in run or k in PINNED:
        assert summary["complete"], command(run)
    if k in PINNED:
        assert (summary["distinct_states"], summary["depth_reached"]) == PINNED[k]


def test_the_pinned_runs_are_the_exhaustive_ones_they_claim():
    """Runs 1, 4 and 5 are the spaces the counts belong to (the gate's order could move)."""
    assert RUNS[0] == "--model zab --network fifo --nodes 3 --proposals 2 --depth 100"
    assert RUNS[3] == ("--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 1 "
                       "--max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 100")
    assert RUNS[4] == ("--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 3 "
                       "--max-drops 2 --max-heartbeats 2 --depth 100")
