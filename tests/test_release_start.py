"""The release matrix's row searched from a goal scenario (benchmarks/release_matrix.py,
SCENARIOS): ZOOKEEPER-5094's window alone (`ack-from-applied-memory`) from `deposed-leader`,
ZOOKEEPER-5094's start, which every release model reaches by its own breadth-first search from
the initial state, so that no cell of the row is n/a.

Where the figures come from: the goal is the state after the first 18 events of
tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json (tests/test_from.py checks that it holds there
and after no earlier event, and that each model's reach is as short as a BFS of that file's own);
that the found run replays from the initial state, starts in the goal, and is 5094's (a TRUNC
whose COMMIT is applied before NEWLEADER, then a timeout) is checked here on the trace itself. The
depth and the distinct states are zabmc's own and only detect change; they depend on
models/zk/storage.py (the TRUNC and what a COMMIT before NEWLEADER does) as well as the explorer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import release_matrix as rm  # noqa: E402
from zabmc.core.model import scenarios  # noqa: E402
from zabmc.spec import CheckSpec  # noqa: E402

ROW = "ZOOKEEPER-5094 from a deposed leader"


def test_the_row_starts_every_model_from_its_goal_scenario():
    """Every release model's cell searches from the goal scenario deposed-leader (`--scenario`),
    which each model can reach and whose property each can break: no cell is n/a or "not in
    this model yet". A cell as the row keeps it (by hand) names the reach and the search."""
    assert rm.start_flags(ROW) == "--scenario deposed-leader "
    assert all(rm.ROWS[ROW][0] in rm.breakable(m) for m in rm.release_models())
    d = {"start": {"scenario": "deposed-leader", "events": 18,
                   "reached": "(reached by search: 463,977 states)"},
         "violations": [{"depth": 29, "property": "ack-from-applied-memory",
                         "message": "node 1 acknowledged ... 2.1 (ZOOKEEPER-5094)"}],
         "distinct_states": 1000, "cpu_seconds": 80.04, "stop_reason": "violation",
         "config": {"depth": 32}}
    assert rm.show(d) == (
        "**found** ZOOKEEPER-5094's window at depth 29 from deposed-leader (its own search: 18 "
        "events, 463,977 states), event 47 of its run (1,000 states, 80.0 CPU s)")
    clean = {**d, "violations": [], "stop_reason": "depth-bound"}
    assert rm.show(clean) == ("none: clean to depth 32 from deposed-leader (its own search: 18 "
                              "events, 463,977 states) (1,000 states, 80.0 CPU s)")


def _events_of(path) -> list:
    return json.loads(Path(path).read_text())["events"]


#: zabmc's own count (the row's cell on zk-3.9.3, `python benchmarks/release_matrix.py --rows
#: "ZOOKEEPER-5094 from a deposed leader"`, at commit 1c7f852: 365,738 states from the goal,
#: which its own search reached in 18 events and 457,725 states): it detects change only
@pytest.mark.slow  # about 45 CPU s: 23 to reach the goal, then the search
@pytest.mark.parametrize("model,states", [("zk-3.9.3", 365_738)])
def test_the_release_model_finds_5094_from_the_deposed_leader(model, states, tmp_path):
    """The row's cell, one search: `ack-from-applied-memory` at depth 29 from the goal, reached
    in 18 events by the model's own search; the run's 47 events replay from the initial state,
    the goal holds after its 18th, and the node that breaks it was truncated, read a COMMIT on
    that connection and never its NEWLEADER."""
    out = tmp_path / "found.trace.json"
    prop, flags, _ = rm.ROWS[ROW]
    r = subprocess.run([sys.executable, "-m", "zabmc", "check", "--model", model, "--scenario",
                        "deposed-leader", *flags.split(), "--invariant", prop, "--json", "-q",
                        "--trace-out", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 10, r.stderr
    d = json.loads(r.stdout)
    v = d["violations"][0]
    assert (v["property"], v["depth"], d["distinct_states"]) == (prop, 29, states)
    assert v["message"].endswith("(ZOOKEEPER-5094)")
    assert (d["start"]["events"], d["start"]["from"]) == (18, "scenario deposed-leader")
    events = _events_of(out)
    assert len(events) == 47
    rep = subprocess.run([sys.executable, "-m", "zabmc", "replay", "-q", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert rep.returncode == 10
    assert f"confirmed: {prop} violated at step 47" in rep.stdout
    spec = CheckSpec(model=model, start_from=f"{out}:18", proposals=0, max_timeouts=0, depth=0,
                     quiet=True, trace_out="/dev/null")
    env = spec.env()
    goal = next(x for x in scenarios(env.model) if x.name == "deposed-leader").goal
    assert goal(env, env.start.state)
    # 5094's shape: the node truncated by a SYNC whose COMMIT it reads before any NEWLEADER on
    # that connection, then a timeout or a lost connection before that NEWLEADER
    node = v["nodes"][0]
    msgs = [(i, e["msg"]) for i, e in enumerate(events) if e["kind"] == "deliver"
            and e["dst"] == node]
    trunc = next(i for i, m in msgs if m["type"] == "SYNC" and m["mode"] == "TRUNC")
    conn = events[trunc]["msg"]["conn"]
    commit = next(i for i, m in msgs if i > trunc and m["type"] == "COMMIT")
    assert events[commit]["msg"]["conn"] == conn
    assert not any(m["type"] == "NEWLEADER" and m["conn"] == conn for i, m in msgs if i > trunc)
