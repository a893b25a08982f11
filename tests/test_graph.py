"""`zabmc graph` (issue #20 point 2): the state graph `check` explores, written with networkx."""

from __future__ import annotations

import json

import networkx as nx
import pytest

SMALL = ["--nodes", "2", "--proposals", "2"]
BAG_BUG = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2",
           "--depth", "11"]


def check_json(cli, args):
    code, out, _ = cli(["check", *args, "--json", "-q"])
    return json.loads(out)


def test_graphml_has_exactly_the_distinct_states_of_check(tmp_path, cli):
    path = tmp_path / "g.graphml"
    code, out, _ = cli(["graph", *SMALL, "-o", str(path)])
    assert code == 0 and out.strip() == f"wrote {path}: 73 states, 114 events (graphml)"
    summary = check_json(cli, SMALL)
    g = nx.read_graphml(path)
    assert g.number_of_nodes() == summary["distinct_states"] == 73
    assert g.number_of_edges() == summary["states"] - 1  # every generated state but the first
    assert g.nodes["0"]["depth"] == 0 and g.nodes["0"]["roles"] == "Looking,Looking"
    first = [d["event"] for _, _, d in g.out_edges("0", data=True)]
    assert "deliver 0->1 LookForLeader(src_id=0, last_zxid=0.0, peer_epoch=0)" in first
    assert max(d["depth"] for _, d in g.nodes(data=True)) == summary["depth_reached"]


def test_violating_states_are_marked_at_the_counterexample_depth(tmp_path, cli):
    path = tmp_path / "bug.graphml"
    assert cli(["graph", *BAG_BUG, "-o", str(path)])[0] == 0
    summary = check_json(cli, [*BAG_BUG, "--all"])
    g = nx.read_graphml(path)
    assert g.number_of_nodes() == summary["distinct_states"] == 9069
    bad = {p: min(d["depth"] for _, d in g.nodes(data=True) if p in d["violated"].split(","))
           for p in ("agreement", "total-order", "local-primary-order")}
    assert bad == {v["property"]: v["depth"] for v in summary["violations"]}


@pytest.mark.parametrize("ext,read", [
    (".gexf", nx.read_gexf),
    (".dot", lambda p: nx.drawing.nx_pydot.read_dot(p)),
    (".json", lambda p: nx.node_link_graph(json.load(open(p)), edges="edges")),
])
def test_other_formats_round_trip(tmp_path, cli, ext, read):
    path = tmp_path / f"g{ext}"
    assert cli(["graph", *SMALL, "-o", str(path)])[0] == 0
    g = read(str(path))
    assert (g.number_of_nodes(), g.number_of_edges()) == (73, 114)


def test_size_cap_and_bad_extension_are_one_line_errors(tmp_path, cli):
    code, _, err = cli(["graph", "--nodes", "3", "-o", str(tmp_path / "g.graphml"),
                        "--max-states", "1000"])
    assert code == 2 and err.strip() == ("zabmc: error: the state graph has more than 1,000 "
                                         "states (--max-states): give smaller bounds or a larger cap")
    assert not (tmp_path / "g.graphml").exists()
    code, _, err = cli(["graph", *SMALL, "-o", str(tmp_path / "g.txt")])
    assert code == 2 and "cannot tell the format of" in err and len(err.strip().splitlines()) == 1


def test_graph_takes_checks_defaults(tmp_path, cli):
    """`graph` defaulted to 2 nodes where `check` uses 3 (#37): with no bound given but the depth,
    both explore the same space. (Every other test here passes --nodes itself.)"""
    path = tmp_path / "g.json"
    code, out, _ = cli(["graph", "--depth", "4", "-o", str(path)])
    summary = check_json(cli, ["--depth", "4"])
    assert summary["config"]["nodes"] == 3
    g = nx.node_link_graph(json.load(open(path)), edges="edges")
    assert code == 0 and g.number_of_nodes() == summary["distinct_states"]
    assert g.nodes[0]["roles"] == "Looking,Looking,Looking"
