"""`zabmc mutate` (issue #23 point 1): single-point mutants of a model's guards, applied in memory."""

from __future__ import annotations

import hashlib
import pathlib
import re
from collections import Counter

import pytest

from zabmc.explore.bfs import bfs
from zabmc.explore.env import Env, ExploreConfig
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.model import get_model
from zabmc.mutate import GATE, build, mutants

ROOT = pathlib.Path(__file__).resolve().parent.parent
HANDLERS = ROOT / "models" / "zab" / "handlers.py"
DROP = ExploreConfig(nodes=2, network="fifo", max_drops=1, max_timeouts=0, max_heartbeats=0,
                     proposals=2, depth=60, max_crashes=0)


def _bfs(model):
    out = bfs(Env(model, DROP, Checker(DEFAULT_PROPERTIES)))
    return out.distinct, [(f.violation.property, f.depth) for f in out.violations]


def test_every_guard_of_zab_is_mutated_once_per_change():
    ms = mutants("zab")
    assert len(ms) == 173 and [m.index for m in ms] == list(range(173))
    assert Counter(m.kind for m in ms) == {"cmp": 95, "bool": 44, "swap": 18, "quorum": 10,
                                           "plus1": 4, "minmax": 2}
    names = [m.name for m in ms]
    assert len(set(names)) == len(names)
    assert ("models/zab/handlers.py:73:15 cmp: e > node.accepted_epoch -> "
            "e >= node.accepted_epoch") in names
    assert any(m.kind == "quorum" and m.after == "c.q - 1" for m in ms)
    assert not any("durable" in m.before for m in ms)  # data, not a guard


def test_a_mutant_is_a_new_model_in_memory_and_the_source_is_untouched():
    before = hashlib.sha256(HANDLERS.read_bytes()).hexdigest()
    m = next(x for x in mutants("zab") if x.name.endswith("bool: e > le and c == 1 -> e > le"))
    # in_zxid_order accepts a new epoch's proposal whatever its counter: a gap, as db-19's C25
    assert _bfs(build("zab", m)) == (81, [("local-primary-order", 16), ("agreement", 16),
                                          ("total-order", 16)])
    assert _bfs(build("zab", None)) == _bfs(get_model("zab")) == (86, [])
    assert _bfs(get_model("zab")) == (86, [])  # the registered model is not the mutant
    assert hashlib.sha256(HANDLERS.read_bytes()).hexdigest() == before


def test_the_gate_runs_are_the_makefiles():
    text = (ROOT / "Makefile").read_text()
    block = re.search(r"define GATE\n(.*?)\nendef", text, re.S).group(1)
    lines = [line.replace("zabmc check ", "").replace(" -q", "").strip()
             for line in block.splitlines()]
    assert lines == list(GATE)


@pytest.mark.slow
def test_mutate_run_names_the_gate_run_that_catches(cli):
    code, out, _ = cli(["mutate", "--index", "13", "--run"])
    assert code == 0
    assert out.splitlines() == [
        "  13 models/zab/handlers.py:89:44 bool: e > le and c == 1 -> e > le  CAUGHT by gate "
        "run 2: local-primary-order at 15",
        "gate score: 1/1 mutants caught"]


def test_mutate_lists_and_rejects_a_bad_index(cli):
    code, out, _ = cli(["mutate", "--model", "zab"])
    assert code == 0 and out.splitlines()[-1] == "173 mutants of models/zab/handlers.py for model zab"
    code, _, err = cli(["mutate", "--index", "999"])
    assert code == 2 and err.strip() == "zabmc: error: --index 999: there are 173 mutants (0-172)"


def test_the_probe_is_sound_every_mutant_it_calls_unchanged_explores_the_original_graph():
    """Weak mutation: a mutant whose expression never differed in the probed run has the
    original's state graph there (same states, same per-depth counts, no violation); every mutant
    whose graph differs was seen to differ."""
    from zabmc.mutate import Probe

    probe = Probe("zab")
    original = bfs(Env(probe.model, DROP, Checker(DEFAULT_PROPERTIES)))
    assert (original.distinct, original.violations) == (86, [])
    base = (original.distinct, original.per_depth)
    ms = mutants("zab")
    assert probe.infected <= probe.reached and len(probe.reached) < len(ms)
    same = differ = 0
    for m in ms:
        try:
            out = bfs(Env(build("zab", m), DROP, Checker(DEFAULT_PROPERTIES)))
            changed = (out.distinct, out.per_depth) != base or bool(out.violations)
        except Exception:  # noqa: BLE001  (the mutant breaks the kernel: it differs)
            changed = True
        if m.index not in probe.infected:
            assert not changed, m.name
            same += 1
        differ += changed
    # both sides of the claim are exercised: 61 mutants skipped, 96 that differ; 16 infected ones
    # happen to explore the original's graph anyway (a difference that changes no successor)
    assert (same, differ, len(probe.reached), len(probe.infected)) == (61, 96, 154, 112)
