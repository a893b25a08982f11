"""Reproduce every db-19 finding in the seeded simulator and record how in reports/db19-findings.md.

Runs `zabmc export` on each regression trace (tests/corpus/db19/), writes the verified partition
scripts to reports/repro/, re-runs each `zabmc simulate` command line in a fresh process, and
replaces (or appends) the section "## Reproducing in the simulator" of reports/db19-findings.md.

    python benchmarks/findings_repro.py [--report PATH] [--print]
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    sys.path.insert(0, ROOT)
    from zabmc.report.repro import render, reproduce_all, update_report

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", default=os.path.join(ROOT, "reports", "db19-findings.md"))
    ap.add_argument("--print", dest="print_only", action="store_true",
                    help="print the section instead of writing the report")
    args = ap.parse_args()
    rows = reproduce_all(ROOT, log=lambda m: print(m, file=sys.stderr))
    section = render(rows)
    if args.print_only:
        sys.stdout.write(section)
    else:
        update_report(args.report, section)
        print(f"updated {os.path.relpath(args.report, ROOT)}", file=sys.stderr)
    return 0 if all(r.command for r in rows) else 3


if __name__ == "__main__":
    sys.exit(main())
