"""benchmarks/proviso_probe.py measures what the reduced search's proviso costs. Its baseline row
must be the search zabmc ships, and its graph of a small space must be the one the explorer
exhausts, or its figures say nothing about either."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import proviso_probe  # noqa: E402


def test_the_probes_baseline_is_the_shipped_reduced_search(cli, capsys):
    assert proviso_probe.main(["--depth", "14", "--no-cycles"]) == 0
    printed = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in printed.splitlines()
            if line.startswith("| ") and "distinct" not in line}
    code, out, _ = cli(["check", "--model", "zab", "--network", "fifo", "--nodes", "3",
                        "--proposals", "2", "--max-timeouts", "1", "--depth", "14",
                        "--reduction", "por", "--json", "-q"])
    shipped = json.loads(out)
    assert code == 0
    distinct = lambda mode: int(rows[mode].split("|")[2].replace(",", ""))  # noqa: E731
    assert distinct("por") == shipped["distinct_states"]
    # what the proviso costs can only be states the unsound run leaves out
    assert distinct("none") < distinct("level")
    # zab's progress measure changes which states the proviso expands fully
    expansions = lambda mode: rows[mode].split("|")[4].strip()  # noqa: E731
    assert expansions("por") != expansions("level")


def test_the_probes_graph_of_a_space_is_the_explorers(cli):
    """Its graph has the states and events `zabmc check --all` counts when it exhausts the space
    (every event of every state; the initial state counts as a state generated)."""
    kw = {"nodes": 2, "proposals": 1, "max_timeouts": 1}
    r = proviso_probe.cycles("zab", kw)
    code, out, _ = cli(["check", "--model", "zab", "--network", "fifo", "--nodes", "2",
                        "--proposals", "1", "--max-timeouts", "1", "--depth", "1000", "--all",
                        "--json", "-q"])
    d = json.loads(out)
    assert d["complete"] and (r["states"], r["events"] + 1) == (d["distinct_states"], d["states"])
    assert (r["cyclic_components"], r["self_loops"]) == (0, 0)
    # the measure's lowering events there: LookForLeader deliveries only
    assert {what for how, what in r["not_raised"] if how == "lower"} == {"deliver LFL"}


def test_the_probe_times_the_same_deliveries_on_both_paths():
    """`--delivery-cost` times zab's fast path and the whole measure on one fixed set of
    deliveries (seeded walks: 2,477 for 20 walks, zabmc's own count, a change detector), a figure
    per round for each."""
    r = proviso_probe.delivery_cost(walks=20, rounds=2)
    assert r["deliveries"] == 2_477
    assert len(r["fast"]) == len(r["whole"]) == 2 and min(r["fast"] + r["whole"]) > 0
