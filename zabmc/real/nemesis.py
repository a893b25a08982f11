"""Nemeses for a real ensemble (`zabmc real --nemesis NAME[,NAME...] --random N --seed S`).

A random schedule (zabmc.real.campaign) draws every step blindly; a nemesis aims its faults at
roles, as Jepsen's nemeses do: the leader, its followers, a new leader during synchronisation.
Who leads is only known when the schedule runs, so a nemesis schedule names servers by letters
that the runner binds from the running servers' own logs (`Ensemble.role`, the last "Peer state
changed" line) as an entry begins:

- an entry's `"bind": {"leader": "L", "others": "F"}` binds L to the running server that leads
  now (waiting up to the conformance timeout for one) and F1, F2, ... to the other servers in
  increasing id; `{"leader": "M"}` binds M alone (a new leader, found later in the schedule);
- an op's `server`, a `links` op's pairs and a text's `{L}` then name those servers; a name is
  bound once and keeps its server to the end of the schedule.

The schedule that ran, with every name replaced by the server it was bound to, is an ordinary
schedule (`RealOutcome.ran`): the campaign saves it when it fails, and `zabmc real FILE` runs
it again with the servers it names. The nemeses:

- isolate-leader: cut the leader off from every other server, write to both sides;
- split: cut the servers into a random majority and a minority (twice, differently), write to
  both sides;
- kill-leader-sync: SIGKILL a leader while a follower synchronises with it (the follower's
  QuorumPeer thread held by the newleader-ack hook after NEWLEADER, before its ACK): either the
  established leader as a restarted follower rejoins, or the new leader elected after the old
  one was killed;
- hold-sync: hold a follower's SyncThread (sync-commit or sync-append) while writes go on, change
  roles (kill or isolate the leader, or cut that follower off), then release the thread or kill
  the server holding it;
- restart-election: SIGKILL the leader (alone, with a follower, or every server) and restart at
  once, so that the servers come back into an election.

Each schedule ends as a random one does: every hold released, every link healed, every server
started, a wait until they are synchronised, and one more write. Seeded as random schedules
are (`campaign.schedule_seed`): the same seed and options give the same schedules.
"""

from __future__ import annotations

import random

from zabmc.core.errors import UsageError

from .campaign import schedule_seed
from .schedule import FORMAT, VERSION, SLOW_LIMIT

#: name -> (what it does, for --help and the docs; whether it holds threads with Byteman)
NEMESES = {
    "isolate-leader": ("cut the leader off from every other server; write to both sides",
                       False),
    "split": ("cut the servers into a random majority and minority, twice; write to both",
              False),
    "kill-leader-sync": ("SIGKILL a leader while a follower synchronises with it (held "
                         "before its NEWLEADER ACK)", True),
    "hold-sync": ("hold a follower's SyncThread across a role change (kill or isolate the "
                  "leader, or cut the follower off), then release it or kill its server", True),
    "restart-election": ("SIGKILL the leader (alone, with a follower, or every server) and "
                         "restart into an election", False),
}


def parse(text: str) -> list:
    """`--nemesis` as a list of names ("all": the five); a one-line error for any other."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    if names == ["all"]:
        return list(NEMESES)
    bad = [x for x in names if x not in NEMESES]
    if bad or not names:
        raise UsageError(f"unknown nemesis {', '.join(bad) or repr(text)} (known: "
                         f"{', '.join(NEMESES)}, or all)")
    if len(set(names)) != len(names):
        raise UsageError(f"--nemesis names {text} more than once")
    return names


def needs_hooks(names: list) -> list:
    return [x for x in names if NEMESES[x][1]]


class _Plan:
    """A schedule being written: entries, the writes' numbering, the holds to release."""

    def __init__(self, rng: random.Random, n: int):
        self.rng, self.n = rng, n
        self.entries: list = []
        self.writes = 0
        self.holds: list = []  # (name, point)
        self.limits: dict = {}

    def add(self, text: str, ops: list, pause: tuple = (200, 1500), **extra) -> dict:
        e = {"step": len(self.entries), "events": [text], "ops": ops}
        if pause:
            e["pause_ms"] = self.rng.randrange(pause[0], pause[1], 50)
        e.update(extra)
        self.entries.append(e)
        return e

    def write(self, who: str) -> tuple:
        k = self.writes
        self.writes += 1
        return ({"op": "write", "server": who, "path": f"/w-{k}", "data": f"w-{k}"},
                f"write /w-{k} to {{{who}}}")

    def hold(self, who: str, point: str) -> dict:
        self.holds.append((who, point))
        return {"op": "hold", "server": who, "point": point}

    def followers(self) -> list:
        return [f"F{k}" for k in range(1, self.n)]

    def cut_off(self, side: list) -> dict:
        """The links op that cuts every server of `side` off from every other one."""
        every = ["L"] + self.followers()
        return {"op": "links", "cut": [[a, b] for a in side for b in every if b not in side]}


def _start(p: _Plan) -> None:
    p.add("start every server", [{"op": "start", "server": s} for s in range(1, p.n + 1)]
          + [{"op": "links", "cut": []}], pause=None, **{"await": "synced"})
    op, text = p.write("L")
    p.add(f"{{L}} leads: {text}", [op], bind={"leader": "L", "others": "F"})


def _end(p: _Plan) -> None:
    ops = [{"op": "release", "server": who, "point": pt} for who, pt in p.holds]
    ops += [{"op": "links", "cut": []}]
    ops += [{"op": "start", "server": s} for s in range(1, p.n + 1)]
    ops += [{"op": "links", "cut": []}]
    p.add("release every hold, heal everything, start every server", ops, pause=None,
          **{"await": "synced"})
    op, text = p.write(p.rng.choice(["L"] + p.followers()))
    p.add(text, [op], pause=None, **{"await": "synced"})


def _isolate_leader(p: _Plan) -> None:
    rng = p.rng
    a, ta = p.write("L")
    p.add(f"cut the leader ({{L}}) off from every other server and {ta} at once",
          [p.cut_off(["L"]), a], pause=(0, 300))
    b, tb = p.write(rng.choice(p.followers()))
    p.add(f"{tb}, on the majority's side", [b], pause=(1500, 6000))
    if rng.random() < 0.5:
        p.add("SIGKILL the old leader ({L}), still cut off", [{"op": "kill", "server": "L"}])
        p.add("restart {L}, still cut off",
              [{"op": "start", "server": "L"}, p.cut_off(["L"])], pause=(500, 3000))
    c, tc = p.write("L")
    p.add(f"heal every link and {tc}", [{"op": "links", "cut": []}, c], pause=(500, 3000))


def _split(p: _Plan) -> None:
    rng = p.rng
    every = ["L"] + p.followers()
    first = None
    for _ in range(2):
        minority = sorted(rng.sample(every, (p.n - 1) // 2))
        while minority == first:  # the second split is another one
            minority = sorted(rng.sample(every, (p.n - 1) // 2))
        first = minority
        majority = [x for x in every if x not in minority]
        a, ta = p.write(rng.choice(minority))
        b, tb = p.write(rng.choice(majority))
        names = ", ".join("{" + x + "}" for x in minority)
        p.add(f"split: {names} cut off from the others; {ta}; {tb}",
              [p.cut_off(minority), a, b], pause=(1500, 6000))
    p.add("heal every link", [{"op": "links", "cut": []}], pause=(500, 2000))


def _kill_leader_sync(p: _Plan) -> None:
    rng = p.rng
    p.limits["initLimit"] = SLOW_LIMIT  # the held follower's NEWLEADER ACK may wait
    if rng.random() < 0.5:  # the established leader, as a restarted follower rejoins
        f = rng.choice(p.followers())
        p.add(f"SIGKILL follower {{{f}}}", [{"op": "kill", "server": f}])
        for _ in range(rng.randrange(1, 4)):
            a, ta = p.write("L")
            p.add(ta, [a], pause=(100, 600))
        p.add(f"restart {{{f}}} with its QuorumPeer thread held before NEWLEADER's ACK",
              [p.hold(f, "newleader-ack"), {"op": "start", "server": f},
               {"op": "links", "cut": []}], pause=(500, 2500))
        p.add("SIGKILL the leader ({L}) while it synchronises " + f"{{{f}}}",
              [{"op": "kill", "server": "L"}], pause=(500, 2500))
        p.add(f"release {{{f}}}'s QuorumPeer thread",
              [{"op": "release", "server": f, "point": "newleader-ack"}], pause=(1000, 4000))
        return
    ops = [p.hold(f, "newleader-ack") for f in p.followers()]
    a, ta = p.write("L")
    p.add(f"{ta}; hold every follower's QuorumPeer thread before its next NEWLEADER ACK",
          [a] + ops, pause=(200, 800))
    p.add("SIGKILL the leader ({L})", [{"op": "kill", "server": "L"}], pause=(1000, 3000))
    p.add("SIGKILL the new leader ({M}) while it synchronises its followers",
          [{"op": "kill", "server": "M"}], pause=(500, 2500), bind={"leader": "M"})
    p.add("release every follower's QuorumPeer thread",
          [{"op": "release", "server": f, "point": "newleader-ack"} for f in p.followers()],
          pause=(1000, 4000))


def _hold_sync(p: _Plan) -> None:
    rng = p.rng
    p.limits["syncLimit"] = SLOW_LIMIT  # the held follower is not dropped for its late ACKs
    f = rng.choice(p.followers())
    point = rng.choice(["sync-commit", "sync-append"])
    p.add(f"hold follower {{{f}}}'s SyncThread ({point})", [p.hold(f, point)], pause=(100, 500))
    for _ in range(rng.randrange(1, 4)):
        a, ta = p.write(rng.choice(["L", f]))
        p.add(ta, [a], pause=(100, 600))
    how = rng.choice(["kill the leader", "isolate the leader", "cut the follower off"])
    if how == "kill the leader":
        p.add("role change: SIGKILL the leader ({L})", [{"op": "kill", "server": "L"}],
              pause=(1500, 5000))
    elif how == "isolate the leader":
        p.add("role change: cut the leader ({L}) off", [p.cut_off(["L"])], pause=(1500, 5000))
    else:
        p.add(f"role change: cut {{{f}}} off", [p.cut_off([f])], pause=(1500, 5000))
        p.add("heal every link", [{"op": "links", "cut": []}], pause=(1500, 5000))
    b, tb = p.write(rng.choice(p.followers()))
    p.add(tb, [b], pause=(300, 1500))
    if rng.random() < 0.5:
        p.add(f"release {{{f}}}'s SyncThread", [{"op": "release", "server": f,
                                                 "point": point}], pause=(500, 2000))
    else:
        p.add(f"SIGKILL {{{f}}}, its SyncThread still held", [{"op": "kill", "server": f}],
              pause=(500, 2000))


def _restart_election(p: _Plan) -> None:
    rng = p.rng
    how = rng.choice(["the leader", "the leader and a follower", "every server"])
    who = {"the leader": ["L"], "the leader and a follower": ["L", rng.choice(p.followers())],
           "every server": ["L"] + p.followers()}[how]
    for _ in range(rng.randrange(0, 3)):
        a, ta = p.write(rng.choice(["L"] + p.followers()))
        p.add(ta, [a], pause=(50, 400))
    names = ", ".join("{" + x + "}" for x in who)
    p.add(f"SIGKILL {how} ({names})", [{"op": "kill", "server": x} for x in who],
          pause=(0, 1000))
    p.add(f"restart {names} at once", [{"op": "start", "server": x} for x in who]
          + [{"op": "links", "cut": []}], pause=(0, 800))
    a, ta = p.write(rng.choice(who))
    p.add(f"{ta}, in the election", [a], pause=(1000, 4000))


_BUILD = {"isolate-leader": _isolate_leader, "split": _split,
          "kill-leader-sync": _kill_leader_sync, "hold-sync": _hold_sync,
          "restart-election": _restart_election}


def generate(names: list, seed: int, index: int, *, servers: int = 3,
             command: str | None = None) -> dict:
    """The index-th schedule of a nemesis campaign: nemesis names[index % len(names)], its
    choices drawn from the schedule's seed. Its servers are names the runner binds."""
    name = names[index % len(names)]
    rng = random.Random(schedule_seed(seed, index))
    p = _Plan(rng, servers)
    _start(p)
    _BUILD[name](p)
    _end(p)
    out = {"format": FORMAT, "version": VERSION, "servers": servers,
           "source": {"nemesis": name, "seed": seed, "index": index}, "entries": p.entries}
    if command:
        out["source"]["command"] = command
    if p.limits:
        out["limits"] = dict(p.limits)
    return out


# --- binding names to servers as the schedule runs ----------------------------------------------

def bind(spec: dict, names: dict, roles: dict, n: int) -> str | None:
    """Bind the names of an entry's `bind` from `roles` ({server: role} of the running
    servers, as read now); a note when no server leads (the greatest id running is taken)."""
    leading = sorted(s for s, r in roles.items() if r == "leading")
    note = None
    if leading:
        lead = leading[-1]
        if len(leading) > 1:
            note = f"servers {leading} all said they lead: {lead} taken as the leader"
    else:
        up = sorted(roles) or [n]
        lead = up[-1]
        note = f"no server led: server {lead} taken as the leader"
    for key, name in spec.items():
        if key == "leader":
            names.setdefault(name, lead)
        elif key == "others":
            for k, s in enumerate([s for s in range(1, n + 1) if s != lead], start=1):
                names.setdefault(f"{name}{k}", s)
    return note


def _server(x, names: dict):
    if isinstance(x, str):
        if x not in names:
            raise UsageError(f"the schedule names server {x!r} before binding it")
        return names[x]
    return x


def concrete(entry: dict, names: dict) -> dict:
    """The entry with every name replaced by its server (names bound so far)."""
    out = {k: v for k, v in entry.items() if k != "bind"}
    ops = []
    for op in entry.get("ops", ()):
        op = dict(op)
        if "server" in op:
            op["server"] = _server(op["server"], names)
        if op["op"] == "links":
            op["cut"] = sorted({tuple(sorted((_server(a, names), _server(b, names))))
                                for a, b in op["cut"]})
            op["cut"] = [list(pr) for pr in op["cut"]]
        ops.append(op)
    out["ops"] = ops
    shown = {k: f"server {v}" for k, v in names.items()}
    out["events"] = [_fill(t, shown) for t in entry["events"]]
    return out


def _fill(text: str, shown: dict) -> str:
    for k, v in shown.items():
        text = text.replace("{" + k + "}", v)
    return text


def is_symbolic(schedule: dict) -> bool:
    return any("bind" in e for e in schedule["entries"])
