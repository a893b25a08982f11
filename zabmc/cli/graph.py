"""`zabmc graph`: the explored state graph, written with networkx's writers."""

from __future__ import annotations

import os

import click

from zabmc.core import files
from zabmc.core.errors import UsageError
from zabmc.core.files import check_outputs

from . import EXIT_OK, cli
from .options import (SectionedCommand, bounds_options, model_option, property_options, section,
                      spec_of)

FORMATS = {".graphml": "graphml", ".gexf": "gexf", ".dot": "dot", ".gv": "dot", ".json": "json"}


@cli.command(cls=SectionedCommand)
@section("Model and bounds (zabmc check's, with its defaults)", model_option(), bounds_options())
@section("Properties", property_options())
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Where to write the graph (.graphml, .gexf, .dot/.gv or .json; `-`: standard "
                   "output, with --format). An existing file is replaced only if it is a graph, "
                   "unless --force.")
@click.option("--force", is_flag=True,
              help="Let -o replace an existing file that is not a graph.")
@click.option("--format", "fmt", type=click.Choice(["graphml", "gexf", "dot", "json"]),
              default=None, help="The file format [default: from FILE's extension].")
@click.option("--max-states", type=int, default=100_000, show_default=True,
              help="Refuse graphs with more states than this.")
def graph(output, fmt, force, **params):
    """Write the state graph that `zabmc check` explores with the same options: a node per
    distinct state (depth, fingerprint, roles, epochs, properties violated on reaching it), an
    edge per event. The bounds and their defaults are `zabmc check`'s; a graph of the whole space
    is for small bounds: it refuses above --max-states."""
    if fmt is None:
        fmt = FORMATS.get(os.path.splitext(output)[1].lower())
        if fmt is None:
            raise UsageError(f"cannot tell the format of {output!r} from its extension: use "
                             ".graphml, .gexf, .dot, .gv or .json, or --format")
    check_outputs({"-o": output}, kinds={"-o": "graph"}, force=force)
    g = spec_of(params, purpose="graph").validate().state_graph()
    _write(g, output, fmt, force)
    where = "standard output" if output == "-" else output
    click.echo(f"wrote {where}: {g.number_of_nodes():,} states, {g.number_of_edges():,} "
               f"events ({fmt})", err=output == "-")
    return EXIT_OK


def _write(g, output: str, fmt: str, force: bool) -> None:
    """The graph in `fmt`, made in memory, then written by the one writer
    (`zabmc.core.files.write`)."""
    import io
    import json

    import networkx as nx

    if fmt in ("graphml", "gexf"):
        buf = io.BytesIO()
        (nx.write_graphml if fmt == "graphml" else nx.write_gexf)(g, buf)
        data = buf.getvalue()
    elif fmt == "dot":
        text = io.StringIO()
        nx.drawing.nx_pydot.write_dot(g, text)
        data = text.getvalue()
    else:
        data = json.dumps(nx.node_link_data(g, edges="edges"), indent=1)
    files.write(output, data, "graph", kind="graph", flag="-o", force=force)
