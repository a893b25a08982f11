"""`zabmc models`: the registered protocol models, each with a one-line description, the network
semantics it is claimed correct under and the other names it answers to; the models of a release
(a model's `release`, zabmc.core.model) listed apart, and those of a release with a patch (its
`patched`) apart again."""

from __future__ import annotations

import json

import click

from zabmc.cli import EXIT_OK, cli

NETWORK_MEANING = {
    "fifo": "assumes FIFO links: check it with --network fifo",
    "any": "assumes nothing about delivery order: bag or fifo",
}


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.option("--scenarios", "list_scenarios", is_flag=True,
              help="List the models' scenarios instead: named states to search from (`zabmc "
                   "check --model MODEL --scenario NAME`), each with its trace file and how it "
                   "was made.")
def models(as_json, list_scenarios):
    """List the protocol models that --model accepts."""
    from zabmc.core.model import aliases, get_model, model_names

    if list_scenarios:
        return _scenarios(as_json)

    rows = []
    others = aliases()
    for name in model_names():  # registration order: the default model first
        m = get_model(name)
        rows.append({"name": m.name, "description": m.description,
                     "network_assumption": m.network_assumption,
                     "release": getattr(m, "release", None),
                     "patched": list(getattr(m, "patched", None) or ()) or None,
                     "releases": [v for v, target in others.items() if target == name]})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return EXIT_OK
    width = max(len(r["name"]) for r in rows)
    groups = (("Models and abstractions:",
               [r for r in rows if not r["release"] and not r["patched"]]),
              ("Releases, one model each with every grain it has:",
               [r for r in rows if r["release"]]),
              ("Releases with a patch, not releases: a release's model changed as the patch "
               "changes it:", [r for r in rows if r["patched"]]))
    for k, (title, group) in enumerate(g for g in groups if g[1]):
        click.echo(("\n" if k else "") + title)
        for r in group:
            _row(r, width)
    return EXIT_OK


def _row(r: dict, width: int) -> None:
    click.echo(f"  {r['name']:<{width}}  {r['description']}")
    meaning = NETWORK_MEANING.get(r["network_assumption"], "see the model")
    click.echo(f"  {'':<{width}}  network: {r['network_assumption']} ({meaning})")
    if r["releases"]:
        click.echo(f"  {'':<{width}}  also named: {', '.join(r['releases'])}")
    if r["patched"]:
        version, patch = r["patched"]
        click.echo(f"  {'':<{width}}  patch: {patch}, applied to release {version}")


def _scenarios(as_json: bool) -> int:
    """`zabmc models --scenarios`: every model's scenarios, with where each trace came from."""
    from zabmc.core.model import get_model, model_names, scenarios
    from zabmc.core.trace import read_document

    rows = []
    for name in model_names():
        for sc in scenarios(get_model(name)):
            if sc.goal is not None:
                rows.append({"model": name, "name": sc.name, "description": sc.description,
                             "trace": None, "reached_within": dict(sc.bounds or {}),
                             "nodes": sc.nodes})
                continue
            doc = read_document(sc.path)
            origin = doc.get("origin") if isinstance(doc, dict) else None
            rows.append({"model": name, "name": sc.name, "description": sc.description,
                         "trace": sc.path, "events": len(doc.get("events") or ()),
                         "origin": origin if isinstance(origin, str) else None})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return EXIT_OK
    if not rows:
        click.echo("no model ships a scenario")
    for r in rows:
        click.echo(f"{r['model']} --scenario {r['name']}: {r['description']}")
        if r["trace"] is None:
            within = " ".join(f"--{f.replace('_', '-')} {v}" for f, v in r["reached_within"].items())
            nodes = f" on {r['nodes']} nodes" if r["nodes"] else ""
            click.echo(f"  the first state the model's own breadth-first search reaches{nodes}, "
                       f"from the initial state within {within or 'the check`s bounds'}")
            continue
        click.echo(f"  the state after the {r['events']} events of {r['trace']}")
        click.echo(f"  made by: {r['origin'] or 'not recorded'}")
    return EXIT_OK
