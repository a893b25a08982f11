"""Build the zk models' scenario `remix-epoch1` (models/zk/scenarios/MODEL.remix-epoch1.trace.json):
the state from which Remix (Ouyang et al., EuroSys 2025) starts its TLC search of ZooKeeper:
epoch 1 established, 1.1 committed, 1.2 in flight.

Node 2 is elected by all three nodes (the greatest id wins among equals) and synchronises nodes 0
and 1; zab-0 (1.1) is proposed, logged by both followers, acknowledged and committed by all three
(build_4646_acked.py's `first_write_everywhere`); then zab-1 (1.2) is proposed, and its PROPOSAL
is on both links from the leader, delivered to no one. Each step is the one enabled event that
matches (`Builder.do`), so the file is what the kernel does; `zabmc replay` confirms it (exit 0:
no property broken).

The bounds recorded are the tightest the run fits (2 proposals, no timeout, no crash, its length):
a search from the scenario counts its own budgets from its last state (docs/check.md, "Searching
from a state"). The file's `origin` is the command below.

`zk-3.8.0-mspec2` (models/zk/mspec2.py: NEWLEADER in Remix's MSPEC_2 two actions) is registered
here as benchmarks/remix_grain.py registers it; its followers take the second action (`newleader`:
the proposals written, then the ACK) right after each NEWLEADER, so its run is 27 events.

Run: python tests/corpus/zk/build_remix_epoch1.py [MODEL ...] (default: every model with the
scenario, `MODELS`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_4646_acked import INVARIANTS, Builder  # noqa: E402

from zabmc.core import files  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "models" / "zk" / "scenarios"
MODELS = ("zk", "zk-fixed", "zk-3.8.0-mspec2")
CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 0,
          "max_heartbeats": 0, "proposals": 2, "depth": 25, "max_crashes": 0}
#: models whose NEWLEADER's ACK is an action of its own (build_4646_acked.Builder.establish)
OWN_ACKS = {"zk-3.8.0-mspec2": "newleader"}
COMMAND = "python tests/corpus/zk/build_remix_epoch1.py"


def build(model: str):
    if model == "zk-3.8.0-mspec2":  # not shipped: registered as benchmarks/remix_grain.py does
        import models.zk.mspec2
        from zabmc.core.model import MODELS, register_model

        if model not in MODELS:
            register_model(models.zk.mspec2, "MODEL")
    own = OWN_ACKS.get(model, False)
    b = Builder(model, {**CONFIG, "depth": CONFIG["depth"] + 2 * bool(own)}, INVARIANTS)
    b.first_write_everywhere(own)  # epoch 1 established, zab-0 (1.1) committed by every node
    b.do(kind="propose", node=2)  # zab-1 (1.2): its PROPOSAL in flight to nodes 0 and 1
    return b.trace()


def text(trace) -> str:
    """The trace file's text, with its `origin` after the format's header."""
    doc = trace.to_json()
    head = {k: doc.pop(k) for k in ("format", "version")}
    head["origin"] = COMMAND
    return json.dumps({**head, **doc}, indent=1) + "\n"


def main(models) -> None:
    for model in models:
        t = build(model)
        if t.violation is not None:
            raise SystemExit(f"{model}: the scenario breaks {t.violation.property}")
        out = os.path.join(OUT, f"{model}.remix-epoch1.trace.json")
        files.write(out, text(t), "trace file", kind="trace", force=True)
        print(f"{out}: {len(t.events)} steps, no property broken")


if __name__ == "__main__":
    main(sys.argv[1:] or MODELS)
