"""The figures a run reports about itself: memory (peak RSS, bytes per state of the visited set
and of the frontier), the states left unexpanded at the bound, and a live progress that never
claims more distinct states than the search ends with."""

from __future__ import annotations

import json
import os

import pytest

from zabmc.cli import main
from zabmc.explore import Env, ExploreConfig, Observer
from zabmc.explore.bfs import BFS
from zabmc.explore.memory import parse_size, peak_rss
from zabmc.core.errors import UsageError
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import get_model


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


# --- levels on disk (--memory-limit) ----------------------------------------------------------------

from zabmc.explore.codec import choose_codec, make_codec  # noqa: E402
from zabmc.explore.spill import Level, Spill  # noqa: E402


def _env(cfg):
    return Env(get_model("db19"), cfg, Checker(DEFAULT_PROPERTIES))


def _first_states(env, count: int) -> list:
    """The first `count` states breadth first (successors of every state taken, duplicates too)."""
    init, _ = env.initial()
    states, todo = [], [init]
    while todo and len(states) < count:
        s = todo.pop(0)
        states.append(s)
        todo.extend(x for _, x, _ in env.successors(s))
    return states


@pytest.mark.parametrize("compress", [0, 1, "zstd"])
def test_a_level_on_disk_gives_back_the_same_states(compress, tmp_path):
    env = _env(ExploreConfig(nodes=3, network="bag", max_timeouts=1, max_crashes=1, depth=4))
    codec = make_codec(choose_codec(env), env)
    spill = Spill(codec, budget=10 * 1500, parent=str(tmp_path), compress=compress)
    states = _first_states(env, 3000)
    level = Level(spill)
    for s in states:
        level.append(s)
    level.finish()
    assert level.on_disk and len(level) == len(states) and spill.peak_disk_bytes > 0
    back = list(level)
    assert back == states
    for a, b in zip(states[:300], back):
        assert env.fingerprint(a) == env.fingerprint(b)
        assert ([(e, env.fingerprint(x)) for e, x, _ in env.successors(a)]
                == [(e, env.fingerprint(x)) for e, x, _ in env.successors(b)])
    assert list(level) == states  # a level reads back more than once
    level.drop()
    spill.close()
    assert list(tmp_path.iterdir()) == []


def test_a_large_level_measures_what_its_states_take(tmp_path):
    """Past the 4,096 states it needs for a sample, a level measures its states instead of going by
    the 1,500-byte estimate: the distinct objects of an evenly spaced sample, shared ones once."""
    from zabmc.explore.spill import MEASURE_SAMPLE, measured_bytes

    env = _env(ExploreConfig(nodes=3, network="bag", max_timeouts=1, max_crashes=1, depth=4))
    codec = make_codec(choose_codec(env), env)
    states = _first_states(env, 6000)
    per_state = measured_bytes(states)
    assert 100 < per_state < 1500  # these states share their nodes and messages
    assert measured_bytes(states[:1] * 5000) < 100  # one state 5,000 times: one state's objects
    # an estimate that would spill at 5,000 states; measured, 6,000 fit
    spill = Spill(codec, budget=5000 * 1500, parent=str(tmp_path))
    level = Level(spill)
    for s in states:
        level.append(s)
    assert not level.on_disk and level.measured and level.limit == 5000 * 1500 // per_state
    # a budget the estimate exceeds before there are enough states to measure: to disk, unmeasured
    spill2 = Spill(codec, budget=MEASURE_SAMPLE * per_state // 2, parent=str(tmp_path))
    level2 = Level(spill2)
    for s in states:
        level2.append(s)
    level2.finish()
    assert level2.on_disk and not level2.measured and list(level2) == states
    level2.drop()
    spill2.close()


def _summary(o):
    return (o.distinct, o.generated, list(o.per_depth), o.depth_reached, o.stop_reason,
            o.extra.get("frontier_left"),
            [(f.violation.property, f.depth, f.path) for f in o.violations])


@pytest.mark.parametrize("cfg", [ExploreConfig(nodes=2, network="bag", max_timeouts=1, proposals=2),
                                 ExploreConfig(nodes=3, depth=12)], ids=["violation", "clean"])
def test_a_search_with_levels_on_disk_finds_what_one_in_memory_does(cfg, tmp_path):
    env = _env(cfg)
    plain = BFS(env).run()
    codec = make_codec(choose_codec(env), env)
    spill = Spill(codec, budget=200 * 1500, parent=str(tmp_path))
    o = BFS(env, spill=spill, codec=codec).run()
    assert _summary(o) == _summary(plain)
    assert o.extra["spilled_levels"] >= 3 and o.extra["frontier_disk_bytes"] > 0
    assert list(tmp_path.iterdir()) == []  # the spill files are gone


def test_checkpoints_and_resume_work_with_levels_on_disk(tmp_path):
    from zabmc.explore import checkpoint as ck

    env = _env(ExploreConfig(nodes=3, depth=11))
    plain = BFS(env).run()
    name = choose_codec(env)
    codec = make_codec(name, env)
    ident = ck.identity(model="db19", config=env.config, invariants=env.checker.names,
                        strategy="bfs", stop_at_first=True, codec=name)
    copies = []

    def keep(line):
        import shutil
        dst = tmp_path / f"copy-{len(copies)}"
        shutil.copytree(tmp_path / "ck", dst)
        copies.append(dst)

    o = BFS(env, spill=Spill(codec, 200 * 1500), codec=codec,
            checkpoint=ck.Checkpointer(str(tmp_path / "ck"), ident, every=0, log=keep)).run()
    assert _summary(o) == _summary(plain)
    for d in copies[5::2]:
        r = BFS(env, spill=Spill(codec, 200 * 1500), codec=codec,
                resume=ck.load(str(d), ident)).run()
        assert _summary(r) == _summary(plain)


def test_memory_limit_option(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, d = _json(["--nodes", "3", "--depth", "10", "--memory-limit", "1M"], capsys)
    rc2, d2 = _json(["--nodes", "3", "--depth", "10", "--memory-limit", "none"], capsys)
    assert d["per_depth"] == d2["per_depth"] and d["distinct_states"] == d2["distinct_states"]
    assert d["memory"]["spilled_levels"] > 0 and d["memory"]["memory_limit"] == 2**20
    assert "spilled_levels" not in d2["memory"]
    with pytest.raises(SystemExit) as e:
        main(["check", "--memory-limit", "lots"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["check", "--strategy", "dfs", "--memory-limit", "1G"])
    assert e.value.code == 2


def test_spill_dir_and_the_directories_of_killed_runs(tmp_path, capsys):
    """--spill-dir puts the segment files there; a run killed with SIGKILL leaves its directory,
    and the next run that spills there removes it (and says so)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    spill = tmp_path / "spill"
    spill.mkdir()
    args = [sys.executable, "-m", "zabmc", "check", "--nodes", "3", "--network", "bag",
            "--depth", "14", "--memory-limit", "1M", "--spill-dir", str(spill), "-q"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not any(spill.glob(f"zabmc-spill-{proc.pid}-*/level-*.seg")):
        assert proc.poll() is None and time.monotonic() < deadline, "the run never spilled"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = list(spill.glob(f"zabmc-spill-{proc.pid}-*"))
    assert len(left) == 1  # SIGKILL: nothing could clean up
    rc, d = _json(["--nodes", "3", "--depth", "10", "--memory-limit", "1M",
                   "--spill-dir", str(spill)], capsys)
    assert rc == 0 and d["memory"]["spilled_levels"] > 0
    assert d["memory"]["stale_spill_dirs_removed"] == 1 and not left[0].exists()
    assert list(spill.iterdir()) == []  # this run's own directory went when it ended
    with pytest.raises(SystemExit) as e:
        main(["check", "--spill-dir", str(tmp_path / "nowhere")])
    assert e.value.code == 2
    assert "--spill-dir" in capsys.readouterr().err


def test_the_summary_gives_rss_per_state_only_where_it_means_something():
    """On a tiny run the peak RSS is the interpreter's: "2,194,809 bytes per distinct state" for
    73 states (#37). Below 100,000 distinct states the summary gives the total only."""
    from rich.console import Console

    from zabmc.explore.outcome import Outcome
    from zabmc.report.console import print_summary

    def rss_row(distinct):
        o = Outcome("bfs", "in-process", "db19", ExploreConfig(), (), distinct=distinct,
                    extra={"peak_rss_bytes": 160 * 2**20})
        console = Console(width=200, record=True, file=open(os.devnull, "w"))
        print_summary(console, o, {})
        return next(line.strip() for line in console.export_text().splitlines()
                    if line.strip().startswith("peak RSS"))

    assert rss_row(73).split() == ["peak", "RSS", "160.0", "MiB"]
    assert rss_row(99_999).split() == ["peak", "RSS", "160.0", "MiB"]
    assert rss_row(167_772).split() == ["peak", "RSS", "160.0", "MiB,", "1,000", "bytes", "per",
                                        "distinct", "state"]
