"""Every trace and schedule of tests/corpus says where it came from (#63 item 6): a trace's
`origin` is the command that writes it (a builder of tests/corpus/zk, a benchmark script, or a
`zabmc check` search; read by hand: the text says what a reader reruns), a schedule's `source` has the `command` of the campaign that saved it or
says it was `written` by hand."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def test_every_corpus_file_says_where_it_came_from():
    traces = sorted(CORPUS.rglob("*.trace.json"))
    schedules = sorted(CORPUS.rglob("*.schedule.json"))
    assert len(traces) >= 30 and schedules
    silent = []
    for path in traces:
        doc = json.loads(path.read_text())
        origin = doc.get("origin")
        if not (isinstance(origin, str) and origin.strip()):
            silent.append(str(path.relative_to(ROOT)))
        elif origin.startswith("python "):  # the script it names is in the repository
            script = origin.split()[1].rstrip(":")
            assert (ROOT / script).is_file(), (path.name, script)
    for path in schedules:
        src = json.loads(path.read_text()).get("source") or {}
        if not (isinstance(src.get("command"), str) or str(src.get("written", "")).startswith(
                "by hand")):
            silent.append(str(path.relative_to(ROOT)))
    assert silent == [], f"say where these came from: {silent}"
