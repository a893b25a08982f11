"""`zabmc sweep`: `zabmc simulate --check` over seeds and a set of configurations, on Spark."""

from __future__ import annotations

import json
import sys

import click

from zabmc.cli import EXIT_OK, EXIT_VIOLATION, cli


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
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--verbose", is_flag=True, help="Show Spark's start-up output and warnings.")
def sweep(nodes, rounds, proposals, partitions_cut, seeds, model_name, invariants, out, overwrite,
          master, partitions, as_json, quiet, verbose):
    """Run the seeded simulator with --check for every seed and configuration, as a Spark job.

    Configurations are every combination of --nodes, --rounds, --proposals and --partition.
    Writes a Parquet table (config, nodes, rounds, proposals, partition, seed, digest,
    violation, tick, message) and prints the violations per property and configuration.

    Example: zabmc sweep --nodes 3 --rounds 2000 --proposals 20 --seeds 0..100000

    Exit codes: 0 no run violated a property, 10 some run did, 2 bad usage, 1 internal error.
    """
    from rich.console import Console

    from zabmc.invariants import resolve
    from zabmc.model import get_model
    from zabmc.spark.session import check_master, check_partitions
    from zabmc.spark.sweep import (check_output, configurations, parse_ints, parse_partitions,
                                   parse_seeds, run_sweep)

    get_model(model_name)
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
        _print_summary(Console(highlight=False, soft_wrap=False), configs, result)
    sys.stdout.flush()
    return EXIT_VIOLATION if result.violating else EXIT_OK


def _print_summary(console, configs, result) -> None:
    from rich.table import Table

    t = Table(title=f"violations per property and configuration ({result.runs:,} runs)",
              title_justify="left")
    t.add_column("configuration")
    t.add_column("property")
    t.add_column("runs", justify="right")
    t.add_column("share", justify="right")
    t.add_column("first seed", justify="right")
    by_config: dict = {}
    for row in result.summary:
        by_config.setdefault(row["config"], []).append(row)
    for c in configs:
        total = result.per_config.get(c.name, 0)
        rows = by_config.get(c.name, [])
        if not rows:
            t.add_row(c.name, "(none)", "0", "0%", "-")
        for row in rows:
            share = row["runs"] / total if total else 0.0
            t.add_row(c.name, row["property"], f"{row['runs']:,}", f"{share:.1%}",
                      str(row["first_seed"]))
    console.print(t)
    console.print(f"table: {result.out} ({result.runs:,} rows); {result.elapsed:.1f}s, "
                  f"{result.spark['runs_per_second']:,.0f} runs/s", soft_wrap=True)
    if result.summary:
        first = result.summary[0]
        c = next(c for c in configs if c.name == first["config"])
        cut = f" --partition {c.partition_text}" if c.partition else ""
        console.print(f"replay one: zabmc simulate --seed {first['first_seed']} --nodes {c.nodes} "
                      f"--rounds {c.rounds} --proposals {c.proposals}{cut} --check",
                      soft_wrap=True)
