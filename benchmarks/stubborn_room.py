"""How much the definition of a stubborn set leaves to reduce in zk's states with a fault left
(issue #64, item 3).

Not a feature: a measurement that decides whether item 3 is worth building. zabmc's reduction of
the zk models (`--reduction por`, docs/reduction.md) builds its sets from nodes and expands every
state with a timeout, drop or crash left fully. This script asks what *any* stubborn set could do
there: for three nodes, one proposal and one fault of each kind, it runs to `--depth`

- the full breadth-first search (the reference count);
- `--reduction por` as shipped;
- the *room*: a breadth-first search that, at each state with the fault left and two or more
  enabled events, expands a smallest set of its events that passes the definition by brute force
  (`zabmc.explore.por.counter_run`: every run of up to `--runs` events that avoids the set keeps
  a key event enabled and commutes with each of the set's events), and holds no visible event (a
  proposal, or a step that changes the properties' ghost state or reports a violation); with rule
  6's proviso (a kept event that reaches a state seen before expands the state fully). Every other
  state is expanded fully.

The room is an estimate, not a bound: sets that pass runs of a bounded length may fail longer
ones, the visibility test is weaker than the shipped reduction's refusals, and choices of smaller
sets need not give fewer states. All three errs make the room look larger than it is.

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


def room(bound: str, where: int, depth: int, runs: int) -> dict:
    """The room search (module docstring): distinct states, states reduced, and the kinds of
    the sets it kept (`kind` of each event, a delivery's message named)."""
    from models.zk.state import MSG_NAMES

    env = _env(bound, depth)
    fp = env.fingerprint
    s0, _ = env.initial()
    seen, level, memo = {fp(s0)}, [s0], {}
    reduced, kept = 0, Counter()
    for _ in range(depth):
        nxt = []
        for s in level:
            events = env.events(s)
            keep = None
            if s.budgets[where] > 0 and len(events) > 1:
                quiet = [e for e in events if not _visible(env, s, e)]
                keep = smallest(env, s, quiet, runs, memo) if quiet else None
                if keep is not None and len(keep) == len(events):
                    keep = None
            if len(memo) > 1_000_000:
                memo.clear()
            succ = [env.successor(s, e)[1] for e in (keep or events)]
            if keep is not None and any(fp(t) in seen for t in succ):  # rule 6
                keep, succ = None, [env.successor(s, e)[1] for e in events]
            if keep is not None:
                reduced += 1
                kept[" + ".join(sorted(
                    f"deliver {MSG_NAMES[e.msg[0]]}" if e.kind == "deliver" else
                    e.label[0] if e.kind == "action" else e.kind for e in keep))] += 1
            for t in succ:
                f = fp(t)
                if f not in seen:
                    seen.add(f)
                    nxt.append(t)
        level = nxt
    return {"distinct": len(seen), "reduced": reduced, "kept": kept.most_common(4)}


def table(depth: int, runs: int, rows: list, cpu: float) -> str:
    out = [HEADING, "",
           f"`python benchmarks/stubborn_room.py --depth {depth} --write` at `{commit()}`: model "
           f"`zk`, three nodes, one proposal, FIFO links, to depth {depth}; the room's sets are "
           f"checked on every run of up to {runs} events ({cpu:.0f} CPU s in all). Distinct "
           "states:", "",
           "| left in the budget | full search | `--reduction por` | the room | fewer than full "
           "| states the room reduces | its sets, most often |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for name, full, por, r in rows:
        sets = "; ".join(f"{k} ({c})" for k, c in r["kept"]) or "none"
        out.append(f"| {name} | {full:,} | {por:,} | {r['distinct']:,} | "
                   f"{100 * (full - r['distinct']) / full:.1f}% | {r['reduced']:,} | {sets} |")
    out += ["", "The room reduces only states with the fault left; `--reduction por` reduces "
            "only the others. The sets it keeps with a timeout left are a delivery to a "
            "follower in synchronisation (a DIFF's SYNC; an UPTODATE) whose effect `shutdown` "
            "undoes when the follower's own timeout comes first (models/zk/handlers.py "
            "`_on_sync`, `_on_uptodate`, `shutdown`), in states where no other node's action "
            "reads what it changes; with a drop left, such a delivery with the drop of the same "
            "message. zabmc's sets are made of nodes, so they cannot hold a delivery without its "
            "node's timeout; the room is what sets of events could add there, an estimate that "
            "errs upwards (docs/reduction.md, \"What a reduction with faults left would "
            "need\").", ""]
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
        rows.append((name, full, por, room(bound, where, a.depth, a.runs)))
        print(name, rows[-1][1:], flush=True)
    text = table(a.depth, a.runs, rows, time.process_time() - t)
    write_section(REPORT if a.write else None, HEADING, text, "# Benchmarks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
