"""`zabmc simulate`: the seeded db-19 simulator; prints the SHA-256 of the canonical dump."""

from __future__ import annotations

import json
import sys

import click

from zabmc.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, cli
from zabmc.sim.script import parse_partition
from zabmc.core import files
from zabmc.core.errors import UsageError
from zabmc.core.files import check_outputs


@cli.command()
@click.option("--seed", type=int, default=0, show_default=True, help="u64 simulator seed.")
@click.option("--nodes", type=int, default=3, show_default=True, help="Cluster size (1..9).")
@click.option("--rounds", type=int, default=1000, show_default=True,
              help="Ticks to run (at most 1,000,000,000; a partition script's rounds too).")
@click.option("--proposals", type=int, default=0, show_default=True,
              help="Client proposals, spread evenly over the run.")
@click.option("--partition", default="", metavar="S,D[,S,D...]",
              help="Directed links dropped for the whole run.")
@click.option("--model", "model_name", default="db19", show_default=True, help="Protocol model.")
@click.option("--dump", "dump_path", type=click.Path(dir_okay=False),
              help="Write the raw canonical dump to this file. An existing file is replaced "
                   "only if it is a dump, unless --force.")
@click.option("--force", is_flag=True,
              help="Let --dump replace an existing file that is not a dump.")
@click.option("--json", "as_json", is_flag=True, help="Print final node states and statistics as JSON.")
@click.option("--trace", is_flag=True, help="Print a readable event log.")
@click.option("--check", is_flag=True, help="Check the safety properties after every step.")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="With --check: check only this property (repeatable).")
@click.option("--partition-script", "script_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Timed link cuts, crashes and restarts on top of --partition "
                   "(docs/partition-scripts.md). Its header supplies seed, nodes, rounds, "
                   "proposals and model unless given as flags.")
@click.pass_context
def simulate(ctx, seed, nodes, rounds, proposals, partition, model_name, dump_path, force,
             as_json, trace, check, invariants, script_path):
    """Run the seeded simulator and print the dump's SHA-256 (no trailing newline).

    With --check, exit code 10 reports a property violation. Exit 2: bad usage or input, or a
    --dump that could not be written (after a violation, 10 stands); 130 interrupted (SIGINT),
    143 terminated (SIGTERM).
    """
    from zabmc.invariants import Checker, resolve
    from zabmc.core.model import get_model
    from zabmc.sim import SimConfig, Simulator, require_simulable

    check_outputs({"--dump": dump_path}, {"partition script": script_path},
                  kinds={"--dump": "dump"}, force=force)
    link_cut = node_events = None
    if script_path is not None:
        from click.core import ParameterSource

        from zabmc.sim.script import load as load_script

        script = load_script(script_path)

        def given(name):
            return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE

        h = script.header
        seed = seed if given("seed") else h.get("seed", seed)
        nodes = nodes if given("nodes") else h.get("nodes", nodes)
        rounds = rounds if given("rounds") else h.get("rounds", rounds)
        proposals = proposals if given("proposals") else h.get("proposals", proposals)
        model_name = model_name if given("model_name") else h.get("model", model_name)
    model = require_simulable(get_model(model_name))
    cfg = SimConfig(seed, nodes, rounds, proposals, parse_partition(partition)).validate()
    if script_path is not None:
        timeline = script.timeline(cfg.nodes)  # checks node ids, crashes and restarts: exit 2
        link_cut = timeline.link_cut if timeline.has_cuts else None
        node_events = timeline.node_events
    if invariants and not check:
        raise UsageError("--invariant needs --check")
    checker = Checker(resolve(invariants)) if check else None
    observer = None
    if trace:
        from rich.console import Console

        from zabmc.report.simtrace import TraceObserver

        observer = TraceObserver(model, Console(highlight=False, soft_wrap=True))
    result = Simulator(model, cfg, observer=observer, checker=checker, link_cut=link_cut,
                       node_events=node_events).run()
    dump_failed = None
    if dump_path:  # a failed write is one line after the output; the verdict's code stands
        try:
            files.write(dump_path, result.dump, "--dump", kind="dump", flag="--dump", force=force)
        except UsageError as e:
            dump_failed = str(e)
    if as_json:
        click.echo(json.dumps(_document(model, cfg, result, script_path, check), indent=2))
    else:
        click.echo(result.digest, nl=False)
        if trace:
            click.echo()
    code = EXIT_OK
    if check and result.violation is not None:
        v = result.violation
        if not as_json:
            if not trace and sys.stdout.isatty():
                click.echo()  # the digest has no newline; keep the report off its line
            click.echo(f"violation: {v.property} at tick {result.violation_tick}: {v.message}",
                       err=True)
        code = EXIT_VIOLATION
    if dump_failed is not None:  # a run that lost an output never exits 0
        click.echo(f"zabmc: error: {dump_failed}", err=True)
        return code if code != EXIT_OK else EXIT_USAGE
    return code


def _document(model, cfg, result, script_path, check) -> dict:
    """`zabmc simulate --json`'s document."""
    out = {
        "model": model.name,
        "config": {"seed": cfg.seed, "nodes": cfg.nodes, "rounds": cfg.rounds,
                   "proposals": cfg.proposals,
                   "partition": sorted(list(p) for p in cfg.partition)},
        "sha256": result.digest,
        "stats": result.stats._asdict(),
        "nodes": [model.node_json(x) for x in result.nodes],
    }
    if script_path is not None:
        out["config"]["partition_script"] = script_path
    if check:
        out["violation"] = (
            dict(result.violation.to_json(), tick=result.violation_tick)
            if result.violation else None
        )
    return out
