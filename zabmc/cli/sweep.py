"""`zabmc sweep`: `zabmc simulate --check` over seeds and a set of configurations, on Spark."""

from __future__ import annotations

import json
import sys

import click

from zabmc.cli import EXIT_OK, EXIT_VIOLATION, cli
from zabmc.core.errors import UsageError

# the options that say what to run; `--report` runs nothing and refuses them
GRID = ("nodes", "rounds", "proposals", "partitions_cut", "seeds", "model_name", "invariants",
        "out", "overwrite", "partitions", "quiet")


@cli.command()
@click.option("--nodes", "nodes", multiple=True, default=("3",), show_default=True,
              metavar="N[,N...]", help="Cluster sizes (comma-separated or repeated).")
@click.option("--rounds", "rounds", multiple=True, default=("1000",), show_default=True,
              metavar="R[,R...]", help="Ticks per run.")
@click.option("--proposals", "proposals", multiple=True, default=("0",), show_default=True,
              metavar="K[,K...]", help="Client proposals per run.")
@click.option("--partition", "partitions_cut", multiple=True, metavar="S,D[,S,D...]|none",
              help="A set of directed links cut for the whole run; repeat for several sets "
                   "[default: none].")
@click.option("--seeds", default="0..100", show_default=True, metavar="A..B",
              help="Seeds A up to B-1; also N, or a comma-separated list of both.")
@click.option("--model", "model_name", default="db19", show_default=True, help="Protocol model.")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this property (repeatable) [default: the default properties].")
@click.option("--out", "out", default="zabmc-sweep.parquet", show_default=True,
              type=click.Path(), help="Parquet table written here (a directory).")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--partitions", type=int, default=None,
              help="Spark parallelism [default: cores]; the grid is cut into 4 tasks per unit.")
@click.option("--report", "report_path", default=None, metavar="TABLE",
              help="Run nothing: summarise the Parquet table a sweep wrote to TABLE (a directory"
                   " or a URL Spark reads).")
@click.option("--report-engine", type=click.Choice(["auto", "arrow", "spark"]), default="auto",
              show_default=True,
              help="With --report: arrow reads the table in this process, batch by batch, without"
                   " a JVM; spark aggregates it with Spark SQL on --master; auto: arrow up to "
                   "20 million rows on a local disk.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--verbose", is_flag=True, help="Show Spark's start-up output and warnings.")
@click.pass_context
def sweep(ctx, nodes, rounds, proposals, partitions_cut, seeds, model_name, invariants, out,
          overwrite, master, partitions, report_path, report_engine, as_json, quiet, verbose):
    """Run the seeded simulator with --check for every seed and configuration, as a Spark job.

    Configurations are every combination of --nodes, --rounds, --proposals and --partition.
    Writes a Parquet table (config, nodes, rounds, proposals, partition, seed, digest,
    violation, tick, message) and prints the violations per property and configuration.

    Example: zabmc sweep --nodes 3 --rounds 2000 --proposals 20 --seeds 0..100000

    `zabmc sweep --report TABLE` summarises a table written before: runs per configuration
    and, per property, the runs that broke it first, the smallest such seed and its tick, the
    earliest tick and its seed, and a command that replays the first seed.

    Exit codes: 0 no run violated a property, 10 some run did (also for --report), 2 bad
    usage, 1 internal error.
    """
    from rich.console import Console

    from zabmc.invariants import resolve
    from zabmc.core.model import get_model
    from zabmc.spark.session import check_master, check_partitions
    from zabmc.spark.sweep import (check_output, configurations, parse_ints, parse_partitions,
                                   parse_seeds, run_sweep)

    if report_path is not None:
        return _report(ctx, report_path, report_engine, master, as_json, verbose)
    if ctx.get_parameter_source("report_engine").name != "DEFAULT":
        raise UsageError("--report-engine goes with --report")
    from zabmc.sim import require_simulable

    require_simulable(get_model(model_name))
    check_master(master)
    check_partitions(partitions)
    configs = configurations(parse_ints(nodes, "--nodes", 1), parse_ints(rounds, "--rounds"),
                             parse_ints(proposals, "--proposals"),
                             parse_partitions(partitions_cut))
    seed_ranges = parse_seeds(seeds)
    names = resolve(invariants)
    check_output(out, overwrite)
    n_runs = len(configs) * sum(hi - lo for lo, hi in seed_ranges)

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = not quiet and not as_json
    if show:
        err.print(f"[bold]zabmc sweep[/] {len(configs)} configuration(s) x "
                  f"{n_runs // len(configs):,} seed(s) = {n_runs:,} runs, model {model_name}, "
                  f"master {master}")
    live = None
    if show and err.is_terminal:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        live = Progress(TextColumn("sweep"), BarColumn(), TextColumn("{task.completed}/{task.total}"
                        " tasks"), TimeElapsedColumn(), console=err, transient=True)
        bar = live.add_task("sweep", total=None)
        live.start()

        def progress(done, total, elapsed):
            live.update(bar, completed=done, total=total)
    else:
        progress = None
    try:
        result = run_sweep(configs, seed_ranges, out=out, model=model_name, invariants=names,
                           overwrite=overwrite, master=master, partitions=partitions,
                           verbose=verbose, progress=progress)
    finally:
        if live is not None:
            live.stop()

    _print_sweep(result, configs, names, model_name, as_json)
    sys.stdout.flush()
    return EXIT_VIOLATION if result.violating else EXIT_OK


def _print_sweep(result, configs, names, model_name, as_json) -> None:
    """A finished sweep: its JSON document, or the summary table and the replay commands."""
    from rich.console import Console

    if as_json:
        click.echo(json.dumps({
            "output": result.out,
            "model": model_name,
            "invariants": list(names),
            "configurations": [c.name for c in configs],
            "runs": result.runs,
            "violating_runs": result.violating,
            "runs_per_configuration": result.per_config,
            "violations": result.summary,
            "elapsed_seconds": round(result.elapsed, 3),
            "spark": result.spark,
        }, indent=2))
    else:
        console = Console(highlight=False, soft_wrap=False)
        rows = [dict(config=c.name, nodes=c.nodes, rounds=c.rounds, proposals=c.proposals,
                     partition=c.partition_text, runs=result.per_config.get(c.name, 0))
                for c in configs]
        _print_summary(console, rows, result.summary, result.runs)
        console.print(f"table: {result.out} ({result.runs:,} rows); {result.elapsed:.1f}s, "
                      f"{result.spark['runs_per_second']:,.0f} runs/s", soft_wrap=True)
        _print_replay(console, rows, result.summary)


def _report(ctx, path, engine, master, as_json, verbose) -> int:
    from rich.console import Console

    from zabmc.spark.session import check_master
    from zabmc.spark.sweep_report import report

    params = {p.name: p for p in ctx.command.params}
    given = [params[n].opts[0] for n in GRID if ctx.get_parameter_source(n).name != "DEFAULT"]
    if given:
        raise UsageError(f"--report reads a table written before; it takes no {given[0]}")
    if ctx.get_parameter_source("master").name != "DEFAULT" and engine == "arrow":
        raise UsageError("--master goes with --report-engine spark (arrow needs no Spark)")
    check_master(master)
    rep = report(path, engine=engine, master=master, verbose=verbose)
    if as_json:
        click.echo(json.dumps({"table": rep.table, "reader": rep.engine, "runs": rep.runs,
                               "violating_runs": rep.violating, "configurations": rep.configs,
                               "violations": rep.violations}, indent=2))
    else:
        console = Console(highlight=False, soft_wrap=False)
        _print_summary(console, rep.configs, rep.violations, rep.runs)
        console.print(f"table: {rep.table} ({rep.runs:,} rows, read with {rep.engine})",
                      soft_wrap=True)
        _print_replay(console, rep.configs, rep.violations)
    sys.stdout.flush()
    return EXIT_VIOLATION if rep.violating else EXIT_OK


def _print_summary(console, configs: list, violations: list, runs: int) -> None:
    """`configs`: dicts with config and runs; `violations`: `sweep_report.Report.violations`."""
    from rich.table import Table

    t = Table(title=f"violations per property and configuration ({runs:,} runs)",
              title_justify="left")
    # names are never cut: the first two columns are as wide as their longest entry
    t.add_column("configuration", no_wrap=True,
                 min_width=max((len(c["config"]) for c in configs), default=0))
    t.add_column("property", no_wrap=True,
                 min_width=max((len(v["property"]) for v in violations), default=6))
    t.add_column("runs", justify="right")
    t.add_column("share", justify="right")
    t.add_column("first seed (tick)", justify="right")
    t.add_column("earliest tick (seed)", justify="right")
    by_config: dict = {}
    for row in violations:
        by_config.setdefault(row["config"], []).append(row)
    for c in configs:
        total = c["runs"]
        rows = by_config.get(c["config"], [])
        if not rows:
            t.add_row(c["config"], "(none)", "0", "0%", "-", "-")
        for row in rows:
            share = row["runs"] / total if total else 0.0
            t.add_row(c["config"], row["property"], f"{row['runs']:,}", f"{share:.1%}",
                      f"{row['first_seed']} ({row['first_tick']})",
                      f"{row['earliest_tick']} ({row['earliest_seed']})")
    console.print(t)


def _print_replay(console, configs: list, violations: list) -> None:
    if not violations:
        return
    first = violations[0]
    c = next(c for c in configs if c["config"] == first["config"])
    cut = f" --partition {c['partition']}" if c["partition"] else ""
    console.print(f"replay one: zabmc simulate --seed {first['first_seed']} --nodes {c['nodes']} "
                  f"--rounds {c['rounds']} --proposals {c['proposals']}{cut} --check",
                  soft_wrap=True)
