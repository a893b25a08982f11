"""benchmarks/real_nemesis.py's campaign command: every build saves its failing schedules in a
folder of its own, since `zabmc real --nemesis ... --out DIR` names them by seed and index only
(zabmc/cli/real.py: zabmc-real-S-K.schedule.json), and two builds run with the same seed would
otherwise overwrite each other's at the same index (3.9.1's and 3.9.3's campaigns of 2026-11-29
failed at indexes 1 and 12 of the same seed)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.real_nemesis import command  # noqa: E402


def test_each_build_saves_its_failing_schedules_in_a_folder_of_its_own():
    assert command("3.9.1", 15, 1) == [
        "python", "-m", "zabmc", "real", "--nemesis", "all", "--random", "15", "--seed", "1",
        "--release", "3.9.1", "--out", "reports/data/real-nemesis/3.9.1", "--json", "-q"]
    assert command(None, 15, 1) == [
        "python", "-m", "zabmc", "real", "--nemesis", "all", "--random", "15", "--seed", "1",
        "--out", "reports/data/real-nemesis/debian-3.8.0", "--json", "-q"]
    outs = {c[c.index("--out") + 1] for c in (command(v, 15, 1) for v in (None, "3.9.1", "3.9.3"))}
    assert len(outs) == 3
