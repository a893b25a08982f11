"""`zabmc graph`: the explored state graph, written with networkx's writers."""

from __future__ import annotations

import os

import click

from zabmc.errors import UsageError

from . import EXIT_OK, cli

FORMATS = {".graphml": "graphml", ".gexf": "gexf", ".dot": "dot", ".gv": "dot", ".json": "json"}


@cli.command()
@click.option("--model", "model_name", default="db19", show_default=True, help="Protocol model.")
@click.option("--nodes", type=int, default=2, show_default=True, help="Cluster size.")
@click.option("--depth", type=int, default=40, show_default=True, help="Bound on events per path.")
@click.option("--network", type=click.Choice(["bag", "fifo"]), default="fifo", show_default=True,
              help="As for `zabmc check`.")
@click.option("--max-drops", type=int, default=0, show_default=True, help="Message drops budget.")
@click.option("--max-timeouts", type=int, default=0, show_default=True,
              help="Election timeouts budget.")
@click.option("--max-heartbeats", type=int, default=0, show_default=True, help="Heartbeats budget.")
@click.option("--proposals", type=int, default=2, show_default=True,
              help="Client proposals budget.")
@click.option("--max-crashes", type=int, default=0, show_default=True, help="Crashes budget.")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this property (repeatable).")
@click.option("--no-invariants", is_flag=True, help="Check nothing (the protocol's own states).")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Where to write the graph (.graphml, .gexf, .dot/.gv or .json).")
@click.option("--format", "fmt", type=click.Choice(["graphml", "gexf", "dot", "json"]),
              default=None, help="The file format [default: from FILE's extension].")
@click.option("--max-states", type=int, default=100_000, show_default=True,
              help="Refuse graphs with more states than this.")
def graph(model_name, nodes, depth, network, max_drops, max_timeouts, max_heartbeats, proposals,
          max_crashes, invariants, no_invariants, output, fmt, max_states):
    """Write the state graph that `zabmc check` explores with the same options: a node per
    distinct state (depth, fingerprint, roles, epochs, properties violated on reaching it), an
    edge per event. For small bounds: it refuses above --max-states."""
    import networkx as nx

    from zabmc.explore import Env, ExploreConfig
    from zabmc.explore.graph import state_graph
    from zabmc.invariants import Checker, resolve
    from zabmc.model import get_model

    if fmt is None:
        fmt = FORMATS.get(os.path.splitext(output)[1].lower())
        if fmt is None:
            raise UsageError(f"cannot tell the format of {output!r} from its extension: use "
                             ".graphml, .gexf, .dot, .gv or .json, or --format")
    if max_states < 1:
        raise UsageError(f"--max-states must be at least 1, got {max_states}")
    if invariants and no_invariants:
        raise UsageError("--invariant and --no-invariants exclude each other")
    model = get_model(model_name)
    if model.network_assumption == "fifo" and network != "fifo":
        raise UsageError(f"model {model.name} assumes FIFO links: use --network fifo")
    cfg = ExploreConfig(nodes, network, max_drops, max_timeouts, max_heartbeats, proposals,
                        depth, max_crashes).validate()
    env = Env(model, cfg, Checker(resolve(invariants, no_invariants)))
    g = state_graph(env, max_states)
    try:
        if fmt == "graphml":
            nx.write_graphml(g, output)
        elif fmt == "gexf":
            nx.write_gexf(g, output)
        elif fmt == "dot":
            nx.drawing.nx_pydot.write_dot(g, output)
        else:
            import json

            with open(output, "w") as f:
                json.dump(nx.node_link_data(g, edges="edges"), f, indent=1)
    except OSError as e:
        raise UsageError(f"cannot write {output}: {e.strerror}") from None
    click.echo(f"wrote {output}: {g.number_of_nodes():,} states, {g.number_of_edges():,} "
               f"events ({fmt})")
    return EXIT_OK
