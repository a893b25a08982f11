"""What the reduced search's proviso costs, and whether the graphs it guards have cycles (#38).

Not a feature: a measurement of the reduction's proviso. It prints, for issue #19's zab depth-40
space to `--depth`, the reduced breadth-first search three ways, each in a fresh process (all at
once when `--parallel`):
- `por`: `--reduction por` as shipped: rule 6 of docs/reduction.md (a state whose kept event leads
  back to its own level or an earlier one is expanded fully) with zab's progress measure
  (models/zab/progress.py: a kept event that raises it is passed by, one that lowers it expands its
  state fully; docs/reduction.md, "The proviso and a progress measure");
- `level`: rule 6 alone, as before the measure (the model's `progress` taken away);
- `none`: no proviso at all, which is unsound in general and only shows what a proof that the
  graph has no cycle would be worth.
Then the strongly connected components (networkx) of the whole state graph of a few small spaces,
with every event: a cycle is what the proviso exists for; and how many of their events lower the
measure or leave it equal, by kind.

    python benchmarks/proviso_probe.py --depth 26
    python benchmarks/proviso_probe.py --depth 12 --no-cycles     # quick
    python benchmarks/proviso_probe.py --depth 40 --no-cycles --modes por,level --workers 2
    python benchmarks/proviso_probe.py --delivery-cost   # the measure's fast path, timed
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODES = ("por", "level", "none")
#: small spaces whose whole graph is checked for cycles: (model, ExploreConfig keywords)
CYCLE_SPACES = [("zab", {"nodes": 3, "proposals": 2}),
                ("zab", {"nodes": 2, "proposals": 1, "max_timeouts": 2, "max_heartbeats": 1,
                         "max_drops": 1})]


def _patch(mode: str, model) -> None:
    """Change the one-process search's proviso for `mode` (this process only)."""
    if mode in ("level", "none"):
        model.progress = None  # rule 6 alone (and no measure to compute without a proviso)
    if mode == "none":
        bfs = sys.modules["zabmc.explore.bfs"]
        proviso = bfs._Chunk.proviso

        def no_proviso(self, fps, new):
            proviso(self, fps, new)  # keep its bookkeeping, send nothing back
            return []

        bfs._Chunk.proviso = no_proviso


def one(mode: str, depth: int, workers: int = 1) -> dict:
    """The reduced search of the depth-40 space to `depth`, its proviso as `mode`, on `workers`
    processes (`--workers`: not for `none`, whose patch is the one-process search's)."""
    import resource

    import zabmc.explore.bfs  # noqa: F401 - the module `_patch` changes
    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.parallel import ParallelBFS
    from zabmc.explore.por import Stubborn
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.core.model import get_model

    model = get_model("zab")
    _patch(mode, model)
    bfs = sys.modules["zabmc.explore.bfs"]
    cfg = ExploreConfig(nodes=3, network="fifo", proposals=2, max_timeouts=1, depth=depth)
    env = Env(model, cfg, Checker(DEFAULT_PROPERTIES))
    st = Stubborn(env)
    t, w = time.process_time(), time.perf_counter()
    if workers > 1:
        out = ParallelBFS(env, workers=workers, reduction=st).run()
    else:
        out = bfs.BFS(env, reduction=st).run()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, reaped
    return {"mode": mode, "distinct": out.distinct, "generated": out.generated, "full": st.full,
            "reduced": st.reduced, "last": out.per_depth[-1], "violations": len(out.violations),
            "cpu": time.process_time() - t + kids.ru_utime + kids.ru_stime,
            "wall": time.perf_counter() - w,
            "rss_mib": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                           kids.ru_maxrss) / 1024}


def delivery_cost(walks: int = 1000, rounds: int = 3) -> dict:
    """What zab's measure costs a delivery: `Model.progress_delivered` (the search's fast path)
    against the whole measure of both states (`Model.progress`), on the deliveries of `walks`
    seeded random walks of the depth-40 space, in rounds, each path timed in turn (CPU
    microseconds a delivery; the first round starts with the memos empty)."""
    import random

    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.core.events import Deliver
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.core.model import get_model

    m = get_model("zab")
    env = Env(m, ExploreConfig(network="fifo", nodes=3, proposals=2, max_timeouts=1, depth=40),
              Checker(DEFAULT_PROPERTIES))
    rng, pairs = random.Random(1), []
    for _ in range(walks):
        s, _ = env.initial()
        for _ in range(40):
            succ = env.successors(s)
            if not succ:
                break
            pairs += [(s, ev, s2) for ev, s2, _ in succ if type(ev) is Deliver]
            s = rng.choice(succ)[1]

    def fast():
        f = m.progress_delivered
        for s, ev, s2 in pairs:
            f(s.nodes, s.net, ev[0], ev[1], ev[2], s2.nodes, s2.net)

    def whole():
        p = m.progress
        for s, ev, s2 in pairs:
            p(s2.nodes, s2.net) - p(s.nodes, s.net)

    out: dict = {"deliveries": len(pairs), "fast": [], "whole": []}
    for _ in range(rounds):
        for name, fn in (("fast", fast), ("whole", whole)):
            t = time.process_time()
            fn()
            out[name].append((time.process_time() - t) / len(pairs) * 1e6)
    return out


def cycles(model: str, kw: dict) -> dict:
    """The whole state graph of a small space, every event: its states, events and cycles, and
    how many events leave the reduced search's progress measure equal or lower it
    (zabmc/explore/progress.py), by the delivered message's kind (its first field) or the
    event's kind."""
    import networkx as nx

    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.progress import Progress
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.core.model import get_model

    env = Env(get_model(model), ExploreConfig(network="fifo", depth=1000, **kw),
              Checker(DEFAULT_PROPERTIES))
    direction = Progress.of_model(env.model, env.checker).direction
    s0, _ = env.initial()
    ids = {env.fingerprint(s0): 0}
    todo, g, by, events = [s0], nx.DiGraph(), Counter(), 0
    names = _message_names()
    g.add_node(0)
    while todo:
        s = todo.pop()
        i = ids[env.fingerprint(s)]
        for ev, s2, _ in env.successors(s):
            events += 1
            d = direction(s, ev, s2)
            if d <= 0:
                by["equal" if d == 0 else "lower", model_msg(ev, names)] += 1
            fp = env.fingerprint(s2)
            j = ids.get(fp)
            if j is None:
                j = ids[fp] = len(ids)
                todo.append(s2)
            g.add_edge(i, j)
    comps = [c for c in nx.strongly_connected_components(g) if len(c) > 1]
    return {"states": len(ids), "events": events, "edges": g.number_of_edges(),
            "cyclic_components": len(comps),
            "self_loops": nx.number_of_selfloops(g), "not_raised": by}


def _message_names() -> dict:
    """zab's message kinds by their value (labels only: no handler runs here)."""
    from models.zab import handlers

    return {getattr(handlers, k): k for k in ("VOTE", "LFL", "CEPOCH", "NEWEPOCH", "ACKEPOCH",
                                              "NEWLEADER", "ACKLEADER", "COMMITLEADER",
                                              "PROPOSE", "ACK", "COMMIT")}


def model_msg(ev, names: dict) -> str:
    """The delivered message's kind by name (`names`, from `_message_names`), or the event's
    kind."""
    if type(ev).__name__ == "Deliver":
        return "deliver " + names.get(ev.msg[0], str(ev.msg[0]))
    return type(ev).__name__.lower()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=26)
    ap.add_argument("--no-cycles", action="store_true", help="skip the cycle check")
    ap.add_argument("--parallel", action="store_true", help="run the three searches at once")
    ap.add_argument("--modes", default=",".join(MODES),
                    help=f"the searches to run, in order (of {', '.join(MODES)})")
    ap.add_argument("--workers", type=int, default=1,
                    help="processes per search (not with the mode none)")
    ap.add_argument("--delivery-cost", action="store_true",
                    help="only time zab's fast path for a delivery against the whole measure")
    ap.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)  # a child's own run
    args = ap.parse_args(argv)
    if args.delivery_cost:
        r = delivery_cost()
        print(f"{r['deliveries']:,} deliveries of random walks; CPU µs a delivery, per round "
              "(the first with the memos empty)")
        for name in ("fast", "whole"):
            print(f"{name}: " + ", ".join(f"{x:.2f}" for x in r[name]))
        print("whole / fast, per round: " + ", ".join(
            f"{w / f:.1f}x" for w, f in zip(r["whole"], r["fast"])))
        return 0
    modes = [args.one] if args.one else args.modes.split(",")
    if not set(modes) <= set(MODES) or (args.workers > 1 and "none" in modes):
        ap.error(f"--modes takes some of {', '.join(MODES)}; none only with --workers 1")
    if args.one:
        print(json.dumps(one(args.one, args.depth, args.workers)))
        return 0
    cmd = [sys.executable, __file__, "--depth", str(args.depth), "--workers", str(args.workers),
           "--one"]
    if args.parallel:
        procs = [subprocess.Popen(cmd + [m], stdout=subprocess.PIPE, text=True) for m in modes]
        outs = [p.communicate()[0] for p in procs]
    else:
        outs = [subprocess.run(cmd + [m], stdout=subprocess.PIPE, text=True, check=True).stdout
                for m in modes]
    print(f"zab --nodes 3 --proposals 2 --max-timeouts 1 --reduction por, to depth {args.depth}, "
          f"{args.workers} worker(s) each")
    print("| proviso | distinct | last level | expanded in full / in part | CPU s | wall s | "
          "peak RSS of its largest process, MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for text in outs:
        r = json.loads(text)
        print(f"| {r['mode']} | {r['distinct']:,} | {r['last']:,} | {r['full']:,} / "
              f"{r['reduced']:,} | {r['cpu']:.1f} | {r['wall']:.1f} | {r['rss_mib']:,.0f} |")
    if not args.no_cycles:
        for model, kw in CYCLE_SPACES:
            r = cycles(model, kw)
            print(f"{model} {kw}: {r['states']:,} states, {r['events']:,} events "
                  f"({r['edges']:,} distinct edges), "
                  f"{r['cyclic_components']} cyclic components, {r['self_loops']} self-loops")
            print("  events that do not raise the progress measure: " + ", ".join(
                f"{how} {what} {n:,}" for (how, what), n in sorted(r["not_raised"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
