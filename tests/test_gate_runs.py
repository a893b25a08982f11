"""The CI invariant gate's runs, each as a test: every run of `zabmc.gate.RUNS` (what `zabmc gate`
and `make gate` run) passes on the shipped models; runs 9 and 10, the exhaustive reduced ones, to
depth 28 (`PREFIX`), and runs 8 and 17 on their first part (`FIRST`).

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

#: the gate's runs whose spaces tests pin: run number -> (distinct states, depth reached).
#: zabmc's own counts, with the properties' ghost state: they detect change only, except run 1,
#: whose space TLC on benchmarks/tla/Zab.tla found the same (129,521 distinct, diameter 36; run by
#: hand, tests/test_tlc.py runs the three-node space with one proposal). The same figures are in
#: reports/verification.md (benchmarks/verify_zab.py).
PINNED = {
    1: (129_521, 36),
    4: (258_783, 52),
    5: (1_102_116, 55),
    # to its depth bound: the zab search of the db-19 finding fifo-crash-two-leaders
    # (tests/test_regression_corpus.py)
    6: (682_663, 24),
}
#: the pinned runs that exhaust their space (run 6 stops at its depth bound)
EXHAUSTED = (1, 4, 5)

#: runs whose test checks their first levels only: the gate's two exhaustive reduced runs (9: zab,
#: 10: zab-omega, 53 levels, 2,263,358 and 2,023,990 states, 98 and 88 CPU s on this two-core
#: machine)
#: are tested to depth 28, that is the same breadth-first search's first 28 levels (a level does
#: not depend on the bound), where every mutant they catch lies (25 to 27 events deep:
#: tests/test_mutate.py runs them on those mutants). `make gate` (`zabmc gate`) runs them to the
#: end, and reports/verification.md has their exhausted spaces.
PREFIX = {9: 28, 10: 28}
#: runs whose test takes their first part only, by one flag: run 8, the zab random walks, its
#: first 10,000 walks of 20,000 (one generator draws walk after walk, so they are the full run's
#: first 10,000), and run 17, zk-fixed's capped depth-first search, its first 400,000 states of
#: 800,000 (the successors' order is fixed, so a capped search covers the same states on every run:
#: zabmc/explore/dfs.py). Each saves about a CPU minute of CI. The mutants and real bugs they
#: catch lie beyond that part, and tests/test_mutate.py runs the whole runs on them (ZOOKEEPER-3911
#: for run 17, the random-walk stage's skipped history selection for run 8); `make gate` runs them
#: whole.
FIRST = {8: ("--walks", "20000", "10000"), 17: ("--max-states", "800000", "400000")}


@pytest.mark.slow
@pytest.mark.parametrize("k", range(1, len(RUNS) + 1), ids=lambda k: f"run{k}")
def test_the_gate_run_passes(k, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # where a failing run leaves its counterexample
    run = RUNS[k - 1]
    if k in PREFIX:
        run = _prefix(run, PREFIX[k])
    if k in FIRST:
        run = _first(run, *FIRST[k])
    with pytest.raises(SystemExit) as e:
        main(["check", *run.split(), "--json", "-q"])
    out, err = capsys.readouterr()
    summary = json.loads(out[out.index("{"):])
    assert (e.value.code, summary["verdict"]) == (0, "ok"), f"{command(run)}: {err[-2000:]}"
    if "--require-complete" in run or k in EXHAUSTED:
        assert summary["complete"], command(run)
    if k in PREFIX:
        assert (summary["stop_reason"], summary["depth_reached"]) == ("depth-bound", PREFIX[k])
    if k in PINNED:
        assert (summary["distinct_states"], summary["depth_reached"]) == PINNED[k]
    if k == 17:  # the cap reached: the part is all it claims
        assert (summary["stop_reason"], summary["distinct_states"]) == ("state-cap", 400_000)


def test_the_pinned_runs_are_the_exhaustive_ones_they_claim():
    """Runs 1, 4, 5 and 6 are the spaces the counts belong to (the gate's order could move)."""
    assert RUNS[0] == "--model zab --network fifo --nodes 3 --proposals 2 --depth 100"
    assert RUNS[3] == ("--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 1 "
                       "--max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 100")
    assert RUNS[4] == ("--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 3 "
                       "--max-drops 2 --max-heartbeats 2 --depth 100")
    assert RUNS[5] == ("--model zab --network fifo --nodes 3 --proposals 2 --max-crashes 1 "
                       "--depth 24")


def _first(run: str, flag: str, whole: str, part: str) -> str:
    """`run` with its `flag` lowered from `whole` to `part`."""
    words = run.split()
    assert words[words.index(flag) + 1] == whole
    words[words.index(flag) + 1] = part
    return " ".join(words)


def _prefix(run: str, depth: int) -> str:
    """`run`, an exhaustive run, to `depth` only."""
    words = run.split()
    assert "--require-complete" in words
    words.remove("--require-complete")
    return _first(" ".join(words), "--depth", "200", str(depth))


def test_the_runs_tested_in_their_first_part_are_the_random_walks_and_the_capped_dfs():
    assert RUNS[7].split()[1] == "zab" and "--strategy random --seed 1 --walks 20000" in RUNS[7]
    assert RUNS[16].split()[1] == "zk-fixed" and RUNS[16].endswith(
        "--strategy dfs --max-states 800000")
    assert _first(RUNS[16], *FIRST[17]).endswith("--strategy dfs --max-states 400000")


def test_the_runs_tested_in_part_are_the_exhaustive_reduced_ones():
    assert [RUNS[k - 1].split()[1] for k in PREFIX] == ["zab", "zab-omega"]
    for k in PREFIX:
        assert "--reduction por --require-complete" in RUNS[k - 1]
        assert _prefix(RUNS[k - 1], 28).endswith("--depth 28 --reduction por")
