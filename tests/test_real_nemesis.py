"""`zabmc real --nemesis` without servers (#63 item 6): the nemesis schedules are seeded, their
letters bind to the servers the runner reads, the schedule that ran is an ordinary one that says
the command that made it, and bad option combinations are one line and exit 2.

The binding cases are hand-computed (a leader and the other servers in increasing id); the
schedules' shapes are zabmc's own and only detect change.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from zabmc.core.errors import UsageError
from zabmc.real import nemesis, schedule
from zabmc.real.nemesis import NEMESES

ALL = list(NEMESES)


def _ran(s: dict, roles_at: list) -> tuple[dict, dict]:
    """What the runner does with `s`: each entry's `bind` read from the next roles of
    `roles_at`, every entry made concrete; the schedule that ran, and the names bound."""
    names: dict = {}
    ran = []
    roles = iter(roles_at)
    for e in s["entries"]:
        if e.get("bind"):
            nemesis.bind(e["bind"], names, next(roles), s["servers"])
        ran.append(nemesis.concrete(e, names))
    return schedule.validate(json.loads(json.dumps(dict(s, entries=ran)))), names


def test_the_same_seed_gives_the_same_schedules():
    for k in range(10):
        a = nemesis.generate(ALL, 5, k)
        assert a == nemesis.generate(ALL, 5, k)
        assert a["source"]["nemesis"] == ALL[k % 5]  # the nemeses in turn
    assert nemesis.generate(ALL, 5, 0) != nemesis.generate(ALL, 6, 0)
    assert nemesis.generate(["split"], 5, 0) != nemesis.generate(["split"], 5, 1)


def test_every_nemesis_schedule_binds_to_an_ordinary_schedule():
    for name in ALL:
        for k in range(8):
            s = nemesis.generate([name], 1, k, command="zabmc real --nemesis x")
            assert nemesis.is_symbolic(s)
            ran, names = _ran(s, [{1: "following", 2: "leading", 3: "following"},
                                  {1: "leading", 3: "following"}])
            assert not nemesis.is_symbolic(ran)
            assert names["L"] == 2 and names["F1"] == 1 and names["F2"] == 3
            assert ran["source"] == {"nemesis": name, "seed": 1, "index": k,
                                     "command": "zabmc real --nemesis x"}
            assert all("{" not in t for e in ran["entries"] for t in e["events"])
            assert ran["entries"][-2]["await"] == "synced"


def test_isolate_leader_cuts_the_bound_leader_off():
    s = nemesis.generate(["isolate-leader"], 1, 0)
    ran, _ = _ran(s, [{1: "following", 2: "following", 3: "leading"}])
    e = ran["entries"][2]
    assert e["events"][0].startswith("cut the leader (server 3) off from every other server")
    assert e["ops"][0] == {"op": "links", "cut": [[1, 3], [2, 3]]}
    assert e["ops"][1]["op"] == "write" and e["ops"][1]["server"] == 3


def test_a_later_leader_binds_when_its_entry_runs():
    """kill-leader-sync, seed 1: L is 3; after 3's SIGKILL server 1 leads, and M is 1."""
    s = nemesis.generate(["kill-leader-sync"], 1, 0)
    ran, names = _ran(s, [{1: "following", 2: "following", 3: "leading"},
                          {1: "leading", 2: "following"}])
    assert names == {"L": 3, "F1": 1, "F2": 2, "M": 1}
    kills = [o["server"] for e in ran["entries"] for o in e["ops"] if o["op"] == "kill"]
    assert kills == [3, 1]
    assert ran["limits"] == {"initLimit": schedule.SLOW_LIMIT}


def test_no_leader_binds_the_greatest_running_server_and_says_so():
    names: dict = {}
    note = nemesis.bind({"leader": "L", "others": "F"}, names, {1: "looking", 2: "looking"}, 3)
    assert names == {"L": 2, "F1": 1, "F2": 3} and note == ("no server led: server 2 taken as "
                                                            "the leader")
    with pytest.raises(UsageError, match="names server 'M' before binding it"):
        nemesis.concrete({"events": ["x"], "ops": [{"op": "kill", "server": "M"}]}, names)


def test_an_ordinary_schedule_is_unchanged_by_binding():
    from zabmc.real import campaign
    s = campaign.generate(3, 0)
    assert [nemesis.concrete(e, {}) for e in s["entries"]] == s["entries"]


def test_the_names():
    assert nemesis.parse("all") == ALL
    assert nemesis.parse("split, hold-sync") == ["split", "hold-sync"]
    assert nemesis.needs_hooks(ALL) == ["kill-leader-sync", "hold-sync"]
    with pytest.raises(UsageError, match="unknown nemesis dice"):
        nemesis.parse("split,dice")


def test_the_command_is_recorded():
    from zabmc.cli.real import campaign_schedule, command_line
    c = {"seed": 4, "servers": 3, "steps": 12, "nemesis": ALL, "release": "3.9.5",
         "zookeeper": None, "global_sessions": False, "out": "out dir"}
    cmd = "zabmc real --nemesis all --random 6 --seed 4 --release 3.9.5 --out 'out dir'"
    assert command_line(6, c) == cmd
    assert campaign_schedule(2, 6, c, True)["source"]["command"] == cmd
    random = dict(c, nemesis=[], release=None, steps=5)
    assert campaign_schedule(0, 2, random, True)["source"] == {
        "random": {"seed": 4, "index": 0, "steps": 5},
        "command": "zabmc real --random 2 --seed 4 --steps 5 --out 'out dir'"}


@pytest.mark.parametrize("args,words", [
    (["--nemesis", "split"], "--nemesis goes with --random N"),
    (["--nemesis", "dice", "--random", "2"], "unknown nemesis dice"),
    (["--nemesis", "split", "--random", "2", "--steps", "4"], "--steps is for random schedules"),
    (["--nemesis", "split,split", "--random", "2"], "more than once"),
    (["--nemesis", "all", "x.json"], "--nemesis goes with --random N"),
])
def test_bad_combinations_are_one_line_and_exit_2(args, words):
    r = subprocess.run([sys.executable, "-m", "zabmc", "real", *args], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and words in r.stderr, r.stderr


def test_the_saved_schedule_is_read_back_as_an_ordinary_schedule(tmp_path):
    """What a failing nemesis run saves (`ran_schedule`: the entries as they ran, the binding in
    its source) is a schedule file `zabmc real FILE` reads."""
    from types import SimpleNamespace

    from zabmc.cli.real import _load_source, ran_schedule, save_schedule_file
    s = nemesis.generate(["hold-sync"], 2, 0, command="zabmc real --nemesis hold-sync "
                                                      "--random 1 --seed 2 --out .")
    ran, names = _ran(s, [{1: "leading", 2: "following", 3: "following"}])
    out = SimpleNamespace(ran=ran["entries"], bound=names)
    path = tmp_path / "saved.schedule.json"
    save_schedule_file(ran_schedule(s, out), str(path), "--out")
    back, what = _load_source(str(path))
    assert what == "schedule" and back["entries"] == ran["entries"]
    assert back["source"]["bound"] == {"L": 1, "F1": 2, "F2": 3}
    assert back["source"]["command"] == "zabmc real --nemesis hold-sync --random 1 --seed 2 --out ."
    assert back["limits"] == {"syncLimit": schedule.SLOW_LIMIT}
