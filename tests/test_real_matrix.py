"""benchmarks/real_matrix.py's table: what the servers did in each cell beside the release's model
verdict, from JSON lines and model cells written by hand (no server is started)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import real_matrix as rm  # noqa: E402
from models.zk import releases  # noqa: E402


def run(finding, release, exit_, date, **kw):
    """One JSON line as real_matrix.py writes it (the fields the table reads), by hand."""
    rec = {"finding": finding, "release": release, "commit": "abc1234", "date": date,
           "exit": exit_, "command": "written by hand", "violations": [], "stop": None,
           "realised_to_step": 53}
    rec.update(kw)
    return json.loads(json.dumps(rec))


def found(depth):
    return {"violations": [{"depth": depth, "property": "p"}], "stop_reason": "violation",
            "config": {"depth": 100}}


CLEAN = {"violations": [], "stop_reason": "exhausted", "config": {"depth": 100}}

#: reports/data/release-matrix.json cells (the per-release matrix), by hand
CELLS = {"zk-3.8.0|ZOOKEEPER-4646": found(19), "zk-3.8.5|ZOOKEEPER-4646": CLEAN,
         "zk-3.9.2|ZOOKEEPER-4394": found(19)}

STOP = ("not realised at step 40 (crash node 0): the model says currentEpoch 2, server 1 "
        "says 1")

RECORDS = [
    run("zookeeper-4646-acked", "debian-3.8.0", 3, "2026-11-29T10:00:00Z", stop=STOP),
    run("zookeeper-4646-acked", "debian-3.8.0", 10, "2026-11-29T11:00:00Z",  # the later run
        violations=["agreement", "prefix", "acknowledged-durable"]),
    run("zookeeper-4646-acked", "3.8.6", 3, "2026-11-29T11:01:00Z", stop=STOP),
    run("zookeeper-4646-acked", "3.8.3", 10, "2026-11-29T11:02:00Z", violations=["agreement"]),
    run("zookeeper-4394-join", "3.9.2", 0, "2026-11-29T11:03:00Z"),
    run("zookeeper-4646-acked-fixed", "debian-3.8.0", 0, "2026-11-29T11:04:00Z"),
]


@pytest.fixture
def unmodelled_383(monkeypatch):
    """3.8.3 without a model, whatever models/zk/releases.py says of it today. The registry is
    loaded first: registered while the table is patched, it would keep no alias 3.8.3 for the
    rest of the process (tests/test_readme.py, run after this in one process, then failed)."""
    from zabmc.core.model import model_names

    model_names()
    monkeypatch.setattr(releases, "RELEASES",
                        tuple(r for r in releases.RELEASES if r.version != "3.8.3"))
    monkeypatch.setattr(releases, "SAME",
                        {k: v for k, v in releases.SAME.items() if k != "3.8.3"})
    monkeypatch.setattr(releases, "NOT_MODELLED", {"3.8.3": "not reviewed"})
    assert releases.SAME["3.8.6"][0] == "3.8.5"  # 3.8.6's model, the cells below assume it


def test_each_cell_is_its_latest_run_beside_the_release_models_verdict(unmodelled_383):
    lines = rm.section(RECORDS, CELLS).splitlines()
    assert lines[0] == rm.HEADING
    head = next(ln for ln in lines if ln.startswith("| finding"))
    assert head == ("| finding (trace) | its model | bug | Debian 3.8.0 (`zk-3.8.0`) | "
                    "3.8.3 (no model) | 3.8.6 (`zk-3.8.5`) | 3.9.2 (`zk-3.9.2`) |")
    row = next(ln for ln in lines if ln.startswith("| `zookeeper-4646-acked.trace.json`"))
    assert row.split(" | ")[1:] == [
        "`zk`", "ZOOKEEPER-4646",
        "**reproduced** (exit 10: agreement, prefix, acknowledged-durable); model: finds it "
        "(depth 19); **agrees**",
        "**reproduced** (exit 10: agreement); not modelled",
        "not realised (exit 3) at step 40 (crash node 0): the model says currentEpoch 2, "
        "server 1 says 1; model: none (exhausted); **agrees**",
        "not run |"]


def test_a_disagreement_is_counted_and_listed_until_a_note_explains_it(unmodelled_383,
                                                                        monkeypatch):
    monkeypatch.setattr(rm, "NOTES", [])
    text = rm.section(RECORDS, CELLS)
    row = next(ln for ln in text.splitlines() if ln.startswith("| `zookeeper-4394-join"))
    assert row.split(" | ")[-1] == ("realised, no violation (exit 0); model: finds it "
                                    "(depth 19); **disagrees** |")
    assert "Disagreements: 1 of 5 cells." in text
    assert "Not yet explained: `zookeeper-4394-join` on 3.9.2." in text
    monkeypatch.setattr(rm, "NOTES", [("zookeeper-4394-join", ("3.9.2",), "why, by hand.")])
    text = rm.section(RECORDS, CELLS)
    assert "- `zookeeper-4394-join` on 3.9.2: why, by hand." in text
    assert "Not yet explained" not in text


def test_a_control_has_no_model_verdict():
    row = next(ln for ln in rm.section(RECORDS, CELLS).splitlines()
               if ln.startswith("| `zookeeper-4646-acked-fixed"))
    assert row.split(" | ")[1:4] == [
        "`zk-fixed`", "ZOOKEEPER-4646 (control)",
        "realised, no violation (exit 0); control (`zk-fixed`'s events), no model verdict"]


def test_a_release_model_that_cannot_break_the_property_says_why():
    kind, text = rm.model_verdict("zk-3.9.3", "ZOOKEEPER-4712", {})
    assert kind == "none" and text.startswith("absent by construction")
    # every release model has every grain now (3.9.3's threads and forwarding too): a row it can
    # break is a search, not run here
    kind, text = rm.model_verdict("zk-3.9.3", "ZOOKEEPER-4685", {})
    assert (kind, text) == ("not run", "not run")


def test_a_finding_with_two_rows_takes_the_first_that_finds_it():
    """zookeeper-5094-zk-3.8.0's model side: the window row from the initial state, else the row
    searched from the goal scenario deposed-leader (benchmarks/release_matrix.py SCENARIOS);
    cells by hand."""
    rows = rm.FINDINGS["zookeeper-5094-zk-3.8.0"][1]
    row = "ZOOKEEPER-5094 from a deposed leader"
    assert rows == ("ZOOKEEPER-4712/5094 window", row)
    clean = {"violations": [], "stop_reason": "depth-bound", "config": {"depth": 34}}
    start = {"scenario": "deposed-leader", "events": 18}
    cells = {"zk-3.9.3|ZOOKEEPER-4712/5094 window": clean,
             f"zk-3.9.3|{row}": {**found(29), "start": start},
             "zk-3.8.0|ZOOKEEPER-4712/5094 window": found(31),
             f"zk-3.8.0|{row}": {**found(29), "start": start}}
    assert rm.model_verdict("zk-3.9.3", rows, cells) == (
        "found", "finds it (depth 29 from `deposed-leader`, reached in 18 events)")
    assert rm.model_verdict("zk-3.8.0", rows, cells) == ("found", "finds it (depth 31)")
    assert rm.model_verdict("zk-3.9.3", rows[:1], cells) == ("none", "none (to depth 34)")
    cells[f"zk-3.9.3|{row}"] = {**clean, "start": start}
    assert rm.model_verdict("zk-3.9.3", rows, cells) == ("none", "none (to depth 34)")
    assert rm.model_verdict("zk-3.9.3", rows[1], cells) == (
        "none", "none (to depth 34 from `deposed-leader`)")


def test_the_cells_to_run_skip_those_run_at_a_commit_of_the_same_code_unless_again():
    todo = rm.todo(RECORDS, ["zookeeper-4646-acked", "zookeeper-4394-join"],
                   ["debian-3.8.0", "3.9.2"], "abc1234", again=False, same={"abc1234"})
    assert todo == [("zookeeper-4646-acked", "3.9.2"), ("zookeeper-4394-join", "debian-3.8.0")]
    assert len(rm.todo(RECORDS, ["zookeeper-4646-acked"], ["3.9.2", "3.8.6"], "abc1234",
                       again=True, same={"abc1234"})) == 2
    assert len(rm.todo(RECORDS, ["zookeeper-4646-acked"], ["3.8.6"], "other", again=False,
                       same={"other"})) == 1
    assert rm.todo(RECORDS, ["zookeeper-4646-acked"], ["3.8.6"], "other", again=False,
                   same={"other", "abc1234"}) == []
    assert rm.argv_of("zookeeper-4646-acked", "3.9.5") == [
        "flock", "/tmp/zabmc-real.lock", "python", "-m", "zabmc", "real", "--release", "3.9.5",
        "tests/corpus/zk/zookeeper-4646-acked.trace.json", "--json", "-q"]


def test_lift_writes_the_abstractions_run_as_a_trace_of_the_release_model(tmp_path):
    """`--lift`: zookeeper-4394-join (`zk`, 38 events) as a run of `zk-3.8.5`, the trace the
    section's note on 4394 runs. Its 39 events and step are zabmc's own (detects change); that
    the lifted run breaks sync-exception is tests/test_zk_releases.py's `lift` too."""
    out = tmp_path / "lifted.trace.json"
    got = rm.lift("zk-3.8.5", str(ROOT / "tests/corpus/zk/zookeeper-4394-join.trace.json"),
                  str(out))
    doc = json.loads(out.read_text())
    assert (got, doc["model"], len(doc["events"]), doc["violation"]["step"]) == (
        "sync-exception", "zk-3.8.5", 39, 39)
    from zabmc.core.errors import UsageError
    with pytest.raises(UsageError, match="step 38 .* is not enabled in zk-3.8.5"):
        rm.lift("zk-3.8.5", str(ROOT / "tests/corpus/zk/zookeeper-4646-acked.trace.json"),
                str(tmp_path / "x.json"))
