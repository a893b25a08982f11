"""Partition scripts (docs/partition-scripts.md): the parser and its line-numbered errors, the
writer, the JSON form, the cut timeline, and `zabmc simulate --partition-script` applying directives
at exactly their ticks (observed from outside through a SimObserver).
"""

from __future__ import annotations

import json

import pytest

from models.db19 import MODEL
from zabmc.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main
from zabmc.core.errors import UsageError
from zabmc.sim import SimConfig, Simulator
from zabmc.sim.script import (Directive, Script, from_json, from_link_decisions, load, loads,
                              parse)
from zabmc.sim.simulator import SimObserver

# golden digests shared with tests/test_cli_simulate.py
D_42_3_2000_10 = "6cdadc421ec2a014c0f978d14602facbb3e8eef43444b6f6fce77421e1c31f01"
D_5_3_3000_20_P = "a923f93197ff60bcd27cf8f09ac95d06b7342f61b94f89060ff3f4a5889fd8dd"


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    code = exc.value.code
    return (0 if code is None else code), out, err


def kind_of(msg) -> str:
    return MODEL.describe_msg(msg).split("(")[0]


class Wire(SimObserver):
    """Records every send as (tick, src, dst, kind name, dropped?) in send order."""

    def __init__(self):
        self.sends = []
        self._pending = []

    def on_step(self, t, kind, node, detail, before, step):
        if kind == "drop":
            src, dst, msg = detail
            # the drop is reported inside the send loop: mark the latest matching send
            for k in range(len(self.sends) - 1, -1, -1):
                s = self.sends[k]
                if s[:3] == (t, src, dst) and s[3] == kind_of(msg) and s[4] is None:
                    self.sends[k] = s[:4] + (True,)
                    break
            return
        for k, s in enumerate(self.sends):
            if s[4] is None:
                self.sends[k] = s[:4] + (False,)
        for dst, msg in step.outs:
            self.sends.append((t, node, dst, kind_of(msg), None))

    def done(self):
        return [s[:4] + (bool(s[4]),) for s in self.sends]


def observe(text, **cfg_over):
    script = parse(text, "t.zps")
    cfg = script.config(**cfg_over)
    w = Wire()
    result = Simulator(MODEL, cfg, observer=w, link_cut=script.timeline(cfg.nodes).link_cut).run()
    return w.done(), result


# --- parsing ----------------------------------------------------------------------------------------

FULL = """\
# a comment line
model db19
seed 42        # trailing comment
nodes 3
rounds 2000
proposals 10

at 0 isolate 2
at 0 cut 0 1
\tat 5 heal 0 1
at 100 rejoin 2
at 100 cut-all
at 150 heal-all
"""


def test_parse_header_and_directives():
    s = parse(FULL, "x.zps")
    assert s.header == {"model": "db19", "seed": 42, "nodes": 3, "rounds": 2000, "proposals": 10}
    assert s.directives == [
        Directive(0, "isolate", (2,), 8),
        Directive(0, "cut", (0, 1), 9),
        Directive(5, "heal", (0, 1), 10),
        Directive(100, "rejoin", (2,), 11),
        Directive(100, "cut-all", (), 12),
        Directive(150, "heal-all", (), 13),
    ]
    assert s.source == "x.zps"


@pytest.mark.parametrize("text", ["seed 42\nat 5 cut 0 1\n", '{"format": "zabmc-partition-'
                                  'events", "version": 1, "simulator": {"seed": 42}, "events": '
                                  '[{"tick": 5, "action": "cut", "src": 0, "dst": 1}]}'])
def test_a_byte_order_mark_at_the_start_is_not_part_of_the_script(tmp_path, text):
    """Some Windows editors start a UTF-8 file with U+FEFF; it was "unknown directive
    '\\ufeffseed'" (#37)."""
    p = tmp_path / "bom.zps"
    p.write_bytes(b"\xef\xbb\xbf" + text.encode())
    s = load(str(p))
    assert s.header["seed"] == 42
    assert [(d.tick, d.action, d.args) for d in s.directives] == [(5, "cut", (0, 1))]


def test_rounds_0_still_runs_the_start_up_at_tick_0():
    sends, result = observe("seed 0\nnodes 2\nrounds 0\nat 0 cut 1 0\n")
    assert sends == [(0, 0, 1, "LookForLeader", False), (0, 0, 1, "Vote", False),
                     (0, 1, 0, "LookForLeader", True), (0, 1, 0, "Vote", True)]
    assert (result.stats.sent, result.stats.dropped) == (4, 2)


def test_empty_and_comment_only_scripts_are_valid():
    assert parse("", "e").directives == []
    s = parse("# nothing\n\n   # still nothing\n", "e")
    assert (s.header, s.directives) == ({}, [])


def test_header_is_optional_and_partial():
    s = parse("at 3 cut 1 0\n", "p")
    assert s.header == {}
    assert s.config() == SimConfig(0, 3, 1000, 0)
    assert parse("seed 9\nat 3 cut 1 0\n").config(rounds=50) == SimConfig(9, 3, 50, 0)


def test_timeline_is_the_cut_set_over_time():
    tl = parse(FULL).timeline(3)
    two = {(2, 0), (2, 1), (0, 2), (1, 2)}
    assert tl.cut_at(0) == frozenset(two | {(0, 1)})
    assert tl.cut_at(4) == tl.cut_at(0)
    assert tl.cut_at(5) == frozenset(two)
    assert tl.cut_at(99) == frozenset(two)
    every = {(s, d) for s in range(3) for d in range(3) if s != d}
    assert tl.cut_at(100) == frozenset(every)  # rejoin 2, then cut-all, in file order
    assert tl.cut_at(150) == frozenset()
    assert tl.cut_at(10**9) == frozenset()
    assert tl.link_cut(0, 2, 1) and not tl.link_cut(0, 1, 0) and not tl.link_cut(150, 0, 1)


def test_rejoin_heals_every_link_of_the_node_even_towards_other_isolated_nodes():
    tl = parse("at 0 isolate 1\nat 0 isolate 2\nat 10 rejoin 1\n").timeline(3)
    assert tl.cut_at(10) == frozenset({(0, 2), (2, 0)})


def test_same_tick_directives_apply_in_file_order():
    assert parse("at 7 cut 0 1\nat 7 heal 0 1\n").timeline(2).cut_at(7) == frozenset()
    assert parse("at 7 heal 0 1\nat 7 cut 0 1\n").timeline(2).cut_at(7) == frozenset({(0, 1)})


# line number, fragment of the message
BAD = [
    ("seed 1\nnodes 3\nat 5 cut 1 1\n", 3, "a node has no link to itself: cut 1 1"),
    ("at 5 cutt 0 1\n", 1, "unknown action 'cutt'"),
    ("\n\nfoo 3\n", 3, "unknown directive 'foo'"),
    ("cut 0 1\n", 1, "'cut' needs a tick: at <tick> cut ..."),
    ("isolate 2\n", 1, "'isolate' needs a tick"),
    ("at x cut 0 1\n", 1, "tick must be a non-negative integer, got 'x'"),
    ("at -3 cut 0 1\n", 1, "tick must be a non-negative integer, got '-3'"),
    ("at 3 cut 0\n", 1, "'cut' takes 2 node ids, got 1: at <tick> cut <src> <dst>"),
    ("at 3 heal 0 1 2\n", 1, "'heal' takes 2 node ids, got 3"),
    ("at 3 isolate\n", 1, "'isolate' takes 1 node id, got 0: at <tick> isolate <node>"),
    ("at 3 heal-all 1\n", 1, "'heal-all' takes 0 node ids, got 1: at <tick> heal-all"),
    ("at 3\n", 1, "incomplete directive"),
    ("at 3 cut 0 one\n", 1, "node id must be a non-negative integer, got 'one'"),
    ("nodes 3\n# c\nat 3 isolate 3\n", 3, "node 3 does not exist: the header says nodes 3"),
    ("at 100 cut 0 1\nat 50 heal 0 1\n", 2,
     "tick 50 is earlier than the previous directive's tick 100"),
    ("rounds 100\nat 100 cut 0 1\n", 2, "tick 100 is never reached: the header says rounds 100"),
    ("rounds 0\nat 1 cut 0 1\n", 2, "tick 1 is never reached: the header says rounds 0 (ticks 0..0)"),
    ("at 1 cut 0 1\nseed 4\n", 2, "header line 'seed' after the first directive"),
    ("seed 1\nseed 2\n", 2, "duplicate header key 'seed'"),
    ("seed\n", 1, "'seed' takes exactly one value: seed <value>"),
    ("seed 1 2\n", 1, "'seed' takes exactly one value"),
    ("seed 18446744073709551616\n", 1, "seed must be an unsigned 64-bit integer"),
    ("nodes 0\n", 1, "nodes must be between 1 and 9, got 0"),
    ("nodes 10\n", 1, "nodes must be between 1 and 9, got 10"),
    ("rounds 1e3\n", 1, "rounds must be a non-negative integer, got '1e3'"),
    ("model db/19\n", 1, "model must be a name"),
]


@pytest.mark.parametrize("text, line, fragment", BAD)
def test_malformed_scripts_name_the_line(text, line, fragment):
    with pytest.raises(UsageError) as e:
        parse(text, "bad.zps")
    msg = str(e.value)
    assert msg.startswith(f"bad.zps:{line}: ")
    assert fragment in msg
    assert "\n" not in msg


@pytest.mark.parametrize("text, line, fragment", BAD)
def test_simulate_rejects_malformed_scripts_with_exit_2(capsys, tmp_path, text, line, fragment):
    p = tmp_path / "bad.zps"
    p.write_text(text)
    code, out, err = run(capsys, "simulate", "--partition-script", str(p))
    assert code == EXIT_USAGE
    assert out == ""
    assert err.startswith(f"zabmc: error: {p}:{line}: ")
    assert fragment in err
    assert err.count("\n") == 1


def test_node_ids_are_checked_against_the_clusters_size(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("# no nodes header\nat 1 cut 0 1\nat 2 isolate 4\n")
    code, out, err = run(capsys, "simulate", "--nodes", "3", "--partition-script", str(p))
    assert (code, out) == (EXIT_USAGE, "")
    assert err == (f"zabmc: error: {p}:3: node 4 does not exist in a cluster of 3 nodes "
                   "(ids 0..2)\n")
    # the header says 5 nodes, --nodes 3 overrides it: still checked
    p.write_text("nodes 5\nat 2 isolate 4\n")
    code, _, err = run(capsys, "simulate", "--nodes", "3", "--partition-script", str(p))
    assert code == EXIT_USAGE and f"{p}:2: node 4 does not exist" in err


@pytest.mark.parametrize("setup, fragment", [
    (None, "partition script {p} does not exist"),
    ("dir", "Invalid value for '--partition-script': File '{p}' is a directory."),
    ("latin1", "partition script {p} is not UTF-8 text"),
])
def test_unreadable_scripts(capsys, tmp_path, setup, fragment):
    p = tmp_path / "s.zps"
    if setup == "dir":
        p.mkdir()
    elif setup == "latin1":
        p.write_bytes(b"# caf\xe9\n")
    code, out, err = run(capsys, "simulate", "--partition-script", str(p))
    assert (code, out) == (EXIT_USAGE, "")
    assert err == f"zabmc: error: {fragment.format(p=p)}\n"


def test_load_names_a_directory(tmp_path):
    with pytest.raises(UsageError) as e:
        load(str(tmp_path))
    assert str(e.value) == f"partition script {tmp_path} is a directory"


# --- writer and JSON ---------------------------------------------------------------------------------


def test_writer_round_trips():
    s = parse(FULL, "x")
    text = s.to_text(["made by hand", ""])
    assert text.startswith("# made by hand\n#\nmodel db19\nseed 42\nnodes 3\nrounds 2000\n"
                           "proposals 10\nat 0 isolate 2\nat 0 cut 0 1\nat 5 heal 0 1\n")
    assert parse(text, "y") == s


def test_link_events_expand_conveniences_and_list_only_changes():
    s = parse("nodes 3\nat 0 isolate 2\nat 0 cut 0 1\nat 5 heal 0 1\nat 6 heal 0 1\n"
              "at 100 heal-all\n")
    assert s.link_events() == [
        {"tick": 0, "action": "cut", "src": 0, "dst": 1},
        {"tick": 0, "action": "cut", "src": 0, "dst": 2},
        {"tick": 0, "action": "cut", "src": 1, "dst": 2},
        {"tick": 0, "action": "cut", "src": 2, "dst": 0},
        {"tick": 0, "action": "cut", "src": 2, "dst": 1},
        {"tick": 5, "action": "heal", "src": 0, "dst": 1},
        {"tick": 100, "action": "heal", "src": 0, "dst": 2},
        {"tick": 100, "action": "heal", "src": 1, "dst": 2},
        {"tick": 100, "action": "heal", "src": 2, "dst": 0},
        {"tick": 100, "action": "heal", "src": 2, "dst": 1},
    ]


def test_json_round_trip_keeps_the_timeline():
    s = parse(FULL)
    doc = s.to_json({"note": "extra keys are ignored by readers"})
    assert doc["format"] == "zabmc-partition-events" and doc["version"] == 1
    assert doc["simulator"] == {"seed": 42, "nodes": 3, "rounds": 2000, "proposals": 10}
    back = loads(json.dumps(doc), "j")
    assert back.header == s.header
    a, b = s.timeline(3), back.timeline(3)
    for t in range(0, 200):
        assert a.cut_at(t) == b.cut_at(t)


@pytest.mark.parametrize("doc, fragment", [
    ({"format": "other"}, "not a partition-events file"),
    ({"format": "zabmc-partition-events", "version": 3, "events": []},
     "unsupported partition-events version 3"),
    ({"format": "zabmc-partition-events", "version": 1, "events": [{"tick": 1}]},
     "events[0].src must be a non-negative integer"),
    ({"format": "zabmc-partition-events", "version": 1,
      "events": [{"tick": 1, "src": 0, "dst": 1, "action": "isolate"}]},
     "events[0].action must be \"cut\" or \"heal\""),
    ({"format": "zabmc-partition-events", "version": 1, "simulator": {"nodes": 2},
      "events": [{"tick": 1, "src": 0, "dst": 2, "action": "cut"}]},
     "events[0] names a node that does not exist with 2 nodes"),
    ({"format": "zabmc-partition-events", "version": 1,
      "events": [{"tick": 5, "src": 0, "dst": 1, "action": "cut"},
                 {"tick": 4, "src": 0, "dst": 1, "action": "heal"}]},
     "events[1]: ticks must not decrease"),
    ({"format": "zabmc-partition-events", "version": 1, "simulator": {"speed": 3},
      "events": []}, "unknown simulator key 'speed'"),
])
def test_bad_json_scripts(doc, fragment):
    with pytest.raises(UsageError) as e:
        from_json(doc, "j.json")
    assert str(e.value).startswith("j.json: ") and fragment in str(e.value)


def test_invalid_json_names_its_line(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{\n "format": "zabmc-partition-events",\n "version": 1,,\n}\n')
    with pytest.raises(UsageError) as e:
        load(str(p))
    assert str(e.value).startswith(f"{p}:3: not valid JSON")


def test_from_link_decisions_answers_every_query_the_same():
    decisions = {(0, 0, 1): False, (3, 0, 1): True, (4, 0, 1): True, (9, 0, 1): False,
                 (12, 0, 1): True, (2, 1, 0): True, (5, 1, 0): True}
    s = from_link_decisions(decisions, {"nodes": 2})
    assert [d.text() for d in s.directives] == [
        "at 2 cut 1 0", "at 3 cut 0 1", "at 9 heal 0 1", "at 12 cut 0 1"]
    tl = s.timeline(2)
    for (t, a, b), cut in decisions.items():
        assert tl.link_cut(t, a, b) == cut


# --- directives apply at exactly their ticks -------------------------------------------------------


def test_isolate_at_0_drops_the_start_up_messages_of_the_isolated_node():
    sends, _ = observe("seed 42\nnodes 3\nrounds 1\nat 0 isolate 2\n")
    # C6: each node broadcasts LookForLeader then Vote to its peers in ascending id
    assert sends == [
        (0, 0, 1, "LookForLeader", False), (0, 0, 2, "LookForLeader", True),
        (0, 0, 1, "Vote", False), (0, 0, 2, "Vote", True),
        (0, 1, 0, "LookForLeader", False), (0, 1, 2, "LookForLeader", True),
        (0, 1, 0, "Vote", False), (0, 1, 2, "Vote", True),
        (0, 2, 0, "LookForLeader", True), (0, 2, 1, "LookForLeader", True),
        (0, 2, 0, "Vote", True), (0, 2, 1, "Vote", True),
    ]


def test_every_send_is_dropped_exactly_when_its_link_is_cut_at_its_tick():
    text = ("seed 42\nnodes 3\nrounds 2000\nproposals 10\n"
            "at 0 cut 0 1\nat 2 heal 0 1\nat 3 isolate 2\nat 300 rejoin 2\nat 301 cut 1 0\n"
            "at 699 cut-all\nat 702 heal-all\nat 1200 cut 2 1\n")
    sends, result = observe(text)
    tl = parse(text).timeline(3)
    assert len(sends) == result.stats.sent
    assert sum(d for *_, d in sends) == result.stats.dropped
    for t, src, dst, _, dropped in sends:
        assert dropped == tl.link_cut(t, src, dst), (t, src, dst)
    # the same, written out by hand per link: directives bite at their tick, not a tick earlier
    expect = {
        (0, 1): lambda t: t < 2 or 699 <= t < 702,
        (1, 0): lambda t: 301 <= t < 702,
        (0, 2): lambda t: 3 <= t < 300 or 699 <= t < 702,
        (1, 2): lambda t: 3 <= t < 300 or 699 <= t < 702,
        (2, 0): lambda t: 3 <= t < 300 or 699 <= t < 702,
        (2, 1): lambda t: 3 <= t < 300 or 699 <= t < 702 or t >= 1200,
    }
    for t, src, dst, _, dropped in sends:
        assert dropped == expect[(src, dst)](t), (t, src, dst)
    # every phase of the script actually saw traffic
    ticks = {t for t, *_ in sends}
    assert {0, 3, 699} <= ticks and any(3 < t < 300 for t in ticks)
    assert any(d for t, s, dd, _, d in sends if (s, dd) == (1, 0) and t < 699)
    assert any(d for t, s, dd, _, d in sends if (s, dd) == (2, 1) and t >= 1200)
    assert any(not d for t, *_, d in sends if 702 <= t < 1200)


def test_messages_in_flight_are_delivered_after_their_link_is_cut():
    class Deliveries(SimObserver):
        def __init__(self):
            self.got = []

        def on_step(self, t, kind, node, detail, before, step):
            if kind == "deliver":
                self.got.append((t, detail[0], detail[1]))

    script = parse("seed 0\nnodes 3\nrounds 10\nat 1 cut-all\n")
    obs, w = Deliveries(), Wire()

    class Both(SimObserver):
        def on_step(self, *a):
            obs.on_step(*a)
            w.on_step(*a)

    result = Simulator(MODEL, script.config(), observer=Both(),
                       link_cut=script.timeline(3).link_cut).run()
    sends = w.done()
    assert [s for s in sends if not s[4]] == [s for s in sends if s[0] == 0]  # tick 0 passes
    assert all(s[4] for s in sends if s[0] >= 1)
    # all 12 start-up messages arrive (at ticks 1..3) although every link is cut from tick 1
    assert len(obs.got) == 12 == result.stats.delivered
    assert {t for t, _, _ in obs.got} <= {1, 2, 3}


def test_heal_never_heals_a_static_partition_link():
    text = "seed 5\nnodes 3\nrounds 400\nat 0 cut 0 1\nat 10 heal-all\nat 20 heal 0 2\n"
    script = parse(text)
    cfg = script.config(partition=frozenset({(0, 2)}))
    w = Wire()
    Simulator(MODEL, cfg, observer=w, link_cut=script.timeline(3).link_cut).run()
    sends = w.done()
    assert all(d for t, s, dd, _, d in sends if (s, dd) == (0, 2))
    assert all(d == (t < 10) for t, s, dd, _, d in sends if (s, dd) == (0, 1))


# --- zabmc simulate --partition-script ---------------------------------------------------------------


def test_a_script_without_directives_changes_nothing(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("seed 42\nnodes 3\nrounds 2000\nproposals 10\n")
    code, out, err = run(capsys, "simulate", "--partition-script", str(p))
    assert (code, out, err) == (EXIT_OK, D_42_3_2000_10, "")


def test_whole_run_cuts_equal_the_partition_flag(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("seed 5\nnodes 3\nrounds 3000\nproposals 20\nat 0 cut 0 2\nat 0 cut 2 0\n")
    code, out, err = run(capsys, "simulate", "--partition-script", str(p))
    assert (code, out, err) == (EXIT_OK, D_5_3_3000_20_P, "")


def test_flags_given_on_the_command_line_override_the_header(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("seed 1\nnodes 5\nrounds 10\nproposals 0\n")
    code, out, _ = run(capsys, "simulate", "--seed", "42", "--nodes", "3", "--rounds", "2000",
                       "--proposals", "10", "--partition-script", str(p))
    assert (code, out) == (EXIT_OK, D_42_3_2000_10)


def test_script_cuts_stack_on_the_partition_flag(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("seed 5\nnodes 3\nrounds 3000\nproposals 20\nat 0 cut 2 0\n")
    code, out, _ = run(capsys, "simulate", "--partition", "0,2", "--partition-script", str(p))
    assert (code, out) == (EXIT_OK, D_5_3_3000_20_P)


def test_check_reports_the_first_violation_and_its_tick(capsys, tmp_path):
    p = tmp_path / "lpo.zps"
    p.write_text("seed 0\nnodes 2\nrounds 30\nproposals 2\nat 11 cut 1 0\nat 20 heal 1 0\n")
    code, out, err = run(capsys, "simulate", "--partition-script", str(p), "--check")
    assert code == EXIT_VIOLATION
    assert err == ("violation: local-primary-order at tick 23: node 0 delivered 1.2:zab-1 as "
                   "epoch 1's transaction number 1\n")
    # without the cut, the same run is clean
    p.write_text("seed 0\nnodes 2\nrounds 30\nproposals 2\n")
    code, _, err = run(capsys, "simulate", "--partition-script", str(p), "--check")
    assert (code, err) == (EXIT_OK, "")


def test_json_output_records_the_script_and_the_drops(capsys, tmp_path):
    p = tmp_path / "s.zps"
    p.write_text("seed 0\nnodes 3\nrounds 1\nat 0 isolate 2\n")
    code, out, _ = run(capsys, "simulate", "--partition-script", str(p), "--json")
    doc = json.loads(out)
    assert code == EXIT_OK
    assert doc["config"] == {"seed": 0, "nodes": 3, "rounds": 1, "proposals": 0, "partition": [],
                             "partition_script": str(p)}
    assert (doc["stats"]["sent"], doc["stats"]["dropped"]) == (12, 8)


def test_the_json_form_runs_like_the_text_form(capsys, tmp_path):
    text = "seed 0\nnodes 2\nrounds 30\nproposals 2\nat 11 cut 1 0\nat 20 heal 1 0\n"
    a, b = tmp_path / "s.zps", tmp_path / "s.json"
    a.write_text(text)
    b.write_text(json.dumps(parse(text).to_json()))
    ra = run(capsys, "simulate", "--partition-script", str(a), "--check")
    rb = run(capsys, "simulate", "--partition-script", str(b), "--check")
    assert ra == rb and ra[0] == EXIT_VIOLATION


def test_script_written_by_the_writer_runs_identically(capsys, tmp_path):
    s = Script({"seed": 42, "nodes": 3, "rounds": 2000, "proposals": 10},
               [Directive(0, "isolate", (2,), 0), Directive(100, "heal-all", (), 0)])
    p = tmp_path / "w.zps"
    p.write_text(s.to_text(["written by a test"]))
    code, out, err = run(capsys, "simulate", "--partition-script", str(p), "--check")
    assert code == EXIT_VIOLATION
    assert out == "eee95ec696667eee92b46c4677ca9a358a7b16687fe1d30295a6973671ffa4ea"
    assert err == ("violation: local-primary-order at tick 367: node 2 delivered 1.2:zab-1 as "
                   "epoch 1's transaction number 1\n")
