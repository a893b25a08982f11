"""The figures a run reports about itself: memory (peak RSS, bytes per state of the visited set
and of the frontier), the states left unexpanded at the bound, and a live progress that never
claims more distinct states than the search ends with."""

from __future__ import annotations

import json

import pytest

from zabmc.cli import main
from zabmc.explore import Env, ExploreConfig, Observer
from zabmc.explore.bfs import BFS
from zabmc.explore.memory import parse_size, peak_rss
from zabmc.errors import UsageError
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.model import get_model


def _json(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "--json"])
    return e.value.code, json.loads(capsys.readouterr().out)


def test_the_json_summary_has_the_memory_figures_and_the_states_left(capsys, tmp_path,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, d = _json(["--nodes", "3", "--depth", "10"], capsys)
    assert rc == 0 and d["stop_reason"] == "depth-bound"
    assert d["frontier_left"] == d["per_depth"][-1] > 0
    m = d["memory"]
    for k in ("peak_rss_bytes", "peak_rss_bytes_per_state", "visited_bytes",
              "visited_bytes_per_state", "frontier_peak_states",
              "frontier_encoded_bytes_per_state"):
        assert k in m, k
    assert m["peak_rss_bytes"] >= 10 * 2**20
    assert m["peak_rss_bytes_per_state"] == pytest.approx(
        m["peak_rss_bytes"] / d["distinct_states"], rel=1e-3)
    assert m["visited_bytes_per_state"] == pytest.approx(22.0, abs=0.5)
    assert m["frontier_peak_states"] == max(d["per_depth"])
    assert 50 < m["frontier_encoded_bytes_per_state"] < 10_000


def test_an_exhausted_search_has_no_states_left(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, d = _json(["--model", "zab", "--nodes", "2", "--proposals", "1", "--depth", "100"], capsys)
    assert d["stop_reason"] == "exhausted" and d["frontier_left"] == 0


def test_the_text_summary_prints_the_states_left_and_peak_rss(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["check", "--nodes", "3", "--depth", "8", "-q"])
    out = capsys.readouterr().out
    assert "states left unexpanded (at the bound)" in out
    assert "peak RSS" in out and "largest frontier" in out


class Collect(Observer):
    def __init__(self):
        self.progress = []

    def on_progress(self, p):
        self.progress.append(p)


def test_progress_never_shows_more_distinct_states_than_the_result():
    env = Env(get_model("db19"), ExploreConfig(nodes=3, network="bag", depth=5),
              Checker(DEFAULT_PROPERTIES))

    class Eager(BFS):
        """Progress after every parent expanded."""

        def search(self):
            self.next_progress = 0.0
            return super().search()

        def progress(self, *a, **k):
            super().progress(*a, **k)
            self.next_progress = 0.0

    obs = Collect()
    o = Eager(env, observer=obs).run()
    assert len(obs.progress) > 1000
    assert max(p.distinct for p in obs.progress) <= o.distinct
    # and never fewer than the levels already complete
    for p in obs.progress:
        assert p.distinct >= sum(o.per_depth[:p.depth])


def test_peak_rss_and_sizes():
    assert peak_rss() > 2**20
    assert parse_size("800M") == 800 * 2**20 and parse_size("2G") == 2 * 2**30
    assert parse_size("1.5g") == 3 * 2**29 and parse_size("4096") == 4096
    with pytest.raises(UsageError):
        parse_size("lots")
