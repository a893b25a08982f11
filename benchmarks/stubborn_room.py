"""How much the definition of a stubborn set leaves to reduce in zk's states with a fault left
(issue #64, item 3).

Not a feature: a measurement of what is left to reduce. zabmc's reduction of the zk models
(`--reduction por`, docs/reduction.md) builds its sets from nodes, and where no set of nodes will
do (every state with a timeout left), keeps a delivery that its follower's leaving undoes, if
there is one; with a drop or a crash left it expands the state fully. This script asks what *any*
stubborn set could do there: for three nodes, one proposal and one fault of each kind, it runs to `--depth`

- the full breadth-first search (the reference count);
- `--reduction por` as shipped;
- `--reduction por` with the *room* added: a breadth-first search that takes the shipped
  reduction's set where it has one, and at each other state with the fault left and two or more
  enabled events expands a smallest set of its events that passes the definition by brute force
  (`zabmc.explore.por.counter_run`: every run of up to `--runs` events that avoids the set keeps
  a key event enabled and commutes with each of the set's events), and holds no visible event (a
  proposal, or a step that changes the properties' ghost state or reports a violation); with rule
  6's proviso as the search decides it (a kept event that reaches a state of its own level or an
  earlier one expands the state fully). Every other state is expanded fully. The same loop without
  the room must count what the search counts, or the script stops.

The room is an estimate, not a bound: sets that pass runs of a bounded length may fail longer
ones, the visibility test is weaker than the shipped reduction's refusals, and choices of smaller
sets need not give fewer states. The first two make the room look larger than it is; the third
can go either way.

    python benchmarks/stubborn_room.py --depth 16 --write
    python benchmarks/stubborn_room.py --depth 10             # quick, prints only
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import commit, write_section  # noqa: E402

#: (what is left, the ExploreConfig bound, the budget's index in a state's `budgets`)
FAULTS = (("one timeout", "max_timeouts", 1), ("one drop", "max_drops", 0),
          ("one crash", "max_crashes", 4))
HEADING = "## Partial-order reduction with a fault left: the room (issue #64)"
REPORT = ROOT / "reports" / "benchmarks.md"


def _env(bound: str, depth: int):
    from zabmc.core.model import get_model
    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker

    cfg = ExploreConfig(network="fifo", nodes=3, proposals=1, depth=depth, **{bound: 1})
    return Env(get_model("zk"), cfg, Checker(DEFAULT_PROPERTIES))


def searched(bound: str, depth: int, por: bool) -> int:
    """Distinct states of the full search, or of `--reduction por`, to `depth`."""
    from zabmc.explore.bfs import BFS
    from zabmc.explore.por import Stubborn

    env = _env(bound, depth)
    out = BFS(env, **({"reduction": Stubborn(env)} if por else {})).run()
    return out.distinct


def smallest(env, s, events, runs: int, memo: dict):
    """A smallest proper subset of `events` (enabled at `s`, none visible) that passes
    `counter_run`, or None."""
    from zabmc.explore.por import counter_run

    for k in range(1, len(events)):
        for keep in itertools.combinations(events, k):
            if counter_run(env, s, keep, runs, memo) is None:
                return keep
    return None


def _visible(env, s, ev) -> bool:
    _, t, bad = env.successor(s, ev)
    return ev.kind == "propose" or bad is not None or t.ghost != s.ghost


def room(bound: str, where: int, depth: int, runs: int, add: bool = True) -> dict:
    """`--reduction por` as shipped, with (`add`) the room added in the states it expands fully
    with the fault left (module docstring): distinct states, the states the room reduces, and the
    kinds of the sets it kept (a delivery by its message). Rule 6 as the search decides it: a
    state whose kept events reach a state of its own level or an earlier one is expanded fully.
    Without `add` it is a second implementation of the shipped reduction, and must count as the
    search does (`main` compares them)."""
    from models.zk.state import MSG_NAMES
    from zabmc.explore.por import Expansion, Stubborn

    env = _env(bound, depth)
    fp, por = env.fingerprint, Stubborn(env)
    s0, _ = env.initial()
    seen, level, memo = {fp(s0): 0}, [s0], {}
    reduced, kept = 0, Counter()
    for d in range(depth):
        nxt = []
        for s in level:
            x = Expansion(env, s)
            events, mine = x.events, False
            picked = por.choose(s, x)
            keep = [events[i] for i in picked] if picked is not None else None
            if keep is None and add and s.budgets[where] > 0 and len(events) > 1:
                quiet = [e for e in events if not _visible(env, s, e)]
                keep = smallest(env, s, quiet, runs, memo) if quiet else None
                mine = keep is not None
            if len(memo) > 1_000_000:
                memo.clear()
            ends = [env.successor(s, e)[1] for e in (keep or events)]
            if keep is not None and any(seen.get(fp(t), d + 1) <= d for t in ends):  # rule 6
                keep, mine, ends = None, False, [env.successor(s, e)[1] for e in events]
            if mine:
                reduced += 1
                kept[" + ".join(sorted(
                    f"deliver {MSG_NAMES[e.msg[0]]}" if e.kind == "deliver" else
                    e.label[0] if e.kind == "action" else e.kind for e in keep))] += 1
            for t in ends:
                f = fp(t)
                if f not in seen:
                    seen[f] = d + 1
                    nxt.append(t)
        level = nxt
    return {"distinct": len(seen), "reduced": reduced, "kept": kept.most_common(4)}


def table(depth: int, runs: int, rows: list, cpu: float) -> str:
    out = [HEADING, "",
           f"`python benchmarks/stubborn_room.py --depth {depth} --write` at `{commit()}`: model "
           f"`zk`, three nodes, one proposal, FIFO links, to depth {depth}; the room's sets are "
           f"checked on every run of up to {runs} events ({cpu:.0f} CPU s in all). Distinct "
           "states:", "",
           "| left in the budget | full search | `--reduction por` | with the room added | fewer "
           "than `por` | states the room reduces | its sets, most often |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for name, full, por, r in rows:
        sets = "; ".join(f"{k} ({c})" for k, c in r["kept"]) or "none"
        out.append(f"| {name} | {full:,} | {por:,} | {r['distinct']:,} | "
                   f"{100 * (por - r['distinct']) / por:.1f}% | {r['reduced']:,} | {sets} |")
    out += ["", "`--reduction por` was counted twice, by the search and by this script's own "
            "loop (its choice of sets, rule 6 as the search decides it), and the two agree; the "
            "room is added in that loop to the states the shipped reduction expands fully with "
            "the fault left. The shipped reduction keeps, where no set of nodes will do and no "
            "drop or crash is left, a delivery that its follower's leaving undoes "
            "(docs/reduction.md, \"A delivery that leaving undoes\"); the room's sets are what "
            "is left beyond it: with a timeout left, mostly a delivery to a leader, or a follower's "
            "delivery together with the timeouts; with a drop left, a SyncThread's write (`log`) "
            "alone, or a delivery with the drop of the same message; with a crash left, the "
            "crash with the deliveries to its node. The room is an estimate, not a bound: runs "
            "of three events may miss a set's refutation and the visibility test is weaker than "
            "the shipped refusals, which both make it look larger.", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=16, help="search depth (default 16)")
    ap.add_argument("--runs", type=int, default=3,
                    help="length of the runs each set is checked on (default 3)")
    ap.add_argument("--write", action="store_true", help=f"write the section into {REPORT}")
    a = ap.parse_args(argv)
    t, rows = time.process_time(), []
    for name, bound, where in FAULTS:
        full, por = searched(bound, a.depth, False), searched(bound, a.depth, True)
        again = room(bound, where, a.depth, a.runs, add=False)["distinct"]
        if again != por:
            sys.exit(f"the second implementation of --reduction por counts {again:,} states, the "
                     f"search {por:,}: the room would be measured against the wrong base")
        rows.append((name, full, por, room(bound, where, a.depth, a.runs)))
        print(name, rows[-1][1:], flush=True)
    text = table(a.depth, a.runs, rows, time.process_time() - t)
    write_section(REPORT if a.write else None, HEADING, text, "# Benchmarks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
