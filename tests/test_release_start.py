"""The release matrix's row searched from a state (benchmarks/release_models.py, STARTS):
ZOOKEEPER-5094's window (`ack-from-memory`) from the state after the first 18 events of
tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json, on the release models from 3.9.3 on, whose
search from the initial state ("ZOOKEEPER-4712/5094 window", depth 34) stops short of it.

Where the figures come from: the trace's first 18 events, its model and the property are the
corpus file's (tests/test_real_schedule.py builds it and checks it is a run of zk-3.9.3 and
zk-3.9.4 too); that the found run replays from the initial state, and that it is 5094's (a TRUNC
whose COMMIT is applied before NEWLEADER, then a timeout), is checked here on the trace itself.
The depth (29) and the distinct states (356,235 on zk-3.9.3, 356,308 on zk-3.9.4) are zabmc's
own and only detect change; they depend on models/zk/storage.py (the TRUNC and what a COMMIT
before NEWLEADER does) as well as the explorer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import release_models as rm  # noqa: E402

ROW = "ZOOKEEPER-5094 from step 18"
TRACE = ROOT / "tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json"


def test_the_row_starts_every_model_from_its_trace_and_says_na_where_its_steps_are_no_run(
        monkeypatch):
    """Every model's cell searches from the corpus trace itself (`--from` replays its first 18
    events under that model); 3.8.5's NEWLEADER (PR #2111) has no separate ack-newleader step,
    so `zabmc check` refuses the start there (exit 2) and the cell says n/a with its line."""
    assert rm.start_flags(ROW) == f"--from {TRACE.relative_to(ROOT)}:18 "
    d = rm.cell("zk-3.8.5", ROW, 60)
    assert d["refused"].startswith(f"--from {TRACE.relative_to(ROOT)}:18: step 7 (ack-newleader")
    assert "is not an event of model zk-3.8.5" in d["refused"]
    assert rm.show(d).startswith("n/a: the start is not a state of this model (--from ")


def _events_of(path) -> list:
    return json.loads(Path(path).read_text())["events"]


#: zabmc's own count (the row's cell, benchmarks/release_models.py): it detects change. R5
#: (votes, ACKEPOCH and D9 read the data tree) moved it from 356,235. zk-3.9.4's cell (361,490
#: states, the same depth and shape) was a second case here until 2026-11-30, when CI reached
#: 24 min 45 s of its 25; the release matrix's row reruns it
#: (`python benchmarks/release_models.py --rows "ZOOKEEPER-5094 from step 18"`)
@pytest.mark.parametrize("model,states", [("zk-3.9.3", 361_358)])
def test_the_release_model_finds_5094_from_step_18(model, states, tmp_path):
    """The row's cell, one search (about 13 CPU s): `ack-from-memory` at depth 29 from step 18,
    the run's 47 events replaying from the initial state."""
    start = TRACE
    out = tmp_path / "found.trace.json"
    prop, flags, _ = rm.ROWS[ROW]
    r = subprocess.run([sys.executable, "-m", "zabmc", "check", "--model", model, "--from",
                        f"{start}:18", *flags.split(), "--invariant", prop, "--json", "-q",
                        "--trace-out", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 10, r.stderr
    d = json.loads(r.stdout)
    v = d["violations"][0]
    assert (v["property"], v["depth"], d["distinct_states"]) == ("ack-from-memory", 29, states)
    assert v["message"].endswith("(applied in memory only, ZOOKEEPER-5094)")
    assert d["start"]["events"] == 18
    # from the initial state: the trace's first 18 events, then the search's 29
    events = _events_of(out)
    assert len(events) == 47 and events[:18] == _events_of(TRACE)[:18]
    rep = subprocess.run([sys.executable, "-m", "zabmc", "replay", "-q", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert rep.returncode == 10 and "confirmed: ack-from-memory violated at step 47" in rep.stdout
    # 5094's shape: node 2 truncated by a SYNC whose COMMIT it reads before any NEWLEADER on that
    # connection, then a timeout or a lost connection before that NEWLEADER
    msgs = [(i, e["msg"]) for i, e in enumerate(events) if e["kind"] == "deliver"
            and e["dst"] == 2]
    trunc = next(i for i, m in msgs if m["type"] == "SYNC" and m["mode"] == "TRUNC")
    conn = events[trunc]["msg"]["conn"]
    commit = next(i for i, m in msgs if i > trunc and m["type"] == "COMMIT")
    assert events[commit]["msg"]["conn"] == conn
    assert not any(m["type"] == "NEWLEADER" and m["conn"] == conn for i, m in msgs if i > trunc)
