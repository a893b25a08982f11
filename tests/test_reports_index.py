"""reports/README.md indexes every file of reports/, and benchmarks/reports.py (`make reports`)
runs every generator the reports name (issue #61 point 4)."""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
sys.path.insert(0, str(ROOT))

from benchmarks.reports import GENERATORS, main  # noqa: E402


def _rows() -> list:
    """(pattern, what, by) for each row of the index's table."""
    rows = []
    for line in (REPORTS / "README.md").read_text().splitlines():
        m = re.match(r"\| `([^`]+)` \| (.*?) \| (.*) \|$", line)
        if m:
            rows.append(m.groups())
    return rows


def _matches(pattern: str, rel: str) -> bool:
    """`*` within one folder: data/zk-wide/*.json is that folder's JSON files only."""
    return (pattern.count("/") == rel.count("/")) and fnmatch.fnmatchcase(rel, pattern)


def test_every_file_of_reports_is_in_the_index_and_every_row_names_files():
    files = sorted(p.relative_to(REPORTS).as_posix() for p in REPORTS.rglob("*") if p.is_file())
    rows = _rows()
    assert len(rows) >= 15
    unindexed = [f for f in files if not any(_matches(pat, f) for pat, _, _ in rows)]
    assert unindexed == [], f"add to reports/README.md: {unindexed}"
    empty = [pat for pat, what, _ in rows
             if "none kept today" not in what and not any(_matches(pat, f) for f in files)]
    assert empty == [], f"reports/README.md names files that are not there: {empty}"


def test_every_generator_the_reports_name_is_run_by_make_reports():
    """Each "Produced by `python benchmarks/X.py ...`" of a report, and each script the index
    names, is a generator of benchmarks/reports.py; each generator's script exists."""
    scripts = {g.argv[0] for g in GENERATORS}
    assert all((ROOT / s).is_file() for s in scripts)
    named = set()
    for md in [*REPORTS.glob("*.md"), REPORTS / "pictures" / "README.md"]:
        named |= set(re.findall(r"Produced by `python (benchmarks/\w+\.py)", md.read_text()))
    index = (REPORTS / "README.md").read_text()
    named |= set(re.findall(r"python (benchmarks/\w+\.py)", index)) - {"benchmarks/reports.py"}
    named |= {f"benchmarks/{s}" for s in re.findall(r"`(\w+\.py)`", index)}
    assert named and named <= scripts, sorted(named - scripts)
    names = [g.name for g in GENERATORS]
    assert len(names) == len(set(names))
    for runs in re.findall(r"benchmarks/reports\.py((?: --only [\w-]+)+)", index):
        assert set(runs.split()[1::2]) <= set(names), runs


def test_the_list_names_every_generator(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")] == \
        [g.name for g in GENERATORS]
    assert main(["--quick", "--list"]) == 0
    quick = [line.split(":")[0] for line in capsys.readouterr().out.splitlines()
             if not line.startswith(" ")]
    assert "pictures" in quick and "spark" not in quick


def test_make_reports_runs_the_runner():
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^reports:.*\n\t\$\(PY\) benchmarks/reports\.py", make, re.M)
