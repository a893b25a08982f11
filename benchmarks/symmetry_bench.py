"""`zabmc check --symmetry` beside the same check without it, one space per model, in one run
(#64 item 2): distinct states, states generated, and the CPU seconds of each search (the
process's CPU time around `CheckSpec.run`, one round each, one after the other).

The properties are those that read no broadcast order (with one that does, --symmetry is refused:
it would reduce nothing, docs/check.md "Symmetry"). Nothing is written: the numbers are printed,
as a Markdown table.

    python benchmarks/symmetry_bench.py
    python benchmarks/symmetry_bench.py --only zk
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from zabmc.spec import CheckSpec  # noqa: E402

#: the properties of the default set that keep no broadcast order
PROPERTIES = ("agreement", "total-order", "prefix", "sane-history", "global-primary-order",
              "primary-integrity", "leadership")

#: one space per model: (model, CheckSpec fields)
SPACES = (
    ("db19", dict(nodes=3, proposals=2, depth=21)),
    ("zab", dict(nodes=3, proposals=2, max_crashes=1, depth=24)),
    ("zk", dict(nodes=3, proposals=2, max_crashes=1, depth=28)),
)


def measure(model: str, fields: dict, symmetry: bool) -> dict:
    spec = CheckSpec(model=model, invariants=PROPERTIES, find_all=True, symmetry=symmetry,
                     **fields)
    t0 = time.process_time()
    out = spec.run()
    cpu = time.process_time() - t0
    return {"distinct": out.distinct, "generated": out.generated, "cpu": cpu,
            "stop": out.stop_reason.value,
            "broken": sorted({f.violation.property for f in out.violations})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="only the spaces of this model")
    args = ap.parse_args(argv)
    print("| model | space | without: distinct / generated / CPU s | --symmetry: distinct / "
          "generated / CPU s | distinct ratio | CPU ratio | stop | violated |")
    print("|---|---|---|---|---|---|---|---|")
    for model, fields in SPACES:
        if args.only and args.only != model:
            continue
        full = measure(model, fields, False)
        red = measure(model, fields, True)
        if full["broken"] != red["broken"] or full["stop"] != red["stop"]:
            raise SystemExit(f"{model}: verdicts differ: {full} vs {red}")
        space = " ".join(f"{k}={v}" for k, v in fields.items())
        print(f"| {model} | {space} | {full['distinct']:,} / {full['generated']:,} / "
              f"{full['cpu']:.2f} | {red['distinct']:,} / {red['generated']:,} / "
              f"{red['cpu']:.2f} | {red['distinct'] / full['distinct']:.4f} | "
              f"{red['cpu'] / full['cpu']:.2f} | {full['stop']} | "
              f"{', '.join(full['broken']) or 'none'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
