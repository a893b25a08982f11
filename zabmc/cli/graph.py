"""`zabmc graph`: the explored state graph, written with networkx's writers."""

from __future__ import annotations

import os

import click

from zabmc.core.errors import UsageError, check_outputs

from . import EXIT_OK, cli
from .options import (SectionedCommand, bounds_options, model_option, property_options, section,
                      spec_of)

FORMATS = {".graphml": "graphml", ".gexf": "gexf", ".dot": "dot", ".gv": "dot", ".json": "json"}


@cli.command(cls=SectionedCommand)
@section("Model and bounds (zabmc check's, with its defaults)", model_option(), bounds_options())
@section("Properties", property_options())
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Where to write the graph (.graphml, .gexf, .dot/.gv or .json).")
@click.option("--format", "fmt", type=click.Choice(["graphml", "gexf", "dot", "json"]),
              default=None, help="The file format [default: from FILE's extension].")
@click.option("--max-states", type=int, default=100_000, show_default=True,
              help="Refuse graphs with more states than this.")
def graph(output, fmt, **params):
    """Write the state graph that `zabmc check` explores with the same options: a node per
    distinct state (depth, fingerprint, roles, epochs, properties violated on reaching it), an
    edge per event. The bounds and their defaults are `zabmc check`'s; a graph of the whole space
    is for small bounds: it refuses above --max-states."""
    if fmt is None:
        fmt = FORMATS.get(os.path.splitext(output)[1].lower())
        if fmt is None:
            raise UsageError(f"cannot tell the format of {output!r} from its extension: use "
                             ".graphml, .gexf, .dot, .gv or .json, or --format")
    check_outputs({"-o": output})
    g = spec_of(params, purpose="graph").validate().state_graph()
    _write(g, output, fmt)
    click.echo(f"wrote {output}: {g.number_of_nodes():,} states, {g.number_of_edges():,} "
               f"events ({fmt})")
    return EXIT_OK


def _write(g, output: str, fmt: str) -> None:
    import networkx as nx

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
