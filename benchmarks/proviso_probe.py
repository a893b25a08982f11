"""What the reduced search's proviso costs, and whether the graphs it guards have cycles (#38).

Not a feature: a measurement for the next step of the reduction. It prints, for issue #19's zab
depth-40 space to `--depth`, the reduced breadth-first search four ways, each in a fresh process
(all at once when `--parallel`):
- `por`: `--reduction por` as shipped (docs/reduction.md, rule 6: a state whose kept event leads
  back to its own level or an earlier one is expanded fully);
- `measure`: the proviso looks only at kept events that change neither the budgets nor the ghost
  state. Those two never decrease along an event, so a cycle of the reduced graph is made of events
  that change neither, and this is sound; it shows what that measure excuses;
- `checked`: a finer progress measure over zab's nodes and messages (`zab_measure`), checked on
  every kept event instead of proved: an event that raises it is on no cycle, and the proviso
  skips it; a state with a kept event that lowers it is expanded fully, whatever the event's
  level. Sound: a cycle of the reduced graph either has an event that lowers the measure, whose
  state is expanded fully, or leaves it equal all round, and then its edge back to an earlier
  level is one the proviso sees. It shows what a measure would excuse, and what checking it costs;
- `none`: no proviso at all, which is unsound in general and only shows what a proof that the
  graph has no cycle would be worth.
Then the strongly connected components (networkx) of the whole state graph of a few small spaces,
with every event: a cycle is what the proviso exists for; and the events there that a candidate
progress measure over zab's nodes (`node_measure`) does not raise.

    python benchmarks/proviso_probe.py --depth 26
    python benchmarks/proviso_probe.py --depth 12 --no-cycles     # quick
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

from models.common.state import FOLLOWING, LEADING, LOOKING  # noqa: E402
from models.zab.state import (  # noqa: E402
    ACK, ACKEPOCH, ACKLEADER, CEPOCH, COMMIT, COMMITLEADER, LFL, NEWEPOCH, NEWLEADER, PROPOSE, VOTE)
from zabmc.explore.events import CRASHES, DROPS, HEARTBEATS, MADE, TIMEOUTS  # noqa: E402

MODES = ("por", "measure", "checked", "none")
#: small spaces whose whole graph is checked for cycles: (model, ExploreConfig keywords)
CYCLE_SPACES = [("zab", {"nodes": 3, "proposals": 2}),
                ("zab", {"nodes": 2, "proposals": 1, "max_timeouts": 2, "max_heartbeats": 1,
                         "max_drops": 1})]


def _patch(mode: str) -> None:
    """Change the one-process search's proviso for `mode` (this process only)."""
    bfs = sys.modules["zabmc.explore.bfs"]
    if mode == "none":
        proviso = bfs._Chunk.proviso

        def no_proviso(self, fps, new):
            proviso(self, fps, new)  # keep its bookkeeping, send nothing back
            return []

        bfs._Chunk.proviso = no_proviso
    elif mode == "measure":
        offer_reduced, offer = bfs._Chunk.offer_reduced, bfs._Chunk.offer

        def offer_reduced_keyed(self, pi, s):
            self.parent_key = (s.budgets[:5], s.ghost)
            return offer_reduced(self, pi, s)

        def offer_filtered(self, pi, items, track=False, got=None):
            if not track:
                return offer(self, pi, items, track, got)
            key = self.parent_key
            kept = list(items)
            raising = {ei for ei, (_, s2, _) in kept if (s2.budgets[:5], s2.ghost) != key}
            before = len(self.edges)
            offer(self, pi, kept, track, got)  # one edge per kept event, in order
            # an event that raises the measure is on no cycle: the proviso need not see it
            self.edges[before:] = [e for (ei, _), e in zip(kept, self.edges[before:])
                                   if ei not in raising]

        bfs._Chunk.offer_reduced = offer_reduced_keyed
        bfs._Chunk.offer = offer_filtered
    elif mode == "checked":
        offer_reduced, offer, proviso = (bfs._Chunk.offer_reduced, bfs._Chunk.offer,
                                         bfs._Chunk.proviso)

        names = _message_names()

        def offer_reduced_measured(self, pi, s):
            self.parent_measure = zab_measure(s)
            return offer_reduced(self, pi, s)

        def offer_checked(self, pi, items, track=False, got=None):
            if not track:
                return offer(self, pi, items, track, got)
            kept = list(items)
            m = self.parent_measure
            before = len(self.edges)
            offer(self, pi, kept, track, got)  # one edge per kept event, in order
            edges = []
            for (_, (ev, s2, _)), e in zip(kept, self.edges[before:]):
                m2 = zab_measure(s2)
                if m2 > m:
                    continue  # on no cycle
                if m2 < m:
                    self.__dict__.setdefault("lowered", set()).add(pi)
                    CHECKED["lowering"] += 1
                    what = model_msg(ev, names)
                    CHECKED["by"][what] = CHECKED["by"].get(what, 0) + 1
                edges.append(e)
            self.edges[before:] = edges

        def proviso_checked(self, fps, new):
            lowered = self.__dict__.pop("lowered", set())
            rest = {pi: self.reduced[pi] for pi in lowered}  # `proviso` clears `reduced`
            pending = proviso(self, fps, new)
            sent = {p[0] for p in pending}
            pending += [(pi,) + rest[pi] for pi in rest if pi not in sent]
            CHECKED["forced"] += len(set(rest) - sent)
            return sorted(pending, key=lambda p: p[0])

        bfs._Chunk.offer_reduced = offer_reduced_measured
        bfs._Chunk.offer = offer_checked
        bfs._Chunk.proviso = proviso_checked


#: the `checked` mode's counts: kept events that lowered the measure, and the states expanded
#: fully for that alone (the proviso did not send them back)
CHECKED = {"lowering": 0, "forced": 0, "by": {}}
#: a message's weight in `zab_measure`, indexed by its kind: a delivery that only answers sends
#: less weight than it takes, down each chain of the protocol (a rejoining follower answers
#: NEWLEADER with ACK-LD and an ACK)
_WEIGHTS = {LFL: 2, VOTE: 1, CEPOCH: 8, NEWEPOCH: 7, ACKEPOCH: 6, NEWLEADER: 5, ACKLEADER: 2,
            COMMITLEADER: 1, PROPOSE: 3, ACK: 2, COMMIT: 1}
WEIGHT = tuple(_WEIGHTS.get(k, 0) for k in range(max(_WEIGHTS) + 1))
_parts: dict = {}  # id(node) -> (node, its summands)


def _spent_and_ghost(s) -> tuple:
    """What both measures start with: the budgets spent (proposals made count up, the others'
    budgets count down), and the ghost's size (delivery logs, broadcast order, leaders per epoch,
    proposals: they only grow)."""
    b, (logs, bc, est, pro) = s.budgets, s.ghost
    return (b[MADE] - b[DROPS] - b[TIMEOUTS] - b[HEARTBEATS] - b[CRASHES],
            sum(map(len, logs or ())) + len(bc or ()) + len(est or ()) + len(pro or ()))


def _acks(x) -> int:
    """A node's CEPOCH, ACK-E and ACK-LD sets, counted."""
    return x.cepochs.bit_count() + x.epoch_acks.bit_count() + x.leader_acks.bit_count()


def _node_parts(x) -> tuple:
    e = _parts.get(id(x))
    if e is not None and e[0] is x:
        return e[1]
    if len(_parts) > 300_000:
        _parts.clear()
    look = 0
    if x.role == LOOKING:  # how good its vote is, then how many votes it has seen
        z = x.vote_target_zxid
        look = (((z[0] * 1000 + z[1]) * 8 + x.vote_target_id) * 8
                + sum(v is not None for v in x.vote_view))
    lc = x.last_committed
    p = (x.current_epoch, x.accepted_epoch, lc[0] * 1000 + lc[1], len(x.history), x.phase,
         _acks(x), look)
    _parts[id(x)] = (x, p)
    return p


def zab_measure(s) -> tuple:
    """A candidate progress measure of a zab state, compared as a tuple: the budgets spent, the
    ghost's size, the sums over nodes of epochs, committed zxids and history lengths, then how
    many nodes lead or follow (a follower whose leader's LookForLeader is on its way to it counts
    as looking: D6 will send it back), leader phases, the looking nodes' votes, the weight of the
    messages in flight (`WEIGHT`), lighter being more, and last the leaders' acknowledgement sets
    (a leader takes a rejoining follower out of its forwarding set, and answers it)."""
    ns, net = s.nodes, s.net
    n = len(ns)
    sums = [0] * 7
    settled = 0
    for x in ns:
        for k, v in enumerate(_node_parts(x)):
            sums[k] += v
        if x.role == LEADING:
            settled += 1
        elif x.role == FOLLOWING and not any(m[0] == LFL for m in net[x.leader_id * n + x.id]):
            settled += 1
    ce, ae, lc, hl, ph, ak, lk = sums
    return (*_spent_and_ghost(s), ce, ae, lc, hl, settled, ph, lk,
            -sum(WEIGHT[m[0]] for link in net for m in link), ak)


def one(mode: str, depth: int) -> dict:
    """The reduced search of the depth-40 space to `depth`, its proviso as `mode`."""
    import zabmc.explore.bfs  # noqa: F401 - the module `_patch` changes
    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.por import Stubborn
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.model import get_model

    _patch(mode)
    bfs = sys.modules["zabmc.explore.bfs"]
    cfg = ExploreConfig(nodes=3, network="fifo", proposals=2, max_timeouts=1, depth=depth)
    env = Env(get_model("zab"), cfg, Checker(DEFAULT_PROPERTIES))
    st = Stubborn(env)
    t = time.process_time()
    out = bfs.BFS(env, reduction=st).run()
    return {"mode": mode, "distinct": out.distinct, "generated": out.generated, "full": st.full,
            "reduced": st.reduced, "cpu": time.process_time() - t, "last": out.per_depth[-1],
            "violations": len(out.violations), **CHECKED}


def node_measure(s) -> tuple:
    """A candidate progress measure of a zab state, compared as a tuple: the budgets spent, the
    ghost's size, the nodes' epochs, leader phases, acknowledgement sets and histories, and then
    fewer messages in flight."""
    ns = s.nodes
    return (*_spent_and_ghost(s),
            sum(x.accepted_epoch for x in ns), sum(x.current_epoch for x in ns),
            sum(x.phase for x in ns), sum(map(_acks, ns)),
            sum(len(x.history) for x in ns),
            -sum(map(len, s.net)))


def cycles(model: str, kw: dict) -> dict:
    """The whole state graph of a small space, every event: its states, events and cycles, and
    how many events raise `node_measure`, leave it equal or lower it, by the delivered
    message's kind (its first field) or the event's kind."""
    import networkx as nx

    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.model import get_model

    env = Env(get_model(model), ExploreConfig(network="fifo", depth=1000, **kw),
              Checker(DEFAULT_PROPERTIES))
    s0, _ = env.initial()
    ids = {env.fingerprint(s0): 0}
    todo, g, by, events = [s0], nx.DiGraph(), Counter(), 0
    names = _message_names()
    g.add_node(0)
    while todo:
        s = todo.pop()
        i = ids[env.fingerprint(s)]
        m = node_measure(s)
        for ev, s2, _ in env.successors(s):
            events += 1
            m2 = node_measure(s2)
            if m2 <= m:
                what = model_msg(ev, names)
                by["equal" if m2 == m else "lower", what] += 1
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
    ap.add_argument("--parallel", action="store_true", help="run the four searches at once")
    ap.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)  # a child's own run
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.depth)))
        return 0
    cmd = [sys.executable, __file__, "--depth", str(args.depth), "--one"]
    if args.parallel:
        procs = [subprocess.Popen(cmd + [m], stdout=subprocess.PIPE, text=True) for m in MODES]
        outs = [p.communicate()[0] for p in procs]
    else:
        outs = [subprocess.run(cmd + [m], stdout=subprocess.PIPE, text=True, check=True).stdout
                for m in MODES]
    print(f"zab --nodes 3 --proposals 2 --max-timeouts 1 --reduction por, to depth {args.depth}")
    print("| proviso | distinct | last level | expanded in full / in part | CPU s |")
    print("|---|---:|---:|---:|---:|")
    for text in outs:
        r = json.loads(text)
        print(f"| {r['mode']} | {r['distinct']:,} | {r['last']:,} | {r['full']:,} / "
              f"{r['reduced']:,} | {r['cpu']:.1f} |")
        if r["mode"] == "checked":
            checked = r
    by = ", ".join(f"{what} {k:,}" for what, k in sorted(checked["by"].items(), key=lambda i: -i[1]))
    print(f"checked: {checked['lowering']:,} kept events lowered the measure; "
          f"{checked['forced']:,} states expanded fully for that alone ({by})")
    if not args.no_cycles:
        for model, kw in CYCLE_SPACES:
            r = cycles(model, kw)
            print(f"{model} {kw}: {r['states']:,} states, {r['events']:,} events "
                  f"({r['edges']:,} distinct edges), "
                  f"{r['cyclic_components']} cyclic components, {r['self_loops']} self-loops")
            print("  events that do not raise node_measure: " + ", ".join(
                f"{how} {what} {n:,}" for (how, what), n in sorted(r["not_raised"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
