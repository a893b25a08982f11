"""Crash and restart directives of partition scripts (docs/semantics.md, E7-E9, E11): parsing and the
JSON form, and what the seeded simulator does with them, observed from outside through a
SimObserver: a crashed node keeps its durable fields only, receives nothing while down, loses every
message in flight to or from it, and restarts Looking with its LookForLeader and Vote sent at the
restart tick. The digests pin the runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from zabmc.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main
from zabmc.core.errors import UsageError
from zabmc.invariants import Checker
from zabmc.core.model import crashed, get_model
from zabmc.sim import SimConfig, Simulator
from zabmc.sim.rng import delivery_delay, election_deadline
from zabmc.sim.script import Script, from_json, loads, parse
from zabmc.sim.simulator import SimObserver

MODEL = get_model("db19")
CFG = SimConfig(seed=1, nodes=3, rounds=400, proposals=3)
# Seed 1's run: node 2 is the established leader of epoch 1 from tick 9 and proposes zab-0 at
# tick 100. It crashes at 101 with that Propose in flight; 0 and 1 elect node 1 (epoch 2), which
# commits zab-1 and zab-2 without node 2. Node 2 restarts at 350 and follows node 1.
CRASH_T, RESTART_T, LEADER = 101, 350, 2
CRASH_SCRIPT = f"""\
seed 1
nodes 3
rounds 400
proposals 3
at {CRASH_T} crash {LEADER}     # the established leader, right after it proposed zab-0
at {RESTART_T} restart {LEADER}
"""
D_CRASH = "2c9a0d68aaca5bfa287ad2c9128cde7cfbf0450a6e7f1ce58e3b0b0010bd6077"
# The same with the restart at 250, before epoch 2's second proposal: node 2 comes back with zab-0
# (1.1) still in its durable history, follows node 1 and delivers 1.1 before 2.2 (a db-19 bug).
D_EARLY_RESTART = "8008410335dfd40ef60104ab87ba6e555f38810e91d0d912b82a20e725034f22"
# golden digest shared with tests/test_sim.py and tests/test_cli_simulate.py
D_42_3_2000_10 = "6cdadc421ec2a014c0f978d14602facbb3e8eef43444b6f6fce77421e1c31f01"


def kind_of(msg) -> str:
    return MODEL.describe_msg(msg).split("(")[0]


def run_cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    code = exc.value.code
    return (0 if code is None else code), out, err


# --- parsing --------------------------------------------------------------------------------------


def test_crash_and_restart_parse_into_per_tick_node_events():
    s = parse("nodes 3\nat 5 crash 1\nat 9 restart 1\n", "t.zps")
    assert [d[:3] for d in s.directives] == [(5, "crash", (1,)), (9, "restart", (1,))]
    assert [d.line for d in s.directives] == [2, 3]
    tl = s.timeline(3)
    assert tl.node_events == {5: (("crash", 1),), 9: (("restart", 1),)}
    assert not tl.has_cuts and not tl.link_cut(6, 0, 1)  # crashes cut no link
    assert [tl.down_at(t) for t in (4, 5, 8, 9)] == [set(), {1}, {1}, set()]
    assert s.to_text() == "nodes 3\nat 5 crash 1\nat 9 restart 1\n"


def test_same_tick_node_events_keep_file_order():
    tl = parse("at 5 crash 1\nat 5 cut 0 2\nat 5 crash 2\nat 7 restart 2\nat 7 crash 0\n"
               "at 8 restart 1\nat 8 crash 1\n").timeline(3)
    assert tl.node_events == {5: (("crash", 1), ("crash", 2)), 7: (("restart", 2), ("crash", 0)),
                              8: (("restart", 1), ("crash", 1))}
    assert tl.cut_at(5) == {(0, 2)} and tl.down_at(8) == {0, 1}
    # crashed and restarted in one tick: legal, and up afterwards
    assert parse("at 3 crash 0\nat 3 restart 0\n").timeline(2).down_at(3) == set()


@pytest.mark.parametrize("text, line, fragment", [
    ("at 5 crash 1\nat 7 crash 1\n", 2,
     "crash 1: node 1 is already down (crashed at tick 5); a down node cannot crash again"),
    ("at 5 restart 1\n", 1, "restart 1: node 1 is up; only a crashed node can restart"),
    ("at 5 crash 1\nat 6 restart 1\nat 8 restart 1\n", 3, "restart 1: node 1 is up"),
    ("at 5 crash 0\nat 5 crash 0\n", 2, "node 0 is already down"),
    ("nodes 3\nat 5 crash 3\n", 2, "node 3 does not exist: the header says nodes 3 (ids 0..2)"),
    ("at 5 crash\n", 1, "'crash' takes 1 node id, got 0: at <tick> crash <node>"),
    ("at 5 restart 1 2\n", 1, "'restart' takes 1 node id, got 2: at <tick> restart <node>"),
    ("crash 1\n", 1, "'crash' needs a tick: at <tick> crash ..."),
    ("rounds 10\nat 10 crash 1\n", 2, "tick 10 is never reached"),
])
def test_bad_crash_and_restart_lines_name_the_line(text, line, fragment):
    with pytest.raises(UsageError) as e:
        parse(text, "bad.zps")
    assert str(e.value).startswith(f"bad.zps:{line}: ") and fragment in str(e.value)


def test_node_ids_of_crashes_are_checked_against_the_cluster():
    s = parse("at 5 crash 3\n", "t.zps")  # no header: the cluster size decides
    s.timeline(4)
    with pytest.raises(UsageError) as e:
        s.timeline(3)
    assert str(e.value) == "t.zps:1: node 3 does not exist in a cluster of 3 nodes (ids 0..2)"


def test_timeline_checks_scripts_built_in_memory():
    from zabmc.sim.script import Directive

    s = Script({}, [Directive(4, "restart", (0,), 0)], "<mem>")
    with pytest.raises(UsageError, match=r"^<mem>: restart 0: node 0 is up"):
        s.timeline(2)


def test_the_simulator_refuses_impossible_node_events():
    with pytest.raises(UsageError, match="restart 1: node 1 is up"):
        Simulator(MODEL, CFG, node_events={3: (("restart", 1),)})
    with pytest.raises(UsageError, match="crash 2: node 2 is already down"):
        Simulator(MODEL, CFG, node_events={3: (("crash", 2),), 4: (("crash", 2),)})
    with pytest.raises(UsageError, match=r"node ids are 0\.\.2"):
        Simulator(MODEL, CFG, node_events={3: (("crash", 3),)})


# --- the JSON form --------------------------------------------------------------------------------


MIXED = "nodes 3\nrounds 50\nat 2 isolate 0\nat 5 crash 1\nat 5 heal 0 2\nat 9 restart 1\n" \
        "at 9 crash 2\nat 12 heal-all\n"


def test_json_round_trip_keeps_cuts_and_node_events():
    s = parse(MIXED, "m.zps")
    doc = s.to_json()
    assert doc["version"] == 2  # version 1 cannot hold node events
    assert doc["events"][:6] == [
        {"tick": 2, "action": "cut", "src": 0, "dst": 1},
        {"tick": 2, "action": "cut", "src": 0, "dst": 2},
        {"tick": 2, "action": "cut", "src": 1, "dst": 0},
        {"tick": 2, "action": "cut", "src": 2, "dst": 0},
        {"tick": 5, "action": "heal", "src": 0, "dst": 2},
        {"tick": 5, "action": "crash", "node": 1},
    ]
    assert doc["events"][6:] == [{"tick": 9, "action": "restart", "node": 1},
                                 {"tick": 9, "action": "crash", "node": 2},
                                 {"tick": 12, "action": "heal", "src": 0, "dst": 1},
                                 {"tick": 12, "action": "heal", "src": 1, "dst": 0},
                                 {"tick": 12, "action": "heal", "src": 2, "dst": 0}]
    back = loads(json.dumps(doc), "m.json")
    a, b = s.timeline(3), back.timeline(3)
    assert [a.cut_at(t) for t in range(50)] == [b.cut_at(t) for t in range(50)]
    assert a.node_events == b.node_events == {5: (("crash", 1),),
                                              9: (("restart", 1), ("crash", 2))}
    assert back.to_json() == doc


def test_scripts_without_node_events_still_write_version_1():
    doc = parse("at 3 cut 0 1\n").to_json()
    assert doc["version"] == 1 and all("node" not in e for e in doc["events"])


@pytest.mark.parametrize("version, events, fragment", [
    (1, [{"tick": 1, "action": "crash", "node": 0}],
     "events[0].action 'crash' needs version 2 (version 1 holds link events only)"),
    (2, [{"tick": 1, "action": "crash"}], "events[0].node must be a non-negative integer"),
    (2, [{"tick": 1, "action": "crash", "node": 0}, {"tick": 2, "action": "crash", "node": 0}],
     "events[1]: crash 0: node 0 is already down"),
    (2, [{"tick": 1, "action": "restart", "node": 1}], "events[0]: restart 1: node 1 is up"),
    (2, [{"tick": 1, "action": "crash", "node": 3}],
     "events[0] names a node that does not exist with 3 nodes"),
    (2, [{"tick": 1, "action": "isolate", "src": 0, "dst": 1}],
     'events[0].action must be one of "cut", "heal", "crash", "restart"'),
])
def test_bad_json_node_events(version, events, fragment):
    doc = {"format": "zabmc-partition-events", "version": version,
           "simulator": {"nodes": 3}, "events": events}
    with pytest.raises(UsageError) as e:
        from_json(doc, "j.json")
    assert str(e.value).startswith("j.json: ") and fragment in str(e.value)


# --- the simulator --------------------------------------------------------------------------------


class Recorder(SimObserver):
    """Every step with the simulator's state as the observer sees it at that step."""

    def __init__(self):
        self.sim = None
        self.steps = []  # (t, kind, node, detail, before, step)
        self.sends = []  # (t, src, dst, msg) that entered the network
        self.drops = []  # (t, src, dst, msg) dropped at send
        self.deliveries = []  # (t, src, dst, msg)
        self.node2_while_down = []  # node 2's value at every step while it is down
        self.at_restart = None
        self.link_free_after_crash = None
        self.ghosts = []  # (t, kind, ghost before this step's fold)

    def on_step(self, t, kind, node, detail, before, step):
        sim = self.sim
        self.steps.append((t, kind, node, detail, before, step))
        self.ghosts.append((t, kind, sim.ghost))
        if LEADER in sim.down:
            self.node2_while_down.append(sim.nodes[LEADER])
        if kind == "drop":
            # reported inside the send loop, after its step's outs were recorded below
            self.drops.append((t,) + detail)
            k = len(self.sends) - 1 - self.sends[::-1].index((t,) + detail)
            del self.sends[k]
            return
        if kind == "deliver":
            self.deliveries.append((t,) + detail)
        if kind == "restart":
            self.at_restart = (sim.deadline[node], sim.last_hb[node])
        if kind == "crash" and sim.link_free is not None:
            self.link_free_after_crash = dict(sim.link_free)
        for dst, msg in step.outs:
            self.sends.append((t, node, dst, msg))

    def on_violation(self, t, v):
        self.steps.append((t, "violation", None, v, None, None))


def recorded_run(script_text, model=MODEL, cfg=CFG, checker=None):
    tl = parse(script_text, "t.zps").timeline(cfg.nodes)
    rec = Recorder()
    sim = Simulator(model, cfg, observer=rec, checker=checker,
                    link_cut=tl.link_cut if tl.has_cuts else None, node_events=tl.node_events)
    rec.sim = sim
    return sim.run(), rec


def test_crash_and_restart_of_the_established_leader():
    result, rec = recorded_run(CRASH_SCRIPT)
    assert result.digest == D_CRASH
    assert result.stats._asdict() == dict(sent=805, dropped=19, delivered=781, in_flight=5,
                                          pending_proposals=0, proposed=3, ticks=400, events=797)
    s = result.stats
    assert s.sent == s.delivered + s.dropped + s.in_flight
    n = CFG.nodes

    (crash,) = [x for x in rec.steps if x[1] == "crash"]
    t, _, i, lost, before, step = crash
    assert (t, i) == (CRASH_T, LEADER)
    # it was the established leader, with a proposal in its history
    assert MODEL.can_propose(before) and before.history
    # E7: durable fields survive, every other field is a fresh node's
    fresh = MODEL.fresh(LEADER, n)
    after = step.node
    assert after == crashed(MODEL, before, n)
    for f in after._fields:
        want = getattr(before, f) if f in MODEL.durable else getattr(fresh, f)
        assert getattr(after, f) == want, f
    assert after.history == before.history and after != before and not MODEL.is_leading(after)
    assert step.outs == () and step.effects == ()
    # ... and it holds exactly that while down
    assert rec.node2_while_down and all(x == after for x in rec.node2_while_down)

    # the messages in flight to or from it at the crash are lost: every send to or from node 2
    # due at the crash tick or later (db-19 has no FIFO clock: due = send tick + delay)
    in_flight = Counter(
        (src, dst, msg) for ts, src, dst, msg in rec.sends
        if ts < CRASH_T and LEADER in (src, dst)
        and ts + delivery_delay(CFG.seed, src, dst, ts) >= CRASH_T)
    assert Counter(lost) == in_flight and len(lost) == 5
    assert {kind_of(m) for _, _, m in lost} == {"Vote", "Propose", "Commit"}
    assert ("Propose", 0) in {(kind_of(m), d) for _, d, m in lost}

    # E8: while down it receives nothing and takes no step; sends to it drop at send
    down = range(CRASH_T, RESTART_T)
    assert not [x for x in rec.deliveries if x[0] in down and LEADER in x[1:3]]
    assert not [x for x in rec.steps if x[0] in down and x[2] == LEADER and x[1] != "crash"]
    to_it = [x for x in rec.drops if x[0] in down]
    assert to_it and all(d == LEADER for _, _, d, _ in to_it)
    assert len(rec.drops) == 14 and result.stats.dropped == 14 + 5
    assert not [x for x in rec.sends if x[0] in down and LEADER in x[1:3]]

    # E9/E11: it restarts at its tick, Looking, and sends LookForLeader and Vote to both peers
    (restart,) = [x for x in rec.steps if x[1] == "restart"]
    t, _, i, _, before_r, step_r = restart
    assert (t, i) == (RESTART_T, LEADER)
    assert before_r == after  # it comes back as it was down
    assert step_r == MODEL.start(after, n)
    assert not MODEL.is_leading(step_r.node) and step_r.node.history == after.history
    assert [(d, kind_of(m)) for d, m in step_r.outs] == [
        (0, "LookForLeader"), (1, "LookForLeader"), (0, "Vote"), (1, "Vote")]
    assert rec.at_restart == (election_deadline(CFG.seed, LEADER, RESTART_T), 0)
    # sent at tick RESTART_T: each arrives after its seeded delay from that tick
    for dst, msg in step_r.outs:
        due = RESTART_T + delivery_delay(CFG.seed, LEADER, dst, RESTART_T)
        assert (due, LEADER, dst, msg) in rec.deliveries
    # the restart comes before every delivery of its tick
    k = rec.steps.index(restart)
    assert not [x for x in rec.steps[:k] if x[0] == RESTART_T]
    # after the restart it is in the cluster again: it follows epoch 2's leader
    assert [x for x in rec.deliveries if x[0] > RESTART_T and x[2] == LEADER]
    final = result.nodes[LEADER]
    assert not MODEL.is_leading(final) and final.current_epoch == 1


def test_crash_run_with_check_folds_the_crash_and_restart_into_the_ghost():
    result, rec = recorded_run(CRASH_SCRIPT, checker=Checker())
    assert result.digest == D_CRASH and result.violation is None
    # the ghost is the same before and after the crash's fold: durable fields survive
    k = next(j for j, g in enumerate(rec.ghosts) if g[1] == "crash")
    assert rec.ghosts[k][2] == rec.ghosts[k + 1][2]
    assert rec.ghosts[k][2] != Checker().initial_ghost(3)


def test_an_early_restart_lets_the_checker_see_db19s_stale_history():
    script = CRASH_SCRIPT.replace(f"at {RESTART_T} restart", "at 250 restart")
    plain, _ = recorded_run(script)
    checked, rec = recorded_run(script, checker=Checker())
    assert plain.digest == checked.digest == D_EARLY_RESTART
    v = checked.violation
    assert (v.property, checked.violation_tick, v.nodes) == ("local-primary-order", 306, (2,))
    assert v.message == "node 2 delivered 2.2:zab-2 as epoch 2's transaction number 1"
    assert sorted(x.property for x in v.also) == ["agreement", "total-order"]
    assert [x for x in rec.steps if x[1] == "violation"] == [(306, "violation", None, v, None,
                                                               None)]


def test_a_node_crashed_at_tick_0_does_not_start_until_it_restarts():
    result, rec = recorded_run("at 0 crash 1\nat 20 restart 1\n",
                               cfg=SimConfig(seed=0, nodes=3, rounds=40, proposals=0))
    first = rec.steps[:1]
    assert [(t, k, i) for t, k, i, *_ in first] == [(0, "crash", 1)]
    assert first[0][5].node == MODEL.fresh(1, 3)
    assert [i for t, k, i, *_ in rec.steps if k == "start"] == [0, 2]
    # the others' start-up messages to it are dropped at send, and so is everything else sent
    # to it until it restarts
    assert [(t, s, d) for t, s, d, _ in rec.drops[:4]] == [(0, 0, 1), (0, 0, 1), (0, 2, 1),
                                                          (0, 2, 1)]
    assert all(t < 20 and d == 1 for t, _, d, _ in rec.drops)
    assert result.stats.dropped == len(rec.drops)
    assert not [x for x in rec.steps if x[0] < 20 and x[2] == 1 and x[1] != "crash"]
    assert [(t, k) for t, k, i, *_ in rec.steps if i == 1 and k in ("crash", "restart")] == [
        (0, "crash"), (20, "restart")]


def test_fifo_links_of_a_crashed_node_forget_their_clock():
    zab = get_model("zab")
    assert zab.network_assumption == "fifo"
    result, rec = recorded_run("at 101 crash 2\nat 250 restart 2\n", model=zab, checker=Checker())
    assert rec.link_free_after_crash is not None
    assert rec.link_free_after_crash and not [k for k in rec.link_free_after_crash if 2 in k]
    assert result.violation is None
    assert result.digest == "e26dd3893270705cd58af53a82a5f9c98d4975052aa6fb7fb2f445cd15ef33e2"


def test_no_node_events_is_the_run_it_was():
    cfg = SimConfig(seed=42, nodes=3, rounds=2000, proposals=10)
    for ev in (None, {}):
        assert Simulator(MODEL, cfg, node_events=ev).run().digest == D_42_3_2000_10


# --- the command line -----------------------------------------------------------------------------


ARGS = ["--seed", "1", "--nodes", "3", "--rounds", "400", "--proposals", "3"]


def test_cli_runs_a_crash_script_with_check(capsys, tmp_path):
    f = tmp_path / "crash.zps"
    f.write_text(CRASH_SCRIPT)
    code, out, err = run_cli(capsys, "simulate", *ARGS, "--partition-script", str(f), "--check")
    assert (code, out, err) == (EXIT_OK, D_CRASH, "")
    # the header alone gives the same run
    assert run_cli(capsys, "simulate", "--partition-script", str(f)) == (EXIT_OK, D_CRASH, "")


def test_cli_runs_the_json_form_of_a_crash_script(capsys, tmp_path):
    j = tmp_path / "crash.json"
    j.write_text(json.dumps(parse(CRASH_SCRIPT).to_json()))
    code, out, err = run_cli(capsys, "simulate", "--partition-script", str(j), "--check")
    assert (code, out, err) == (EXIT_OK, D_CRASH, "")


def test_cli_check_reports_the_early_restart_violation(capsys, tmp_path):
    f = tmp_path / "early.zps"
    f.write_text(CRASH_SCRIPT.replace(f"at {RESTART_T} restart", "at 250 restart"))
    code, out, err = run_cli(capsys, "simulate", *ARGS, "--partition-script", str(f), "--check")
    assert (code, out) == (EXIT_VIOLATION, D_EARLY_RESTART)
    assert err == ("violation: local-primary-order at tick 306: node 2 delivered 2.2:zab-2 as "
                   "epoch 2's transaction number 1\n")


def test_cli_trace_shows_crash_lost_drop_and_restart_lines(capsys, tmp_path):
    f = tmp_path / "crash.zps"
    f.write_text(CRASH_SCRIPT)
    code, out, _ = run_cli(capsys, "simulate", "--partition-script", str(f), "--trace")
    assert code == EXIT_OK and out.endswith(D_CRASH + "\n")
    lines = out.splitlines()
    crash = [x for x in lines if " crash " in x]
    assert crash == ["   101 crash     node 2  role Leading -> Looking; synced True -> False; "
                     "next_counter 1 -> 0; 5 in-flight messages lost"]
    lost = [x for x in lines if " lost " in x]
    assert len(lost) == 5 and all(x.endswith("(node 2 crashed)") for x in lost)
    assert "   101 lost      2->0 Propose(txn=1.1:zab-0) (node 2 crashed)" in lost
    drops = [x for x in lines if " drop " in x]
    assert len(drops) == 14 and all(x.endswith("(node 2 down)") for x in drops)
    assert [x for x in lines if " restart " in x] == ["   350 restart   node 2  role Looking"]


def test_cli_rejects_a_restart_of_an_up_node_with_exit_2(capsys, tmp_path):
    f = tmp_path / "bad.zps"
    f.write_text("nodes 3\nat 5 crash 1\nat 9 restart 2\n")
    code, out, err = run_cli(capsys, "simulate", *ARGS, "--partition-script", str(f), "--check")
    assert code == EXIT_USAGE and out == ""
    assert err == (f"zabmc: error: {f}:3: restart 2: node 2 is up; only a crashed node can "
                   "restart\n")


def test_cli_rejects_a_crash_outside_the_cluster_given_on_the_command_line(capsys, tmp_path):
    f = tmp_path / "bad.zps"
    f.write_text("at 5 crash 3\n")
    code, out, err = run_cli(capsys, "simulate", *ARGS, "--partition-script", str(f))
    assert code == EXIT_USAGE and out == ""
    assert err == (f"zabmc: error: {f}:1: node 3 does not exist in a cluster of 3 nodes "
                   "(ids 0..2)\n")


def test_bad_crash_script_in_a_real_process_is_one_line_without_traceback(tmp_path):
    f = tmp_path / "bad.zps"
    f.write_text("at 5 restart 1\n")
    p = subprocess.run([sys.executable, "-c", "from zabmc.cli import main; main()", "simulate",
                        *ARGS, "--partition-script", str(f), "--check"],
                       capture_output=True, timeout=120)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr == (f"zabmc: error: {f}:1: restart 1: node 1 is up; only a crashed node can "
                        "restart\n").encode()
