"""`zabmc check --liveness`: the lasso files, the console and JSON report of a liveness run.

The search itself is `zabmc.explore.liveness.Liveness`; `zabmc.cli.results.report` runs the flow
(save, show, exit code) with this module's `save` and `show`."""

from __future__ import annotations

import os

from zabmc.cli.results import print_end, save_trace, trace_path, write_html
from zabmc.explore.outcome import StopReason
from zabmc.report.console import print_show_hint, print_trace, replay_hint

SCOPE = {
    StopReason.EXHAUSTED: "every reachable state and every fault-free continuation was explored",
    StopReason.DEPTH_BOUND: "explored to the depth bound {depth}: partial, {left:,} states there "
                            "were not expanded",
    StopReason.STATE_CAP: "stopped at --max-states {cap:,}: partial, {left:,} states not expanded",
    StopReason.TIME_LIMIT: "time limit reached: partial, {left:,} states not expanded",
    StopReason.INTERRUPTED: "interrupted by {signal}: partial",
    StopReason.OUT_OF_MEMORY: "out of memory: partial",
}


def save(spec, res, env, failed):
    """Each lasso's file: (the traces, property -> path written, the files replaced)."""
    from zabmc.explore.trace import to_trace

    paths, replaced = {}, set()
    traces = []
    for lasso in res.lassos:
        trace = to_trace(env, lasso)
        path = trace_path(spec.trace_out, res.model, lasso.property, len(res.lassos) > 1,
                          "lasso")
        if os.path.isfile(path):  # not /dev/null, a pipe or a terminal
            replaced.add(path)
        if failed.attempt(save_trace, trace, path, spec.force):
            paths[lasso.property] = path
        traces.append(trace)
    return traces, paths, replaced


def show(spec, res, saved, console, failed) -> None:
    """Print and draw the lassos, then the summary or the JSON document."""
    traces, paths, replaced = saved
    for trace in traces:
        print_trace(console, trace)
        if spec.html_out:
            out = trace_path(spec.html_out, res.model, trace.lasso["property"], len(traces) > 1,
                             "lasso", ".html")
            if failed.attempt(write_html, out, trace, (), "--html", spec.force):
                console.print(f"picture of the {trace.lasso['property']} lasso written to {out}",
                              highlight=False)
    print_end(spec, console, bool(traces), lambda: result_json(res, paths),
              lambda: _summary(console, res, paths, replaced))


def _scope(res) -> str:
    return SCOPE[res.stop_reason].format(depth=res.config.depth, left=res.unexpanded,
                                         cap=res.max_states, signal=res.signal)


def _summary(console, res, paths, replaced) -> None:
    from rich.table import Table

    if res.lassos:
        verdict = "[bold red]LIVENESS VIOLATION[/]: " + ", ".join(x.property for x in res.lassos)
    elif res.complete:
        verdict = "[bold green]LIVE[/]: " + ", ".join(res.properties) + " hold"
    else:
        verdict = ("[bold yellow]NO LIVELOCK FOUND[/] within the bounds: " +
                   ", ".join(res.properties))
    console.print(f"{verdict} ({_scope(res)})")
    t = Table(box=None, show_header=False)
    t.add_column(justify="left", style="dim")
    t.add_column(justify="right")
    t.add_row("states with faults possible", f"{res.prefix_states:,}")
    t.add_row("states of fault-free runs", f"{res.suffix_states:,}")
    t.add_row("transitions", f"{res.transitions:,}")
    t.add_row("depth reached", str(res.depth_reached))
    t.add_row("time", f"{res.elapsed:.2f}s")
    if res.unexpanded:
        t.add_row("states left unexpanded", f"{res.unexpanded:,}")
    for name, count in res.fair_components.items():
        t.add_row(f"{name}: fair cycles and dead ends", f"{count:,}")
    console.print(t)
    for lasso in res.lassos:
        path = paths.get(lasso.property)
        if path is None:  # it could not be written (the error follows the summary)
            continue
        again = " (it replaced the file of an earlier run)" if path in replaced else ""
        console.print(f"lasso for {lasso.property} written to {path}{again}{replay_hint(path)}",
                      highlight=False)
    print_show_hint(console, [paths[x.property] for x in res.lassos if x.property in paths])


def result_json(res, paths) -> dict:
    return {
        "verdict": res.verdict,
        "liveness": True,
        "stop_reason": res.stop_reason,
        "complete": res.complete,
        "model": res.model,
        "config": res.config.to_json(),
        "properties": list(res.properties),
        "max_states": res.max_states,
        "prefix_states": res.prefix_states,
        "suffix_states": res.suffix_states,
        "distinct_states": res.distinct,
        "transitions": res.transitions,
        "suffix_edges": res.suffix_edges,
        "depth_reached": res.depth_reached,
        "frontier_left": res.unexpanded,
        "elapsed_seconds": round(res.elapsed, 3),
        "peak_rss_bytes": res.extra["peak_rss_bytes"],
        "fair_components": res.fair_components,
        "violations": [
            {"property": x.property, "kind": x.kind, "message": x.message,
             "steps": len(x.events), "faults_stop": x.faults_stop, "loop_start": x.loop_start,
             "trace": paths.get(x.property)}
            for x in res.lassos
        ],
        **({"signal": res.signal} if res.signal else {}),
    }
