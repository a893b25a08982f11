"""One model per ZooKeeper release (issue #62; models/zk/releases.py, models/zk/README.md R1-R4)."""

from __future__ import annotations

import json
import subprocess
import sys

from zabmc.core.model import get_model, model_names

from models.zk import releases


def _zabmc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "zabmc", *args], cwd=cwd, capture_output=True,
                          text=True)


def test_every_release_of_the_table_is_one_registered_model_apart_from_the_abstractions():
    names = model_names()
    for r in releases.RELEASES:
        m = get_model(f"zk-{r.version}")
        assert (m.name, m.release) == (f"zk-{r.version}", r.version)
        assert type(m.rules).__name__ == r.rules
        assert (m.kernel is releases.THREADS) == (r.stack == "threads")
    assert [n for n in names if getattr(get_model(n), "release", None)] == [
        f"zk-{r.version}" for r in releases.RELEASES]
    for version, (target, _) in releases.SAME.items():
        assert get_model(f"zk-{version}") is get_model(f"zk-{target}")


def test_a_release_node_has_every_field_of_its_stack():
    """The THREADS stack's node: fine.py's, forward's, shutdown's and epoch's fields at once."""
    fields = set(releases.ReleaseNode._fields)
    assert {"owed", "toack", "nlread", "nlq", "disk", "leak", "snapped"} <= fields
    assert get_model("zk-3.8.0").fresh(0, 3) == releases.ReleaseNode(0)


def test_zk_3_8_0_finds_zookeeper_4685_and_its_run_is_one_of_the_threads_abstraction(tmp_path):
    """Issue #62's "Done when": `check --model zk-3.8.0 ... --invariant leader-unexpected-ack`
    finds 4685. The second computation: its 18 events, replayed on `zk-3.7.0-threads` (fine.py
    alone, a model written before the release stack), break the same property at the same step,
    and that abstraction's own breadth-first search finds no shorter run (18 events too): the
    stack's other layers add no step a run of 4685 needs."""
    flags = ["--nodes", "3", "--proposals", "1", "--max-timeouts", "1", "--depth", "30",
             "--invariant", "leader-unexpected-ack", "-q", "--json"]
    runs = {}
    for model in ("zk-3.8.0", "zk-3.7.0-threads"):
        out = tmp_path / f"{model}.trace.json"
        p = _zabmc("check", "--model", model, *flags, "--trace-out", str(out), cwd=tmp_path)
        assert p.returncode == 10, p.stderr
        (v,) = json.loads(p.stdout)["violations"]
        assert (v["property"], v["depth"]) == ("leader-unexpected-ack", 18)
        runs[model] = json.loads(out.read_text())
    doc = runs["zk-3.8.0"]
    doc.update(model="zk-3.7.0-threads")
    doc.pop("states"), doc.pop("final_sha256")
    lifted = tmp_path / "lifted.trace.json"
    lifted.write_text(json.dumps(doc))
    p = _zabmc("replay", str(lifted), cwd=tmp_path)
    assert "confirmed: leader-unexpected-ack violated at step 18" in p.stdout, p.stdout + p.stderr
