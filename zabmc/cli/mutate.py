"""`zabmc mutate`: the single-point mutants of a model's guards and thresholds, and the gate's
verdict on each."""

from __future__ import annotations

import json

import click

from zabmc.core.errors import UsageError

from . import EXIT_OK, cli


@cli.command()
@click.option("--model", "model_name", default="zab", show_default=True,
              help="The model whose handler module is mutated.")
@click.option("--run", "do_run", is_flag=True,
              help="Run the CI gate's searches on each mutant (minutes per surviving mutant).")
@click.option("--index", "indices", type=int, multiple=True, metavar="K",
              help="Only mutant K (repeatable; see the list).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def mutate(model_name, do_run, indices, as_json):
    """List every single-point mutation of the model's guards and thresholds (comparison
    operators and operands, quorum thresholds, dropped conjuncts and disjuncts, max/min, + 1);
    with --run, say which the CI gate catches. Mutants are applied in memory; no file changes."""
    from zabmc.mutate import gate_for, gate_verdicts, mutants

    ms = mutants(model_name)
    if do_run:
        gate_for(model_name)  # before anything is printed
    for k in indices:
        if not 0 <= k < len(ms):
            raise UsageError(f"--index {k}: there are {len(ms)} mutants (0-{len(ms) - 1})")
    chosen = [ms[k] for k in indices] if indices else ms
    rows = []
    verdicts = gate_verdicts(model_name, chosen) if do_run else ((m, None) for m in chosen)
    for m, verdict in verdicts:
        row = m.to_json()
        if do_run:
            row["gate"] = verdict
        rows.append(row)
        if not as_json:
            line = f"{m.index:>4} {m.name}"
            if do_run:
                g = row["gate"]
                line += ("  CAUGHT by gate run {run}: {property} at {depth}".format(**g)
                         if g.get("caught") and "depth" in g else
                         f"  CAUGHT by gate run {g['run']}: {g['error']}" if g.get("caught")
                         else "  survives the gate")
            click.echo(line)
    if as_json:
        click.echo(json.dumps(rows, indent=1))
    elif do_run:
        caught = sum(1 for r in rows if r["gate"]["caught"])
        click.echo(f"gate score: {caught}/{len(rows)} mutants caught")
    else:
        click.echo(f"{len(rows)} mutants of {ms[0].file if ms else 'the handlers'} for model {model_name}")
    return EXIT_OK
