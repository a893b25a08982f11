"""`zabmc check`: enumerate every interleaving within the bounds and check the properties.

Also `zabmc replay` and `zabmc invariants`, which share its trace format and property registry.
The flags map to a `zabmc.spec.CheckSpec` (`zabmc.cli.options`), which validates and runs the
check; `zabmc.cli.results` prints and saves what it found.
"""

from __future__ import annotations

import json

import click

from zabmc.cli import EXIT_OK, EXIT_VIOLATION, cli, run_to_the_verdict
from zabmc.cli.options import SectionedCommand, check_options, spec_of
from zabmc.cli.results import (completeness, interrupted_code, report, terminate_as_exception,
                               write_html)
from zabmc.core.errors import UsageError
from zabmc.core.files import check_outputs
from zabmc.explore.outcome import StopReason


@cli.command(cls=SectionedCommand)
@check_options()
def check(**params):
    """Explore every interleaving, drop, timeout, heartbeat, proposal, crash and restart within
    the bounds.

    Exit codes: 0 no violation within the bounds, 10 a property violation, 2 bad usage (or,
    without a violation, a file asked for that could not be written: a checkpoint on a full
    disk, standard output), 1 internal error or out of memory, 4 incomplete with
    --require-complete, 130 interrupted (SIGINT), 143 terminated (SIGTERM); an interrupted search
    prints and saves its partial result and never exits 0. Files: docs/files.md.
    """
    with run_to_the_verdict():
        return run_check(spec_of(params).validate())


def run_check(spec) -> int:
    """Run a validated `CheckSpec` with the console's progress display; print and save what it
    finds; the exit code."""
    from rich.console import Console

    from zabmc.report.console import ConsoleObserver

    console = Console(stderr=spec.as_json, highlight=False, soft_wrap=True)
    # before anything is printed: a bad checkpoint is one line
    prepared = spec.prepare(log=lambda line: console.print(line, highlight=False))
    observer = ConsoleObserver(console, quiet=spec.quiet_console)
    observer.on_start(prepared.start_info())
    snap = prepared.resumed
    if snap is not None and not spec.quiet_console:
        console.print(f"resuming from {spec.resume_dir}: level {snap.depth}, "
                      f"{snap.meta['distinct']:,} distinct, "
                      f"{snap.meta['frontier_states']:,} frontier states", highlight=False)
    with terminate_as_exception():
        result = prepared.run(observer)
    kind = None
    if spec.liveness:
        from zabmc.cli import liveness as kind
    code = report(spec, result, prepared.env, console, kind)
    late = result.extra.get("late_signal")
    if late is not None:  # the result above stands; the run was still asked to stop
        click.echo(f"zabmc: {late} arrived as the search finished; its result above is whole",
                   err=True)
        return interrupted_code(StopReason.INTERRUPTED, late)
    return completeness(code, spec.require_complete, result.complete, result.stop_reason)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--quiet", "-q", is_flag=True, help="Print only the confirmation and digest.")
@click.option("--html", "html_out", default=None, metavar="FILE",
              help="Also draw the trace as a sequence chart in one self-contained HTML file. An "
                   "existing file is replaced only if it is a picture zabmc drew, unless "
                   "--force.")
@click.option("--force", is_flag=True,
              help="Let --html replace an existing file that is not a picture zabmc drew.")
def replay(trace_file, quiet, html_out, force):
    """Re-execute a counterexample trace through the kernel and confirm its violation.

    Prints the final state's canonical-dump SHA-256. Exit codes: 10 the recorded violation (or
    lasso) is confirmed, 0 the trace records none and none occurs, 1 the replay disagrees with
    the file (its violation, its lasso or its final_sha256; one line on stderr says what),
    2 bad usage or a bad trace file (one line: not a trace, a field of the wrong type, a step or
    property the file cannot have, events that do not apply, states not the model's; an --html
    that cannot be written), 130 interrupted (SIGINT), 143 terminated (SIGTERM).
    """
    from rich.console import Console
    from rich.markup import escape

    from zabmc.explore.trace import load
    from zabmc.explore.trace import replay as do_replay
    from zabmc.report.console import print_trace

    check_outputs({"--html": html_out}, {"trace file": trace_file}, kinds={"--html": "picture"},
                  force=force)
    result = do_replay(load(trace_file))
    console = Console(highlight=False, soft_wrap=True)
    t = result.trace
    if html_out:
        write_html(html_out, t, (), "--html", force)
    if not quiet:
        print_trace(console, t)
    if agrees(result):
        console.print(f"confirmed: {_confirmation(result)}")
    else:
        console.print(f"[bold red]NOT confirmed[/]: {escape(disagreement(result))}")
    console.print(f"final sha256 {t.final_sha256}")
    if not agrees(result):
        click.echo(f"zabmc: {trace_file} disagrees with its replay: {disagreement(result)}",
                   err=True)
        return 1
    return EXIT_VIOLATION if t.lasso is not None or result.expected is not None else EXIT_OK


def _confirmation(result) -> str:
    """What `zabmc replay` confirmed, after "confirmed: "."""
    t, exp = result.trace, result.expected
    if t.lasso is not None:
        lasso = t.lasso
        how = (f"the loop from the state after step {lasso['loop_start']} returns to it "
               f"(fingerprint {t.env.fingerprint(t.states[-1]).hex()}), fair, never reaching "
               "the goal" if lasso["kind"] == "cycle" else
               "nothing can happen in the last state, and the goal is not reached")
        return f"{lasso['property']} fails: {how}"
    if exp is not None:
        return f"{exp['property']} violated at step {t.violation_step}"
    return "no property violated along the trace"


@cli.command()
@click.argument("trace_file", metavar="TRACE")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="The HTML file to write (`-`: standard output). An existing file is replaced "
                   "only if it is a picture zabmc drew, unless --force.")
@click.option("--force", is_flag=True,
              help="Let -o replace an existing file that is not a picture zabmc drew.")
def show(trace_file, output, force):
    """Draw a counterexample trace as a message sequence chart: one self-contained HTML file
    (inline SVG; nothing is fetched), a lane per node, an arrow per message, the violating step
    marked.

    The trace is replayed through the kernel first, as `zabmc replay` does, and only what the
    replay confirms is drawn: a trace or lasso that replay does not confirm (its violation, its
    loop, its dead end or its final digest is not what the file says) is refused with one line
    and exit 2, and nothing is written. Exit codes: 0 drawn, 2 bad usage or input (or the file
    could not be written), 1 internal error, 130 interrupted (SIGINT), 143 terminated
    (SIGTERM)."""
    from zabmc.explore.trace import load
    from zabmc.explore.trace import replay as do_replay

    check_outputs({"-o": output}, {"trace file": trace_file}, kinds={"-o": "picture"},
                  force=force)
    result = do_replay(load(trace_file))
    if not agrees(result):
        raise UsageError(f"{trace_file} is not confirmed by replay ({disagreement(result)}): "
                         f"nothing drawn; `zabmc replay {trace_file}` shows the replayed run")
    write_html(output, result.trace, (), "-o", force)
    t = result.trace
    what = f"{t.violation.property} at step {t.violation_step}" if t.violation else "no violation"
    if t.lasso is not None:
        what = f"{article(t.lasso['property'])} {t.lasso['property']} lasso ({t.lasso['kind']})"
    where = "standard output" if output == "-" else output
    click.echo(f"wrote {where}: {len(t.events)} steps, {what}", err=output == "-")
    return EXIT_OK


def agrees(result) -> bool:
    """Whether a replayed trace (`ReplayResult`) is what its file says: its violation or lasso
    confirmed, and its final digest the one recorded."""
    return result.confirmed and result.sha256_differs is None


def disagreement(result) -> str:
    """Why `zabmc replay` does not confirm a replayed trace (`ReplayResult`), in one line."""
    t = result.trace
    why = []
    if not result.confirmed:
        if t.lasso is not None:
            why.append(f"the {t.lasso['property']} lasso: {result.reason}")
        else:
            exp = result.expected
            got = f"{t.violation.property} at step {t.violation_step}" if t.violation else "none"
            want = f"{exp.get('property')} at step {exp.get('step')}" if exp else "none"
            why.append(f"recorded violation {want}, replay found {got}")
    if result.sha256_differs is not None:
        why.append(f"recorded final_sha256 {result.sha256_differs}, replay found "
                   f"{t.final_sha256}")
    return "; ".join(why)


def article(word: str) -> str:
    """The indefinite article before `word` as written ("an eventually-leader lasso")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


@cli.command("invariants")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def invariants_cmd(as_json):
    """List the safety properties, their statements and sources."""
    from rich.console import Console
    from rich.table import Table

    from zabmc.invariants import PROPERTIES

    if as_json:
        click.echo(json.dumps([{"name": p.name, "default": p.default, "statement": p.statement,
                                "source": p.source} for p in PROPERTIES.values()], indent=2))
        return EXIT_OK

    t = Table(show_lines=False)
    t.add_column("property", no_wrap=True)
    t.add_column("default", no_wrap=True)
    t.add_column("statement")
    t.add_column("source")
    for p in PROPERTIES.values():
        t.add_row(p.name, "on" if p.default else "off", p.statement, p.source)
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=130)
    console.print(t)
    return EXIT_OK
