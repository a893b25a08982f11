"""`zabmc export`: a counterexample trace as a verified partition script for the simulator."""

from __future__ import annotations

import json
import os

import click

from zabmc.cli import EXIT_OK, cli
from zabmc.core import files
from zabmc.core.errors import UsageError
from zabmc.core.files import check_outputs

# `zabmc export` found no simulator run that reproduces the violation within its budget.
EXIT_NOT_REPRODUCED = 3


@cli.command("export")
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["partition-script", "json", "zookeeper"]),
              default="partition-script", show_default=True,
              help="A partition script, or the same events as JSON (zabmc-partition-events v1); "
                   "zookeeper: a fault schedule for `zabmc real` (traces of the zk models).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write here (`-`: standard output) [default: standard output]. An existing "
                   "file is replaced only if it is a script, events file or schedule zabmc "
                   "wrote, unless --force.")
@click.option("--force", is_flag=True,
              help="Let -o replace an existing file that is not of the kind being written.")
@click.option("--max-runs", type=int, default=4000, show_default=True,
              help="Budget: simulator runs tried by the search.")
@click.option("--seeds", type=int, default=1000, show_default=True,
              help="Budget: simulator seeds 0..N-1 that the search may use.")
@click.option("--max-rounds", type=int, default=1000, show_default=True,
              help="Budget: the longest simulator run (ticks) the search may use.")
@click.option("--no-shrink", is_flag=True,
              help="Keep every cut of the winning run instead of removing the unneeded ones.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def export_cmd(trace_file, fmt, output, force, max_runs, seeds, max_rounds, no_shrink, quiet):
    """Turn a counterexample trace into a partition script that reproduces its violation.

    Searches simulator seeds, run lengths, proposal counts and link-cut schedules derived from the
    trace, in a fixed order within the budget, and checks the winner by running the simulator as
    `zabmc simulate --partition-script FILE --check` would. Only a verified script is written.

    With --format zookeeper, a trace of the zk family becomes a fault schedule for a real
    ZooKeeper ensemble instead (run it with `zabmc real`; docs/real-zookeeper.md).

    Exit codes: 0 a verified script was written, 3 nothing reproduced the violation within the
    budget (nothing written), 2 bad usage or input, or the output could not be written (a full
    disk: one line, no "wrote"), 1 internal error, 130 interrupted (SIGINT), 143 terminated
    (SIGTERM). Files: docs/files.md.
    """
    if output == "-":
        output = None
    kind = KINDS[fmt]
    check_outputs({"-o": output}, {"trace file": trace_file}, kinds={"-o": kind}, force=force)
    if fmt == "zookeeper":
        return _export_zookeeper(trace_file, output, force)
    from rich.console import Console

    from zabmc.export import (Budget, NotFound, json_document, read_trace, script_comments,
                              simulate_command)

    for name, val, low in (("--max-runs", max_runs, 1), ("--seeds", seeds, 1),
                           ("--max-rounds", max_rounds, 12)):
        if val < low:
            raise UsageError(f"{name} must be at least {low}, got {val}")
    if seeds > 1 << 64:
        raise UsageError("--seeds must not exceed 2^64")
    budget = Budget(max_runs=max_runs, seeds=seeds, max_rounds=max_rounds, shrink=not no_shrink)
    facts = read_trace(trace_file)

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    result = _search(facts, budget, err, max_runs, quiet)

    status = err if output is None else Console(highlight=False, soft_wrap=True)
    if isinstance(result, NotFound):
        others = ", ".join(f"{p} first in {c} run{'s' if c != 1 else ''}"
                           for p, c in sorted(result.other.items()))
        click.echo(
            f"not reproduced: none of {result.runs} simulator runs (seeds 0..{result.last_seed}, "
            f"at most {max_rounds} ticks) showed {facts.property} as its first violation; nothing "
            "written" + (f" (other properties: {others})" if others else ""),
            err=True,
        )
        return EXIT_NOT_REPRODUCED

    header = result.script.header
    shown_path = output if output is not None else "FILE"
    command = simulate_command(result.invariants, header, shown_path)
    if fmt == "json":
        text = json.dumps(json_document(facts, result, command), indent=2) + "\n"
    else:
        text = result.script.to_text(script_comments(facts, result, command))
    _write(text, output, kind, force)
    v = result.violation
    status.print(f"verified: the simulator reproduces {v.property} at tick {result.tick} "
                 f"(trace step {facts.step}) with {len(result.script.directives)} cut "
                 f"directive{'s' if len(result.script.directives) != 1 else ''}; search run "
                 f"{result.run_index} of at most {max_runs}, plan {result.plan}")
    status.print(f"  {command}", markup=False)
    if output is not None:
        status.print(f"wrote {output}", markup=False)
    return EXIT_OK


def _search(facts, budget, err, max_runs: int, quiet: bool):
    """The bounded search, with a progress bar on a terminal."""
    from zabmc.export.search import search

    if not (err.is_terminal and not quiet):
        return search(facts, budget)
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)
    from rich.table import Column

    bar = Progress(TextColumn("[bold]export[/] {task.description}"), BarColumn(bar_width=20),
                   MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("[dim]{task.fields[detail]}",
                              table_column=Column(no_wrap=True, overflow="ellipsis")),
                   console=err, transient=True)
    task = bar.add_task(facts.property, total=max_runs, detail="")

    def progress(k, cfg, plan):
        bar.update(task, completed=k, detail=f"seed {cfg.seed} {cfg.rounds}t "
                   f"{cfg.proposals}p {plan.name}")

    with bar:
        return search(facts, budget, progress)


#: --format -> the kind of file it writes (`zabmc.core.files.KINDS`)
KINDS = {"partition-script": "partition script", "json": "partition events",
         "zookeeper": "schedule"}


def _write(text: str, output: str | None, kind: str, force: bool) -> None:
    """Standard output, or the file (`zabmc.core.files.write`: atomically beside a regular file,
    in place on a device or FIFO, through a symbolic link to its target)."""
    files.write("-" if output is None else output, text, kind, kind=kind, flag="-o", force=force)


def _export_zookeeper(trace_file: str, output: str | None, force: bool) -> int:
    from zabmc.cli.real import trace_schedule
    from zabmc.core.trace import read_document
    from zabmc.real.schedule import text

    schedule = trace_schedule(read_document(trace_file), trace_file)
    _write(text(schedule), output, "schedule", force)
    if output is not None:
        n = len(schedule["entries"])
        click.echo(f"wrote {output}: {n} schedule entries for {schedule['servers']} servers "
                   f"(model steps 0..{schedule['source']['steps']}); run it with "
                   f"`zabmc real {output}`", err=True)
    return EXIT_OK
