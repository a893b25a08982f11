"""Draw every counterexample of the regression corpus (tests/corpus/*/) as a sequence chart in
reports/pictures/, with an index (reports/pictures/README.md).

    python benchmarks/pictures.py      # a few seconds

Each picture is what `zabmc show TRACE -o FILE.html` writes: the trace is replayed first, so it
is the kernel's run, not the file's word.
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    from zabmc.explore.trace import load, replay
    from zabmc.report.html import render

    corpus = os.path.join(ROOT, "tests", "corpus")
    out_dir = os.path.join(ROOT, "reports", "pictures")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for model_dir in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, model_dir)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".trace.json"):
                continue
            trace = replay(load(os.path.join(folder, name))).trace
            stem = f"{model_dir}-{name[:-len('.trace.json')]}"
            with open(os.path.join(out_dir, f"{stem}.html"), "w", encoding="utf-8") as f:
                f.write(render(trace))
            v = trace.violation
            what = f"{v.property} at step {trace.violation_step}" if v else "no violation"
            rows.append(f"| [{stem}]({stem}.html) | `{trace.env.model.name}` | "
                        f"{trace.env.config.nodes} | {len(trace.events)} | {what} |")
    lassos = os.path.join(ROOT, "reports", "data", "liveness")  # benchmarks/liveness_report.py
    for name in sorted(os.listdir(lassos)) if os.path.isdir(lassos) else ():
        if not name.endswith(".json"):
            continue
        trace = replay(load(os.path.join(lassos, name))).trace
        stem = f"liveness-{name[:-len('.json')]}"
        with open(os.path.join(out_dir, f"{stem}.html"), "w", encoding="utf-8") as f:
            f.write(render(trace))
        lasso = trace.lasso
        what = (f"{lasso['property']}: {lasso['kind']}, faults stop after step "
                f"{lasso['faults_stop']}" + (f", loop from step {lasso['loop_start']}"
                                             if lasso["loop_start"] is not None else ""))
        rows.append(f"| [{stem}]({stem}.html) | `{trace.env.model.name}` | "
                    f"{trace.env.config.nodes} | {len(trace.events)} | {what} |")
    lines = [
        "# Pictures of the counterexamples",
        "",
        "Produced by `python benchmarks/pictures.py` from the regression corpus (tests/corpus)",
        "and the liveness lassos of reports/data/liveness (benchmarks/liveness_report.py);",
        "each page is one self-contained HTML file (open it in a browser; hover a row for the",
        "state after it). The same picture for any trace: `zabmc show TRACE -o FILE.html`.",
        "",
        "| picture | model | nodes | steps | violation |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {len(rows)} pictures to {os.path.relpath(out_dir, ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
