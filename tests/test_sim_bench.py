"""benchmarks/sim_bench.py rewrites only its own `## Simulator` section of reports/benchmarks.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("sim_bench", ROOT / "benchmarks" / "sim_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _load()
SEC = "## Simulator\n\nnew numbers\n\n| a |\n|---|\n"
EXPLORER = "## Explorer\n\nexplorer text\n\n### sub\n\nmore\n"


def test_creates_the_file_with_its_title():
    assert bench.update_section("", SEC) == "# zabmc benchmarks\n\n" + SEC


def test_appends_after_other_sections():
    old = "# zabmc benchmarks\n\n" + EXPLORER
    assert bench.update_section(old, SEC) == old + "\n" + SEC
    old_no_nl = "# zabmc benchmarks\n\n" + EXPLORER.rstrip("\n")
    assert bench.update_section(old_no_nl, SEC) == old_no_nl + "\n\n" + SEC


def test_replaces_only_its_own_section_with_its_subsections():
    old = ("# zabmc benchmarks\n\n" + EXPLORER + "\n## Simulator\n\nold numbers\n\n"
           "### Profile\n\nold profile\n\n## Spark\n\nspark text\n")
    new = bench.update_section(old, SEC)
    assert new == ("# zabmc benchmarks\n\n" + EXPLORER + "\n" + SEC + "\n## Spark\n\nspark text\n")
    assert bench.update_section(new, SEC) == new  # idempotent


def test_replaces_a_last_section():
    old = "# zabmc benchmarks\n\n" + EXPLORER + "\n## Simulator\n\nold\n"
    assert bench.update_section(old, SEC) == "# zabmc benchmarks\n\n" + EXPLORER + "\n" + SEC


def test_a_heading_that_only_starts_with_simulator_is_not_ours():
    old = "# zabmc benchmarks\n\n## Simulator internals\n\nkeep\n"
    assert bench.update_section(old, SEC) == old + "\n" + SEC


@pytest.mark.slow
def test_quick_run_renders_the_section_and_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "REPORT", tmp_path / "benchmarks.md")
    assert bench.main(["--quick", "--repeat", "1", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Simulator\n") and "QUICK smoke run" in out
    assert "| main | 0 | 5 | 10,000 | 100 |" in out
    assert "### Profile of the main run" in out
    assert not (tmp_path / "benchmarks.md").exists()
