"""Re-record a corpus trace's states on the present model: the same events replayed, the states,
final digest and known issues written anew, the violation required at the same step.

A model whose node gains a field (a new layer) records other states for the same run; its traces
then no longer replay (`zabmc replay` compares the recorded states). This keeps the run and says
so in its origin. Run: python tests/corpus/zk/rerecord.py TRACE NOTE (NOTE is appended to the
trace's origin).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from zabmc.core.trace import parse  # noqa: E402
from zabmc.explore.trace import replay  # noqa: E402


def rerecord(path: str, note: str) -> dict:
    data = json.loads(Path(path).read_text())
    bare = {k: v for k, v in data.items() if k not in ("states", "final_sha256", "known_issues")}
    out = replay(parse(bare, path)).trace.to_json()
    was, now = data.get("violation") or {}, out.get("violation") or {}
    if (was.get("property"), was.get("step")) != (now.get("property"), now.get("step")):
        raise SystemExit(f"{path}: the replayed run breaks {now} where the file says {was}")
    doc = {}
    for k, v in out.items():
        doc[k] = v
        if k == "version" and "origin" in data:
            doc["origin"] = data["origin"] + note
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")
    return doc


if __name__ == "__main__":
    rerecord(sys.argv[1], sys.argv[2])
