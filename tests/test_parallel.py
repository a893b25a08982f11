"""Breadth-first search on several processes (`zabmc check --workers N`, zabmc.explore.parallel):
the one-process search's result exactly (counts, levels, verdict, counterexamples and their
paths), also where a search stops at its first violation in the middle of a level or the kernel
raises; a clean stop at a signal, with no worker left behind; checkpoints either engine resumes;
bad combinations of flags refused in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from zabmc.explore import Env, ExploreConfig
from zabmc.explore.bfs import bfs
from zabmc.explore.parallel import parallel_bfs
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import get_model


def _env(model, cfg):
    return Env(get_model(model) if isinstance(model, str) else model, cfg,
               Checker(DEFAULT_PROPERTIES))


def _summary(o):
    return (o.distinct, o.generated, list(o.per_depth), o.depth_reached, o.stop_reason,
            o.extra.get("frontier_left"),
            [(f.violation.property, f.depth, f.path, f.violation.message) for f in o.violations])


SPACES = [
    # db19 on two nodes with a timeout: three properties fail at depth 28, in the middle of
    # a level (stop at the first: the level is cut where the one-process search cuts it)
    ("db19", ExploreConfig(nodes=2, max_timeouts=1, proposals=2, depth=60)),
    ("db19", ExploreConfig(nodes=3, max_crashes=1, depth=10)),
    ("zab", ExploreConfig(nodes=2, network="fifo", proposals=2, max_timeouts=1, max_crashes=1,
                          depth=100)),
    ("zk-fixed", ExploreConfig(nodes=2, network="fifo", proposals=1, max_timeouts=1,
                               max_crashes=1, max_drops=1, depth=100)),
    ("zk", ExploreConfig(nodes=2, network="fifo", proposals=2, max_timeouts=1, max_crashes=1,
                         depth=100)),
]


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("stop_at_first", [True, False], ids=["first", "all"])
@pytest.mark.parametrize("model,cfg", SPACES, ids=[f"{m}-{c.nodes}n" for m, c in SPACES])
def test_the_same_result_as_one_process(model, cfg, stop_at_first, workers):
    one = bfs(_env(model, cfg), stop_at_first=stop_at_first)
    par = parallel_bfs(_env(model, cfg), workers=workers, stop_at_first=stop_at_first)
    assert _summary(par) == _summary(one)
    assert par.extra["workers"] == workers


def test_some_space_above_stops_in_the_middle_of_a_level():
    """The comparison above has teeth: a first violation cuts a level short."""
    model, cfg = SPACES[0]
    first = bfs(_env(model, cfg), stop_at_first=True)
    every = bfs(_env(model, cfg), stop_at_first=False)
    assert first.stop_reason == "violation"
    d = first.violations[0].depth
    assert first.per_depth[d] < every.per_depth[d]


def test_tlcs_counts_on_three_nodes():
    """zab, three nodes, one proposal, every reachable state: TLC on benchmarks/tla/Zab.tla finds
    18,103 distinct states and 62,029 generated (tests/test_tlc.py runs it)."""
    o = parallel_bfs(_env("zab", ExploreConfig(nodes=3, network="fifo", proposals=1, depth=100)),
                     workers=2, stop_at_first=False)
    assert (o.distinct, o.generated, o.stop_reason) == (18_103, 62_029, "exhausted")


def test_the_kernels_own_error_is_raised_where_one_process_meets_it():
    """A mutant whose handler raises IndexError: the same exception, and the search that ran
    before it ends with the same counts."""
    from zabmc.explore.bfs import BFS
    from zabmc.explore.parallel import ParallelBFS
    from zabmc.mutate import build, mutants

    by_name = {m.name: m for m in mutants("zab")}
    model = build("zab", by_name["models/zab/handlers.py:481:7 cmp: kind == VOTE -> kind != VOTE"])
    cfg = ExploreConfig(nodes=3, network="fifo", proposals=2, depth=100)
    got = []
    for search in (BFS(_env(model, cfg)), ParallelBFS(_env(model, cfg), workers=2)):
        with pytest.raises(IndexError) as e:
            search.run()
        search.finish()
        got.append((str(e.value), search.out.generated, search.out.distinct,
                    list(search.out.per_depth)))
    assert got[0] == got[1]


# --- with partial-order reduction (`--reduction por --workers N`) ----------------------------------

REDUCED = [
    # three zab nodes with a timeout: many states expanded in part, many by the proviso in full
    ("zab", ExploreConfig(nodes=3, network="fifo", proposals=2, max_timeouts=1, depth=14)),
    ("zab", ExploreConfig(nodes=3, network="fifo", proposals=1, depth=100)),
    # db19: three properties fail at depth 22, in the middle of a level
    ("db19", ExploreConfig(nodes=2, network="fifo", proposals=2, max_timeouts=1, max_drops=1,
                           depth=30)),
    # the zk family's own actions (elect, join) in stubborn sets
    ("zk-fixed", ExploreConfig(nodes=3, network="fifo", proposals=1, max_timeouts=1, depth=16)),
    ("zk", ExploreConfig(nodes=2, network="fifo", proposals=1, max_timeouts=1, max_crashes=1,
                         depth=100)),
]


def _reduced(search, model, cfg, **kw):
    """The reduced search's summary, its counts of states expanded in part and in full, and its
    parent pointers level by level (which parent and event each state of a level came from, in
    the level's order)."""
    from zabmc.explore.bfs import BFS
    from zabmc.explore.parallel import ParallelBFS
    from zabmc.explore.por import Stubborn

    env = _env(model, cfg)
    s = {bfs: BFS, parallel_bfs: ParallelBFS}[search](env, reduction=Stubborn(env), **kw)
    out = s.run()
    return _summary(out) + (out.extra["reduction"], [list(a) for a in s.table.parents],
                            [list(a) for a in s.table.events])


#: the spaces above with a violation (db19's): only there does stopping at the first one make
#: another run; in the others a search that stops at the first violation is the one that finds all
VIOLATING = {2}


@pytest.mark.parametrize("chunk", [7, 20_000])
@pytest.mark.parametrize("model,cfg,stop_at_first", [
    pytest.param(m, c, first, id=f"{m}-{c.nodes}n{k}-{'first' if first else 'all'}")
    for k, (m, c) in enumerate(REDUCED) for first in (True, False)
    if not first or k in VIOLATING])
def test_the_reduced_search_is_the_one_process_one(model, cfg, stop_at_first, chunk,
                                                    monkeypatch):
    """Where the one-process reduced search meets the successors the proviso adds (after the chunk
    their state's kept ones fall in) decides the order of a level, its parent pointers, and where
    a first violation stops it: chunks of 7 candidates put them all over each level."""
    monkeypatch.setattr(sys.modules["zabmc.explore.bfs"], "CHUNK", chunk)
    one = _reduced(bfs, model, cfg, stop_at_first=stop_at_first)
    # a space outside VIOLATING has no violation (else its first-violation run is wanted too)
    assert bool(one[6]) == (REDUCED.index((model, cfg)) in VIOLATING)
    for workers in (2, 3):
        assert _reduced(parallel_bfs, model, cfg, workers=workers,
                        stop_at_first=stop_at_first) == one


def test_the_reduced_comparison_has_teeth(monkeypatch):
    """In the spaces above, the proviso expands states fully in the middle of a level, small
    chunks move where, and a first violation cuts a level short."""
    from zabmc.explore import bfs as _  # noqa: F401
    from zabmc.explore.bfs import _Chunk

    rests = []
    expand_rest = _Chunk.expand_rest

    def noting(self, pending):
        rests.append(len(pending))
        return expand_rest(self, pending)

    monkeypatch.setattr(_Chunk, "expand_rest", noting)
    monkeypatch.setattr(sys.modules["zabmc.explore.bfs"], "CHUNK", 7)
    model, cfg = REDUCED[0]
    _reduced(bfs, model, cfg, stop_at_first=False)
    assert len(rests) > 100 and sum(rests) > 1000
    model, cfg = REDUCED[2]
    first = _reduced(bfs, model, cfg, stop_at_first=True)
    every = _reduced(bfs, model, cfg, stop_at_first=False)
    assert first[4] == "violation" and first[2][22] < every[2][22]


def test_the_reduced_search_meets_a_kernel_error_where_one_process_does():
    """A mutant whose handler raises: the same exception and the same counts before it, with the
    reduction on."""
    from zabmc.explore.bfs import BFS
    from zabmc.explore.parallel import ParallelBFS
    from zabmc.explore.por import Stubborn
    from zabmc.mutate import build, mutants

    by_name = {m.name: m for m in mutants("zab")}
    model = build("zab", by_name["models/zab/handlers.py:481:7 cmp: kind == VOTE -> kind != VOTE"])
    cfg = ExploreConfig(nodes=3, network="fifo", proposals=2, depth=100)
    got = []
    for make in (lambda e: BFS(e, reduction=Stubborn(e)),
                 lambda e: ParallelBFS(e, workers=2, reduction=Stubborn(e))):
        search = make(_env(model, cfg))
        with pytest.raises(IndexError) as e:
            search.run()
        search.finish()
        got.append((str(e.value), search.out.generated, search.out.distinct,
                    list(search.out.per_depth), search.out.extra["reduction"]))
    assert got[0] == got[1]


def test_the_cli_runs_the_reduced_search_on_workers(cli):
    """`--reduction por --workers 2`: gate run 9's space to depth 16, the one-process figures."""
    args = ["check", "--model", "zab", "--network", "fifo", "--nodes", "3", "--proposals", "1",
            "--max-timeouts", "1", "--depth", "16", "--reduction", "por", "--json"]
    docs = []
    for w in ("1", "2"):
        code, out, _ = cli([*args, "--workers", w])
        assert code == 0
        doc = json.loads(out)
        docs.append({k: doc[k] for k in ("distinct_states", "states", "depth_reached",
                                          "stop_reason", "reduction")})
    assert docs[0] == docs[1]
    assert docs[0]["reduction"]["states_reduced"] > 0


def test_the_cli_gives_the_same_json_and_trace(cli, tmp_path):
    args = ["check", "--nodes", "2", "--max-timeouts", "1", "--depth", "60", "--json"]
    outs = []
    for w in ("1", "2"):
        trace = tmp_path / f"w{w}.json"
        code, out, _ = cli([*args, "--workers", w, "--trace-out", str(trace)])
        assert code == 10
        doc = json.loads(out)
        for k in ("elapsed_seconds", "states_per_second", "memory"):
            doc.pop(k)
        for v in doc["violations"]:
            assert v.pop("trace").endswith(f"w{w}-{v['property']}.json")
        # one trace per property the first violating step breaks
        outs.append((doc, {p.name[3:]: json.loads(p.read_text())["events"]
                           for p in sorted(tmp_path.glob(f"w{w}-*.json"))}))
    (one, t1), (two, t2) = outs
    assert len(t1) == 3 and t1 == t2
    assert one == two and len(one["violations"]) == 3


@pytest.mark.parametrize("flags,message", [
    (["--workers", "0"], "--workers must be from 1 to 256 (processes, one per core), got 0"),
    (["--workers", "257"], "--workers must be from 1 to 256"),
    (["--workers", "2", "--strategy", "dfs"],
     "--workers works with --strategy bfs --engine in-process"),
    (["--workers", "2", "--network", "fifo", "--reduction", "por+sleep"],
     "--workers does not work with --reduction por+sleep"),
    (["--workers", "2", "--memory-limit", "1G"], "--workers keeps every level in memory"),
    (["--workers", "2", "--liveness", "--model", "zab"], "--workers does not work with --liveness"),
])
def test_bad_combinations_are_one_line_and_exit_2(cli, flags, message):
    code, _, err = cli(["check", "--nodes", "2", *flags])
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err


def test_the_level_checkpoints_are_the_one_process_ones_and_resume_in_either(tmp_path):
    """Checkpoints at every level boundary: the parallel search writes the one-process search's
    (the same levels, visited sets, parent pointers and frontier bytes), and each resumes to the
    uninterrupted result in either engine."""
    import shutil

    import numpy as np

    from zabmc.explore import checkpoint as ck
    from zabmc.explore.bfs import BFS
    from zabmc.explore.codec import choose_codec, make_codec
    from zabmc.explore.parallel import ParallelBFS

    env = _env("db19", ExploreConfig(nodes=2, max_timeouts=1, proposals=2, depth=60))
    plain = BFS(env).run()
    ident = ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                        strategy="bfs", stop_at_first=True, codec=choose_codec(env))
    codec = make_codec(ident["codec"], env)
    snaps = {}
    for name, cls, kw in (("one", BFS, {}), ("par", ParallelBFS, {"workers": 2})):
        work, copies = tmp_path / name, []

        def keep(line, work=work, copies=copies, name=name):  # a copy of each checkpoint
            copies.append(tmp_path / f"{name}-{len(copies)}")
            shutil.copytree(work, copies[-1])

        out = cls(env, codec=codec, checkpoint=ck.Checkpointer(str(work), ident, every=0,
                                                               log=keep), **kw).run()
        assert _summary(out) == _summary(plain)
        snaps[name] = [ck.load(str(d), ident) for d in copies]
    assert [x.depth for x in snaps["par"]] == [x.depth for x in snaps["one"]]
    assert len(snaps["par"]) >= 20
    for a, b in zip(snaps["one"], snaps["par"]):
        assert np.array_equal(a.seen, b.seen) and list(a.frontier) == list(b.frontier)
        assert [list(x) for x in a.parents] == [list(x) for x in b.parents]
        assert [list(x) for x in a.events] == [list(x) for x in b.events]
        for search in (BFS(env, resume=b, codec=codec),
                       ParallelBFS(env, workers=2, resume=b, codec=codec)):
            assert _summary(search.run()) == _summary(plain), (b.depth, type(search))


def _children(pid: int) -> list[int]:
    out = []
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
        except FileNotFoundError:
            pass
    return out


@pytest.mark.slow
def test_sigterm_stops_every_worker_and_keeps_the_last_level(tmp_path):
    """SIGTERM in the middle of a level: exit 143, a partial result of the levels done, no worker
    process left."""
    p = subprocess.Popen([sys.executable, "-m", "zabmc", "check", "--nodes", "3", "--network",
                          "bag", "--depth", "40", "--max-timeouts", "2", "--workers", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    workers = []
    for line in p.stdout:
        if line.startswith("progress:"):
            workers = _children(p.pid)
            if workers:
                break
    assert workers, "no worker process was seen"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 143, err
    assert "interrupted by SIGTERM: partial result" in out and "Traceback" not in err
    for w in workers:
        assert not os.path.exists(f"/proc/{w}") or \
            open(f"/proc/{w}/stat").read().split()[2] == "Z", f"worker {w} still runs"


def test_a_signal_during_the_merge_waits_for_the_merge_to_end(monkeypatch):
    """SIGTERM while the parent merges a level: the level is merged whole (its states, the
    visited set and the counts agree: the level boundary a checkpoint would write), then the
    search stops as interrupted."""
    from zabmc.cli.results import terminate_as_exception
    from zabmc.explore.parallel import ParallelBFS

    merge = ParallelBFS._merge
    calls = []

    def merge_signalled(self, slices, depth, nxt, generated0):
        calls.append(depth)
        if depth == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        return merge(self, slices, depth, nxt, generated0)

    monkeypatch.setattr(ParallelBFS, "_merge", merge_signalled)
    cfg = ExploreConfig(nodes=2, max_timeouts=1, proposals=2, depth=60)
    full = bfs(_env("db19", cfg), stop_at_first=False)
    with terminate_as_exception():
        o = parallel_bfs(_env("db19", cfg), workers=2, stop_at_first=False)
    assert o.stop_reason == "interrupted" and o.extra["signal"] == "SIGTERM"
    assert calls[-1] == 5 and o.depth_reached == 6
    assert o.per_depth == full.per_depth[:7] and o.distinct == sum(full.per_depth[:7])
