"""Seeded random fault schedules for a real ensemble (`zabmc real --random N --seed S`).

Each schedule starts every server and waits until they are synchronised, then takes `steps`
random faults and writes, each followed by a random pause (the schedule's own timing: 0.2 to
1.5 s), then heals every link, releases every hold, starts every server, waits until they are
synchronised again and writes once more. The hook points of zabmc.real.hooks are among the random
choices (hold a server's SyncThread, later release it or kill the server). A schedule is a plain
schedule file: a failing one is saved and `zabmc real FILE` runs it again.
"""

from __future__ import annotations

import random

from .schedule import FORMAT, VERSION


def schedule_seed(seed: int, index: int) -> int:
    """The seed of the index-th schedule of a campaign (stable across versions of Python)."""
    return (seed * 1_000_003 + index * 7919) % (1 << 63)


def _choices(n: int, pairs: list, up: set, cut: set, held: set, hooks: bool) -> list:
    """The kinds of step a random schedule may take next, with their weights."""
    choices = [("write", 4)]
    if any(p not in cut for p in pairs):
        choices.append(("cut", 2))
    if cut:
        choices.append(("heal", 2))
    if up:
        choices.append(("kill", 1.5))
    if held & up:  # a held SyncThread matters when its server dies holding it
        choices.append(("kill-held", 2))
    if len(up) < n:
        choices.append(("start", 2))
    if hooks and up - held:
        choices.append(("hold", 1))
    if hooks and held:
        choices.append(("release", 1))
    return choices


def generate(seed: int, index: int, *, servers: int = 3, steps: int = 12,
             hooks: bool = True) -> dict:
    rng = random.Random(schedule_seed(seed, index))
    n = servers
    up = set(range(1, n + 1))
    cut: set = set()
    held: set = set()
    writes = 0
    entries = [{"step": 0, "events": ["start every server"],
                "ops": [{"op": "start", "server": s} for s in range(1, n + 1)]
                + [{"op": "links", "cut": []}], "await": "synced"}]

    def links():
        return {"op": "links", "cut": [list(p) for p in sorted(cut)]}

    pairs = [(a, b) for a in range(1, n + 1) for b in range(a + 1, n + 1)]
    for k in range(1, steps + 1):
        choices = _choices(n, pairs, up, cut, held, hooks)
        what = rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
        ops: list = []
        if what == "write":
            s = rng.choice(sorted(up) or list(range(1, n + 1)))
            ops.append({"op": "write", "server": s, "path": f"/w-{writes}", "data": f"w-{writes}"})
            text = f"write /w-{writes} to server {s}"
            writes += 1
        elif what == "cut":
            p = rng.choice([p for p in pairs if p not in cut])
            cut.add(p)
            ops.append(links())
            text = f"cut the link between servers {p[0]} and {p[1]}"
        elif what == "heal":
            p = rng.choice(sorted(cut))
            cut.discard(p)
            ops.append(links())
            text = f"heal the link between servers {p[0]} and {p[1]}"
        elif what in ("kill", "kill-held"):
            s = rng.choice(sorted(up if what == "kill" else held & up))
            up.discard(s)
            held.discard(s)
            ops.append({"op": "kill", "server": s})
            text = f"SIGKILL server {s}"
        elif what == "start":
            s = rng.choice(sorted(set(range(1, n + 1)) - up))
            up.add(s)
            ops += [{"op": "start", "server": s}, links()]
            text = f"restart server {s}"
        elif what == "hold":
            s = rng.choice(sorted(up - held))
            held.add(s)
            ops.append({"op": "hold", "server": s, "point": "sync-commit"})
            text = f"hold server {s}'s SyncThread before it flushes"
        else:
            s = rng.choice(sorted(held))
            held.discard(s)
            ops.append({"op": "release", "server": s, "point": "sync-commit"})
            text = f"release server {s}'s SyncThread"
        entries.append({"step": k, "events": [text], "ops": ops,
                        "pause_ms": rng.randrange(200, 1500, 50)})
    end = [{"op": "release", "server": s, "point": "sync-commit"} for s in sorted(held)]
    end += [{"op": "links", "cut": []}]
    end += [{"op": "start", "server": s} for s in range(1, n + 1) if s not in up]
    end += [{"op": "links", "cut": []}]
    entries.append({"step": steps + 1, "events": ["heal everything, start every server"],
                    "ops": end, "await": "synced"})
    s = rng.randrange(1, n + 1)
    entries.append({"step": steps + 2, "events": [f"write /w-{writes} to server {s}"],
                    "ops": [{"op": "write", "server": s, "path": f"/w-{writes}",
                             "data": f"w-{writes}"}], "await": "synced"})
    return {"format": FORMAT, "version": VERSION, "servers": n,
            "source": {"random": {"seed": seed, "index": index, "steps": steps}},
            "entries": entries}
