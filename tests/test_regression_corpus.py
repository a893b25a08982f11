"""The db-19 regression corpus against both models (issue #5): every db-19 counterexample of
tests/corpus/db19 is still found in `db19`, and the same bounds in `zab` show no violation.

- db19: each finding's own search (`zabmc.report.findings`: BFS, or seeded random walks shortened
  by replay) finds the recorded counterexample again, event for event. (tests/test_db19_corpus.py
  replays each recorded trace to the same violation at the same step.)
- zab: BFS with the finding's budgets (nodes, proposals, timeouts, drops, heartbeats) and depth
  bound, every default property, no violation; the distinct-state count, the depth reached and
  whether the space was exhausted are pinned (reports/verification.md, "Regression corpus", has
  the same figures, from benchmarks/verify_zab.py --corpus).

Two differences from the finding's bounds, on purpose:

- **Network.** `zab` assumes FIFO links (the paper's TCP) and refuses `--network bag`, so the three
  findings made on `bag` links run on `fifo` in zab. The reordering they rely on is outside ZAB's
  assumption; what they check is that the same budgets on the links ZAB assumes break nothing.
- **Crashes.** The findings that need a crash keep their crash budget (`max_crashes`) in zab: the
  `zab` model runs under the same crash and restart events (docs/semantics.md, E7-E10).
- **Depth, for two findings.** bag-two-established-leaders (3 nodes, no proposal, 2 timeouts,
  depth 60) is far too big to explore to depth 60 in CI: depth 15 takes about 1.5 minutes here,
  depth 16 about 2.5 and each further level about 1.5 times the one before. Its zab run explores
  every path of up to 15 events (the db-19 counterexample has 13) and is marked slow.
  fifo-crash-two-leaders (3 nodes, 2 proposals, one crash, depth 60) is capped at depth 24,
  shorter than its 38-event db-19 counterexample: that search is gate run 6.
- **Gate runs.** Two zab searches are gate runs (fifo-duplicate-zxid: run 1, exhausted;
  fifo-crash-two-leaders: run 6): tests/test_gate_runs.py runs them and pins their spaces, and
  this module checks that they are the same searches.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

from zabmc.explore.bfs import bfs
from zabmc.explore.env import Env, ExploreConfig
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import get_model
from zabmc.report.findings import FINDINGS, run_finding

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "db19"


class Zab:
    """The expected zab run of one finding."""

    def __init__(self, distinct, depth_reached, stop_reason, depth=None, slow=False, gate=None):
        self.distinct, self.depth_reached, self.stop_reason = distinct, depth_reached, stop_reason
        self.depth = depth  # None: the finding's own depth bound
        self.slow = slow
        #: the gate run that is this search (tests/test_gate_runs.py runs it and pins its space),
        #: so that it runs once in CI
        self.gate = gate


# zabmc's counts, with the properties' ghost state: they detect change only, except that the two
# three-node spaces without faults are TLC's too (Zab.tla has no ghost, and there the ghost adds
# no state): 18,103 (tests/test_tlc.py, 3n-p1) and 129,521 (run by hand).
ZAB = {
    "bag-reordered-propose": Zab(31, 18, "exhausted"),
    # Stops at its bound, 30, but cuts nothing off: the exhaustive search of the same budgets
    # (tests/test_zab_model.py, n3-p1) has the same 18,103 states and diameter 30.
    "bag-stale-newleader-retracts": Zab(18_103, 30, "depth-bound"),
    # The finding's bound is depth 60; see the module docstring.
    "bag-two-established-leaders": Zab(1_389_182, 15, "depth-bound", depth=15, slow=True),
    "fifo-duplicate-zxid": Zab(129_521, 36, "exhausted", gate=1),
    "fifo-follower-timeout-gap": Zab(633, 29, "exhausted"),
    # the two 2-node crash findings have the same budgets, and zab runs both on fifo links
    "fifo-crash-follower-gap": Zab(720, 29, "exhausted"),
    "bag-crash-resync-reorders": Zab(720, 29, "exhausted"),
    # 3 nodes, 2 proposals, one crash, depth 60: capped like bag-two-established-leaders (the
    # db-19 counterexample has 38 events), at 24: gate run 6
    "fifo-crash-two-leaders": Zab(682_663, 24, "depth-bound", depth=24, slow=True, gate=6),
}


def corpus_file(name: str) -> dict:
    return json.loads((CORPUS / f"{name}.trace.json").read_text())


def zab_config(name: str) -> ExploreConfig:
    """The finding's bounds, on FIFO links, with the depth of ZAB[name]."""
    c = corpus_file(name)["config"]
    depth = ZAB[name].depth or c["depth"]
    assert depth <= c["depth"]
    return ExploreConfig(nodes=c["nodes"], network="fifo", max_drops=c["max_drops"],
                         max_timeouts=c["max_timeouts"], max_heartbeats=c["max_heartbeats"],
                         proposals=c["proposals"], depth=depth,
                         max_crashes=c.get("max_crashes", 0))


def _param(name):
    return pytest.param(name, marks=[pytest.mark.slow] if ZAB[name].slow else [], id=name)


def test_every_corpus_file_has_a_finding_and_a_zab_run():
    names = sorted(p.name.removesuffix(".trace.json") for p in CORPUS.glob("*.trace.json"))
    assert names == sorted(ZAB) == sorted(f.id for f in FINDINGS)


def test_the_verification_report_runs_the_same_zab_bounds():
    """benchmarks/verify_zab.py --corpus explores exactly these configurations."""
    spec = importlib.util.spec_from_file_location("verify_zab", ROOT / "benchmarks/verify_zab.py")
    verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verify)
    runs = verify.corpus_runs()
    assert {r.finding: r.config() for r in runs} == {name: zab_config(name) for name in ZAB}
    assert {r.finding for r in runs if r.capped} == {n for n, z in ZAB.items() if z.depth}


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_db19_still_finds_it(finding):
    """The finding's own search in db19 finds the recorded counterexample again."""
    env, _, found, trace, _, _ = run_finding(finding)
    recorded = corpus_file(finding.id)
    assert found.violation.property == recorded["violation"]["property"]
    assert (trace.violation.property, trace.violation_step) == (
        recorded["violation"]["property"], recorded["violation"]["step"])
    assert [e.to_json(env.model) for e in trace.events] == recorded["events"]


@pytest.mark.parametrize("name", [_param(n) for n in ZAB if ZAB[n].gate is None])
def test_zab_shows_no_violation_within_the_same_bounds(name):
    cfg = zab_config(name)
    out = bfs(Env(get_model("zab"), cfg, Checker(DEFAULT_PROPERTIES)), stop_at_first=False)
    assert out.violations == []
    z = ZAB[name]
    assert (out.stop_reason, out.distinct, out.depth_reached) == (
        z.stop_reason, z.distinct, z.depth_reached)



@pytest.mark.parametrize("name", [n for n in ZAB if ZAB[n].gate is not None])
def test_the_zab_runs_that_are_gate_runs_are_run_and_pinned_there(name):
    """The zab search of this finding is gate run `ZAB[name].gate`, flag for flag (its property
    set is the default one), and tests/test_gate_runs.py pins its space to these figures."""
    from test_gate_runs import PINNED

    from zabmc.gate import RUNS
    from zabmc.spec import CheckSpec

    z = ZAB[name]
    spec = CheckSpec.from_args(RUNS[z.gate - 1])
    assert spec.model == "zab" and not spec.invariants and not spec.find_all
    assert spec.config() == zab_config(name)._replace(depth=spec.depth)
    assert spec.depth == zab_config(name).depth or z.stop_reason == "exhausted"
    assert PINNED[z.gate] == (z.distinct, z.depth_reached)
