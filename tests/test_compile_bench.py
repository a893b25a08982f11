"""benchmarks/compile_bench.py (issue #38 point 4) still describes this tree: the modules it compiles
exist, and each typing edit it makes before mypyc matches the source exactly once (an edit that no
longer matches would stop the benchmark, or measure a different program)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("compile_bench",
                                                  ROOT / "benchmarks" / "compile_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _load()


def test_the_compiled_modules_exist_and_mypyc_takes_a_subset():
    assert all((ROOT / m).is_file() for m in bench.HOT)
    assert set(bench.MYPYC) < set(bench.HOT)
    assert "zabmc/core/events.py" not in bench.MYPYC  # namedtuple() bases: mypyc refuses


def test_every_mypyc_edit_matches_once_and_only_adds_types():
    for path, old, new in bench.MYPYC_EDITS:
        text = (ROOT / path).read_text()
        assert text.count(old) == 1, (path, old)
        assert path in bench.MYPYC
        assert old != new


def test_workloads_are_what_zabmc_check_takes():
    from zabmc.cli import _register, cli

    _register()
    check = cli.commands["check"]
    got = {args: check.make_context("check", args.split()).params for _, args in bench.WORKLOADS}
    assert got["--nodes 3 --depth 40"]["model"] == "db19"  # the README's main job, as it is
    assert [p["model"] for p in got.values()] == ["db19", "db19", "zab", "zk-fixed"]
