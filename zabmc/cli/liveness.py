"""`zabmc check --liveness`: the run, its console and JSON report, and the lasso files.

The search itself is `zabmc.explore.liveness`; this module only prints and saves."""

from __future__ import annotations

import json
import os

import click

from zabmc.cli import EXIT_OK, EXIT_VIOLATION
from zabmc.cli.results import interrupted_code, quiet_broken_pipe, trace_path, write_html
from zabmc.report.console import print_trace

SCOPE = {
    "exhausted": "every reachable state and every fault-free continuation was explored",
    "depth-bound": "explored to the depth bound {depth}: partial, {left:,} states there were not "
                   "expanded",
    "state-cap": "stopped at --max-states {cap:,}: partial, {left:,} states not expanded",
    "time-limit": "time limit reached: partial, {left:,} states not expanded",
    "interrupted": "interrupted by {signal}: partial",
}


def report(spec, res, console) -> int:
    """Save, print and draw the lassos of a liveness run, print the summary or the JSON document;
    the exit code."""
    from zabmc.explore.memory import peak_rss

    paths, replaced, traces = _save(spec, res)
    with quiet_broken_pipe():
        for trace in traces:
            print_trace(console, trace)
            if spec.html_out:
                out = trace_path(spec.html_out, res.env.model.name, trace.lasso["property"],
                                 len(traces) > 1, "lasso", ".html")
                write_html(out, trace)
                console.print(f"picture of the {trace.lasso['property']} lasso written to {out}",
                              highlight=False)
        if spec.as_json:
            click.echo(json.dumps(result_json(res, paths, spec.live_max_states, peak_rss()),
                                  indent=2))
        else:
            if traces:
                console.print()
            _summary(console, res, paths, replaced, spec.live_max_states)
    code = interrupted_code(res.stop_reason, res.signal)
    if code is not None:
        return code
    return EXIT_VIOLATION if res.lassos else EXIT_OK


def _save(spec, res):
    """Each lasso's file: (property -> path, the files replaced, the traces)."""
    from zabmc.explore.trace import to_trace

    paths, replaced = {}, set()
    traces = []
    for lasso in res.lassos:
        trace = to_trace(res.env, lasso)
        path = trace_path(spec.trace_out, res.env.model.name, lasso.property,
                          len(res.lassos) > 1, "lasso")
        if os.path.exists(path):
            replaced.add(path)
        trace.save(path)
        paths[lasso.property] = path
        traces.append(trace)
    return paths, replaced, traces


def _scope(res, max_states) -> str:
    return SCOPE[res.stop_reason].format(depth=res.env.config.depth, left=res.unexpanded,
                                         cap=max_states, signal=res.signal)


def _summary(console, res, paths, replaced, max_states) -> None:
    from rich.table import Table

    if res.lassos:
        verdict = "[bold red]LIVENESS VIOLATION[/]: " + ", ".join(x.property for x in res.lassos)
    elif res.complete:
        verdict = "[bold green]LIVE[/]: " + ", ".join(res.properties) + " hold"
    else:
        verdict = ("[bold yellow]NO LIVELOCK FOUND[/] within the bounds: " +
                   ", ".join(res.properties))
    console.print(f"{verdict} ({_scope(res, max_states)})")
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
        path = paths[lasso.property]
        again = " (it replaced the file of an earlier run)" if path in replaced else ""
        console.print(f"lasso for {lasso.property} written to {path}{again} "
                      f"(replay: zabmc replay {path})", highlight=False)


def result_json(res, paths, max_states, rss) -> dict:
    return {
        "verdict": res.verdict,
        "liveness": True,
        "stop_reason": res.stop_reason,
        "complete": res.complete,
        "model": res.env.model.name,
        "config": res.env.config.to_json(),
        "properties": list(res.properties),
        "max_states": max_states,
        "prefix_states": res.prefix_states,
        "suffix_states": res.suffix_states,
        "distinct_states": res.distinct,
        "transitions": res.transitions,
        "suffix_edges": res.suffix_edges,
        "depth_reached": res.depth_reached,
        "frontier_left": res.unexpanded,
        "elapsed_seconds": round(res.elapsed, 3),
        "peak_rss_bytes": rss,
        "fair_components": res.fair_components,
        "violations": [
            {"property": x.property, "kind": x.kind, "message": x.message,
             "steps": len(x.events), "faults_stop": x.faults_stop, "loop_start": x.loop_start,
             "trace": paths.get(x.property)}
            for x in res.lassos
        ],
        **({"signal": res.signal} if res.signal else {}),
    }
